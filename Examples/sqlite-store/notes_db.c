/* notes_db.c: a C host that keeps its restoration state in an SQLite
 * database through sqlite_store.c — kill it, relaunch it, and it is back.
 *
 *   notes_db DB save TEXT       restore, set the note's text, save, exit cleanly
 *   notes_db DB loop            restore, then change and save every 20 ms until killed
 *   notes_db DB show            restore and print "reason=... generation=... text=... count=..."
 *   notes_db DB slots           list the slots the store holds
 *   notes_db DB corrupt         overwrite the current archive with bytes that are no archive
 *
 * The engine keeps two generations, so a corrupt current archive falls back
 * to the one before it. */
#define _POSIX_C_SOURCE 200809L
#include "sqlite_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct note {
    char    text[256];
    int64_t count;      /* saves so far: the loop increments it */
} note;

static void note_encode(void *inst, rst_coder *c) {
    note *n = inst;
    rst_encode_string(c, "text", n->text);
    rst_encode_int(c, "count", n->count);
}

static void note_decode(void *inst, rst_coder *c) {
    note *n = inst;
    const char *t;
    size_t len;
    if (rst_decode_string(c, "text", &t, &len) == RST_OK && len < sizeof n->text) memcpy(n->text, t, len + 1);
    rst_decode_int(c, "count", &n->count);
}

static const rst_object_callbacks note_cb = { note_encode, note_decode, NULL, NULL };

static int fail(const char *what, rst_status s) {
    fprintf(stderr, "notes_db: %s: %s: %s\n", what, rst_status_name(s), rst_last_error());
    return 1;
}

static void quiet_log(rst_engine *e, int level, const char *message, void *ctx) {
    (void)e; (void)ctx;
    if (level >= RST_LOG_WARNING) fprintf(stderr, "notes_db: log: %s\n", message);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: notes_db DB save TEXT | loop | show | slots | corrupt\n");
        return 2;
    }
    const char *db = argv[1], *mode = argv[2];
    const rst_store_ops *ops;
    void *ctx;
    char err[512];
    rst_status s = sqlite_store_open(db, "notes", &ops, &ctx, err, sizeof err);
    if (s != RST_OK) {
        fprintf(stderr, "notes_db: %s\n", err);
        return 1;
    }

    if (strcmp(mode, "corrupt") == 0 || strcmp(mode, "slots") == 0) {
        /* Straight through the store, as a tool would. */
        int rc = 0;
        if (strcmp(mode, "corrupt") == 0) {
            static const char junk[] = "this is no archive";
            s = ops->write(ctx, RST_SLOT_ARCHIVE, 0, junk, sizeof junk - 1);
            if (s != RST_OK) rc = fail("write", s);
        } else {
            static const char *names[] = { "archive", "generation", "invalid", "marker", "quarantine", "session", "crashed" };
            for (int k = RST_SLOT_ARCHIVE; k <= RST_SLOT_CRASHED; k++) {
                uint64_t idx[64];
                size_t n = 0;
                s = ops->list(ctx, (rst_slot)k, idx, 64, &n);
                if (s != RST_OK) { rc = fail("list", s); break; }
                for (size_t i = 0; i < n && i < 64; i++) printf("%s %llu\n", names[k], (unsigned long long)idx[i]);
            }
        }
        ops->destroy(ctx);
        return rc;
    }

    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.generations = 2;
    o.log = quiet_log;
    rst_engine *e;
    if ((s = rst_engine_create_with_store(&o, ops, ctx, &e)) != RST_OK) return fail("create", s);
    static note n = { "", 0 };
    rst_object *obj;
    if ((s = rst_register_object(e, "Note", NULL, "Note", &note_cb, &n, &obj)) != RST_OK) return fail("register", s);

    s = rst_restore(e);
    if (s != RST_OK && s != RST_ERR_NOT_FOUND) fprintf(stderr, "notes_db: restore: %s: %s\n", rst_status_name(s), rst_last_error());
    rst_restore_report rep;
    rst_last_restore_report(e, &rep);

    int rc = 0;
    if (strcmp(mode, "show") == 0) {
        printf("reason=%s status=%s text=%s count=%lld\n", rst_restore_reason_name(rst_last_restore_reason(e)),
               rst_status_name(s), n.text, (long long)n.count);
    } else if (strcmp(mode, "save") == 0 && argc > 3) {
        snprintf(n.text, sizeof n.text, "%s", argv[3]);
        n.count++;
        if ((s = rst_save(e)) != RST_OK) rc = fail("save", s);
    } else if (strcmp(mode, "loop") == 0) {
        printf("loop: restored count=%lld\n", (long long)n.count);
        fflush(stdout);
        for (;;) {
            n.count++;
            snprintf(n.text, sizeof n.text, "edit %lld", (long long)n.count);
            if ((s = rst_save(e)) != RST_OK) { rc = fail("save", s); break; }
            printf("saved %lld\n", (long long)n.count);
            fflush(stdout);
            struct timespec ts = { 0, 20 * 1000 * 1000 };
            nanosleep(&ts, NULL);
        }
    } else {
        fprintf(stderr, "notes_db: unknown mode '%s'\n", mode);
        rc = 2;
    }
    rst_engine_destroy(e);
    return rc;
}
