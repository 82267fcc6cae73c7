/* Hardware CRC-32C (see include/crc32c_hw.h). Three independent streams hide
 * the instruction's 3-cycle latency; their registers are combined with the
 * carry-less "shift by n zero bytes" operator, computed once. */
#include "crc32c_hw.h"
#include <string.h>

#define HIDDEN __attribute__((visibility("hidden")))

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>

#define STREAM 4096   /* bytes per stream in the three-stream loop */

/* a(x) * b(x) mod P(x), reflected bit order (as crc32cMultiply in Swift). */
static uint32_t multiply(uint32_t a, uint32_t b) {
    uint32_t m = 1u << 31, p = 0;
    for (;;) {
        if (a & m) {
            p ^= b;
            if ((a & (m - 1)) == 0) break;
        }
        m >>= 1;
        b = (b & 1) ? (b >> 1) ^ 0x82F63B78u : b >> 1;
    }
    return p;
}

/* x^(8n) mod P: shifts a CRC register over n zero bytes. */
static uint32_t shift_operator(size_t n) {
    uint32_t powers[64], q = 1u << 30, result = 1u << 31;
    for (int k = 0; k < 64; k++) { powers[k] = q; q = multiply(q, q); }
    for (int k = 0; n * 8 >> k; k++)
        if ((n * 8 >> k) & 1) result = multiply(powers[k], result);
    return result;
}

static uint32_t shift1, shift2;   /* over STREAM and 2 * STREAM bytes */
static int state;                 /* 0 unknown, 1 available, 2 not */

HIDDEN int restoration_crc32c_hw_available(void) {
    int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (s == 0) {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("sse4.2")) {
            shift1 = shift_operator(STREAM);
            shift2 = shift_operator(2 * STREAM);
            s = 1;
        } else {
            s = 2;
        }
        __atomic_store_n(&state, s, __ATOMIC_RELEASE);
    }
    return s == 1;
}

__attribute__((target("sse4.2")))
HIDDEN uint32_t restoration_crc32c_hw_run(uint32_t reg, const void *data, size_t n) {
    const unsigned char *p = data;
    uint64_t c = reg;
    while (n >= 3 * STREAM) {
        uint64_t a = c, b = 0, d = 0;
        for (size_t i = 0; i < STREAM; i += 8) {
            uint64_t wa, wb, wd;
            memcpy(&wa, p + i, 8);
            memcpy(&wb, p + STREAM + i, 8);
            memcpy(&wd, p + 2 * STREAM + i, 8);
            a = _mm_crc32_u64(a, wa);
            b = _mm_crc32_u64(b, wb);
            d = _mm_crc32_u64(d, wd);
        }
        c = multiply(shift2, (uint32_t)a) ^ multiply(shift1, (uint32_t)b) ^ (uint32_t)d;
        p += 3 * STREAM;
        n -= 3 * STREAM;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = _mm_crc32_u64(c, w);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (n--) c32 = _mm_crc32_u8(c32, *p++);
    return c32;
}

#else

/* No hardware path on this architecture yet: the Swift slicing-by-8 runs. */
HIDDEN int restoration_crc32c_hw_available(void) { return 0; }
HIDDEN uint32_t restoration_crc32c_hw_run(uint32_t reg, const void *data, size_t n) {
    (void)data; (void)n;
    return reg;
}

#endif
