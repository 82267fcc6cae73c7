/**
 * @file restoration_plugin.h
 * @brief The plugin ABI: restoration classes supplied by shared objects.
 *
 * A plugin is a regular file `*.so` (not starting with '.') directly in an
 * engine's plugin_dir. It exports one symbol, `rst_plugin_manifest_v1`, which
 * receives the host's ::rst_host_api table and returns the plugin's manifest.
 * Plugins reach the engine only through that table, never by linking
 * librestoration.so (a host may carry the core statically: restorectl, a
 * Swift program), exactly as SQLite's loadable extensions do.
 *
 * Plugin sources write:
 * @code
 *   #define RST_PLUGIN
 *   #include <restoration_plugin.h>
 *   RST_PLUGIN_DEFINE_API;                       // file scope, one source file
 *
 *   static rst_object *make_pane(rst_engine *e, rst_object *parent,
 *                                const char *id, rst_coder *c) { ... }
 *   static const rst_plugin_class classes[] = {
 *       { "Pane", "make_pane", "EPIC" },
 *   };
 *   static const rst_plugin_manifest manifest = {
 *       RST_PLUGIN_ABI_VERSION, "panes", "1.0", 1, classes, NULL, NULL,
 *       RST_PLUGIN_MANIFEST_SIZE };
 *
 *   RST_PLUGIN_EXPORT const rst_plugin_manifest *
 *   rst_plugin_manifest_v1(const rst_host_api *api) {
 *       RST_PLUGIN_INIT(api);                    // first statement
 *       return &manifest;
 *   }
 * @endcode
 * and call every rst_* function by its usual name: the macros below route the
 * calls through the table. Factory symbols must be exported (default
 * visibility) so the engine can find them with dlsym.
 *
 * Factory signatures: the factory returns `rst_object *` and takes, in the
 * order its signature string lists them, any subset of:
 *
 *   E rst_engine *   the engine          P rst_object *  the parent (NULL at a root)
 *   I const char *   the identifier      R const char *  the whole path "A/B/C"
 *   C rst_coder *    the record's state  X void *        the plugin context from init
 *   D uint32_t       depth (0 at root)   T int64_t       saved_at, UTC ms
 *
 * "EPIC" is rst_factory_fn minus its context. A letter outside the table, a
 * repeated letter, or a missing symbol rejects that class at load time; the
 * plugin's other classes still load. A factory that returns NULL declines
 * (the fallback factory is asked next); one that returns an object at
 * another path is an error, logged, and the record is skipped.
 *
 * Loading: once per engine, when a restore first needs a class no host
 * registered (or at rst_load_plugins()), with RTLD_NOW | RTLD_LOCAL |
 * RTLD_NODELETE; never dlclose'd. A file or plugin_dir writable by group or
 * others, or owned by someone other than the user or root, is rejected, as
 * are files that do not load, lack the manifest symbol, return a NULL
 * manifest or another ABI version. When two plugins name one class, the file
 * whose name sorts first wins. `init` runs at load (non-zero rejects the
 * plugin; its `fini` then never runs), `fini` at that engine's destroy.
 * Set RESTORATION_DEBUG_PLUGINS=1 to trace every decision on stderr (read
 * with secure_getenv: ignored in setuid/setcap processes).
 *
 * Before dlopen, each file's ELF header and segments are checked against its
 * size and this machine (glibc can crash the process on a truncated ELF), and
 * a second name (hard link) of a file already listed is rejected, so one file
 * loads once. Files that can never load (unsafe mode or owner, symlink, hard
 * link) show as RST_PLUGIN_REJECTED in rst_list_plugins() before anything is
 * loaded, and count in plugins_rejected once the engine loads its plugins.
 * Other entries named *.so that are not regular files (directories, FIFOs,
 * sockets, devices) are not plugins: they are traced under
 * RESTORATION_DEBUG_PLUGINS, not listed and not counted.
 */
#ifndef RESTORATION_PLUGIN_H
#define RESTORATION_PLUGIN_H

#include "restoration.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The manifest layout this header declares. 2: the v1 members, then
 *  `manifest_size` and reserved slots. Hosts read manifests of ABI version
 *  1 (plugins built against the 1.0 header: the seven v1 members only) and
 *  2; any other version rejects the plugin. */
