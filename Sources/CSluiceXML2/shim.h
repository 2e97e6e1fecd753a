#include <libxml/xmlversion.h>
// Debian builds libxml2 against the system ICU; Foundation bundles its own.
// Hiding libxml2's ICU declarations keeps the two from clashing in debug
// builds. sluice never allocates an encoding handler itself.
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>
#include <libxml/SAX2.h>
