// C sources of the fixture plugins, compiled at test time (compilePlugin)
// with cc -shared -fPIC -std=c11 -Wall -Werror -I<repo>/Include. Kept as
// string literals so SwiftPM does not try to build them.

enum Fixtures {
    /// Factories of every signature shape. Each factory registers an object
    /// whose instance is a malloc'd description of the arguments it received:
    /// "cls=K sig=S E=%p P=%p I=id R=path C=<v> X=%p D=%u T=%lld Xinit=%p",
    /// with "-" for a letter the signature lacks. Without I (or R) or P the
    /// factory falls back to a fixed path; without E to the engine init saw.
    /// -DINIT_RESULT=n makes init return n.
    static let signatures = #"""
    #define _POSIX_C_SOURCE 200809L
    #define RST_PLUGIN
    #include <restoration_plugin.h>
    #include <inttypes.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>

    #ifndef INIT_RESULT
    #define INIT_RESULT 0
    #endif

    RST_PLUGIN_DEFINE_API;

    static rst_engine *g_engine;
    static void *g_ctx;
    static int g_init_calls, g_fini_calls, g_fini_ctx_ok;
    RST_PLUGIN_EXPORT int fixture_init_calls(void) { return g_init_calls; }
    RST_PLUGIN_EXPORT int fixture_fini_calls(void) { return g_fini_calls; }
    RST_PLUGIN_EXPORT int fixture_fini_ctx_ok(void) { return g_fini_ctx_ok; }

    static int fx_init(rst_engine *e, void **ctx) {
        g_init_calls++;
        g_engine = e;
        g_ctx = malloc(16);
        *ctx = g_ctx;
        if (INIT_RESULT != 0) { free(g_ctx); *ctx = NULL; }
        return INIT_RESULT;
    }
    static void fx_fini(void *ctx) {
        g_fini_calls++;
        if (ctx == g_ctx) g_fini_ctx_ok++;
        free(ctx);
    }

    static void desc_release(void *inst) { free(inst); }
    static const rst_object_callbacks desc_callbacks = { NULL, NULL, NULL, desc_release };

    typedef struct args {
        const char *sig;
        rst_engine *e; rst_object *p; const char *i; const char *r;
        rst_coder *c; void *x; uint32_t d; int64_t t;
    } args;

    static int has(const args *a, char l) { return strchr(a->sig, l) != NULL; }

    static rst_object *make(const char *cls, const char *defpath, args *a) {
        rst_engine *e = has(a, 'E') ? a->e : g_engine;
        char ident[256], parent_path[1024];
        const char *path = has(a, 'R') ? a->r : (defpath ? defpath : "");
        const char *slash = strrchr(path, '/');
        snprintf(ident, sizeof ident, "%s", has(a, 'I') ? a->i : (slash ? slash + 1 : path));
        snprintf(parent_path, sizeof parent_path, "%.*s", slash ? (int)(slash - path) : 0, path);
        rst_object *parent = has(a, 'P') ? a->p : (slash ? rst_find_object(e, parent_path) : NULL);

        char cval[32] = "-";
        if (has(a, 'C')) {
            int64_t v = 0;
            if (rst_decode_int(a->c, "v", &v) == RST_OK) snprintf(cval, sizeof cval, "%" PRId64, v);
            else snprintf(cval, sizeof cval, "err");
        }
        char ebuf[32] = "-", pbuf[32] = "-", xbuf[32] = "-", dbuf[16] = "-", tbuf[32] = "-";
        if (has(a, 'E')) snprintf(ebuf, sizeof ebuf, "%p", (void *)a->e);
        if (has(a, 'P')) snprintf(pbuf, sizeof pbuf, "%p", (void *)a->p);
        if (has(a, 'X')) snprintf(xbuf, sizeof xbuf, "%p", a->x);
        if (has(a, 'D')) snprintf(dbuf, sizeof dbuf, "%u", a->d);
        if (has(a, 'T')) snprintf(tbuf, sizeof tbuf, "%" PRId64, a->t);
        char *desc = malloc(2048);
        if (desc == NULL) return NULL;
        snprintf(desc, 2048, "cls=%s sig=%s E=%s P=%s I=%s R=%s C=%s X=%s D=%s T=%s Xinit=%p",
                 cls, a->sig[0] ? a->sig : "(none)", ebuf, pbuf, has(a, 'I') ? a->i : "-", has(a, 'R') ? a->r : "-",
                 cval, xbuf, dbuf, tbuf, g_ctx);
        rst_object *o = NULL;
        if (rst_register_object(e, ident, parent, cls, &desc_callbacks, desc, &o) != RST_OK) {
            fprintf(stderr, "fixture: register %s failed: %s\n", ident, rst_last_error());
            free(desc);
            return NULL;
        }
        return o;
    }

