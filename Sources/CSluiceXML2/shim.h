#include <libxml/xmlversion.h>
// Debian builds libxml2 against the system ICU; Foundation bundles its own.
// Hiding libxml2's ICU declarations keeps the two from clashing in debug
// builds. sluice never allocates an encoding handler itself.
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>
#include <libxml/SAX2.h>

/// libxml2 prints some errors through its generic handler (a variadic
/// function Swift cannot define): sluice reports errors itself, so silence it.
static void sluice_xml_ignore_generic_error(void *context, const char *message, ...) {
    (void)context;
    (void)message;
}

/// Installs the silent generic error handler for the calling thread.
static inline void sluice_xml_silence_generic_errors(void) {
    xmlSetGenericErrorFunc(NULL, sluice_xml_ignore_generic_error);
}
