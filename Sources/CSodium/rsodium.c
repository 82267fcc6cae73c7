#include "rsodium.h"
#include <sodium.h>

#define HIDDEN __attribute__((visibility("hidden")))

_Static_assert(RSOD_KEY_BYTES == crypto_aead_xchacha20poly1305_ietf_KEYBYTES, "key size");
_Static_assert(RSOD_NONCE_BYTES == crypto_aead_xchacha20poly1305_ietf_NPUBBYTES, "nonce size");
_Static_assert(RSOD_TAG_BYTES == crypto_aead_xchacha20poly1305_ietf_ABYTES, "tag size");

HIDDEN int rsod_init(void) {
    /* 0: initialized now; 1: already initialized; -1: unusable. */
    return sodium_init() < 0 ? -1 : 0;
}

HIDDEN void rsod_random(void *buf, size_t len) {
    randombytes_buf(buf, len);
}

HIDDEN int rsod_seal(uint8_t *out, const uint8_t nonce[RSOD_NONCE_BYTES],
                     const uint8_t *plain, size_t plain_len,
                     const uint8_t *ad, size_t ad_len, const uint8_t key[RSOD_KEY_BYTES]) {
    unsigned long long clen = 0;
    return crypto_aead_xchacha20poly1305_ietf_encrypt(out, &clen, plain, plain_len, ad, ad_len,
                                                      NULL, nonce, key);
}

HIDDEN int rsod_open(uint8_t *out, const uint8_t *sealed, size_t sealed_len,
                     const uint8_t nonce[RSOD_NONCE_BYTES],
                     const uint8_t *ad, size_t ad_len, const uint8_t key[RSOD_KEY_BYTES]) {
    if (sealed_len < RSOD_TAG_BYTES) return -1;
    unsigned long long mlen = 0;
    return crypto_aead_xchacha20poly1305_ietf_decrypt(out, &mlen, NULL, sealed, sealed_len, ad, ad_len,
                                                      nonce, key) == 0 ? 0 : -1;
}

HIDDEN void rsod_wipe(void *p, size_t len) {
    if (p && len) sodium_memzero(p, len);
}
