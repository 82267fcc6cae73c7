/* values.c: the coder through the C ABI.
 *
 * Presence vs value (false, 0, 0.0, "", empty bytes, empty arrays, empty
 * records), missing keys, wrong types, nested records, int and string
 * arrays, key rules, duplicate keys, encode/decode outside their callbacks
 * (a kept coder pointer), rst_encode_object misuse, a failed encode leaving
 * the old archive byte-identical, should_save false, mode 0600, buffers.
 *
 *   values DIR
 */
#include "check.h"
#include <math.h>

typedef void (*script_fn)(rst_coder *c);

/* The object under test is Root/Child; its encode and decode run scripts. */
static script_fn enc_script, dec_script;
static int enc_calls, dec_calls, fin_calls;
static rst_coder *kept_coder;
static rst_engine *other_engine;
static rst_object *other_object;
static rst_engine *cur_engine;

static void child_encode(void *inst, rst_coder *c) { (void)inst; enc_calls++; kept_coder = c; if (enc_script) enc_script(c); }
static void child_decode(void *inst, rst_coder *c) { (void)inst; dec_calls++; kept_coder = c; if (dec_script) dec_script(c); }
static void child_finished(void *inst) { (void)inst; fin_calls++; }
static const rst_object_callbacks child_cb = { child_encode, child_decode, child_finished, NULL };

static void root_encode(void *inst, rst_coder *c) { (void)inst; CHECK_OK(rst_encode_int(c, "root", 1)); }
static const rst_object_callbacks root_cb = { root_encode, NULL, NULL, NULL };

static rst_engine *tree(const char *archive) {
    rst_engine *e = new_engine(archive);
    rst_object *root = NULL;
    CHECK_OK(rst_register_object(e, "Root", NULL, NULL, &root_cb, NULL, &root));
    CHECK_OK(rst_register_object(e, "Child", root, NULL, &child_cb, NULL, NULL));
    return e;
}

/* Saves with `enc`, restores into a new engine with `dec`; both must succeed. */
static void roundtrip(script_fn enc, script_fn dec) {
    enc_script = enc; dec_script = dec;
    enc_calls = dec_calls = fin_calls = 0;
    rst_engine *a = tree(NULL);
    void *buf = NULL; size_t len = 0;
    CHECK_OK(rst_save_to_buffer(a, &buf, &len));
    CHECK(buf != NULL && len > 0);
    CHECK_EQ(enc_calls, 1);
    rst_engine *b = tree(NULL);
    cur_engine = b;
    CHECK_OK(rst_restore_from_buffer(b, buf, len));
    CHECK_EQ(dec_calls, 1);
    CHECK_EQ(fin_calls, 1);
    rst_free(buf);
    rst_engine_destroy(a);
    rst_engine_destroy(b);
    cur_engine = NULL;
}

/* A save whose encode script fails: rst_save_to_buffer returns `status`,
   the message names the object and `frag`; *out stays untouched. */
static void save_fails(script_fn enc, rst_status status, const char *frag) {
    enc_script = enc;
    enc_calls = 0;
    rst_engine *a = tree(NULL);
    void *buf = (void *)0x1; size_t len = 12345;
    CHECK_ST(rst_save_to_buffer(a, &buf, &len), status);
    CHECK_LAST_ERROR("Root/Child", frag);
    CHECK(buf == (void *)0x1);
    CHECK_EQ(len, 12345);
    CHECK_EQ(enc_calls, 1);
    rst_engine_destroy(a);
}

/* ------------------------------------------------------ presence vs value */

static void enc_zeros(rst_coder *c) {
    CHECK_OK(rst_encode_bool(c, "false", false));
    CHECK_OK(rst_encode_bool(c, "true", true));
    CHECK_OK(rst_encode_int(c, "zero", 0));
    CHECK_OK(rst_encode_double(c, "zero.0", 0.0));
    CHECK_OK(rst_encode_string(c, "empty", ""));
    CHECK_OK(rst_encode_bytes(c, "nobytes", NULL, 0));
    char x = 'x';
    CHECK_OK(rst_encode_bytes(c, "nobytes2", &x, 0));
    CHECK_OK(rst_encode_int_array(c, "noints", NULL, 0));
    CHECK_OK(rst_encode_string_array(c, "nostrings", NULL, 0));
    CHECK_OK(rst_encode_begin_record(c, "norecord"));
    CHECK_OK(rst_encode_end_record(c));
    /* in an encode callback, contains and value_type see keys already written */
    CHECK(rst_coder_contains(c, "false"));
    CHECK(!rst_coder_contains(c, "absent"));
    CHECK_EQ(rst_coder_value_type(c, "zero"), RST_TYPE_INT);
    CHECK_EQ(rst_coder_value_type(c, "absent"), RST_TYPE_NONE);
}