    /* rst_factory_fn minus the context */
    RST_PLUGIN_EXPORT rst_object *f_epic(rst_engine *e, rst_object *p, const char *i, rst_coder *c) {
        args a = { "EPIC", e, p, i, NULL, c, NULL, 0, 0 };
        return make("EPIC", NULL, &a);
    }
    RST_PLUGIN_EXPORT rst_object *f_all(rst_engine *e, rst_object *p, const char *i, const char *r,
                                        rst_coder *c, void *x, uint32_t d, int64_t t) {
        args a = { "EPIRCXDT", e, p, i, r, c, x, d, t };
        return make("All", NULL, &a);
    }
    RST_PLUGIN_EXPORT rst_object *f_reverse(int64_t t, uint32_t d, void *x, rst_coder *c,
                                            const char *r, const char *i, rst_object *p, rst_engine *e) {
        args a = { "TDXCRIPE", e, p, i, r, c, x, d, t };
        return make("Reverse", NULL, &a);
    }
    RST_PLUGIN_EXPORT rst_object *f_dtmix(uint32_t d, rst_engine *e, rst_object *p, int64_t t, const char *i) {
        args a = { "DEPTI", e, p, i, NULL, NULL, NULL, d, t };
        return make("DTMix", NULL, &a);
    }
    RST_PLUGIN_EXPORT rst_object *f_rt(const char *r, int64_t t) {
        args a = { "RT", NULL, NULL, NULL, r, NULL, NULL, 0, t };
        return make("PathTime", NULL, &a);
    }
    RST_PLUGIN_EXPORT rst_object *f_none(void) {
        args a = { "", NULL, NULL, NULL, NULL, NULL, NULL, 0, 0 };
        return make("Empty", "Root/Empty", &a);
    }
    RST_PLUGIN_EXPORT rst_object *f_xdctipe(void *x, uint32_t d, rst_coder *c, int64_t t,
                                            const char *i, rst_object *p, rst_engine *e) {
        args a = { "XDCTIPE", e, p, i, NULL, c, x, d, t };
        return make("XDCTIPE", NULL, &a);
    }
    RST_PLUGIN_EXPORT rst_object *f_tdx(int64_t t, uint32_t d, void *x) {
        args a = { "TDX", NULL, NULL, NULL, NULL, NULL, x, d, t };
        return make("TDX", "Root/Mid/TDX", &a);
    }
    /* declines */
    RST_PLUGIN_EXPORT rst_object *f_decline(rst_engine *e, rst_object *p, const char *i) {
        (void)e; (void)p; (void)i;
        return NULL;
    }
    /* registers elsewhere and returns that object */
    RST_PLUGIN_EXPORT rst_object *f_elsewhere(rst_engine *e, rst_object *p, const char *i) {
        char other[300];
        snprintf(other, sizeof other, "%s-elsewhere", i);
        rst_object *o = NULL;
        char *desc = strdup("elsewhere");
        if (rst_register_object(e, other, p, "Elsewhere", &desc_callbacks, desc, &o) != RST_OK) { free(desc); return NULL; }
        return o;
    }
    /* returns its parent, registering nothing */
    RST_PLUGIN_EXPORT rst_object *f_parent(rst_engine *e, rst_object *p, const char *i) {
        (void)e; (void)i;
        return p;
    }
    /* returns a pointer that is no object at all: must never be dereferenced */
    RST_PLUGIN_EXPORT rst_object *f_garbage(void) {
        return (rst_object *)(uintptr_t)0x10;
    }

    static const rst_plugin_class classes[] = {
        { "EPIC", "f_epic", "EPIC" },
        { "All", "f_all", "EPIRCXDT" },
        { "Reverse", "f_reverse", "TDXCRIPE" },
        { "DTMix", "f_dtmix", "DEPTI" },
        { "PathTime", "f_rt", "RT" },
        { "Empty", "f_none", "" },
        { "XDCTIPE", "f_xdctipe", "XDCTIPE" },
        { "TDX", "f_tdx", "TDX" },
        { "Decline", "f_decline", "EPI" },
        { "Elsewhere", "f_elsewhere", "EPI" },
        { "ReturnsParent", "f_parent", "EPI" },
        { "Garbage", "f_garbage", "" },
    };
    static const rst_plugin_manifest manifest = {
        RST_PLUGIN_ABI_VERSION, "signatures", "1.0", sizeof classes / sizeof classes[0], classes, fx_init, fx_fini
    };
    RST_PLUGIN_EXPORT const rst_plugin_manifest *rst_plugin_manifest_v1(const rst_host_api *api) {
        RST_PLUGIN_INIT(api);
        return &manifest;
    }
    """#

    /// A small plugin with two classes, CLASS1 and CLASS2 (factories
    /// signature "EPI"; the instance is "TAG:class"). Variants:
    /// -DV1_STRUCT (a 1.0 manifest), -DSIZED=n (manifest_size),
    /// -DNO_MANIFEST, -DNULL_MANIFEST, -DABI=n, -DTAG="x", -DCLASS1="x",
    /// -DCLASS2="x", -DINIT_RESULT=n.
    static let simple = #"""
    #define _POSIX_C_SOURCE 200809L
    #define RST_PLUGIN
    #include <restoration_plugin.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>

