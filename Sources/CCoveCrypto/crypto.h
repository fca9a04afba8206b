// The cipher of encrypted database files, from OpenSSL's libcrypto (Debian's libssl-dev):
// AES-256-GCM sealing and opening of one page, HMAC-SHA-256 for the keys derived from the
// user's key, and the system's random bytes for nonces. Each function is one call for Swift,
// so that a page costs one crossing of the language boundary.
#ifndef COVE_CRYPTO_H
#define COVE_CRYPTO_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

/// A cipher context holding AES-256-GCM with the 32-byte `key` already expanded, for
/// cove_gcm_seal (`sealing` 1) or cove_gcm_open (0), one thread at a time; NULL when libcrypto
/// cannot make one. Free it with cove_gcm_free. The nonce length is GCM's default, 12 bytes.
static inline void *cove_gcm_new(const uint8_t *key, int sealing) {
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return NULL;
    int ok = sealing ? EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, NULL)
                     : EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, NULL);
    if (ok != 1) {
        EVP_CIPHER_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

static inline void cove_gcm_free(void *ctx) {
    EVP_CIPHER_CTX_free((EVP_CIPHER_CTX *)ctx);
}

/// Encrypts `count` bytes of `in` into `out` under the context's key and the 12-byte `nonce`,
/// authenticating `aad` as well; writes the 16-byte tag. 1 on success.
static inline int cove_gcm_seal(void *context, const uint8_t *nonce, const uint8_t *aad, int aad_count,
                                const uint8_t *in, uint8_t *out, int count, uint8_t *tag) {
    EVP_CIPHER_CTX *ctx = (EVP_CIPHER_CTX *)context;
    int n = 0;
    if (EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, nonce) != 1) return 0;
    if (EVP_EncryptUpdate(ctx, NULL, &n, aad, aad_count) != 1) return 0;
    if (EVP_EncryptUpdate(ctx, out, &n, in, count) != 1 || n != count) return 0;
    if (EVP_EncryptFinal_ex(ctx, out + n, &n) != 1) return 0;
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
}

/// Decrypts what cove_gcm_seal made: 1 when the tag holds (then `out` has the plain text), 0
/// when the bytes, the nonce, `aad` or the key are not those it was sealed with.
static inline int cove_gcm_open(void *context, const uint8_t *nonce, const uint8_t *aad, int aad_count,
                                const uint8_t *in, uint8_t *out, int count, const uint8_t *tag) {
    EVP_CIPHER_CTX *ctx = (EVP_CIPHER_CTX *)context;
    int n = 0;
    if (EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, nonce) != 1) return 0;
    if (EVP_DecryptUpdate(ctx, NULL, &n, aad, aad_count) != 1) return 0;
    if (EVP_DecryptUpdate(ctx, out, &n, in, count) != 1 || n != count) return 0;
    if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, (void *)tag) != 1) return 0;
    return EVP_DecryptFinal_ex(ctx, out + n, &n) == 1;
}

/// HMAC-SHA-256 of `data` under `key` into the 32 bytes at `out`. 1 on success.
static inline int cove_hmac_sha256(const uint8_t *key, int key_count, const uint8_t *data, size_t count,
                                   uint8_t *out) {
    unsigned int n = 32;
    return HMAC(EVP_sha256(), key, key_count, data, count, out, &n) != NULL && n == 32;
}

/// `count` bytes from the system's cryptographic random source. 1 on success.
static inline int cove_random_bytes(uint8_t *out, int count) {
    return RAND_bytes(out, count) == 1;
}

#endif