#define RST_PLUGIN_ABI_VERSION 2
#define RST_HOST_API_VERSION   3

#if defined(__GNUC__) || defined(__clang__)
#  define RST_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#  define RST_PLUGIN_EXPORT
#endif

/** The host's functions, one member per function of restoration.h, named
 *  without the rst_ prefix (rst_free is mem_free), in the order of the v1
 *  contract; later additions are appended. Check table_size before using a
 *  member added after version 1. */
typedef struct rst_host_api {
    uint32_t table_version;  /**< RST_HOST_API_VERSION of the host; members only appended */
    uint32_t table_size;     /**< sizeof(rst_host_api) as the host was built */

    const char *(*version)(void);
    const char *(*status_name)(rst_status s);
    const char *(*last_error)(void);
    void        (*mem_free)(void *p);

    rst_status (*engine_create)(const rst_engine_options *opts, rst_engine **out);
    void       (*engine_destroy)(rst_engine *e);

    rst_status  (*register_object)(rst_engine *e, const char *identifier,
                                   rst_object *parent, const char *class_name,
                                   const rst_object_callbacks *callbacks,
                                   void *instance, rst_object **out);
    rst_status  (*unregister_object)(rst_engine *e, rst_object *o);
    rst_object *(*find_object)(rst_engine *e, const char *path);
    void       *(*object_instance)(const rst_object *o);
    const char *(*object_identifier)(const rst_object *o);
    rst_object *(*object_parent)(const rst_object *o);

    rst_status (*register_class)(rst_engine *e, const char *class_name,
                                 rst_factory_fn factory, void *ctx);
    rst_status (*set_fallback_factory)(rst_engine *e, rst_factory_fn factory, void *ctx);

    rst_status (*save)(rst_engine *e);
    rst_status (*restore)(rst_engine *e);
    rst_status (*save_to_buffer)(rst_engine *e, void **out, size_t *len);
    rst_status (*restore_from_buffer)(rst_engine *e, const void *data, size_t len);
    rst_status (*discard)(rst_engine *e);
    rst_status (*read_archive_info)(const char *path, rst_archive_info **out);
    rst_status (*last_restore_report)(rst_engine *e, rst_restore_report *out);

    rst_status (*encode_bool)(rst_coder *c, const char *key, bool v);
    rst_status (*encode_int)(rst_coder *c, const char *key, int64_t v);
    rst_status (*encode_double)(rst_coder *c, const char *key, double v);
    rst_status (*encode_string)(rst_coder *c, const char *key, const char *utf8);
    rst_status (*encode_bytes)(rst_coder *c, const char *key, const void *p, size_t n);
    rst_status (*encode_object)(rst_coder *c, const char *key, rst_object *ref);
    rst_status (*encode_int_array)(rst_coder *c, const char *key, const int64_t *v, size_t n);
    rst_status (*encode_string_array)(rst_coder *c, const char *key, const char *const *v, size_t n);
    rst_status (*encode_begin_record)(rst_coder *c, const char *key);
    rst_status (*encode_end_record)(rst_coder *c);

    bool       (*coder_contains)(rst_coder *c, const char *key);
    rst_status (*decode_bool)(rst_coder *c, const char *key, bool *out);
    rst_status (*decode_int)(rst_coder *c, const char *key, int64_t *out);
    rst_status (*decode_double)(rst_coder *c, const char *key, double *out);
    rst_status (*decode_string)(rst_coder *c, const char *key, const char **out, size_t *len);
    rst_status (*decode_bytes)(rst_coder *c, const char *key, const void **out, size_t *len);
    rst_status (*decode_object)(rst_coder *c, const char *key, rst_object **out);
    rst_status (*decode_int_array)(rst_coder *c, const char *key,
                                   int64_t *buf, size_t cap, size_t *count);
    rst_status (*decode_string_array)(rst_coder *c, const char *key, size_t index,
                                      const char **out, size_t *len, size_t *count);
    rst_status (*decode_begin_record)(rst_coder *c, const char *key);
    rst_status (*decode_end_record)(rst_coder *c);
    /* Members above are valid for table_version 1. */

    /* Additions beyond the v1 contract, in the order they were added. */
    rst_value_type (*coder_value_type)(rst_coder *c, const char *key);
    rst_status  (*object_path)(const rst_object *o, char **out);
    const char *(*object_class_name)(const rst_object *o);
    rst_status  (*load_plugins)(rst_engine *e);
    rst_status  (*list_plugins)(rst_engine *e, rst_plugin_info **out, size_t *count);
    rst_status  (*engine_options_init)(rst_engine_options *opts, uint32_t version);
    rst_status  (*coder_fail)(rst_coder *c, rst_status status, const char *message);
    /* Members above: table_version 1. Members below: table_version 2
       (library 1.1: docs/LIFECYCLE.md, docs/EVOLUTION.md); check with RST_HOST_API_HAS. */
    rst_status  (*mark_dirty)(rst_engine *e, rst_object *o);
    bool        (*is_dirty)(rst_engine *e);
    rst_status  (*flush)(rst_engine *e);
    int         (*event_fd)(rst_engine *e);
    rst_status  (*dispatch)(rst_engine *e);
    int64_t     (*next_timeout_ms)(rst_engine *e);
    rst_status  (*start_autosave_thread)(rst_engine *e);
    rst_status  (*save_on_signals)(rst_engine *e, const int *signal_numbers, size_t count);
    rst_restore_reason (*last_restore_reason)(rst_engine *e);
    rst_status  (*restore_generation)(rst_engine *e, uint32_t generation);
    const char *(*restore_reason_name)(rst_restore_reason r);
    rst_status  (*last_restore_skips)(rst_engine *e, rst_skipped_record **out, size_t *count);
    const char *(*skip_reason_name)(rst_skip_reason r);
    rst_status  (*encode_object_array)(rst_coder *c, const char *key, rst_object *const *v, size_t n);
    rst_status  (*decode_object_array)(rst_coder *c, const char *key, size_t index,
                                       rst_object **out, size_t *count);
    rst_status  (*set_class_version)(rst_engine *e, const char *class_name, uint32_t version);
    rst_status  (*register_migration)(rst_engine *e, const char *class_name, uint32_t from_version,
                                      rst_migrate_fn fn, void *ctx);
    uint32_t    (*coder_class_version)(rst_coder *c);
    rst_status  (*coder_remove)(rst_coder *c, const char *key);
    rst_status  (*coder_rename)(rst_coder *c, const char *from_key, const char *to_key);
    rst_status  (*extend_restoration)(rst_engine *e, uint32_t deadline_ms, rst_restore_token **out);
    rst_status  (*complete_restoration)(rst_engine *e, rst_restore_token *t);
    /* Members below: table_version 3 (library 1.2); check with RST_HOST_API_HAS. */
    rst_status  (*encode_os_string)(rst_coder *c, const char *key, const char *v);
    rst_status  (*decode_os_string)(rst_coder *c, const char *key, const char **out);
    rst_status  (*decode_string_copy)(rst_coder *c, const char *key, char *buf, size_t cap, size_t *len);
    rst_status  (*coder_set_sensitivity)(rst_coder *c, const char *key, rst_sensitivity s);
    rst_status  (*set_key_sensitivity)(rst_engine *e, const char *class_name, const char *key,
                                       rst_sensitivity s);
    rst_status  (*set_object_priority)(rst_object *o, int32_t priority);
    rst_status  (*last_save_sizes)(rst_engine *e, rst_size_entry **out, size_t *count);
    rst_status  (*export_state)(rst_engine *e, uint32_t flags, void **buf, size_t *len);
    rst_status  (*set_save_listener)(rst_engine *e, rst_save_listener fn, void *ctx);
    void        (*close_session)(rst_engine *e);
} rst_host_api;