static void dec_zeros(rst_coder *c) {
    const char *keys[] = { "false", "true", "zero", "zero.0", "empty", "nobytes", "nobytes2", "noints", "nostrings", "norecord" };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        CHECK_MSG(rst_coder_contains(c, keys[i]), "rst_coder_contains(\"%s\") is false", keys[i]);
    CHECK(!rst_coder_contains(c, "missing"));
    CHECK(!rst_coder_contains(c, "Zero")); /* keys are case-sensitive */

    bool b = true;
    CHECK_OK(rst_decode_bool(c, "false", &b));
    CHECK(b == false);
    CHECK_OK(rst_decode_bool(c, "true", &b));
    CHECK(b == true);
    int64_t i = 99;
    CHECK_OK(rst_decode_int(c, "zero", &i));
    CHECK_EQ(i, 0);
    double d = 99;
    CHECK_OK(rst_decode_double(c, "zero.0", &d));
    CHECK(d == 0.0 && !signbit(d));
    const char *s = NULL; size_t len = 99;
    CHECK_OK(rst_decode_string(c, "empty", &s, &len));
    CHECK(s != NULL);
    CHECK_EQ(len, 0);
    CHECK_EQ(s[0], '\0');
    s = NULL;
    CHECK_OK(rst_decode_string(c, "empty", &s, NULL)); /* len may be NULL */
    CHECK(s != NULL);
    const void *p = NULL; len = 99;
    CHECK_OK(rst_decode_bytes(c, "nobytes", &p, &len));
    CHECK(p != NULL);
    CHECK_EQ(len, 0);
    p = NULL; len = 99;
    CHECK_OK(rst_decode_bytes(c, "nobytes2", &p, &len));
    CHECK(p != NULL);
    CHECK_EQ(len, 0);
    size_t count = 99;
    CHECK_OK(rst_decode_int_array(c, "noints", NULL, 0, &count));
    CHECK_EQ(count, 0);
    count = 99;
    CHECK_ST(rst_decode_string_array(c, "nostrings", 0, &s, &len, &count), RST_ERR_NOT_FOUND);
    CHECK_EQ(count, 0);
    CHECK_LAST_ERROR("nostrings");
    CHECK_OK(rst_decode_begin_record(c, "norecord"));
    CHECK(!rst_coder_contains(c, "false")); /* inside the nested record now */
    CHECK_OK(rst_decode_end_record(c));
    CHECK(rst_coder_contains(c, "false"));

    CHECK_EQ(rst_coder_value_type(c, "false"), RST_TYPE_BOOL);
    CHECK_EQ(rst_coder_value_type(c, "true"), RST_TYPE_BOOL);
    CHECK_EQ(rst_coder_value_type(c, "zero"), RST_TYPE_INT);
    CHECK_EQ(rst_coder_value_type(c, "zero.0"), RST_TYPE_DOUBLE);
    CHECK_EQ(rst_coder_value_type(c, "empty"), RST_TYPE_STRING);
    CHECK_EQ(rst_coder_value_type(c, "nobytes"), RST_TYPE_BYTES);
    CHECK_EQ(rst_coder_value_type(c, "noints"), RST_TYPE_INT_ARRAY);
    CHECK_EQ(rst_coder_value_type(c, "nostrings"), RST_TYPE_STRING_ARRAY);
    CHECK_EQ(rst_coder_value_type(c, "norecord"), RST_TYPE_RECORD);
    CHECK_EQ(rst_coder_value_type(c, "missing"), RST_TYPE_NONE);
}

/* missing keys: RST_ERR_NOT_FOUND, outputs untouched, the message names key and record */
static void dec_missing(rst_coder *c) {
    bool b = true; int64_t i = 7; double d = 7.5; const char *s = "keep"; const void *p = "keep";
    size_t len = 7, count = 7; rst_object *o = (rst_object *)&b;
    int64_t arr[2] = { 5, 5 };
    CHECK_ERR(rst_decode_bool(c, "nokey", &b), RST_ERR_NOT_FOUND, "nokey", "Root/Child", "rst_decode_bool");
    CHECK(b == true);
    CHECK_ERR(rst_decode_int(c, "nokey", &i), RST_ERR_NOT_FOUND, "nokey", "Root/Child");
    CHECK_EQ(i, 7);
    CHECK_ERR(rst_decode_double(c, "nokey", &d), RST_ERR_NOT_FOUND, "nokey", "Root/Child");
    CHECK(d == 7.5);
    CHECK_ERR(rst_decode_string(c, "nokey", &s, &len), RST_ERR_NOT_FOUND, "nokey", "Root/Child");
    CHECK_STR(s, "keep");
    CHECK_EQ(len, 7);
    CHECK_ERR(rst_decode_bytes(c, "nokey", &p, &len), RST_ERR_NOT_FOUND, "nokey", "Root/Child");
    CHECK(p != NULL && strcmp(p, "keep") == 0);
    CHECK_ERR(rst_decode_object(c, "nokey", &o), RST_ERR_NOT_FOUND, "nokey", "Root/Child");
    CHECK(o == (rst_object *)&b);
    CHECK_ERR(rst_decode_int_array(c, "nokey", arr, 2, &count), RST_ERR_NOT_FOUND, "nokey", "Root/Child");
    CHECK_EQ(arr[0], 5);
    CHECK_ERR(rst_decode_string_array(c, "nokey", 0, &s, &len, &count), RST_ERR_NOT_FOUND, "nokey", "Root/Child");
    CHECK_ERR(rst_decode_begin_record(c, "nokey"), RST_ERR_NOT_FOUND, "nokey", "Root/Child");
    /* a value's key is not found inside a nested record, and vice versa */
    CHECK_OK(rst_decode_begin_record(c, "rec"));
    CHECK_ERR(rst_decode_int(c, "top", &i), RST_ERR_NOT_FOUND, "top");
    CHECK_OK(rst_decode_int(c, "inner", &i));
    CHECK_EQ(i, 2);
    CHECK_OK(rst_decode_end_record(c));
    CHECK_ERR(rst_decode_int(c, "inner", &i), RST_ERR_NOT_FOUND, "inner");
    CHECK_OK(rst_decode_int(c, "top", &i));
    CHECK_EQ(i, 1);
}
static void enc_missing(rst_coder *c) {
    CHECK_OK(rst_encode_int(c, "top", 1));
    CHECK_OK(rst_encode_begin_record(c, "rec"));
    CHECK_OK(rst_encode_int(c, "inner", 2));
    CHECK_OK(rst_encode_end_record(c));
}

