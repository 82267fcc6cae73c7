"""Builds ``restoration._native``: cffi in API (out-of-line) mode over the C
library, as pygit2 and PyNaCl build theirs. The declarations below are the
part of ``restoration.h`` and ``restoration_store.h`` the package uses; the C
compiler checks them against the real headers (structs end in ``...;`` so
their layout comes from the header, not from here).

Where the headers and the library are found, first match wins:
  1. ``RESTORATION_PREFIX``: ``$RESTORATION_PREFIX/include`` and
     ``$RESTORATION_PREFIX/lib`` (an install with ``make install PREFIX=…``);
  2. pkg-config's ``restoration`` (``make install`` writes restoration.pc);
  3. the source tree this folder sits in: ``../Include`` and the library
     built by ``swift build --product restoration`` (``.build/debug``, or
     ``.build/release``; ``RESTORATION_BUILD_DIR`` names another folder).
Outside the system's library folders the extension gets an rpath to the
library, so no LD_LIBRARY_PATH is needed.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from cffi import FFI

HERE = Path(__file__).resolve().parent

CDEF = r"""
typedef struct rst_engine rst_engine;
typedef struct rst_object rst_object;
typedef struct rst_coder  rst_coder;
typedef struct rst_restore_token rst_restore_token;
typedef enum rst_status {
    RST_OK, RST_ERR_INVALID, RST_ERR_NOT_FOUND, RST_ERR_DUPLICATE, RST_ERR_TYPE,
    RST_ERR_CORRUPT, RST_ERR_VERSION, RST_ERR_IO, RST_ERR_PLUGIN, RST_ERR_REJECTED,
    RST_ERR_NOMEM, RST_ERR_STATE, RST_ERR_LIMIT, ...
} rst_status;
#define RST_ABI_VERSION ...
#define RST_FORMAT_VERSION ...
#define RST_ENGINE_OPTIONS_VERSION ...
#define RST_ENGINE_NO_CRASH_GUARD ...
#define RST_ENGINE_NO_QUARANTINE ...
#define RST_EXPORT_PORTABLE ...
#define RST_STORE_VERSION ...
#define RST_STORE_SHARED ...
#define RST_MAX_KEY_BYTES ...

const char *rst_version(void);
const char *rst_status_name(rst_status s);
const char *rst_last_error(void);
void        rst_free(void *p);

typedef struct rst_archive_info {
    uint32_t    format_version;
    const char *app_version;
    const char *system_version;
    const char *idiom;
    int64_t     saved_at_ms;
    uint64_t    object_count;
    uint32_t    restore_reason;
    uint32_t    generation;
    ...;
} rst_archive_info;

typedef struct rst_engine_options {
    uint32_t    version;
    const char *archive_path;
    const char *plugin_dir;
    const char *app_version;
    const char *idiom;
    bool (*should_save)(rst_engine *e, void *ctx);
    bool (*should_restore)(rst_engine *e, const rst_archive_info *info, void *ctx);
    void (*did_finish_restoring)(rst_engine *e, void *ctx);
    void       *ctx;
    uint32_t    flags;
    void (*log)(rst_engine *e, int level, const char *message, void *ctx);
    uint32_t    autosave_delay_ms;
    uint32_t    autosave_max_delay_ms;
    uint32_t    generations;
    uint32_t    carry_saves;
    uint64_t    size_budget;
    uint32_t    budget_policy;
    rst_status (*encryption_key)(rst_engine *e, uint8_t key[32], void *ctx);
    uint32_t    signal_deadline_ms;
    ...;
} rst_engine_options;

rst_status rst_engine_options_init(rst_engine_options *opts, uint32_t version);
rst_status rst_engine_create(const rst_engine_options *opts, rst_engine **out);
void       rst_engine_destroy(rst_engine *e);

typedef struct rst_object_callbacks {
    void (*encode)(void *instance, rst_coder *coder);
    void (*decode)(void *instance, rst_coder *coder);
    void (*finished)(void *instance);
    void (*release)(void *instance);
    ...;
} rst_object_callbacks;

rst_status  rst_register_object(rst_engine *e, const char *identifier,
                                rst_object *parent, const char *class_name,
                                const rst_object_callbacks *callbacks,
                                void *instance, rst_object **out);
rst_status  rst_unregister_object(rst_engine *e, rst_object *o);
rst_object *rst_find_object(rst_engine *e, const char *path);
void       *rst_object_instance(const rst_object *o);
const char *rst_object_identifier(const rst_object *o);
rst_object *rst_object_parent(const rst_object *o);
rst_status  rst_object_path(const rst_object *o, char **out);
const char *rst_object_class_name(const rst_object *o);
rst_status  rst_set_object_priority(rst_object *o, int32_t priority);

