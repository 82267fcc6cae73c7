/* One archive, two languages: the C half of Python/tests/test_crosslang.py.
 *   crosslang save  ARCHIVE   registers "peer" and "values" and saves every
 *                             value type (the same values the Python half writes)
 *   crosslang check ARCHIVE   restores an archive the Python half wrote and
 *                             checks every value; prints each failed check
 * Exit status 0 when every check passed. */
#include <restoration.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, checks;
static rst_object *peer;

#define CHECK(cond, ...) do { checks++; if (!(cond)) { failures++; \
    printf("crosslang: FAILED: "); printf(__VA_ARGS__); printf("\n"); } } while (0)

static void need(rst_status st, const char *what) {
    if (st != RST_OK) { printf("crosslang: FAILED: %s: %s: %s\n", what, rst_status_name(st), rst_last_error()); exit(1); }
}

static const int64_t INTS[] = { 1, -2, 4611686018427387904LL, -9223372036854775807LL - 1 };
static const char *const NAMES[] = { "a", "", "Grüße" };
static const unsigned char BLOB[] = { 0x00, 0x01, 0xff, 0x7f };
static const char OSPATH[] = "/tmp/\xff\xfe-r\xc3\xa9sum\xc3\xa9";

static void encode_values(void *instance, rst_coder *c) {
    (void)instance;
    need(rst_encode_bool(c, "flag", true), "bool");
    need(rst_encode_bool(c, "off", false), "bool");
    need(rst_encode_int(c, "count", -42), "int");
    need(rst_encode_int(c, "big", 9223372036854775807LL), "int");
    need(rst_encode_double(c, "ratio", 0.1), "double");
    need(rst_encode_double(c, "neg", -1e300), "double");
    need(rst_encode_string(c, "name", "Grüße, 世界"), "string");
    need(rst_encode_string(c, "empty", ""), "string");
    need(rst_encode_bytes(c, "blob", BLOB, sizeof BLOB), "bytes");
    need(rst_encode_bytes(c, "noblob", "", 0), "bytes");
    need(rst_encode_os_string(c, "file", OSPATH), "os string");
    need(rst_encode_int_array(c, "ints", INTS, 4), "int array");
    need(rst_encode_int_array(c, "noints", NULL, 0), "int array");
    need(rst_encode_string_array(c, "names", NAMES, 3), "string array");
    need(rst_encode_object(c, "peer", peer), "object");
    rst_object *pair[2] = { peer, peer };
    need(rst_encode_object_array(c, "peers", pair, 2), "object array");
    need(rst_encode_begin_record(c, "record"), "record");
    need(rst_encode_int(c, "x", 1), "record x");
    need(rst_encode_double(c, "y", 2.5), "record y");
    need(rst_encode_begin_record(c, "inner"), "inner");
    need(rst_encode_string(c, "z", "deep"), "inner z");
    need(rst_encode_end_record(c), "inner end");
    need(rst_encode_end_record(c), "record end");
}

