/* deferred.c: restoration that finishes later.
 *
 *  - B's decode extends (no deadline), C's finished extends (50 ms);
 *    rst_restore returns, did_finish_restoring waits; another thread
 *    completes B's token; C's expires (noticed at the next engine call):
 *    RST_SKIP_EXPIRED, did_finish_restoring runs once, on the noticing
 *    thread; completing either token again: RST_ERR_STATE;
 *  - a token completed from another thread runs did_finish_restoring there;
 *  - the crash-loop marker stays while a token is open;
 *  - misuse: outside decode/finished (a factory, no restore), NULLs,
 *    another engine's token; a new restore expires the old tokens.
 *
 *   deferred DIR [seconds, ignored]   (also run under ThreadSanitizer: make test-tsan)
 */
#include "check.h"
#include <poll.h>
#include <pthread.h>

static rst_engine *g_e;
static const char *extend_in_decode, *extend_in_finished;
static uint32_t decode_deadline, finished_deadline;
static rst_restore_token *tok_decode, *tok_finished;
static int did_finish;
static pthread_t did_finish_thread;

static void enc(void *inst, rst_coder *c) { CHECK_OK(rst_encode_string(c, "id", (const char *)inst)); }
static void dec(void *inst, rst_coder *c) {
    (void)c;
    if (extend_in_decode && strcmp(extend_in_decode, inst) == 0)
        CHECK_OK(rst_extend_restoration(g_e, decode_deadline, &tok_decode));
}
static void fin(void *inst) {
    if (extend_in_finished && strcmp(extend_in_finished, inst) == 0)
        CHECK_OK(rst_extend_restoration(g_e, finished_deadline, &tok_finished));
}
static void rel(void *inst) { free(inst); }
static const rst_object_callbacks save_cbs = { enc, NULL, NULL, NULL };
static const rst_object_callbacks cbs = { enc, dec, fin, rel };

static rst_object *make(rst_engine *e, rst_object *parent, const char *id, rst_coder *c, void *ctx) {
    (void)c; (void)ctx;
    rst_restore_token *t = NULL;
    CHECK_ERR(rst_extend_restoration(e, 0, &t), RST_ERR_STATE, "decode or finished");
    rst_object *o = NULL;
    CHECK_OK(rst_register_object(e, id, parent, "Gen", &cbs, strdup(id), &o));
    return o;
}

static void on_finish(rst_engine *e, void *ctx) {
    (void)e; (void)ctx;
    did_finish++;
    did_finish_thread = pthread_self();
}

static rst_engine *engine(const char *archive) {
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = archive;
    o.did_finish_restoring = on_finish;
    o.log = collect_log;
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&o, &e));
    CHECK_OK(rst_register_class(e, "Gen", make, NULL));
    g_e = e;
    return e;
}

static void *complete_on_thread(void *arg) {
    rst_restore_token *t = arg;
    CHECK_OK(rst_complete_restoration(g_e, t));
    return NULL;
}

