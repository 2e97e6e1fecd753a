// SHA-256 from OpenSSL's libcrypto: the record digests of the nightly sync
// (docs/record-digests.md). Only the low-level SHA256_* calls are used;
// OpenSSL 3 marks them deprecated in favour of EVP, whose per-call context
// lookup costs more on ~500-byte records.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/sha.h>
