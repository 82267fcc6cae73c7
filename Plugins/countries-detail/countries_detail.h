/**
 * @file countries_detail.h
 * @brief countries-detail: the demo's C plugin (libcountries_detail.so).
 *
 * Classes (see Include/restoration_plugin.h for signatures):
 *
 *   CountryDetail  the detail screen of one country (Tabs/Countries/Detail).
 *                  Factory countries_detail_make, signature "EPIRCT".
 *                  State: "country" string (ISO code), "source" object
 *                  reference (the list it was opened from), "visits" int.
 *                  The factory reads "country" from its coder and declines
 *                  (returns NULL) a record without one.
 *
 *   CountryNotes   a notes pane inside the detail screen. Factory
 *                  countries_notes_make, signature "XDCTIPE": it receives
 *                  the plugin context created by init (X), the depth (D,
 *                  uint32_t) and the save time (T, int64_t) between pointers.
 *                  State: "text" string.
 *
 * The plugin reaches the engine only through the host's rst_host_api table
 * (RST_PLUGIN), so the same file loads in a C host, restorectl and a Swift
 * host. Restored objects print one line to stdout from `finished`.
 */
#ifndef COUNTRIES_DETAIL_H
#define COUNTRIES_DETAIL_H

#include <restoration.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Factory of CountryDetail, signature "EPIRCT". */
rst_object *countries_detail_make(rst_engine *e, rst_object *parent, const char *identifier,
                                  const char *path, rst_coder *coder, int64_t saved_at_ms);

/** Factory of CountryNotes, signature "XDCTIPE". */
rst_object *countries_notes_make(void *plugin_ctx, uint32_t depth, rst_coder *coder, int64_t saved_at_ms,
                                 const char *identifier, rst_object *parent, rst_engine *e);

#ifdef __cplusplus
}
#endif
#endif /* COUNTRIES_DETAIL_H */
