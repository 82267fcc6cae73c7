/* contract_sqlite.c: the store contract (Tests/RestorationCTests/C/store_contract.h,
 * the checks the file and memory stores pass) on Examples/sqlite-store, then
 * the same store under an engine wrapped by the counting store: every read
 * released, every lock unlocked, destroy called once.
 *
 *   contract_sqlite DB      (DB must not exist yet) */
#include "check.h"
#include "store_contract.h"
#include "sqlite_store.h"

static int64_t value = 0;
static void enc(void *inst, rst_coder *c) { (void)inst; rst_encode_int(c, "v", value); }
static void dec(void *inst, rst_coder *c) { (void)inst; rst_decode_int(c, "v", &value); }
static const rst_object_callbacks cb = { enc, dec, NULL, NULL };

int main(int argc, char **argv) {
    check_prog = "contract_sqlite";
    CHECK(argc == 2);
    const rst_store_ops *ops;
    void *ctx;
    char err[512];
    CHECK_MSG(sqlite_store_open(argv[1], "contract", &ops, &ctx, err, sizeof err) == RST_OK, "open: %s", err);
    store_contract(ops, ctx, "SQLite store");
    ops->destroy(ctx);

    /* An engine on the SQLite store through the counting wrapper. */
    CHECK_MSG(sqlite_store_open(argv[1], "engine", &ops, &ctx, err, sizeof err) == RST_OK, "open: %s", err);
    counting_store *cs = counting_wrap(ops, ctx);
    static rst_store_ops cops;   /* the table must outlive the engine */
    cops = counting_ops(ops);
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.generations = 2;
    rst_engine *e;
    CHECK_OK(rst_engine_create_with_store(&o, &cops, cs, &e));
    CHECK_OK(rst_register_object(e, "V", NULL, "V", &cb, NULL, NULL));
    for (int k = 1; k <= 4; k++) {
        value = k;
        CHECK_OK(rst_save(e));
    }
    value = 0;
    CHECK_OK(rst_restore(e));
    CHECK_EQ(value, 4);
    CHECK_OK(rst_discard(e));
    CHECK_ST(rst_restore(e), RST_ERR_NOT_FOUND);
    rst_engine_destroy(e);
    CHECK_MSG(cs->reads == cs->releases, "SQLite store under an engine: %d reads, %d releases", cs->reads, cs->releases);
    CHECK_MSG(cs->locks == cs->unlocks, "SQLite store under an engine: %d locks, %d unlocks", cs->locks, cs->unlocks);
    CHECK_EQ(cs->destroys, 1);
    free(cs);
    DONE();
}