/* wrong types: RST_ERR_TYPE, never a silent zero */
static void enc_types(rst_coder *c) {
    CHECK_OK(rst_encode_bool(c, "b", true));
    CHECK_OK(rst_encode_int(c, "i", 5));
    CHECK_OK(rst_encode_double(c, "d", 2.5));
    CHECK_OK(rst_encode_string(c, "s", "5"));
    CHECK_OK(rst_encode_bytes(c, "y", "5", 1));
    int64_t v[1] = { 5 };
    CHECK_OK(rst_encode_int_array(c, "ia", v, 1));
    const char *sv[1] = { "5" };
    CHECK_OK(rst_encode_string_array(c, "sa", sv, 1));
    CHECK_OK(rst_encode_begin_record(c, "r"));
    CHECK_OK(rst_encode_end_record(c));
}
static void dec_types(rst_coder *c) {
    bool b = false; int64_t i = 0; double d = 0; const char *s = NULL; const void *p = NULL;
    size_t len = 0, count = 0; rst_object *o = NULL; int64_t arr[4];
    CHECK_ERR(rst_decode_int(c, "b", &i), RST_ERR_TYPE, "'b'", "Root/Child");
    CHECK_ERR(rst_decode_bool(c, "i", &b), RST_ERR_TYPE, "'i'");
    CHECK_ERR(rst_decode_double(c, "i", &d), RST_ERR_TYPE, "'i'"); /* no int -> double conversion */
    CHECK_ERR(rst_decode_int(c, "d", &i), RST_ERR_TYPE, "'d'");
    CHECK_ERR(rst_decode_int(c, "s", &i), RST_ERR_TYPE, "'s'");
    CHECK_ERR(rst_decode_bytes(c, "s", &p, &len), RST_ERR_TYPE, "'s'");
    CHECK_ERR(rst_decode_string(c, "y", &s, &len), RST_ERR_TYPE, "'y'");
    CHECK_ERR(rst_decode_object(c, "i", &o), RST_ERR_TYPE, "'i'");
    CHECK_ERR(rst_decode_int_array(c, "sa", arr, 4, &count), RST_ERR_TYPE, "'sa'");
    CHECK_ERR(rst_decode_string_array(c, "ia", 0, &s, &len, &count), RST_ERR_TYPE, "'ia'");
    CHECK_ERR(rst_decode_int(c, "ia", &i), RST_ERR_TYPE, "'ia'");
    CHECK_ERR(rst_decode_begin_record(c, "i"), RST_ERR_TYPE, "'i'");
    CHECK_ERR(rst_decode_int(c, "r", &i), RST_ERR_TYPE, "'r'");
    CHECK(b == false && i == 0 && d == 0 && s == NULL && p == NULL && o == NULL);
    /* and the right types still work afterwards */
    CHECK_OK(rst_decode_bool(c, "b", &b));
    CHECK(b);
    CHECK_OK(rst_decode_int(c, "i", &i));
    CHECK_EQ(i, 5);
}

/* extreme values */
static const unsigned char binary[] = { 0, 1, 2, 0xff, 0, 0x80, 'a', 0 };
static void enc_extremes(rst_coder *c) {
    CHECK_OK(rst_encode_int(c, "min", INT64_MIN));
    CHECK_OK(rst_encode_int(c, "max", INT64_MAX));
    CHECK_OK(rst_encode_int(c, "neg", -1));
    CHECK_OK(rst_encode_double(c, "negzero", -0.0));
    CHECK_OK(rst_encode_double(c, "inf", INFINITY));
    CHECK_OK(rst_encode_double(c, "nan", NAN));
    CHECK_OK(rst_encode_double(c, "tiny", 4.9e-324));
    CHECK_OK(rst_encode_string(c, "utf8", "na\xc3\xafve \xe2\x82\xac \xf0\x9f\x98\x80"));
    CHECK_OK(rst_encode_bytes(c, "binary", binary, sizeof binary));
    char key[RST_MAX_KEY_BYTES + 1];
    memset(key, 'k', RST_MAX_KEY_BYTES);
    key[RST_MAX_KEY_BYTES] = '\0';
    CHECK_OK(rst_encode_int(c, key, 255)); /* a key of exactly RST_MAX_KEY_BYTES */
    CHECK_OK(rst_encode_string(c, "\xc3\xa9t\xc3\xa9", "unicode key"));
    static char big[100000];
    memset(big, 'z', sizeof big - 1);
    CHECK_OK(rst_encode_string(c, "big", big));
}
static void dec_extremes(rst_coder *c) {
    int64_t i = 0; double d = 0; const char *s; size_t len; const void *p;
    CHECK_OK(rst_decode_int(c, "min", &i)); CHECK(i == INT64_MIN);
    CHECK_OK(rst_decode_int(c, "max", &i)); CHECK(i == INT64_MAX);
    CHECK_OK(rst_decode_int(c, "neg", &i)); CHECK_EQ(i, -1);
    CHECK_OK(rst_decode_double(c, "negzero", &d)); CHECK(d == 0.0 && signbit(d));
    CHECK_OK(rst_decode_double(c, "inf", &d)); CHECK(isinf(d) && d > 0);
    CHECK_OK(rst_decode_double(c, "nan", &d)); CHECK(isnan(d));
    CHECK_OK(rst_decode_double(c, "tiny", &d)); CHECK(d == 4.9e-324);
    CHECK_OK(rst_decode_string(c, "utf8", &s, &len));
    CHECK_STR(s, "na\xc3\xafve \xe2\x82\xac \xf0\x9f\x98\x80");
    CHECK_EQ(len, strlen(s));
    CHECK_OK(rst_decode_bytes(c, "binary", &p, &len));
    CHECK_EQ(len, sizeof binary);
    CHECK(memcmp(p, binary, len) == 0);
    char key[RST_MAX_KEY_BYTES + 1];
    memset(key, 'k', RST_MAX_KEY_BYTES);
    key[RST_MAX_KEY_BYTES] = '\0';
    CHECK_OK(rst_decode_int(c, key, &i)); CHECK_EQ(i, 255);
    CHECK_OK(rst_decode_string(c, "\xc3\xa9t\xc3\xa9", &s, NULL)); CHECK_STR(s, "unicode key");
    CHECK_OK(rst_decode_string(c, "big", &s, &len));
    CHECK_EQ(len, 99999);
    CHECK_EQ(strlen(s), 99999);
    /* borrowed strings stay valid until the callback returns */
    const char *s1 = NULL, *s2 = NULL;
    CHECK_OK(rst_decode_string(c, "utf8", &s1, NULL));
    CHECK_OK(rst_decode_string(c, "\xc3\xa9t\xc3\xa9", &s2, NULL));
    CHECK_OK(rst_decode_string(c, "big", &s, NULL));
    CHECK_STR(s1, "na\xc3\xafve \xe2\x82\xac \xf0\x9f\x98\x80");
    CHECK_STR(s2, "unicode key");
}

