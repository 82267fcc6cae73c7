/* The one door to libsodium (Debian: libsodium-dev): sealing and opening a
 * value with XChaCha20-Poly1305 (IETF), random nonces, wiping key bytes.
 * Hidden symbols (rsod_*): librestoration exports only rst_*.
 * Nothing here is hand-written cryptography; every function calls libsodium. */
#ifndef RSODIUM_H
#define RSODIUM_H
#include <stddef.h>
#include <stdint.h>

#define RSOD_KEY_BYTES   32u
#define RSOD_NONCE_BYTES 24u
#define RSOD_TAG_BYTES   16u

/** sodium_init() once per process (thread-safe); 0 when libsodium is usable. */
int rsod_init(void);
/** Fills `buf` with `len` random bytes from the system's CSPRNG
 *  (randombytes_buf). */
void rsod_random(void *buf, size_t len);
/** Seals `plain` into `out` (plain_len + RSOD_TAG_BYTES bytes) under `key`
 *  and `nonce` (RSOD_NONCE_BYTES random bytes never used before with this
 *  key); `ad` is bound to it. 0 on success. */
int rsod_seal(uint8_t *out, const uint8_t nonce[RSOD_NONCE_BYTES],
              const uint8_t *plain, size_t plain_len,
              const uint8_t *ad, size_t ad_len, const uint8_t key[RSOD_KEY_BYTES]);
/** Opens `sealed` (sealed_len >= RSOD_TAG_BYTES) into `out`
 *  (sealed_len - RSOD_TAG_BYTES bytes). 0 on success; -1 when the key, the
 *  associated data or any byte is wrong (nothing is written to `out` then). */
int rsod_open(uint8_t *out, const uint8_t *sealed, size_t sealed_len,
              const uint8_t nonce[RSOD_NONCE_BYTES],
              const uint8_t *ad, size_t ad_len, const uint8_t key[RSOD_KEY_BYTES]);
/** Wipes `len` bytes in a way the compiler cannot drop (sodium_memzero). */
void rsod_wipe(void *p, size_t len);
#endif