typedef rst_object *(*rst_factory_fn)(rst_engine *e, rst_object *parent,
                                      const char *identifier, rst_coder *coder,
                                      void *ctx);
rst_status rst_register_class(rst_engine *e, const char *class_name,
                              rst_factory_fn factory, void *ctx);
rst_status rst_set_fallback_factory(rst_engine *e, rst_factory_fn factory, void *ctx);

typedef struct rst_plugin_class_info {
    const char *class_name;
    const char *factory_symbol;
    const char *signature;
    bool        usable;
    const char *reason;
    ...;
} rst_plugin_class_info;
typedef struct rst_plugin_info {
    const char *path;
    const char *name;
    const char *version;
    int         state;
    const char *reason;
    size_t      class_count;
    const rst_plugin_class_info *classes;
    ...;
} rst_plugin_info;
rst_status rst_load_plugins(rst_engine *e);
rst_status rst_list_plugins(rst_engine *e, rst_plugin_info **out, size_t *count);

rst_status rst_save(rst_engine *e);
rst_status rst_restore(rst_engine *e);
rst_status rst_save_to_buffer(rst_engine *e, void **out, size_t *len);
rst_status rst_restore_from_buffer(rst_engine *e, const void *data, size_t len);
rst_status rst_discard(rst_engine *e);
rst_status rst_read_archive_info(const char *path, rst_archive_info **out);

typedef struct rst_restore_report {
    uint64_t archived;
    uint64_t restored;
    uint64_t skipped;
    uint64_t plugins_loaded;
    uint64_t plugins_rejected;
    ...;
} rst_restore_report;
rst_status rst_last_restore_report(rst_engine *e, rst_restore_report *out);
rst_status rst_export(rst_engine *e, uint32_t flags, void **buf, size_t *len);
int        rst_last_restore_reason(rst_engine *e);
rst_status rst_restore_generation(rst_engine *e, uint32_t generation);

typedef struct rst_skipped_record {
    const char *path;
    const char *class_name;
    uint32_t    reason;
    uint32_t    version;
    const char *detail;
    ...;
} rst_skipped_record;
rst_status rst_last_restore_skips(rst_engine *e, rst_skipped_record **out, size_t *count);

rst_status rst_encode_bool  (rst_coder *c, const char *key, bool v);
rst_status rst_encode_int   (rst_coder *c, const char *key, int64_t v);
rst_status rst_encode_double(rst_coder *c, const char *key, double v);
rst_status rst_encode_string(rst_coder *c, const char *key, const char *utf8);
/* `p` as char * so that cffi passes a bytes object's buffer without a copy. */
rst_status rst_encode_bytes (rst_coder *c, const char *key, const char *p, size_t n);
rst_status rst_encode_object(rst_coder *c, const char *key, rst_object *ref);
rst_status rst_encode_int_array   (rst_coder *c, const char *key, const int64_t *v, size_t n);
rst_status rst_encode_string_array(rst_coder *c, const char *key, const char *const *v, size_t n);
rst_status rst_encode_begin_record(rst_coder *c, const char *key);
rst_status rst_encode_end_record  (rst_coder *c);
rst_status rst_encode_object_array(rst_coder *c, const char *key, rst_object *const *v, size_t n);
rst_status rst_encode_os_string(rst_coder *c, const char *key, const char *v);

bool       rst_coder_contains (rst_coder *c, const char *key);
int        rst_coder_value_type(rst_coder *c, const char *key);
rst_status rst_decode_bool    (rst_coder *c, const char *key, bool *out);
rst_status rst_decode_int     (rst_coder *c, const char *key, int64_t *out);
rst_status rst_decode_double  (rst_coder *c, const char *key, double *out);
rst_status rst_decode_string  (rst_coder *c, const char *key, const char **out, size_t *len);
rst_status rst_decode_bytes   (rst_coder *c, const char *key, const void **out, size_t *len);
rst_status rst_decode_object  (rst_coder *c, const char *key, rst_object **out);
rst_status rst_decode_int_array(rst_coder *c, const char *key, int64_t *buf, size_t cap, size_t *count);
rst_status rst_decode_string_array(rst_coder *c, const char *key, size_t index,
                                   const char **out, size_t *len, size_t *count);
