#include <yajl/yajl_parse.h>

/// yajl_config is variadic, which Swift cannot call: one option at a time.
static inline int sluice_yajl_config(yajl_handle handle, yajl_option option, int enabled) {
    return yajl_config(handle, option, enabled);
}
