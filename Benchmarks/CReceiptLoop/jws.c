// One line of JWS: the JWS in it (the record field, a notification body's signed payload and the JWS its data
// nests, or a page of signed transactions), each hashed, decoded and checked: ES256 and a cached chain.
#include "loop_internal.h"

#include <openssl/ec.h>
#include <openssl/err.h>
#include <stdlib.h>
#include <string.h>

/// Decodes base64url [s, e) into the worker's buffer `slot`, grown as needed; returns the length or -1.
static long decode(cloop_worker *w, int slot, const char *s, const char *e) {
    size_t need = (size_t)(e - s) / 4 * 3 + 3;
    if (need > w->jws_cap[slot]) {
        free(w->jws_buf[slot]);
        w->jws_buf[slot] = malloc(need);
        w->jws_cap[slot] = w->jws_buf[slot] ? need : 0;
        if (!w->jws_buf[slot]) return -1;
    }
    return cloop_base64_decode((const uint8_t *)s, (const uint8_t *)e, w->jws_buf[slot]);
}

/// Parses the header's certificates (`x5c`, base64 DER, leaf first) and checks its algorithm and chain.
static void fill_chain(cloop_worker *w, cloop_jws_chain *c, const char *header, long n) {
    const char *e = header + n;
    const char *alg = cloop_top_level_value(header, e, "alg");
    if (!alg || e - alg < 7 || memcmp(alg, "\"ES256\"", 7) != 0) return;
    const char *p = cloop_top_level_value(header, e, "x5c");
    if (!p || *p != '[') return;
    X509 *certs[CLOOP_MAX_CERTS];
    int count = 0;
    p++;
    while (p < e && count < CLOOP_MAX_CERTS) {
        while (p < e && (*p == ' ' || *p == ',')) p++;
        if (p == e || *p != '"') break;
        const char *q = cloop_string_end(p + 1, e);
        if (!q) break;
        uint8_t *der = malloc((size_t)(q - p) / 4 * 3 + 3);
        long len = der ? cloop_base64_decode((const uint8_t *)p + 1, (const uint8_t *)q, der) : -1;
        const unsigned char *d = der;
        X509 *x = len > 0 ? d2i_X509(NULL, &d, len) : NULL;
        free(der);
        if (!x) break;
        certs[count++] = x;
        p = q + 1;
    }
    if (count > 0) {
        w->counts.chain_checks++;
        STACK_OF(X509) *untrusted = sk_X509_new_null();
        for (int k = 1; k < count; k++) sk_X509_push(untrusted, certs[k]);
        X509_STORE_CTX *ctx = X509_STORE_CTX_new();
        if (ctx && X509_STORE_CTX_init(ctx, w->shared->store, certs[0], untrusted)) {
            // Validity dates are judged at the payload's signedDate, not the wall clock.
            X509_STORE_CTX_set_flags(ctx, X509_V_FLAG_NO_CHECK_TIME);
            c->trusted = X509_verify_cert(ctx) == 1;
        }
        X509_STORE_CTX_free(ctx);
        sk_X509_free(untrusted);
        EVP_PKEY *key = X509_get0_pubkey(certs[0]);
        if (key && EVP_PKEY_up_ref(key)) c->key = key;
    }
    for (int k = 0; k < count; k++) X509_free(certs[k]);
    ERR_clear_error();
}

/// The chain entry for a header segment (decoding and checking it on a miss).
static cloop_jws_chain *chain_for(cloop_worker *w, const char *header, size_t len) {
    for (int i = 0; i < w->jws_cached; i++) {
        cloop_jws_chain *c = &w->jws_cache[i];
        if (c->len == len && memcmp(c->header, header, len) == 0) return c;
    }
    cloop_jws_chain *c;
    if (w->jws_cached < CLOOP_CACHE_SIZE) {
        c = &w->jws_cache[w->jws_cached++];
    } else {
        c = &w->jws_cache[w->jws_next_evict];
        w->jws_next_evict = (w->jws_next_evict + 1) % CLOOP_CACHE_SIZE;
        cloop_jws_chain_free(c);
    }
    c->header = malloc(len);
    // A failed allocation leaves an entry without a key: its JWS are not checked.
    if (!c->header) return NULL;
    memcpy(c->header, header, len);
    c->len = len;
    long n = decode(w, 0, header, header + len);
    if (n > 0) fill_chain(w, c, (const char *)w->jws_buf[0], n);
    return c;
}