rst_status rst_decode_object_array(rst_coder *c, const char *key, size_t index,
                                   rst_object **out, size_t *count);
rst_status rst_decode_os_string(rst_coder *c, const char *key, const char **out);
rst_status rst_decode_begin_record(rst_coder *c, const char *key);
rst_status rst_decode_end_record  (rst_coder *c);
rst_status rst_coder_fail(rst_coder *c, rst_status status, const char *message);

rst_status rst_mark_dirty(rst_engine *e, rst_object *o);
bool       rst_is_dirty(rst_engine *e);
rst_status rst_flush(rst_engine *e);
int        rst_event_fd(rst_engine *e);
rst_status rst_dispatch(rst_engine *e);
int64_t    rst_next_timeout_ms(rst_engine *e);
rst_status rst_start_autosave_thread(rst_engine *e);
rst_status rst_save_on_signals(rst_engine *e, const int *signal_numbers, size_t count);
typedef void (*rst_save_listener)(rst_engine *e, rst_status status, uint32_t trigger, void *ctx);
rst_status rst_set_save_listener(rst_engine *e, rst_save_listener fn, void *ctx);
void       rst_close_session(rst_engine *e);

rst_status rst_set_class_version(rst_engine *e, const char *class_name, uint32_t version);
typedef rst_status (*rst_migrate_fn)(rst_coder *c, uint32_t from_version, void *ctx);
rst_status rst_register_migration(rst_engine *e, const char *class_name,
                                  uint32_t from_version, rst_migrate_fn fn, void *ctx);
uint32_t   rst_coder_class_version(rst_coder *c);
rst_status rst_coder_remove(rst_coder *c, const char *key);
rst_status rst_coder_rename(rst_coder *c, const char *from_key, const char *to_key);

rst_status rst_extend_restoration(rst_engine *e, uint32_t deadline_ms, rst_restore_token **out);
rst_status rst_complete_restoration(rst_engine *e, rst_restore_token *t);

rst_status rst_set_key_sensitivity(rst_engine *e, const char *class_name, const char *key, int s);
rst_status rst_coder_set_sensitivity(rst_coder *c, const char *key, int s);

typedef struct rst_size_entry {
    const char *path;
    const char *class_name;
    uint64_t    own_bytes;
    uint64_t    subtree_bytes;
    uint32_t    trimmed;
    ...;
} rst_size_entry;
rst_status rst_last_save_sizes(rst_engine *e, rst_size_entry **out, size_t *count);

typedef struct rst_store_ops {
    uint32_t version;
    uint32_t flags;
    ...;
} rst_store_ops;
rst_status rst_engine_create_with_store(const rst_engine_options *opts,
                                        const rst_store_ops *ops, void *ctx, rst_engine **out);
rst_status rst_file_store(const char *archive_path, const rst_store_ops **ops, void **ctx);
rst_status rst_memory_store(const rst_store_ops **ops, void **ctx);
void       rst_store_set_error(const char *sentence);

/* The package's callbacks: Python functions the C library calls. */
extern "Python+C" {
    bool _py_should_save(rst_engine *e, void *ctx);
    bool _py_should_restore(rst_engine *e, const rst_archive_info *info, void *ctx);
    void _py_did_finish_restoring(rst_engine *e, void *ctx);
    void _py_log(rst_engine *e, int level, const char *message, void *ctx);
    rst_status _py_encryption_key(rst_engine *e, uint8_t *key, void *ctx);
    void _py_save_listener(rst_engine *e, rst_status status, uint32_t trigger, void *ctx);
    rst_object *_py_factory(rst_engine *e, rst_object *parent, const char *identifier,
                            rst_coder *coder, void *ctx);
    rst_status _py_migrate(rst_coder *c, uint32_t from_version, void *ctx);
    void _py_encode(void *instance, rst_coder *coder);
    void _py_decode(void *instance, rst_coder *coder);
    void _py_finished(void *instance);
    void _py_release(void *instance);
    rst_status _py_store_read(void *ctx, int slot, uint64_t index,
                              const void **data, size_t *len, void **hold);
    void       _py_store_release(void *ctx, void *hold);
    rst_status _py_store_write(void *ctx, int slot, uint64_t index, const void *data, size_t len);
    rst_status _py_store_move(void *ctx, int from, uint64_t from_index, int to, uint64_t to_index);
    rst_status _py_store_remove(void *ctx, int slot, uint64_t index);
    rst_status _py_store_list(void *ctx, int slot, uint64_t *indexes, size_t cap, size_t *count);
    rst_status _py_store_lock(void *ctx);
    void       _py_store_unlock(void *ctx);
    const char *_py_store_describe(void *ctx);
    void       _py_store_destroy(void *ctx);
}

