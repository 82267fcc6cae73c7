/* etcd-publish.c: what a save costs the caller with restoration-etcd, against
 * the file store, for the same archive bytes: the `write` call's time (the
 * engine's thread waits for this much) and, for etcd, the time until the
 * publish is acknowledged by the cluster (rst_etcd_flush returns). Median and
 * 95th percentile over ROUNDS writes of fresh bytes per size.
 * Usage: etcd-publish ENDPOINTS DIR [ROUNDS] */
#define _GNU_SOURCE
#include "restoration_etcd.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p) {
    qsort(v, (size_t)n, sizeof *v, cmpd);
    int i = (int)(p * (n - 1) + 0.5);
    return v[i];
}

static void fill(unsigned char *p, size_t n, unsigned seed) {
    uint32_t x = seed * 2654435761u + 7;
    for (size_t i = 0; i < n; i++) { x = x * 1103515245u + 12345u; p[i] = (unsigned char)(x >> 16); }
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: etcd-publish ENDPOINTS DIR [ROUNDS]\n"); return 2; }
    int rounds = argc > 3 ? atoi(argv[3]) : 20;
    if (rounds < 2 || rounds > 1000) rounds = 20;
    const size_t sizes[] = { 4 << 10, 64 << 10, 1 << 20, 5 << 20 };
    printf("%-9s %-22s %-22s %-26s\n", "archive", "file store write", "etcd store write", "etcd publish acknowledged");
    printf("%-9s %-22s %-22s %-26s\n", "", "median / p95", "median / p95", "median / p95");
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        unsigned char *buf = malloc(n);
        double *fw = calloc((size_t)rounds, sizeof *fw), *ew = calloc((size_t)rounds, sizeof *ew), *ea = calloc((size_t)rounds, sizeof *ea);
        char path[1024], cache[1024], prefix[256];
        snprintf(path, sizeof path, "%s/file-%zu/state.rst", argv[2], n);
        char mk[1100];
        snprintf(mk, sizeof mk, "mkdir -p %s/file-%zu", argv[2], n);
        if (system(mk) != 0) return 1;
        const rst_store_ops *fops, *eops;
        void *fctx, *ectx;
        if (rst_file_store(path, &fops, &fctx) != RST_OK) { fprintf(stderr, "file store: %s\n", rst_last_error()); return 1; }
        rst_etcd_options o = RST_ETCD_OPTIONS_INIT;
        snprintf(cache, sizeof cache, "%s/cache-%zu", argv[2], n);
        snprintf(prefix, sizeof prefix, "/restoration/v1/u/bench/a/publish-%zu-%d/", n, (int)getpid());
        o.endpoints = argv[1];
        o.prefix = prefix;
        o.cache_dir = cache;
        o.max_archive_bytes = 16 << 20;
        if (rst_etcd_store(&o, &eops, &ectx) != RST_OK || eops->acquire(ectx) != RST_OK) {
            fprintf(stderr, "etcd store: %s\n", rst_etcd_last_error());
            return 1;
        }
        for (int r = 0; r < rounds; r++) {
            fill(buf, n, (unsigned)(r + 1000 * k));
            double t0 = now_us();
            if (fops->write(fctx, RST_SLOT_ARCHIVE, 0, buf, n) != RST_OK) return 1;
            fw[r] = now_us() - t0;
            fill(buf, n, (unsigned)(r + 1000 * k + 500));
            t0 = now_us();
            if (eops->write(ectx, RST_SLOT_ARCHIVE, 0, buf, n) != RST_OK) { fprintf(stderr, "etcd write: %s\n", rst_etcd_last_error()); return 1; }
            ew[r] = now_us() - t0;
            if (rst_etcd_flush(ectx, 30000) != RST_OK) { fprintf(stderr, "etcd flush: %s\n", rst_etcd_last_error()); return 1; }
            ea[r] = now_us() - t0;
        }
        char lbl[32], a[64], b[64], c[64];
        if (n >= (1 << 20)) snprintf(lbl, sizeof lbl, "%zu MiB", n >> 20); else snprintf(lbl, sizeof lbl, "%zu KiB", n >> 10);
        snprintf(a, sizeof a, "%.2f / %.2f ms", pct(fw, rounds, 0.5) / 1e3, pct(fw, rounds, 0.95) / 1e3);
        snprintf(b, sizeof b, "%.2f / %.2f ms", pct(ew, rounds, 0.5) / 1e3, pct(ew, rounds, 0.95) / 1e3);
        snprintf(c, sizeof c, "%.1f / %.1f ms", pct(ea, rounds, 0.5) / 1e3, pct(ea, rounds, 0.95) / 1e3);
        printf("%-9s %-22s %-22s %-26s\n", lbl, a, b, c);
        eops->destroy(ectx);
        fops->destroy(fctx);
        free(buf); free(fw); free(ew); free(ea);
    }
    return 0;
}