    #ifndef ABI
    #define ABI RST_PLUGIN_ABI_VERSION
    #endif
    #ifndef TAG
    #define TAG "simple"
    #endif
    #ifndef CLASS1
    #define CLASS1 "Simple1"
    #endif
    #ifndef CLASS2
    #define CLASS2 "Simple2"
    #endif
    #ifndef INIT_RESULT
    #define INIT_RESULT 0
    #endif

    RST_PLUGIN_DEFINE_API;

    static int g_init_calls, g_fini_calls;
    RST_PLUGIN_EXPORT int fixture_init_calls(void) { return __atomic_load_n(&g_init_calls, __ATOMIC_SEQ_CST); }
    RST_PLUGIN_EXPORT int fixture_fini_calls(void) { return __atomic_load_n(&g_fini_calls, __ATOMIC_SEQ_CST); }

    static int fx_init(rst_engine *e, void **ctx) {
        (void)e; (void)ctx;
        __atomic_fetch_add(&g_init_calls, 1, __ATOMIC_SEQ_CST);
        return INIT_RESULT;
    }
    static void fx_fini(void *ctx) { (void)ctx; __atomic_fetch_add(&g_fini_calls, 1, __ATOMIC_SEQ_CST); }

    static void desc_release(void *inst) { free(inst); }
    static const rst_object_callbacks desc_callbacks = { NULL, NULL, NULL, desc_release };

    static rst_object *make(rst_engine *e, rst_object *p, const char *i, const char *cls) {
        char *desc = malloc(256);
        if (desc == NULL) return NULL;
        snprintf(desc, 256, "%s:%s", TAG, cls);
        rst_object *o = NULL;
        if (rst_register_object(e, i, p, cls, &desc_callbacks, desc, &o) != RST_OK) { free(desc); return NULL; }
        return o;
    }
    RST_PLUGIN_EXPORT rst_object *simple_make1(rst_engine *e, rst_object *p, const char *i) { return make(e, p, i, CLASS1); }
    RST_PLUGIN_EXPORT rst_object *simple_make2(rst_engine *e, rst_object *p, const char *i) { return make(e, p, i, CLASS2); }

    static const rst_plugin_class classes[] = {
        { CLASS1, "simple_make1", "EPI" },
        { CLASS2, "simple_make2", "EPI" },
    };
    #if defined(V1_STRUCT)
    /* Exactly the manifest a plugin built against the 1.0 header has: the
     * seven v1 members and nothing after them. */
    struct manifest_v1 {
        uint32_t abi_version; const char *name; const char *version; size_t class_count;
        const rst_plugin_class *classes; int (*init)(rst_engine *, void **); void (*fini)(void *);
    };
    static const struct manifest_v1 manifest_storage = { 1, TAG, "2.0", 2, classes, fx_init, fx_fini };
    #define manifest (*(const rst_plugin_manifest *)(const void *)&manifest_storage)
    #elif defined(SIZED)
    static const rst_plugin_manifest manifest = {
        ABI, TAG, "2.0", 2, classes, fx_init, fx_fini, SIZED, 0, { 0 }
    };
    #else
    static const rst_plugin_manifest manifest = {
        ABI, TAG, "2.0", 2, classes, fx_init, fx_fini
    };
    #endif

    #if defined(NO_MANIFEST)
    RST_PLUGIN_EXPORT const rst_plugin_manifest *not_the_manifest(const rst_host_api *api) {
        (void)api;
        return &manifest;
    }
    #elif defined(NULL_MANIFEST)
    RST_PLUGIN_EXPORT const rst_plugin_manifest *rst_plugin_manifest_v1(const rst_host_api *api) {
        RST_PLUGIN_INIT(api);
        (void)&manifest;
        return NULL;
    }
    #else
    RST_PLUGIN_EXPORT const rst_plugin_manifest *rst_plugin_manifest_v1(const rst_host_api *api) {
        RST_PLUGIN_INIT(api);
        return &manifest;
    }
    #endif
    """#

    /// Classes with bad declarations next to a good one: a letter outside
    /// the table, a repeated letter, a missing factory symbol, a NULL
    /// signature, a duplicate declaration, an empty class name.
    static let badClasses = #"""
    #define _POSIX_C_SOURCE 200809L
    #define RST_PLUGIN
    #include <restoration_plugin.h>
    #include <stdlib.h>
    #include <string.h>