/* One call for a value of any scalar type: its type, then the value. */
typedef struct py_scalar {
    int         type;       /* an rst_value_type */
    bool        b;
    int64_t     i;
    double      d;
    const char *p;          /* a string's or bytes' first byte */
    size_t      n;
    rst_object *o;
} py_scalar;
rst_status py_decode_scalar(rst_coder *c, const char *key, py_scalar *out);

/* Static tables of those callbacks (the engine keeps the pointers). */
/* with_finished: the table with `finished` (for objects with the hook). */
const rst_object_callbacks *py_object_callbacks(bool with_finished);
const rst_store_ops *py_store_ops(bool shared);
"""

SOURCE = r"""
#include <restoration.h>
#include <restoration_store.h>

static bool _py_should_save(rst_engine *e, void *ctx);
static bool _py_should_restore(rst_engine *e, const rst_archive_info *info, void *ctx);
static void _py_did_finish_restoring(rst_engine *e, void *ctx);
static void _py_log(rst_engine *e, int level, const char *message, void *ctx);
static rst_status _py_encryption_key(rst_engine *e, uint8_t *key, void *ctx);
static void _py_save_listener(rst_engine *e, rst_status status, uint32_t trigger, void *ctx);
static rst_object *_py_factory(rst_engine *e, rst_object *parent, const char *identifier,
                              rst_coder *coder, void *ctx);
static rst_status _py_migrate(rst_coder *c, uint32_t from_version, void *ctx);
static void _py_encode(void *instance, rst_coder *coder);
static void _py_decode(void *instance, rst_coder *coder);
static void _py_finished(void *instance);
static void _py_release(void *instance);
static rst_status _py_store_read(void *ctx, int slot, uint64_t index,
                                 const void **data, size_t *len, void **hold);
static void _py_store_release(void *ctx, void *hold);
static rst_status _py_store_write(void *ctx, int slot, uint64_t index, const void *data, size_t len);
static rst_status _py_store_move(void *ctx, int from, uint64_t from_index, int to, uint64_t to_index);
static rst_status _py_store_remove(void *ctx, int slot, uint64_t index);
static rst_status _py_store_list(void *ctx, int slot, uint64_t *indexes, size_t cap, size_t *count);
static rst_status _py_store_lock(void *ctx);
static void _py_store_unlock(void *ctx);
static const char *_py_store_describe(void *ctx);
static void _py_store_destroy(void *ctx);

/* The slot arguments are the C enum; the Python side sees an int. */
static rst_status py_read(void *ctx, rst_slot s, uint64_t i, const void **d, size_t *n, void **h)
{ return _py_store_read(ctx, (int)s, i, d, n, h); }
static rst_status py_write(void *ctx, rst_slot s, uint64_t i, const void *d, size_t n)
{ return _py_store_write(ctx, (int)s, i, d, n); }
static rst_status py_move(void *ctx, rst_slot f, uint64_t fi, rst_slot t, uint64_t ti)
{ return _py_store_move(ctx, (int)f, fi, (int)t, ti); }
static rst_status py_remove(void *ctx, rst_slot s, uint64_t i)
{ return _py_store_remove(ctx, (int)s, i); }
static rst_status py_list(void *ctx, rst_slot s, uint64_t *ix, size_t cap, size_t *count)
{ return _py_store_list(ctx, (int)s, ix, cap, count); }

typedef struct py_scalar {
    int type; bool b; int64_t i; double d; const char *p; size_t n; rst_object *o;
} py_scalar;

/* The value under `key` whatever its type (one Python-to-C call instead of
   two): out->type is its rst_value_type; scalar types are decoded into
   `out`; arrays, records, OS strings and sealed values are left to the
   caller (RST_OK with only out->type set); no such key: RST_ERR_NOT_FOUND. */
static rst_status py_decode_scalar(rst_coder *c, const char *key, py_scalar *out)
{
    rst_value_type t = rst_coder_value_type(c, key);
    out->type = (int)t;
    switch (t) {
    case RST_TYPE_NONE:   return RST_ERR_NOT_FOUND;
    case RST_TYPE_BOOL:   return rst_decode_bool(c, key, &out->b);
    case RST_TYPE_INT:    return rst_decode_int(c, key, &out->i);
    case RST_TYPE_DOUBLE: return rst_decode_double(c, key, &out->d);
    case RST_TYPE_STRING: return rst_decode_string(c, key, &out->p, &out->n);
    case RST_TYPE_BYTES: {
        const void *v = NULL;
        rst_status st = rst_decode_bytes(c, key, &v, &out->n);
        out->p = (const char *)v;
        return st;
    }
    case RST_TYPE_OBJECT: return rst_decode_object(c, key, &out->o);
    default:              return RST_OK;
    }
}

