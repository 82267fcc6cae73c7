/* carry.c: carried records are judged record by record (docs/EVOLUTION.md,
 * "Carried records"). A record nothing could produce is carried with its
 * descendants; when a live object later holds the carried record's own
 * path, that record is not written (the live object's state is) and its
 * carried descendants are written under the live object. */
#include "check.h"

typedef struct { const char *tag; int64_t v; } obj;

static void enc(void *inst, rst_coder *c) {
    obj *o = inst;
    CHECK_OK(rst_encode_string(c, "tag", o->tag));
    CHECK_OK(rst_encode_int(c, "v", o->v));
}
static void dec(void *inst, rst_coder *c) {
    obj *o = inst;
    const char *t; size_t n;
    if (rst_decode_string(c, "tag", &t, &n) == RST_OK) o->tag = strdup(t);
    rst_decode_int(c, "v", &o->v);
}
static const rst_object_callbacks cb = { enc, dec, NULL, NULL };

static rst_engine *engine(uint32_t carry) {
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.carry_saves = carry;
    rst_engine *e;
    CHECK_OK(rst_engine_create(&o, &e));
    return e;
}

int main(void) {
    check_prog = "carry";
    /* 1. The first build has Doc, Doc/Pane and Doc/Pane/Note (and Doc/Pane/Other). */
    obj doc = { "doc", 1 }, pane = { "saved pane", 2 }, note = { "note", 3 }, other = { "other", 4 };
    rst_engine *a = engine(0);
    rst_object *d, *p;
    CHECK_OK(rst_register_object(a, "Doc", NULL, "Doc", &cb, &doc, &d));
    CHECK_OK(rst_register_object(a, "Pane", d, "Pane", &cb, &pane, &p));
    CHECK_OK(rst_register_object(a, "Note", p, "Note", &cb, &note, NULL));
    CHECK_OK(rst_register_object(a, "Other", p, "Note", &cb, &other, NULL));
    void *buf; size_t len;
    CHECK_OK(rst_save_to_buffer(a, &buf, &len));
    rst_engine_destroy(a);

    /* 2. A build without Pane's class: Doc/Pane is carried with its two descendants. */
    rst_engine *b = engine(UINT32_MAX);
    obj doc2 = { "doc", 0 };
    CHECK_OK(rst_register_object(b, "Doc", NULL, "Doc", &cb, &doc2, &d));
    CHECK_OK(rst_restore_from_buffer(b, buf, len));
    rst_free(buf);
    rst_skipped_record *sk; size_t nsk;
    CHECK_OK(rst_last_restore_skips(b, &sk, &nsk));
    CHECK_EQ(nsk, 3);   /* Doc/Pane (NO_FACTORY) and its two descendants */
    rst_free(sk);

    /* 3. The app now creates a live Pane itself, at the carried record's path,
     *    and a live Doc/Pane/Other too; Doc/Pane/Note it does not know. */
    obj live = { "live pane", 20 }, other2 = { "live other", 40 };
    CHECK_OK(rst_register_object(b, "Pane", d, "Pane", &cb, &live, &p));
    CHECK_OK(rst_register_object(b, "Other", p, "Note", &cb, &other2, NULL));
    CHECK_OK(rst_save_to_buffer(b, &buf, &len));
    rst_engine_destroy(b);

    /* 4. A full build restores: Pane and Other are the live objects' state,
     *    Note (carried) is written under the live Pane. */
    obj d3 = { 0 }, p3 = { 0 }, n3 = { 0 }, o3 = { 0 };
    rst_engine *c = engine(0);
    CHECK_OK(rst_register_object(c, "Doc", NULL, "Doc", &cb, &d3, &d));
    CHECK_OK(rst_register_object(c, "Pane", d, "Pane", &cb, &p3, &p));
    CHECK_OK(rst_register_object(c, "Note", p, "Note", &cb, &n3, NULL));
    CHECK_OK(rst_register_object(c, "Other", p, "Note", &cb, &o3, NULL));
    CHECK_OK(rst_restore_from_buffer(c, buf, len));
    rst_free(buf);
    rst_restore_report rep;
    CHECK_OK(rst_last_restore_report(c, &rep));
    CHECK_EQ(rep.archived, 4);   /* each path once: no duplicate of Pane or Other */
    CHECK_EQ(rep.restored, 4);
    CHECK_STR(p3.tag, "live pane");
    CHECK_EQ(p3.v, 20);
    CHECK_STR(o3.tag, "live other");
    CHECK_EQ(o3.v, 40);
    CHECK_STR(n3.tag, "note");   /* the carried descendant, under the live Pane */
    CHECK_EQ(n3.v, 3);
    rst_engine_destroy(c);
    free((void *)p3.tag); free((void *)o3.tag); free((void *)n3.tag); free((void *)d3.tag);
    DONE();
}