/* ------------------------------------------------------ records and arrays */

static void enc_nested(rst_coder *c) {
    CHECK_OK(rst_encode_int(c, "k", 0));
    CHECK_OK(rst_encode_begin_record(c, "a"));
    CHECK_OK(rst_encode_int(c, "k", 1)); /* the same key in another record is fine */
    CHECK_OK(rst_encode_begin_record(c, "b"));
    CHECK_OK(rst_encode_int(c, "k", 2));
    CHECK_OK(rst_encode_string(c, "s", "deep"));
    CHECK_OK(rst_encode_end_record(c));
    CHECK_OK(rst_encode_int(c, "after", 3));
    CHECK_OK(rst_encode_end_record(c));
    CHECK_OK(rst_encode_begin_record(c, "c"));
    CHECK_OK(rst_encode_end_record(c));
    CHECK_ERR(rst_encode_end_record(c), RST_ERR_STATE, "Root/Child"); /* nothing open: fails the save */
}
static void enc_nested_ok(rst_coder *c) {
    CHECK_OK(rst_encode_int(c, "k", 0));
    CHECK_OK(rst_encode_begin_record(c, "a"));
    CHECK_OK(rst_encode_int(c, "k", 1));
    CHECK_OK(rst_encode_begin_record(c, "b"));
    CHECK_OK(rst_encode_int(c, "k", 2));
    CHECK_OK(rst_encode_string(c, "s", "deep"));
    CHECK_OK(rst_encode_end_record(c));
    CHECK_OK(rst_encode_int(c, "after", 3));
    CHECK_OK(rst_encode_end_record(c));
    CHECK_OK(rst_encode_begin_record(c, "c"));
    CHECK_OK(rst_encode_end_record(c));
    /* RST_MAX_RECORD_DEPTH nested records */
    for (unsigned d = 0; d < RST_MAX_RECORD_DEPTH; d++) CHECK_OK(rst_encode_begin_record(c, "n"));
    CHECK_OK(rst_encode_int(c, "bottom", 32));
    for (unsigned d = 0; d < RST_MAX_RECORD_DEPTH; d++) CHECK_OK(rst_encode_end_record(c));
}
static void dec_nested(rst_coder *c) {
    int64_t i = -1; const char *s;
    CHECK_ERR(rst_decode_end_record(c), RST_ERR_STATE, "top level");
    CHECK_OK(rst_decode_int(c, "k", &i)); CHECK_EQ(i, 0);
    CHECK_OK(rst_decode_begin_record(c, "a"));
    CHECK_OK(rst_decode_int(c, "k", &i)); CHECK_EQ(i, 1);
    CHECK_OK(rst_decode_begin_record(c, "b"));
    CHECK_OK(rst_decode_int(c, "k", &i)); CHECK_EQ(i, 2);
    CHECK_OK(rst_decode_string(c, "s", &s, NULL)); CHECK_STR(s, "deep");
    CHECK(!rst_coder_contains(c, "after"));
    CHECK_OK(rst_decode_end_record(c));
    CHECK_OK(rst_decode_int(c, "after", &i)); CHECK_EQ(i, 3);
    CHECK_OK(rst_decode_int(c, "k", &i)); CHECK_EQ(i, 1);
    CHECK_OK(rst_decode_end_record(c));
    CHECK_OK(rst_decode_int(c, "k", &i)); CHECK_EQ(i, 0);
    CHECK_OK(rst_decode_begin_record(c, "c"));
    CHECK(!rst_coder_contains(c, "k"));
    CHECK_OK(rst_decode_end_record(c));
    for (unsigned d = 0; d < RST_MAX_RECORD_DEPTH; d++) CHECK_OK(rst_decode_begin_record(c, "n"));
    CHECK_OK(rst_decode_int(c, "bottom", &i)); CHECK_EQ(i, 32);
    /* an unbalanced begin is harmless: the coder resets when the callback returns */
}
static void enc_too_deep(rst_coder *c) {
    for (unsigned d = 0; d < RST_MAX_RECORD_DEPTH; d++) CHECK_OK(rst_encode_begin_record(c, "n"));
    CHECK_ERR(rst_encode_begin_record(c, "n"), RST_ERR_LIMIT, "Root/Child");
}
static void enc_unbalanced(rst_coder *c) {
    CHECK_OK(rst_encode_begin_record(c, "open"));
    CHECK_OK(rst_encode_int(c, "x", 1));
}