static const rst_object_callbacks py_object_callbacks_finished = {
    _py_encode, _py_decode, _py_finished, _py_release
};
static const rst_object_callbacks py_object_callbacks_plain = {
    _py_encode, _py_decode, NULL, _py_release
};
static const rst_object_callbacks *py_object_callbacks(bool with_finished)
{ return with_finished ? &py_object_callbacks_finished : &py_object_callbacks_plain; }

#define PY_STORE_OPS(FLAGS) { RST_STORE_VERSION, FLAGS, py_read, _py_store_release, py_write, \
    py_move, NULL, py_remove, py_list, _py_store_lock, _py_store_unlock, NULL, \
    _py_store_describe, _py_store_destroy }
static const rst_store_ops py_store_ops_private = PY_STORE_OPS(0);
static const rst_store_ops py_store_ops_shared = PY_STORE_OPS(RST_STORE_SHARED);
static const rst_store_ops *py_store_ops(bool shared)
{ return shared ? &py_store_ops_shared : &py_store_ops_private; }
"""


def _pkg_config() -> tuple[list[str], list[str]] | None:
    if shutil.which("pkg-config") is None:
        return None
    try:
        if subprocess.run(["pkg-config", "--exists", "restoration"]).returncode != 0:
            return None
        inc = subprocess.check_output(["pkg-config", "--variable=includedir", "restoration"], text=True).strip()
        lib = subprocess.check_output(["pkg-config", "--variable=libdir", "restoration"], text=True).strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return [inc], [lib]


def _locate() -> tuple[list[str], list[str], str]:
    prefix = os.environ.get("RESTORATION_PREFIX")
    if prefix:
        inc, lib = Path(prefix) / "include", Path(prefix) / "lib"
        if not (inc / "restoration.h").is_file():
            raise SystemExit(f"restoration: RESTORATION_PREFIX={prefix}: no {inc / 'restoration.h'}")
        return [str(inc)], [str(lib)], f"RESTORATION_PREFIX={prefix}"
    found = _pkg_config()
    if found:
        return found[0], found[1], "pkg-config restoration"
    tree = HERE.parent
    header = tree / "Include" / "restoration.h"
    if header.is_file():
        candidates = []
        if os.environ.get("RESTORATION_BUILD_DIR"):
            candidates.append(Path(os.environ["RESTORATION_BUILD_DIR"]))
        candidates += [tree / ".build" / "debug", tree / ".build" / "release"]
        for build in candidates:
            if (build / "librestoration.so").is_file():
                return [str(tree / "Include")], [str(build.resolve())], f"the source tree ({build})"
        raise SystemExit(
            "restoration: found the headers in the source tree but no librestoration.so in "
            + ", ".join(str(c) for c in candidates)
            + ": run `swift build --product restoration` in " + str(tree)
        )
    raise SystemExit(
        "restoration: cannot find the C library: install it (`make install`, which writes the "
        "pkg-config file restoration.pc), or set RESTORATION_PREFIX to its prefix, or build "
        "from the source tree (`swift build --product restoration`)"
    )


SYSTEM_LIBDIRS = {"/usr/lib", "/lib", "/usr/lib64", "/lib64", "/usr/lib/x86_64-linux-gnu",
                  "/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu"}

include_dirs, library_dirs, where = _locate()
print(f"restoration: building against {where}: headers {include_dirs}, library {library_dirs}")
rpath = [d for d in library_dirs if d not in SYSTEM_LIBDIRS]

ffibuilder = FFI()
ffibuilder.cdef(CDEF)
ffibuilder.set_source(
    "restoration._native",
    SOURCE,
    include_dirs=include_dirs,
    library_dirs=library_dirs,
    runtime_library_dirs=rpath,
    libraries=["restoration"],
    extra_compile_args=["-std=c11"],
    py_limited_api=True,      # one abi3 extension for every Python 3 from 3.11 (setup.cfg tags the wheel)
)

if __name__ == "__main__":
    ffibuilder.compile(tmpdir=str(HERE / "build-cffi"), verbose=True)
