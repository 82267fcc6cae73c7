/* RST_ENGINE_OPTIONS_INIT and the manifest macros compile as C99
   (-Wall -Wextra -pedantic -Werror); compiled, not linked, by CABITests. */
#define RST_PLUGIN
#include <restoration_plugin.h>
RST_PLUGIN_DEFINE_API;
static const rst_plugin_manifest manifest = {
    RST_PLUGIN_ABI_VERSION, "p", "1", 0, NULL, NULL, NULL, RST_PLUGIN_MANIFEST_SIZE, 0, { 0 } };
int use(void);
int use(void) {
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    return (int)o.version + (int)RST_PLUGIN_MANIFEST_HAS(&manifest, reserved);
}
