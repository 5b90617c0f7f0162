#ifndef RECEIPTFLOW_COPENSSL_SHIM_H
#define RECEIPTFLOW_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#include <openssl/pkcs7.h>
#include <openssl/cms.h>
#include <openssl/err.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/crypto.h>
#include <openssl/rsa.h>
#include <openssl/bn.h>
#include <openssl/asn1.h>
#include <openssl/objects.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

// Swift cannot import function-like macros; these wrappers expose the few we use.
static inline void rf_OPENSSL_free(void *p) { OPENSSL_free(p); }
static inline int rf_sk_X509_num(const STACK_OF(X509) *s) { return sk_X509_num(s); }
static inline X509 *rf_sk_X509_value(const STACK_OF(X509) *s, int i) { return sk_X509_value(s, i); }
static inline STACK_OF(X509) *rf_sk_X509_new_null(void) { return sk_X509_new_null(); }
static inline int rf_sk_X509_push(STACK_OF(X509) *s, X509 *x) { return sk_X509_push(s, x); }
static inline void rf_sk_X509_free(STACK_OF(X509) *s) { sk_X509_free(s); }
static inline long rf_BIO_get_mem_data(BIO *b, char **pp) { return BIO_get_mem_data(b, pp); }

// SHA-1 / SHA-256 of up to two parts through the low-level API (the same assembly, SHA-NI included): no
// EVP_MD_CTX, so nothing is allocated per call. OpenSSL 3.0's EVP_DigestInit_ex2 frees and re-creates the
// provider's digest context on every init (one malloc per receipt per digest); these are deprecated in 3.0 but
// present in every 3.x.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static inline void rf_sha256_parts(const void *a, size_t na, const void *b, size_t nb, unsigned char *out) {
    SHA256_CTX c;
    SHA256_Init(&c);
    if (na) SHA256_Update(&c, a, na);
    if (nb) SHA256_Update(&c, b, nb);
    SHA256_Final(out, &c);
}
static inline void rf_sha1_parts(const void *a, size_t na, const void *b, size_t nb, unsigned char *out) {
    SHA_CTX c;
    SHA1_Init(&c);
    if (na) SHA1_Update(&c, a, na);
    if (nb) SHA1_Update(&c, b, nb);
    SHA1_Final(out, &c);
}
static inline void rf_sha1_parts3(const void *a, size_t na, const void *b, size_t nb, const void *c3, size_t nc,
                                  unsigned char *out) {
    SHA_CTX c;
    SHA1_Init(&c);
    if (na) SHA1_Update(&c, a, na);
    if (nb) SHA1_Update(&c, b, nb);
    if (nc) SHA1_Update(&c, c3, nc);
    SHA1_Final(out, &c);
}
#pragma GCC diagnostic pop
#endif