static void sleep_ms(int ms) {
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv) {
    check_prog = "deferred";
    CHECK(argc >= 2);   /* make test-tsan passes a duration too */
    char *archive = xasprintf("%s/state.rst", argv[1]);
    char *marker = xasprintf("%s.restoring", archive);
    {
        rst_engine *e = new_engine(archive);
        CHECK_OK(rst_register_object(e, "A", NULL, "Gen", &save_cbs, (void *)"A", NULL));
        CHECK_OK(rst_register_object(e, "B", NULL, "Gen", &save_cbs, (void *)"B", NULL));
        CHECK_OK(rst_register_object(e, "C", NULL, "Gen", &save_cbs, (void *)"C", NULL));
        CHECK_OK(rst_save(e));
        /* Outside a restore. */
        rst_restore_token *t = NULL;
        CHECK_ERR(rst_extend_restoration(e, 10, &t), RST_ERR_STATE, "decode or finished");
        CHECK_ST(rst_extend_restoration(NULL, 10, &t), RST_ERR_INVALID);
        CHECK_ST(rst_extend_restoration(e, 10, NULL), RST_ERR_INVALID);
        CHECK_ST(rst_complete_restoration(e, NULL), RST_ERR_INVALID);
        CHECK_ST(rst_complete_restoration(NULL, NULL), RST_ERR_INVALID);
        rst_engine_destroy(e);
    }

    /* 1. Two tokens: one completed from another thread, one expired. */
    {
        rst_engine *e = engine(archive);
        extend_in_decode = "B";
        extend_in_finished = "C";
        decode_deadline = 0;
        finished_deadline = 50;
        CHECK_OK(rst_restore(e));
        CHECK(tok_decode != NULL && tok_finished != NULL);
        CHECK_EQ(did_finish, 0);
        CHECK(file_exists(marker));            /* the marker stays */
        pthread_t th;
        CHECK(pthread_create(&th, NULL, complete_on_thread, tok_decode) == 0);
        CHECK(pthread_join(th, NULL) == 0);
        CHECK_EQ(did_finish, 0);                /* C's token is still open */
        CHECK(file_exists(marker));
        sleep_ms(120);
        rst_skipped_record *sk = NULL;
        size_t n = 0;
        CHECK_OK(rst_last_restore_skips(e, &sk, &n));   /* notices the expiry */
        CHECK_EQ(did_finish, 1);
        CHECK(pthread_equal(did_finish_thread, pthread_self()));
        CHECK(!file_exists(marker));
        CHECK_EQ(n, 1);
        CHECK_STR(sk[0].path, "C");
        CHECK_EQ(sk[0].reason, RST_SKIP_EXPIRED);
        CHECK(strstr(sk[0].detail, "deadline") != NULL);
        rst_free(sk);
        rst_restore_report rep;
        CHECK_OK(rst_last_restore_report(e, &rep));
        CHECK_EQ(rep.restored, 2);
        CHECK_EQ(rep.skipped, 1);
        CHECK(rst_find_object(e, "C") != NULL);  /* it keeps what it decoded */
        CHECK_ERR(rst_complete_restoration(e, tok_finished), RST_ERR_STATE, "expired");
        CHECK_ERR(rst_complete_restoration(e, tok_decode), RST_ERR_STATE, "already completed");
        CHECK_EQ(did_finish, 1);

        /* Another engine's token. */
        rst_engine *other = new_engine(NULL);
        CHECK_ERR(rst_complete_restoration(other, tok_decode), RST_ERR_INVALID, "not one of this engine's");
        rst_engine_destroy(other);
        rst_engine_destroy(e);
    }

    /* 2. The last completion runs did_finish_restoring on its thread. */
    {
        rst_engine *e = engine(archive);
        extend_in_decode = "A";
        extend_in_finished = NULL;
        decode_deadline = 60000;
        did_finish = 0;
        tok_decode = NULL;
        CHECK_OK(rst_restore(e));
        CHECK_EQ(did_finish, 0);
        pthread_t th;
        CHECK(pthread_create(&th, NULL, complete_on_thread, tok_decode) == 0);
        CHECK(pthread_join(th, NULL) == 0);
        CHECK_EQ(did_finish, 1);
        CHECK(pthread_equal(did_finish_thread, th));
        CHECK(!file_exists(marker));
        rst_restore_report rep;
        CHECK_OK(rst_last_restore_report(e, &rep));
        CHECK_EQ(rep.restored, 3);
        CHECK_EQ(rep.skipped, 0);

        /* 3. A new restore expires the previous restore's open tokens. */
        rst_unregister_object(e, rst_find_object(e, "A"));
        rst_unregister_object(e, rst_find_object(e, "B"));
        rst_unregister_object(e, rst_find_object(e, "C"));
        did_finish = 0;
        CHECK_OK(rst_restore(e));            /* A extends again (60 s) */
        CHECK_EQ(did_finish, 0);
        rst_restore_token *first = tok_decode;
        rst_unregister_object(e, rst_find_object(e, "A"));
        extend_in_decode = NULL;
        CHECK_OK(rst_restore(e));
        CHECK_EQ(did_finish, 2);             /* the old restore's, then this one's */
        CHECK_ERR(rst_complete_restoration(e, first), RST_ERR_STATE, "expired");
        rst_engine_destroy(e);
    }

    /* 4. Destroy with a token open: freed, the marker removed, no did_finish. */
    {
        rst_engine *e = engine(archive);
        extend_in_decode = "B";
        decode_deadline = 0;
        did_finish = 0;
        CHECK_OK(rst_restore(e));
        CHECK(file_exists(marker));
        rst_engine_destroy(e);
        CHECK_EQ(did_finish, 0);
        CHECK(!file_exists(marker));
    }

    /* 4. On time: the engine's descriptor turns readable at the deadline and
     *    rst_dispatch expires the token there (no other engine call). */
    {
        rst_engine *e = engine(archive);
        int fd = rst_event_fd(e);
        CHECK(fd >= 0);
        CHECK_EQ(rst_next_timeout_ms(e), -1);
        extend_in_decode = NULL;
        extend_in_finished = "C";
        finished_deadline = 300;
        tok_finished = NULL;
        did_finish = 0;
        CHECK_OK(rst_restore(e));
        CHECK(tok_finished != NULL);
        int64_t wait = rst_next_timeout_ms(e);
        CHECK_MSG(wait > 0 && wait <= 300, "rst_next_timeout_ms is %lld, expected 1..300", (long long)wait);
        struct pollfd p = { fd, POLLIN, 0 };
        CHECK_EQ(poll(&p, 1, 0), 0);                 /* not yet */
        CHECK_EQ(did_finish, 0);
        /* Readable at the deadline; a loaded machine gets 5 s of margin. */
        CHECK_MSG(poll(&p, 1, 5000) == 1 && (p.revents & POLLIN), "the descriptor did not turn readable at the deadline");
        CHECK_OK(rst_dispatch(e));
        CHECK_EQ(did_finish, 1);
        CHECK(pthread_equal(did_finish_thread, pthread_self()));
        CHECK(!file_exists(marker));
        CHECK_EQ(rst_next_timeout_ms(e), -1);
        CHECK_EQ(poll(&p, 1, 0), 0);                 /* nothing left */
        CHECK_ERR(rst_complete_restoration(e, tok_finished), RST_ERR_STATE, "expired");
        rst_engine_destroy(e);
        extend_in_finished = NULL;
    }
    free(archive);
    free(marker);
    DONE();
}
