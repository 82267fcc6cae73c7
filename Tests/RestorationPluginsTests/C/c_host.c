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