static const int64_t ints[6] = { 1, -2, 3, INT64_MIN, INT64_MAX, 0 };
static void enc_arrays(rst_coder *c) {
    CHECK_OK(rst_encode_int_array(c, "ints", ints, 6));
    const char *strs[4] = { "alpha", "", "\xc3\xa9t\xc3\xa9", "delta" };
    CHECK_OK(rst_encode_string_array(c, "strs", strs, 4));
    static int64_t many[10000];
    for (int k = 0; k < 10000; k++) many[k] = (int64_t)k * 1000003;
    CHECK_OK(rst_encode_int_array(c, "many", many, 10000));
}
static void dec_arrays(rst_coder *c) {
    int64_t buf[10];
    size_t count = 0;
    memset(buf, 0x55, sizeof buf);
    CHECK_ERR(rst_decode_int_array(c, "ints", NULL, 0, &count), RST_ERR_LIMIT, "ints");
    CHECK_EQ(count, 6);
    count = 0;
    CHECK_ERR(rst_decode_int_array(c, "ints", buf, 5, &count), RST_ERR_LIMIT, "ints", "Root/Child");
    CHECK_EQ(count, 6);
    count = 0;
    CHECK_OK(rst_decode_int_array(c, "ints", buf, 6, &count));
    CHECK_EQ(count, 6);
    CHECK(memcmp(buf, ints, sizeof ints) == 0);
    CHECK_OK(rst_decode_int_array(c, "ints", buf, 10, &count));
    CHECK_EQ(count, 6);
    CHECK_EQ(buf[6], 0x5555555555555555LL); /* nothing written past count */
    CHECK_ERR(rst_decode_int_array(c, "ints", buf, 10, NULL), RST_ERR_INVALID, "count");
    CHECK_ERR(rst_decode_int_array(c, "ints", NULL, 10, &count), RST_ERR_INVALID, "buf");

    const char *s = NULL; size_t len = 99; count = 0;
    CHECK_OK(rst_decode_string_array(c, "strs", 0, &s, &len, &count));
    CHECK_EQ(count, 4); CHECK_STR(s, "alpha"); CHECK_EQ(len, 5);
    CHECK_OK(rst_decode_string_array(c, "strs", 1, &s, &len, &count));
    CHECK_STR(s, ""); CHECK_EQ(len, 0);
    CHECK_OK(rst_decode_string_array(c, "strs", 2, &s, &len, NULL)); /* count may be NULL */
    CHECK_STR(s, "\xc3\xa9t\xc3\xa9"); CHECK_EQ(len, 5);
    const char *third = s;
    CHECK_OK(rst_decode_string_array(c, "strs", 3, &s, NULL, &count));
    CHECK_STR(s, "delta");
    CHECK_STR(third, "\xc3\xa9t\xc3\xa9"); /* still valid during the callback */
    s = "keep"; count = 0;
    CHECK_ERR(rst_decode_string_array(c, "strs", 4, &s, &len, &count), RST_ERR_NOT_FOUND, "strs", "4");
    CHECK_EQ(count, 4);
    CHECK_STR(s, "keep");
    CHECK_ST(rst_decode_string_array(c, "strs", (size_t)-1, &s, &len, &count), RST_ERR_NOT_FOUND);
    CHECK_EQ(count, 4);

    static int64_t many[10000];
    CHECK_OK(rst_decode_int_array(c, "many", many, 10000, &count));
    CHECK_EQ(count, 10000);
    CHECK_EQ(many[9999], (int64_t)9999 * 1000003);
}


/* RST_MAX_VALUES_PER_RECORD keys fit in a record; one more is RST_ERR_LIMIT */
static void enc_many_keys(rst_coder *c) {
    char key[16];
    for (unsigned k = 0; k < RST_MAX_VALUES_PER_RECORD; k++) {
        snprintf(key, sizeof key, "k%u", k);
        rst_status s = rst_encode_bool(c, key, k & 1);
        if (s != RST_OK) FAIL_AT(__FILE__, __LINE__, "key %u: %s: %s", k, rst_status_name(s), rst_last_error());
    }
    CHECK_ERR(rst_encode_bool(c, "one-too-many", true), RST_ERR_LIMIT, "one-too-many", "65536");
}

/* ------------------------------------------------------ encode errors */

