// The chain cache: one entry per distinct certificates field, its certificates parsed and its chains checked once.
#include "loop_internal.h"

#include <openssl/err.h>
#include <openssl/rsa.h>
#include <stdlib.h>
#include <string.h>

void cloop_chain_free(cloop_chain *c) {
    for (int i = 0; i < c->count; i++) {
        X509_free(c->certs[i]);
        EVP_PKEY_CTX_free(c->ctx_sha1[i]);
        EVP_PKEY_CTX_free(c->ctx_sha256[i]);
    }
    free(c->bytes);
    memset(c, 0, sizeof *c);
}

/// Parses the certificates of `c->bytes` and records each one's issuer and serial (TBSCertificate: [0] version,
/// serial, signature algorithm, issuer). Returns 0 when one does not parse.
static int parse_certs(cloop_chain *c) {
    const uint8_t *p = c->bytes, *end = c->bytes + c->len;
    while (p < end) {
        cloop_tlv cert, tbs, t;
        if (c->count == CLOOP_MAX_CERTS || !cloop_read_tlv(p, end, &cert) || cert.tag != 0x30) return 0;
        const uint8_t *q = cert.val, *qe = cert.val + cert.len;
        if (!cloop_read_tlv(q, qe, &tbs) || tbs.tag != 0x30) return 0;
        q = tbs.val;
        qe = tbs.val + tbs.len;
        if (!cloop_read_tlv(q, qe, &t)) return 0;
        if (t.tag == 0xA0 && !cloop_read_tlv(q = t.end, qe, &t)) return 0;
        if (t.tag != 0x02) return 0;
        int i = c->count;
        c->serial[i] = t.start;
        c->serial_len[i] = (size_t)(t.end - t.start);
        if (!cloop_read_tlv(t.end, qe, &t) || !cloop_read_tlv(t.end, qe, &t) || t.tag != 0x30) return 0;
        c->issuer[i] = t.start;
        c->issuer_len[i] = (size_t)(t.end - t.start);
        const unsigned char *d = cert.start;
        c->certs[i] = d2i_X509(NULL, &d, (long)(cert.end - cert.start));
        if (!c->certs[i]) return 0;
        c->trusted[i] = -1;
        c->count++;
        p = cert.end;
    }
    return c->count > 0;
}

cloop_chain *cloop_chain_for(cloop_worker *w, const uint8_t *certs, size_t len) {
    for (int i = 0; i < w->cached; i++) {
        cloop_chain *c = &w->cache[i];
        if (c->len == len && memcmp(c->bytes, certs, len) == 0) return c;
    }
    cloop_chain *c;
    if (w->cached < CLOOP_CACHE_SIZE) {
        c = &w->cache[w->cached++];
    } else {
        c = &w->cache[w->next_evict];
        w->next_evict = (w->next_evict + 1) % CLOOP_CACHE_SIZE;
        cloop_chain_free(c);
    }
    c->bytes = malloc(len);
    if (!c->bytes) return NULL;
    memcpy(c->bytes, certs, len);
    c->len = len;
    if (!parse_certs(c)) {
        // Kept (with no certificates) so that the same bad field is not parsed again.
        for (int i = 0; i < c->count; i++) X509_free(c->certs[i]);
        c->count = 0;
        ERR_clear_error();
        return NULL;
    }
    return c;
}

int cloop_find_signer(const cloop_chain *c, const uint8_t *issuer, size_t issuer_len, const uint8_t *serial,
                      size_t serial_len) {
    for (int i = 0; i < c->count; i++) {
        if (c->serial_len[i] == serial_len && c->issuer_len[i] == issuer_len &&
            memcmp(c->serial[i], serial, serial_len) == 0 && memcmp(c->issuer[i], issuer, issuer_len) == 0)
            return i;
    }
    return -1;
}

int cloop_trusted(cloop_worker *w, cloop_chain *c, int i) {
    if (c->trusted[i] >= 0) return c->trusted[i];
    w->counts.chain_checks++;
    STACK_OF(X509) *untrusted = sk_X509_new_null();
    for (int k = 0; k < c->count; k++)
        if (k != i) sk_X509_push(untrusted, c->certs[k]);
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    int ok = 0;
    if (ctx && X509_STORE_CTX_init(ctx, w->shared->store, c->certs[i], untrusted)) {
        // Validity dates are the receipt's business (its creation date), not the wall clock's.
        X509_STORE_CTX_set_flags(ctx, X509_V_FLAG_NO_CHECK_TIME);
        ok = X509_verify_cert(ctx) == 1;
    }
    X509_STORE_CTX_free(ctx);
    sk_X509_free(untrusted);
    ERR_clear_error();
    c->trusted[i] = ok;
    return ok;
}

EVP_PKEY_CTX *cloop_verify_ctx(cloop_worker *w, cloop_chain *c, int i, int sha256) {
    EVP_PKEY_CTX **kept = sha256 ? &c->ctx_sha256[i] : &c->ctx_sha1[i];
    if (*kept) return *kept;
    EVP_PKEY *key = X509_get0_pubkey(c->certs[i]);
    EVP_PKEY_CTX *ctx = key ? EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL) : NULL;
    if (!ctx || EVP_PKEY_verify_init(ctx) != 1 || EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) != 1 ||
        EVP_PKEY_CTX_set_signature_md(ctx, sha256 ? w->shared->sha256 : w->shared->sha1) != 1) {
        EVP_PKEY_CTX_free(ctx);
        ERR_clear_error();
        return NULL;
    }
    *kept = ctx;
    return ctx;
}
