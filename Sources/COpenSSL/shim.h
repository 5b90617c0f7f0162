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
#include <openssl/ec.h>
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

#endif