static void enc_dup(rst_coder *c) {
    CHECK_OK(rst_encode_int(c, "selection", 1));
    CHECK_ERR(rst_encode_string(c, "selection", "again"), RST_ERR_DUPLICATE, "selection", "Root/Child");
    /* whatever the callback does next, the save is failed */
    CHECK(rst_encode_int(c, "other", 2) != RST_OK);
}
static void enc_dup_in_record(rst_coder *c) {
    CHECK_OK(rst_encode_begin_record(c, "r"));
    CHECK_OK(rst_encode_bool(c, "flag", true));
    CHECK_ERR(rst_encode_bool(c, "flag", false), RST_ERR_DUPLICATE, "flag");
    rst_encode_end_record(c);
}
static void enc_dup_record(rst_coder *c) {
    CHECK_OK(rst_encode_int(c, "r", 1));
    CHECK_ERR(rst_encode_begin_record(c, "r"), RST_ERR_DUPLICATE, "'r'");
}
static void enc_callback_fails(rst_coder *c) {
    CHECK_OK(rst_encode_int(c, "x", 1));
    CHECK_OK(rst_coder_fail(c, RST_ERR_IO, "the model's file is gone"));
    CHECK_OK(rst_coder_fail(c, RST_ERR_TYPE, "a second report does not replace the first"));
}
static void enc_empty_key(rst_coder *c) { CHECK_ERR(rst_encode_int(c, "", 1), RST_ERR_INVALID, "key", "Root/Child"); }
static void enc_long_key(rst_coder *c) {
    char key[RST_MAX_KEY_BYTES + 2];
    memset(key, 'k', RST_MAX_KEY_BYTES + 1);
    key[RST_MAX_KEY_BYTES + 1] = '\0';
    CHECK_ERR(rst_encode_int(c, key, 1), RST_ERR_LIMIT, "256");
}
static void enc_bad_utf8_key(rst_coder *c) { CHECK_ERR(rst_encode_int(c, "bad\xff", 1), RST_ERR_INVALID, "UTF-8"); }
static void enc_bad_utf8_value(rst_coder *c) { CHECK_ERR(rst_encode_string(c, "s", "bad\xc3"), RST_ERR_INVALID, "UTF-8", "'s'"); }
static void enc_overlong_utf8(rst_coder *c) { CHECK_ERR(rst_encode_string(c, "s", "\xc0\xaf"), RST_ERR_INVALID, "'s'"); }
static void enc_surrogate(rst_coder *c) { CHECK_ERR(rst_encode_string(c, "s", "\xed\xa0\x80"), RST_ERR_INVALID, "'s'"); }
static void enc_null_string(rst_coder *c) { CHECK_ERR(rst_encode_string(c, "s", NULL), RST_ERR_INVALID, "'s'"); }
static void enc_null_key(rst_coder *c) { CHECK_ERR(rst_encode_int(c, NULL, 1), RST_ERR_INVALID, "key"); }
static void enc_null_bytes(rst_coder *c) { CHECK_ERR(rst_encode_bytes(c, "y", NULL, 3), RST_ERR_INVALID, "'y'"); }
static void enc_null_ints(rst_coder *c) { CHECK_ERR(rst_encode_int_array(c, "ia", NULL, 3), RST_ERR_INVALID, "'ia'"); }
static void enc_null_elem(rst_coder *c) {
    const char *v[2] = { "a", NULL };
    CHECK_ERR(rst_encode_string_array(c, "sa", v, 2), RST_ERR_INVALID, "'sa'", "1");
}
static void enc_bad_elem(rst_coder *c) {
    const char *v[2] = { "a", "\xfe" };
    CHECK_ERR(rst_encode_string_array(c, "sa", v, 2), RST_ERR_INVALID, "'sa'");
}
static void enc_null_object(rst_coder *c) { CHECK_ERR(rst_encode_object(c, "ref", NULL), RST_ERR_INVALID, "'ref'", "Root/Child"); }
static void enc_other_engine(rst_coder *c) { CHECK_ERR(rst_encode_object(c, "ref", other_object), RST_ERR_INVALID, "'ref'", "engine"); }
static void enc_decode_in_encode(rst_coder *c) {
    int64_t i;
    CHECK_OK(rst_encode_int(c, "i", 1));
    CHECK_ERR(rst_decode_int(c, "i", &i), RST_ERR_STATE, "rst_decode_int");
}
static void enc_registered_during_save(rst_coder *c) {
    /* an object registered after the save began is not in the archive */
    rst_engine *e = cur_engine;
    rst_object *late = NULL;
    CHECK_OK(rst_register_object(e, "Late", NULL, NULL, NULL, NULL, &late));
    CHECK_ERR(rst_encode_object(c, "ref", late), RST_ERR_STATE, "'ref'", "Late");
}

static void dec_encode_in_decode(rst_coder *c) {
    CHECK_ERR(rst_encode_int(c, "x", 1), RST_ERR_STATE, "rst_encode_int");
    CHECK_ERR(rst_encode_end_record(c), RST_ERR_STATE, "rst_encode_end_record");
}
static void enc_one(rst_coder *c) { CHECK_OK(rst_encode_int(c, "x", 1)); }

/* NULL keys and outputs inside a live decode callback: RST_ERR_INVALID naming the function */
static void dec_nulls(rst_coder *c) {
    int64_t i = 3; const char *s; size_t n;
    CHECK_ERR(rst_decode_int(c, NULL, &i), RST_ERR_INVALID, "rst_decode_int", "key");
    CHECK_ERR(rst_decode_int(c, "x", NULL), RST_ERR_INVALID, "rst_decode_int");
    CHECK_ERR(rst_decode_bool(c, "x", NULL), RST_ERR_INVALID, "rst_decode_bool");
    CHECK_ERR(rst_decode_double(c, "x", NULL), RST_ERR_INVALID, "rst_decode_double");
    CHECK_ERR(rst_decode_string(c, "x", NULL, &n), RST_ERR_INVALID, "rst_decode_string");
    CHECK_ERR(rst_decode_bytes(c, "x", NULL, &n), RST_ERR_INVALID, "rst_decode_bytes");
    CHECK_ERR(rst_decode_object(c, "x", NULL), RST_ERR_INVALID, "rst_decode_object");
    CHECK_ERR(rst_decode_string_array(c, "x", 0, NULL, &n, &n), RST_ERR_INVALID, "rst_decode_string_array");
    CHECK_ERR(rst_decode_int_array(c, NULL, &i, 1, &n), RST_ERR_INVALID, "rst_decode_int_array");
    CHECK_ERR(rst_decode_begin_record(c, NULL), RST_ERR_INVALID, "rst_decode_begin_record");
    CHECK_ERR(rst_decode_string(c, NULL, &s, &n), RST_ERR_INVALID, "rst_decode_string");
    CHECK(!rst_coder_contains(c, NULL));
    CHECK_LAST_ERROR("rst_coder_contains");
    CHECK_EQ(rst_coder_value_type(c, NULL), RST_TYPE_NONE);
    CHECK_LAST_ERROR("rst_coder_value_type");
    CHECK_OK(rst_decode_int(c, "x", &i)); /* and the coder still works */
    CHECK_EQ(i, 1);
}