    RST_PLUGIN_DEFINE_API;

    static void desc_release(void *inst) { free(inst); }
    static const rst_object_callbacks desc_callbacks = { NULL, NULL, NULL, desc_release };

    RST_PLUGIN_EXPORT rst_object *bad_make(rst_engine *e, rst_object *p, const char *i) {
        rst_object *o = NULL;
        char *desc = strdup("bad-classes:Good");
        if (rst_register_object(e, i, p, "Good", &desc_callbacks, desc, &o) != RST_OK) { free(desc); return NULL; }
        return o;
    }

    static const rst_plugin_class classes[] = {
        { "BadLetter", "bad_make", "EPQ" },
        { "Repeated", "bad_make", "EPIE" },
        { "MissingSymbol", "no_such_factory", "EPI" },
        { "NullSignature", "bad_make", NULL },
        { "Good", "bad_make", "EPI" },
        { "Good", "bad_make", "EPI" },
        { "", "bad_make", "EPI" },
    };
    static const rst_plugin_manifest manifest = {
        RST_PLUGIN_ABI_VERSION, "bad-classes", "0.1", sizeof classes / sizeof classes[0], classes, NULL, NULL
    };
    RST_PLUGIN_EXPORT const rst_plugin_manifest *rst_plugin_manifest_v1(const rst_host_api *api) {
        RST_PLUGIN_INIT(api);
        return &manifest;
    }
    """#

    /// A C host linked against librestoration.so: restores the archive
    /// argv[2] with plugin_dir argv[1], prints what it found, saves again.
    static let cHost = #"""
    #include <restoration.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>

    static void log_line(rst_engine *e, int level, const char *message, void *ctx) {
        (void)e; (void)ctx;
        printf("log[%d] %s\n", level, message);
    }

    int main(int argc, char **argv) {
        if (argc != 3) { fprintf(stderr, "usage: host PLUGIN_DIR ARCHIVE\n"); return 2; }
        rst_engine_options opts = RST_ENGINE_OPTIONS_INIT;
        opts.plugin_dir = argv[1];
        opts.archive_path = argv[2];
        opts.flags = RST_ENGINE_NO_CRASH_GUARD;
        opts.log = log_line;
        rst_engine *e = NULL;
        if (rst_engine_create(&opts, &e) != RST_OK) { fprintf(stderr, "create: %s\n", rst_last_error()); return 1; }
        rst_object *tabs = NULL, *nav = NULL, *list = NULL;
        if (rst_register_object(e, "Tabs", NULL, NULL, NULL, NULL, &tabs) != RST_OK ||
            rst_register_object(e, "Countries", tabs, NULL, NULL, NULL, &nav) != RST_OK ||
            rst_register_object(e, "List", nav, NULL, NULL, NULL, &list) != RST_OK) {
            fprintf(stderr, "register: %s\n", rst_last_error());
            return 1;
        }
        rst_status s = rst_restore(e);
        if (s != RST_OK) { fprintf(stderr, "restore: %s: %s\n", rst_status_name(s), rst_last_error()); return 1; }
        rst_restore_report r;
        rst_last_restore_report(e, &r);
        printf("report archived=%llu restored=%llu skipped=%llu loaded=%llu rejected=%llu\n",
               (unsigned long long)r.archived, (unsigned long long)r.restored, (unsigned long long)r.skipped,
               (unsigned long long)r.plugins_loaded, (unsigned long long)r.plugins_rejected);
        const char *paths[] = { "Tabs/Countries/Detail", "Tabs/Countries/Detail/Map", "Tabs/Countries/Detail/Notes" };
        for (size_t i = 0; i < 3; i++) {
            rst_object *o = rst_find_object(e, paths[i]);
            printf("object %s %s\n", paths[i], o ? rst_object_class_name(o) : "MISSING");
        }
        rst_plugin_info *info = NULL;
        size_t count = 0;
        if (rst_list_plugins(e, &info, &count) == RST_OK) {
            for (size_t i = 0; i < count; i++)
                printf("plugin %s state=%d classes=%zu\n", info[i].name, (int)info[i].state, info[i].class_count);
            rst_free(info);
        }
        void *buf = NULL;
        size_t len = 0;
        if (rst_save_to_buffer(e, &buf, &len) != RST_OK) { fprintf(stderr, "save: %s\n", rst_last_error()); return 1; }
        printf("saved again: %zu bytes\n", len);
        rst_free(buf);
        rst_engine_destroy(e);
        return 0;
    }
    """#
}