static void decode_values(void *instance, rst_coder *c) {
    (void)instance;
    bool b = false; int64_t i = 0; double d = 0; const char *s = NULL; const void *p = NULL; size_t n = 0;
    CHECK(rst_decode_bool(c, "flag", &b) == RST_OK && b == true, "flag: %s", rst_last_error());
    CHECK(rst_decode_bool(c, "off", &b) == RST_OK && b == false, "off");
    CHECK(rst_decode_int(c, "count", &i) == RST_OK && i == -42, "count = %lld", (long long)i);
    CHECK(rst_decode_int(c, "big", &i) == RST_OK && i == 9223372036854775807LL, "big = %lld", (long long)i);
    CHECK(rst_decode_double(c, "ratio", &d) == RST_OK && d == 0.1, "ratio = %.17g", d);
    CHECK(rst_decode_double(c, "neg", &d) == RST_OK && d == -1e300, "neg = %.17g", d);
    CHECK(rst_decode_string(c, "name", &s, &n) == RST_OK && n == strlen("Grüße, 世界") && memcmp(s, "Grüße, 世界", n) == 0, "name");
    CHECK(rst_decode_string(c, "empty", &s, &n) == RST_OK && n == 0, "empty");
    CHECK(rst_decode_bytes(c, "blob", &p, &n) == RST_OK && n == sizeof BLOB && memcmp(p, BLOB, n) == 0, "blob (%zu bytes)", n);
    CHECK(rst_decode_bytes(c, "noblob", &p, &n) == RST_OK && n == 0, "noblob");
    CHECK(rst_coder_value_type(c, "file") == RST_TYPE_OS_STRING, "file's type %d", rst_coder_value_type(c, "file"));
    CHECK(rst_decode_os_string(c, "file", &s) == RST_OK && strcmp(s, OSPATH) == 0, "file = '%s'", s ? s : "(null)");
    int64_t ints[8]; size_t count = 0;
    CHECK(rst_decode_int_array(c, "ints", ints, 8, &count) == RST_OK && count == 4 && memcmp(ints, INTS, sizeof INTS) == 0, "ints (%zu)", count);
    CHECK(rst_decode_int_array(c, "noints", ints, 8, &count) == RST_OK && count == 0, "noints (%zu)", count);
    for (size_t k = 0; k < 3; k++)
        CHECK(rst_decode_string_array(c, "names", k, &s, &n, &count) == RST_OK && count == 3
              && n == strlen(NAMES[k]) && memcmp(s, NAMES[k], n) == 0, "names[%zu]", k);
    rst_object *o = NULL;
    CHECK(rst_decode_object(c, "peer", &o) == RST_OK && o == peer, "peer");
    for (size_t k = 0; k < 2; k++)
        CHECK(rst_decode_object_array(c, "peers", k, &o, &count) == RST_OK && count == 2 && o == peer, "peers[%zu]", k);
    CHECK(rst_decode_begin_record(c, "record") == RST_OK, "record: %s", rst_last_error());
    CHECK(rst_decode_int(c, "x", &i) == RST_OK && i == 1, "record.x");
    CHECK(rst_decode_double(c, "y", &d) == RST_OK && d == 2.5, "record.y");
    CHECK(rst_decode_begin_record(c, "inner") == RST_OK, "record.inner");
    CHECK(rst_decode_string(c, "z", &s, &n) == RST_OK && n == 4 && memcmp(s, "deep", 4) == 0, "record.inner.z");
    CHECK(rst_decode_end_record(c) == RST_OK, "inner end");
    CHECK(rst_decode_end_record(c) == RST_OK, "record end");
    /* A list no C array holds, as the Python half writes it: a record with
       "#list" (the length) and items "0".."n-1". */
    CHECK(rst_decode_begin_record(c, "floats") == RST_OK, "floats");
    CHECK(rst_decode_int(c, "#list", &i) == RST_OK && i == 2, "floats #list");
    CHECK(rst_decode_double(c, "0", &d) == RST_OK && d == 0.5, "floats[0]");
    CHECK(rst_decode_double(c, "1", &d) == RST_OK && d == -2.0, "floats[1]");
    CHECK(rst_decode_end_record(c) == RST_OK, "floats end");
}

static const rst_object_callbacks VALUES = { encode_values, decode_values, NULL, NULL };

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[1], "save") != 0 && strcmp(argv[1], "check") != 0)) {
        fprintf(stderr, "usage: crosslang save|check ARCHIVE\n");
        return 2;
    }
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = argv[2];
    rst_engine *e = NULL;
    need(rst_engine_create(&o, &e), "create");
    need(rst_register_object(e, "peer", NULL, NULL, NULL, NULL, &peer), "register peer");
    need(rst_register_object(e, "values", NULL, "Values", &VALUES, NULL, NULL), "register values");
    if (strcmp(argv[1], "save") == 0) {
        need(rst_save(e), "save");
        printf("crosslang: saved\n");
    } else {
        need(rst_restore(e), "restore");
        rst_restore_report r;
        need(rst_last_restore_report(e, &r), "report");
        CHECK(r.restored == 2 && r.skipped == 0, "restored %llu, skipped %llu",
              (unsigned long long)r.restored, (unsigned long long)r.skipped);
        printf("crosslang: %d checks, %d failed\n", checks, failures);
    }
    rst_engine_destroy(e);
    return failures ? 1 : 0;
}