/* a reference to Root from Root/Child */
static rst_object *root_obj;
static void enc_ref(rst_coder *c) { CHECK_OK(rst_encode_object(c, "parent", root_obj)); }

/* -------------------------------------------------- files: failed saves */

static bool save_allowed = true;
static int should_save_calls;
static bool should_save(rst_engine *e, void *ctx) { (void)e; (void)ctx; should_save_calls++; return save_allowed; }

static void file_tests(const char *dir) {
    char *archive = xasprintf("%s/values.rst", dir);
    rst_engine_options o = RST_ENGINE_OPTIONS_INIT;
    o.archive_path = archive;
    o.should_save = should_save;
    rst_engine *e = NULL;
    CHECK_OK(rst_engine_create(&o, &e));
    rst_object *root = NULL;
    CHECK_OK(rst_register_object(e, "Root", NULL, NULL, &root_cb, NULL, &root));
    CHECK_OK(rst_register_object(e, "Child", root, NULL, &child_cb, NULL, NULL));

    mode_t old_umask = umask(0); /* the archive is 0600 whatever the umask */
    enc_script = enc_one;
    CHECK_OK(rst_save(e));
    umask(old_umask);
    struct stat st, st2;
    CHECK(lstat(archive, &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK_EQ(st.st_mode & 07777, 0600);
    size_t len0 = 0;
    unsigned char *bytes0 = read_file(archive, &len0);
    CHECK(bytes0 != NULL && len0 > 0);

    /* a failed encode leaves the old archive byte-identical, and no temporary file */
    script_fn failing[] = { enc_dup, enc_null_object, enc_unbalanced, enc_bad_utf8_value, enc_too_deep, enc_empty_key };
    rst_status expected[] = { RST_ERR_DUPLICATE, RST_ERR_INVALID, RST_ERR_STATE, RST_ERR_INVALID, RST_ERR_LIMIT, RST_ERR_INVALID };
    for (size_t k = 0; k < sizeof failing / sizeof failing[0]; k++) {
        enc_script = failing[k];
        CHECK_ST(rst_save(e), expected[k]);
        CHECK_LAST_ERROR("Root/Child");
        size_t len = 0;
        unsigned char *bytes = read_file(archive, &len);
        CHECK(bytes != NULL);
        CHECK_EQ(len, len0);
        CHECK(memcmp(bytes, bytes0, len0) == 0);
        free(bytes);
        CHECK(lstat(archive, &st2) == 0);
        CHECK_EQ(st2.st_ino, st.st_ino); /* not even replaced by a copy */
        CHECK_EQ(count_entries(dir, ".tmp"), 0);
    }

    /* should_save false: RST_ERR_REJECTED, no encode ran, the old archive untouched */
    save_allowed = false;
    enc_calls = 0;
    should_save_calls = 0;
    enc_script = enc_one;
    CHECK_ERR(rst_save(e), RST_ERR_REJECTED, "should_save");
    CHECK_EQ(should_save_calls, 1);
    CHECK_EQ(enc_calls, 0);
    void *buf = NULL; size_t blen = 0;
    CHECK_ERR(rst_save_to_buffer(e, &buf, &blen), RST_ERR_REJECTED, "should_save");
    CHECK(buf == NULL);
    {
        size_t len = 0;
        unsigned char *bytes = read_file(archive, &len);
        CHECK(bytes != NULL && len == len0 && memcmp(bytes, bytes0, len0) == 0);
        free(bytes);
        CHECK(lstat(archive, &st2) == 0);
        CHECK_EQ(st2.st_ino, st.st_ino);
    }
    save_allowed = true;
    CHECK_OK(rst_save(e));
    CHECK(lstat(archive, &st2) == 0);
    CHECK_EQ(st2.st_ino, st.st_ino); /* the same state: not written again */
    CHECK_EQ(st2.st_mode & 07777, 0600);

    /* a save to a buffer and to the file hold the same objects: restore the file */
    rst_engine_destroy(e);
    rst_engine *r = tree(archive);
    dec_calls = 0;
    dec_script = NULL;
    CHECK_OK(rst_restore(r));
    CHECK_EQ(dec_calls, 1);
    /* rst_save without archive_path */
    rst_engine_destroy(r);
    rst_engine *b = tree(NULL);
    CHECK_ERR(rst_save(b), RST_ERR_INVALID, "archive_path");
    CHECK_ERR(rst_restore(b), RST_ERR_INVALID, "archive_path");
    CHECK_ERR(rst_discard(b), RST_ERR_INVALID, "archive_path");
    rst_engine_destroy(b);
    free(bytes0);
    free(archive);
}

int main(int argc, char **argv) {
    check_prog = "values";
    if (argc != 2) { fprintf(stderr, "usage: values DIR\n"); return 2; }

    roundtrip(enc_zeros, dec_zeros);
    roundtrip(enc_missing, dec_missing);
    roundtrip(enc_types, dec_types);
    roundtrip(enc_extremes, dec_extremes);
    roundtrip(enc_nested_ok, dec_nested);
    roundtrip(enc_arrays, dec_arrays);
    roundtrip(enc_one, dec_encode_in_decode);
    roundtrip(enc_one, dec_nulls);

    save_fails(enc_nested, RST_ERR_STATE, "record");
    save_fails(enc_too_deep, RST_ERR_LIMIT, "Root/Child");
    save_fails(enc_unbalanced, RST_ERR_STATE, "record");
    save_fails(enc_dup, RST_ERR_DUPLICATE, "selection");
    save_fails(enc_many_keys, RST_ERR_LIMIT, "one-too-many");
    save_fails(enc_dup_in_record, RST_ERR_DUPLICATE, "flag");
    save_fails(enc_dup_record, RST_ERR_DUPLICATE, "'r'");
    save_fails(enc_empty_key, RST_ERR_INVALID, "key");
    save_fails(enc_long_key, RST_ERR_LIMIT, "key");
    save_fails(enc_callback_fails, RST_ERR_IO, "the model's file is gone");
    save_fails(enc_bad_utf8_key, RST_ERR_INVALID, "UTF-8");
    save_fails(enc_bad_utf8_value, RST_ERR_INVALID, "'s'");
    save_fails(enc_overlong_utf8, RST_ERR_INVALID, "'s'");
    save_fails(enc_surrogate, RST_ERR_INVALID, "'s'");
    save_fails(enc_null_string, RST_ERR_INVALID, "'s'");
    save_fails(enc_null_key, RST_ERR_INVALID, "key");
    save_fails(enc_null_bytes, RST_ERR_INVALID, "'y'");
    save_fails(enc_null_ints, RST_ERR_INVALID, "'ia'");
    save_fails(enc_null_elem, RST_ERR_INVALID, "'sa'");
    save_fails(enc_bad_elem, RST_ERR_INVALID, "'sa'");
    save_fails(enc_null_object, RST_ERR_INVALID, "'ref'");
    roundtrip(enc_decode_in_encode, NULL); /* a decode call in encode fails alone; the save is fine */

    /* rst_encode_object of another engine's object */
    other_engine = new_engine(NULL);
    CHECK_OK(rst_register_object(other_engine, "Root", NULL, NULL, NULL, NULL, &other_object));
    save_fails(enc_other_engine, RST_ERR_INVALID, "'ref'");
    rst_engine_destroy(other_engine);

    /* an object registered during the save */
    {
        enc_script = enc_registered_during_save;
        rst_engine *a = tree(NULL);
        cur_engine = a;
        void *buf = NULL; size_t len = 0;
        CHECK_ERR(rst_save_to_buffer(a, &buf, &len), RST_ERR_STATE, "Late", "Root/Child");
        rst_engine_destroy(a);
        cur_engine = NULL;
    }

    /* a reference to another object of the same engine round-trips */
    {
        enc_script = enc_ref;
        rst_engine *a = tree(NULL);
        root_obj = rst_find_object(a, "Root");
        void *buf = NULL; size_t len = 0;
        CHECK_OK(rst_save_to_buffer(a, &buf, &len));
        rst_free(buf);
        rst_engine_destroy(a);
    }

    /* the coder pointer kept from a callback is dead afterwards: RST_ERR_STATE */
    {
        enc_script = enc_one;
        rst_engine *a = tree(NULL);
        void *buf = NULL; size_t len = 0;
        kept_coder = NULL;
        CHECK_OK(rst_save_to_buffer(a, &buf, &len));
        CHECK(kept_coder != NULL);
        CHECK_ERR(rst_encode_int(kept_coder, "late", 1), RST_ERR_STATE, "rst_encode_int", "outside");
        CHECK_ERR(rst_encode_string(kept_coder, "late", "x"), RST_ERR_STATE, "rst_encode_string");
        CHECK_ERR(rst_encode_begin_record(kept_coder, "late"), RST_ERR_STATE, "rst_encode_begin_record");
        CHECK_ERR(rst_encode_end_record(kept_coder), RST_ERR_STATE, "rst_encode_end_record");
        int64_t i = 5;
        CHECK_ERR(rst_decode_int(kept_coder, "x", &i), RST_ERR_STATE, "rst_decode_int");
        CHECK_EQ(i, 5);
        /* the kept coder stays dead after a restore, too */
        rst_engine *b = tree(NULL);
        dec_script = NULL;
        CHECK_OK(rst_restore_from_buffer(b, buf, len));
        CHECK_ERR(rst_decode_int(kept_coder, "x", &i), RST_ERR_STATE, "rst_decode_int");
        CHECK_ERR(rst_decode_end_record(kept_coder), RST_ERR_STATE, "rst_decode_end_record");
        CHECK_ERR(rst_coder_fail(kept_coder, RST_ERR_IO, "late"), RST_ERR_STATE, "rst_coder_fail");
        CHECK_ERR(rst_coder_fail(NULL, RST_ERR_IO, "late"), RST_ERR_INVALID, "rst_coder_fail");
        CHECK(!rst_coder_contains(kept_coder, "x"));
        CHECK_EQ(i, 5);
        /* and a later save still works (the failure did not stick) */
        void *buf2 = NULL; size_t len2 = 0;
        CHECK_OK(rst_save_to_buffer(a, &buf2, &len2));
        CHECK_EQ(len2, len);
        rst_free(buf);
        rst_free(buf2);
        rst_engine_destroy(a);
        rst_engine_destroy(b);
    }

    file_tests(argv[1]);
    DONE();
}
