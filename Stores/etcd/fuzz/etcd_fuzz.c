/* etcd_fuzz.c: libFuzzer target for restoration-etcd's parser (etcd_parse.c):
 * the first byte picks which answer the rest is read as (a range, a txn, a
 * header, an error, a lease's keep-alive, a slot's head, the owner key,
 * base64), as the store reads them from the network. Built with
 * -fsanitize=fuzzer (make etcd-fuzz); with -DETCD_FUZZ_REPLAY it is a
 * program that runs each file named on its command line (or in a folder
 * named there) once, as `make test-etcd` does with the corpus. */
#include "../etcd_parse.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    if (size < 1) return 0;
    unsigned kind = data[0] % 8;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    char err[ETCD_ERR_CAP];
    if (kind == 5) { etcd_head h; if (etcd_head_parse((const unsigned char *)text, len, &h, err, sizeof err) == 0) etcd_head_free(&h); return 0; }
    if (kind == 6) { etcd_owner w; etcd_owner_parse((const unsigned char *)text, len, &w, err, sizeof err); return 0; }
    if (kind == 7) {
        unsigned char *out = NULL; size_t n = 0;
        if (etcd_b64_decode(text, len, &out, &n) == 0) {
            char *back = etcd_b64_encode(out, n);
            free(back);
            free(out);
        }
        return 0;
    }
    json_object *o = etcd_parse_object(text, len, err, sizeof err);
    if (!o) return 0;
    uint64_t cid; int64_t rev, v; int code, ok; etcd_kv *kvs; size_t n;
    char et[256];
    switch (kind) {
    case 0: if (etcd_range_kvs(o, &kvs, &n, &v, err, sizeof err) == 0) etcd_kvs_free(kvs, n); break;
    case 1: if (etcd_txn(o, &ok, &kvs, &n, err, sizeof err) == 0) etcd_kvs_free(kvs, n); break;
    case 2: etcd_header(o, &cid, &rev, err, sizeof err); break;
    case 3: etcd_error_text(o, et, sizeof et, &code); break;
    case 4: { json_object *r = NULL; if (json_object_object_get_ex(o, "result", &r)) etcd_int64(r, "TTL", 0, &v, err, sizeof err); etcd_int64(o, "ID", 0, &v, err, sizeof err); break; }
    }
    json_object_put(o);
    return 0;
}

#ifdef ETCD_FUZZ_REPLAY
static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "etcd-fuzz: cannot open %s\n", path); return 1; }
    unsigned char *buf = malloc(1 << 22);
    size_t n = buf ? fread(buf, 1, 1 << 22, f) : 0;
    fclose(f);
    if (!buf) return 1;
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

int main(int argc, char **argv) {
    int files = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            DIR *d = opendir(argv[i]);
            struct dirent *de;
            while (d && (de = readdir(d))) {
                if (de->d_name[0] == '.') continue;
                char p[4096];
                snprintf(p, sizeof p, "%s/%s", argv[i], de->d_name);
                bad += run_file(p);
                files++;
            }
            if (d) closedir(d);
        } else {
            bad += run_file(argv[i]);
            files++;
        }
    }
    printf("etcd-fuzz: %d inputs replayed\n", files);
    return bad || files == 0;
}
#endif