/** True when `api` has member `member` (it was built with it). */
#define RST_HOST_API_HAS(api, member) \
    ((api) != NULL && (size_t)(api)->table_size >= offsetof(rst_host_api, member) + sizeof((api)->member))

/** One restoration class of a plugin. */
typedef struct rst_plugin_class {
    const char *class_name;      /**< what archives name */
    const char *factory_symbol;  /**< exported function that creates the object */
    const char *signature;       /**< which arguments it takes, in order (see above) */
} rst_plugin_class;

/** What a plugin offers. Must stay valid while the process runs (static).
 *  Members are only ever appended: a host reads a member only when
 *  `manifest_size` covers it (RST_PLUGIN_MANIFEST_HAS), so the manifest can
 *  grow without another ABI version, as ::rst_host_api does. */
typedef struct rst_plugin_manifest {
    uint32_t    abi_version;     /**< RST_PLUGIN_ABI_VERSION */
    const char *name;
    const char *version;
    size_t      class_count;
    const rst_plugin_class *classes;
    int  (*init)(rst_engine *e, void **plugin_ctx);   /**< may be NULL; non-zero = reject */
    void (*fini)(void *plugin_ctx);                   /**< may be NULL */
    /* Members above are valid for abi_version 1; a host reads nothing past
     * them in a manifest of abi_version 1. */
    /** sizeof(rst_plugin_manifest) as the plugin was built:
     *  RST_PLUGIN_MANIFEST_SIZE. 0 (a v1 source rebuilt without it) reads as
     *  the size of this version, whose members the plugin then left zero. */
    uint32_t    manifest_size;
    uint32_t    reserved_flags;  /**< must be 0 */
    void       *reserved[6];     /**< must be NULL: room for later members */
    /* Members above are valid for abi_version 2. */
} rst_plugin_manifest;

