#include <lzma.h>

/// LZMA_CONCATENATED is a macro; exported as a constant for Swift.
static const uint32_t sluice_lzma_concatenated = LZMA_CONCATENATED;