void cloop_jws_chain_free(cloop_jws_chain *c) {
    EVP_PKEY_free(c->key);
    free(c->header);
    memset(c, 0, sizeof *c);
}

/// An ES256 signature (r and s, 32 bytes each) as the DER ECDSA-Sig-Value OpenSSL verifies; its length or 0.
static int der_signature(const uint8_t *raw, unsigned char *out, int cap) {
    ECDSA_SIG *sig = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(raw, 32, NULL), *s = BN_bin2bn(raw + 32, 32, NULL);
    int len = 0;
    if (sig && r && s && ECDSA_SIG_set0(sig, r, s)) {
        r = s = NULL;
        if (i2d_ECDSA_SIG(sig, NULL) <= cap) len = i2d_ECDSA_SIG(sig, &out);
    }
    BN_free(r);
    BN_free(s);
    ECDSA_SIG_free(sig);
    return len > 0 ? len : 0;
}

static void check_jws(cloop_worker *w, const char *s, const char *e, int depth);

/// A notification's payload: the signed transaction and renewal info its `data` nests.
static void nested(cloop_worker *w, const char *payload, long n, int depth) {
    const char *e = payload + n;
    const char *data = cloop_top_level_value(payload, e, "data");
    if (!data || *data != '{') return;
    static const char *keys[] = {"signedTransactionInfo", "signedRenewalInfo"};
    for (int k = 0; k < 2; k++) {
        const char *v = cloop_top_level_value(data, e, keys[k]);
        const char *q = v && *v == '"' ? cloop_string_end(v + 1, e) : NULL;
        if (q) check_jws(w, v + 1, q, depth + 1);
    }
}

/// One compact JWS [s, e): its SHA-256, the header's chain (cached), the payload decoded, the ES256 check.
static void check_jws(cloop_worker *w, const char *s, const char *e, int depth) {
    if (depth > 1) return;
    w->counts.decoded++;
    uint8_t digest[32];
    unsigned int dlen = 0;
    if (!EVP_DigestInit_ex2(w->md, w->shared->sha256, NULL) || !EVP_DigestUpdate(w->md, s, (size_t)(e - s)) ||
        !EVP_DigestFinal_ex(w->md, digest, &dlen))
        return;
    const char *dot1 = memchr(s, '.', (size_t)(e - s));
    const char *dot2 = dot1 ? memchr(dot1 + 1, '.', (size_t)(e - dot1 - 1)) : NULL;
    if (!dot2) return;
    cloop_jws_chain *c = chain_for(w, s, (size_t)(dot1 - s));
    if (!c || !c->key) return;
    // The payload, decoded for the tables (its own buffer per nesting level).
    long n = decode(w, 1 + depth, dot1 + 1, dot2);
    if (n <= 0) return;
    w->counts.walked++;
    long sn = decode(w, 3, dot2 + 1, e);
    unsigned char der[80];
    int dn = sn == 64 ? der_signature(w->jws_buf[3], der, (int)sizeof der) : 0;
    if (dn > 0 && EVP_DigestVerifyInit(w->verify, NULL, w->shared->sha256, NULL, c->key) == 1 &&
        EVP_DigestVerify(w->verify, der, (size_t)dn, (const unsigned char *)s, (size_t)(dot2 - s)) == 1) {
        w->counts.signature_ok++;
        if (c->trusted) w->counts.valid++;
    }
    ERR_clear_error();
    // The JWS a notification nests are records of their own, whatever the verdict on the notification.
    if (depth == 0) nested(w, (const char *)w->jws_buf[1], n, depth);
}

void cloop_jws_record(cloop_worker *w, const char *line, size_t len) {
    const char *e = line + len;
    const char *v, *vs, *ve;
    if (cloop_find_receipt(line, e, &vs, &ve)) {
        check_jws(w, vs, ve, 0);
    } else if ((v = cloop_top_level_value(line, e, "signedPayload")) && *v == '"') {
        const char *q = cloop_string_end(v + 1, e);
        if (q) check_jws(w, v + 1, q, 0);
    } else if ((v = cloop_top_level_value(line, e, "signedTransactions")) && *v == '[') {
        const char *p = v + 1;
        while (p < e) {
            while (p < e && (*p == ' ' || *p == ',')) p++;
            if (p == e || *p != '"') break;
            const char *q = cloop_string_end(p + 1, e);
            if (!q) break;
            check_jws(w, p + 1, q, 0);
            p = q + 1;
        }
    }
}