/** The value of rst_plugin_manifest.manifest_size. */
#define RST_PLUGIN_MANIFEST_SIZE ((uint32_t)sizeof(rst_plugin_manifest))
/** True when manifest `m` (of abi_version 2 or later) has member `member`. */
#define RST_PLUGIN_MANIFEST_HAS(m, member) \
    ((m)->abi_version >= 2 && \
     ((m)->manifest_size == 0 ? sizeof(rst_plugin_manifest) : (size_t)(m)->manifest_size) >= \
         offsetof(rst_plugin_manifest, member) + sizeof((m)->member))

/** The one symbol a plugin exports. Called once per engine that loads the
 *  plugin, on the loading thread, before `init`.
 *  @param api the host's table, valid for the life of the process.
 *  @return the plugin's manifest (static storage), or NULL to decline to
 *          load (for example when `api` is older than the plugin needs):
 *          the plugin is then rejected, and nothing else of it is called. */
typedef const rst_plugin_manifest *(*rst_plugin_manifest_fn)(const rst_host_api *api);
RST_PLUGIN_EXPORT const rst_plugin_manifest *rst_plugin_manifest_v1(const rst_host_api *api);

#define RST_PLUGIN_MANIFEST_SYMBOL "rst_plugin_manifest_v1"

#ifdef RST_PLUGIN
/* The host's table, one per plugin (hidden: never interposed across plugins). */
extern __attribute__((visibility("hidden"))) const rst_host_api *rst_plugin_api__;
#define RST_PLUGIN_DEFINE_API \
    __attribute__((visibility("hidden"))) const rst_host_api *rst_plugin_api__ = NULL
/* First statement of rst_plugin_manifest_v1: keeps the table, and declines to
 * load (NULL manifest) on a host whose table is missing or older than v1. */
#define RST_PLUGIN_INIT(api) do { \
        if ((api) == NULL || (api)->table_version < 1 || \
            (size_t)(api)->table_size < offsetof(rst_host_api, decode_end_record) + sizeof(void *)) \
            return NULL; \
        rst_plugin_api__ = (api); \
    } while (0)

#define rst_version                 rst_plugin_api__->version
#define rst_status_name             rst_plugin_api__->status_name
#define rst_last_error              rst_plugin_api__->last_error
#define rst_free                    rst_plugin_api__->mem_free
#define rst_engine_create           rst_plugin_api__->engine_create
#define rst_engine_destroy          rst_plugin_api__->engine_destroy
#define rst_register_object         rst_plugin_api__->register_object
#define rst_unregister_object       rst_plugin_api__->unregister_object
#define rst_find_object             rst_plugin_api__->find_object
#define rst_object_instance         rst_plugin_api__->object_instance
#define rst_object_identifier       rst_plugin_api__->object_identifier
#define rst_object_parent           rst_plugin_api__->object_parent
#define rst_register_class          rst_plugin_api__->register_class
#define rst_set_fallback_factory    rst_plugin_api__->set_fallback_factory
#define rst_save                    rst_plugin_api__->save
#define rst_restore                 rst_plugin_api__->restore
#define rst_save_to_buffer          rst_plugin_api__->save_to_buffer
#define rst_restore_from_buffer     rst_plugin_api__->restore_from_buffer
#define rst_discard                 rst_plugin_api__->discard
#define rst_read_archive_info       rst_plugin_api__->read_archive_info
#define rst_last_restore_report     rst_plugin_api__->last_restore_report
#define rst_encode_bool             rst_plugin_api__->encode_bool
#define rst_encode_int              rst_plugin_api__->encode_int
#define rst_encode_double           rst_plugin_api__->encode_double
#define rst_encode_string           rst_plugin_api__->encode_string
#define rst_encode_bytes            rst_plugin_api__->encode_bytes
#define rst_encode_object           rst_plugin_api__->encode_object
#define rst_encode_int_array        rst_plugin_api__->encode_int_array
#define rst_encode_string_array     rst_plugin_api__->encode_string_array
#define rst_encode_begin_record     rst_plugin_api__->encode_begin_record
#define rst_encode_end_record       rst_plugin_api__->encode_end_record
#define rst_coder_contains          rst_plugin_api__->coder_contains
#define rst_decode_bool             rst_plugin_api__->decode_bool
#define rst_decode_int              rst_plugin_api__->decode_int
#define rst_decode_double           rst_plugin_api__->decode_double
#define rst_decode_string           rst_plugin_api__->decode_string
#define rst_decode_bytes            rst_plugin_api__->decode_bytes
#define rst_decode_object           rst_plugin_api__->decode_object
#define rst_decode_int_array        rst_plugin_api__->decode_int_array
#define rst_decode_string_array     rst_plugin_api__->decode_string_array
#define rst_decode_begin_record     rst_plugin_api__->decode_begin_record
#define rst_decode_end_record       rst_plugin_api__->decode_end_record
#define rst_coder_value_type        rst_plugin_api__->coder_value_type
#define rst_object_path             rst_plugin_api__->object_path
#define rst_object_class_name       rst_plugin_api__->object_class_name
#define rst_load_plugins            rst_plugin_api__->load_plugins
#define rst_list_plugins            rst_plugin_api__->list_plugins
/* Check RST_HOST_API_HAS(rst_plugin_api__, engine_options_init) first:
 * a 1.0 host's table ends before it. */
#define rst_engine_options_init     rst_plugin_api__->engine_options_init
#define rst_coder_fail              rst_plugin_api__->coder_fail
/* Library 1.1: check RST_HOST_API_HAS(api, member) before calling these
 * on a host that may be older. */
#define rst_last_restore_skips      rst_plugin_api__->last_restore_skips
#define rst_skip_reason_name        rst_plugin_api__->skip_reason_name
#define rst_encode_object_array     rst_plugin_api__->encode_object_array
#define rst_decode_object_array     rst_plugin_api__->decode_object_array
#define rst_set_class_version       rst_plugin_api__->set_class_version
#define rst_register_migration      rst_plugin_api__->register_migration
#define rst_coder_class_version     rst_plugin_api__->coder_class_version
#define rst_coder_remove            rst_plugin_api__->coder_remove
#define rst_coder_rename            rst_plugin_api__->coder_rename
#define rst_extend_restoration      rst_plugin_api__->extend_restoration
#define rst_complete_restoration    rst_plugin_api__->complete_restoration
/* Library 1.2, size budgets: check RST_HOST_API_HAS(api, last_save_sizes). */
#define rst_set_object_priority     rst_plugin_api__->set_object_priority
#define rst_last_save_sizes         rst_plugin_api__->last_save_sizes
#endif /* RST_PLUGIN */

#ifdef __cplusplus
}
#endif
#endif /* RESTORATION_PLUGIN_H */
