// One line's work: the receipt field, its base64, the SignedData walk, the digests and the RSA check.
#include "loop_internal.h"

#include <openssl/err.h>
#include <stdlib.h>
#include <string.h>

/// The end of the JSON string whose contents start at `s` (its closing quote), or NULL.
static const char *string_end(const char *s, const char *e) {
    for (;;) {
        const char *q = memchr(s, '"', (size_t)(e - s));
        if (!q) return NULL;
        size_t slashes = 0;
        while (q - slashes > s && q[-1 - (ptrdiff_t)slashes] == '\\') slashes++;
        if (slashes % 2 == 0) return q;
        s = q + 1;
    }
}

static int is_receipt_key(const char *k, size_t n) {
    return (n == 12 && (memcmp(k, "receipt-data", 12) == 0 || memcmp(k, "receipt_data", 12) == 0)) ||
           (n == 7 && memcmp(k, "receipt", 7) == 0);
}

/// Finds the string value of the top-level receipt key: [*vs, *ve). Returns 0 when there is none.
static int find_receipt(const char *s, const char *e, const char **vs, const char **ve) {
    int depth = 0, expect_key = 0;
    while (s < e) {
        char c = *s;
        if (c == '"') {
            const char *q = string_end(s + 1, e);
            if (!q) return 0;
            if (depth == 1 && expect_key) {
                int wanted = is_receipt_key(s + 1, (size_t)(q - s - 1));
                s = q + 1;
                while (s < e && (*s == ' ' || *s == '\t')) s++;
                if (s == e || *s != ':') return 0;
                s++;
                while (s < e && (*s == ' ' || *s == '\t')) s++;
                expect_key = 0;
                if (wanted) {
                    if (s == e || *s != '"') return 0;
                    *vs = s + 1;
                    *ve = string_end(s + 1, e);
                    return *ve != NULL;
                }
                continue;
            }
            s = q + 1;
            continue;
        }
        if (c == '{' || c == '[') {
            depth++;
            expect_key = c == '{' && depth == 1;
        } else if (c == '}' || c == ']') {
            depth--;
        } else if (c == ',' && depth == 1) {
            expect_key = 1;
        }
        s++;
    }
    return 0;
}

/// Base64 alphabet values; 64 marks every other byte.
static uint8_t b64[256];

void cloop_init_tables(void) {
    static const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    memset(b64, 64, sizeof b64);
    for (int i = 0; i < 64; i++) b64[(uint8_t)alphabet[i]] = (uint8_t)i;
}

/// Decodes base64 inside a JSON string (`\/` is `/`; `\r`, `\n`, `\t` and spaces are skipped; padding ends it).
/// Returns the decoded length, or -1.
static long b64_decode(const uint8_t *s, const uint8_t *e, uint8_t *out) {
    uint8_t *o = out;
    uint32_t acc = 0;
    int bits = 0;
    while (s < e) {
        // Four plain characters at a time while the accumulator is empty.
        if (bits == 0 && e - s >= 4) {
            uint8_t a = b64[s[0]], b = b64[s[1]], c = b64[s[2]], d = b64[s[3]];
            if ((a | b | c | d) < 64) {
                uint32_t v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | d;
                o[0] = (uint8_t)(v >> 16);
                o[1] = (uint8_t)(v >> 8);
                o[2] = (uint8_t)v;
                o += 3;
                s += 4;
                continue;
            }
        }
        uint8_t ch = *s++, v = b64[ch];
        if (v == 64) {
            if (ch == '\\' && s < e) {
                ch = *s++;
                if (ch == '/') v = 63;
                else if (ch == 'r' || ch == 'n' || ch == 't') continue;
                else return -1;
            } else if (ch == ' ') {
                continue;
            } else if (ch == '=') {
                break;
            } else {
                return -1;
            }
        }
        acc = acc << 6 | v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            *o++ = (uint8_t)(acc >> bits);
        }
    }
    return o - out;
}

/// Nesting limit of indefinite lengths and chunked strings: hostile input cannot exhaust the stack.
#define MAX_DEPTH 32

static int read_tlv(const uint8_t *p, const uint8_t *end, cloop_tlv *t, int depth) {
    if (end - p < 2 || depth > MAX_DEPTH) return 0;
    t->start = p;
    t->tag = *p++;
    uint8_t l = *p++;
    if (l == 0x80) {
        // Indefinite length (BER, constructed only): the children up to the end-of-contents octets.
        if (!(t->tag & 0x20)) return 0;
        t->val = p;
        for (;;) {
            if (end - p >= 2 && p[0] == 0 && p[1] == 0) {
                t->len = (size_t)(p - t->val);
                t->end = p + 2;
                return 1;
            }
            cloop_tlv child;
            if (!read_tlv(p, end, &child, depth + 1)) return 0;
            p = child.end;
        }
    }
    size_t len = l;
    if (l & 0x80) {
        int n = l & 0x7f;
        if (n > 4 || end - p < n) return 0;
        len = 0;
        for (int i = 0; i < n; i++) len = len << 8 | *p++;
    }
    if ((size_t)(end - p) < len) return 0;
    t->val = p;
    t->len = len;
    t->end = p + len;
    return 1;
}

int cloop_read_tlv(const uint8_t *p, const uint8_t *end, cloop_tlv *t) { return read_tlv(p, end, t, 0); }

/// The next child of a constructed value whose children run up to `end`, with tag `tag`.
static int next(const uint8_t **p, const uint8_t *end, uint8_t tag, cloop_tlv *t) {
    if (!cloop_read_tlv(*p, end, t) || t->tag != tag) return 0;
    *p = t->end;
    return 1;
}

/// Hashes the content OCTET STRING, primitive or chunked (BER); returns 0 on a malformed chunk.
static int digest_octets(EVP_MD_CTX *md, const cloop_tlv *s, int depth) {
    if (s->tag == 0x04) return EVP_DigestUpdate(md, s->val, s->len);
    if (s->tag != 0x24 || depth > MAX_DEPTH) return 0;
    const uint8_t *p = s->val, *end = s->val + s->len;
    while (p < end) {
        cloop_tlv chunk;
        if (!cloop_read_tlv(p, end, &chunk) || !digest_octets(md, &chunk, depth + 1)) return 0;
        p = chunk.end;
    }
    return 1;
}

static const uint8_t oid_sha1[] = {0x2B, 0x0E, 0x03, 0x02, 0x1A};
static const uint8_t oid_sha256[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01};
static const uint8_t oid_message_digest[] = {0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x04};

/// The messageDigest value among the signed attributes, or NULL.
static const cloop_tlv *message_digest(const cloop_tlv *attrs, cloop_tlv *out) {
    const uint8_t *p = attrs->val, *end = attrs->val + attrs->len;
    cloop_tlv attr, oid, set;
    while (p < end && next(&p, end, 0x30, &attr)) {
        const uint8_t *q = attr.val, *qe = attr.val + attr.len;
        if (!next(&q, qe, 0x06, &oid) || !next(&q, qe, 0x31, &set)) return NULL;
        if (oid.len == sizeof oid_message_digest && memcmp(oid.val, oid_message_digest, oid.len) == 0) {
            const uint8_t *v = set.val;
            return next(&v, set.val + set.len, 0x04, out) ? out : NULL;
        }
    }
    return NULL;
}

/// Walks one receipt's SignedData, hashes it and checks its signature and chain.
static void check_receipt(cloop_worker *w, const uint8_t *der, size_t n) {
    const uint8_t *end = der + n, *p = der;
    cloop_tlv ci, oid, wrap, sd, version, algs, encap, econtent, octets, certs, signers, si, sid, issuer, serial,
        dalg, attrs, salg, sig, t;
    if (!next(&p, end, 0x30, &ci)) return;
    p = ci.val;
    const uint8_t *e = ci.val + ci.len;
    if (!next(&p, e, 0x06, &oid) || !next(&p, e, 0xA0, &wrap)) return;
    p = wrap.val;
    if (!next(&p, wrap.val + wrap.len, 0x30, &sd)) return;
    p = sd.val;
    e = sd.val + sd.len;
    if (!next(&p, e, 0x02, &version) || !next(&p, e, 0x31, &algs) || !next(&p, e, 0x30, &encap)) return;
    if (!next(&p, e, 0xA0, &certs)) return;
    if (cloop_read_tlv(p, e, &t) && t.tag == 0xA1) p = t.end;  // CRLs
    if (!next(&p, e, 0x31, &signers)) return;
    // The encapsulated content.
    p = encap.val;
    const uint8_t *ee = encap.val + encap.len;
    if (!next(&p, ee, 0x06, &oid) || !next(&p, ee, 0xA0, &econtent)) return;
    if (!cloop_read_tlv(econtent.val, econtent.val + econtent.len, &octets)) return;
    // The first SignerInfo: version, issuerAndSerialNumber, digest algorithm, [signed attributes], signature
    // algorithm, signature.
    p = signers.val;
    if (!next(&p, signers.val + signers.len, 0x30, &si)) return;
    p = si.val;
    e = si.val + si.len;
    if (!next(&p, e, 0x02, &version) || !next(&p, e, 0x30, &sid) || !next(&p, e, 0x30, &dalg)) return;
    int has_attrs = cloop_read_tlv(p, e, &attrs) && attrs.tag == 0xA0;
    if (has_attrs) p = attrs.end;
    if (!next(&p, e, 0x30, &salg) || !next(&p, e, 0x04, &sig)) return;
    const uint8_t *q = sid.val;
    if (!next(&q, sid.val + sid.len, 0x30, &issuer) || !next(&q, sid.val + sid.len, 0x02, &serial)) return;
    q = dalg.val;
    if (!next(&q, dalg.val + dalg.len, 0x06, &oid)) return;
    int sha256;
    if (oid.len == sizeof oid_sha256 && memcmp(oid.val, oid_sha256, oid.len) == 0) sha256 = 1;
    else if (oid.len == sizeof oid_sha1 && memcmp(oid.val, oid_sha1, oid.len) == 0) sha256 = 0;
    else return;
    w->counts.walked++;

    // receipt_sha256, then the signed digest: of the content, or of the signed attributes when present.
    const EVP_MD *md = sha256 ? w->shared->sha256 : w->shared->sha1;
    uint8_t receipt_digest[32], digest[32];
    unsigned int dlen = 0;
    if (!EVP_DigestInit_ex2(w->md, w->shared->sha256, NULL) || !EVP_DigestUpdate(w->md, der, n) ||
        !EVP_DigestFinal_ex(w->md, receipt_digest, &dlen))
        return;
    if (!EVP_DigestInit_ex2(w->md, md, NULL) || !digest_octets(w->md, &octets, 0) ||
        !EVP_DigestFinal_ex(w->md, digest, &dlen))
        return;
    if (has_attrs) {
        cloop_tlv mdv;
        if (!message_digest(&attrs, &mdv) || mdv.len != dlen || memcmp(mdv.val, digest, dlen) != 0) return;
        static const uint8_t set_tag = 0x31;
        if (!EVP_DigestInit_ex2(w->md, md, NULL) || !EVP_DigestUpdate(w->md, &set_tag, 1) ||
            !EVP_DigestUpdate(w->md, attrs.start + 1, (size_t)(attrs.end - attrs.start - 1)) ||
            !EVP_DigestFinal_ex(w->md, digest, &dlen))
            return;
    }

    // The signer among the certificates, its RSA check, and the chain.
    cloop_chain *chain = cloop_chain_for(w, certs.val, certs.len);
    if (!chain) return;
    int signer = cloop_find_signer(chain, issuer.start, (size_t)(issuer.end - issuer.start), serial.start,
                                   (size_t)(serial.end - serial.start));
    if (signer < 0) return;
    EVP_PKEY_CTX *ctx = cloop_verify_ctx(w, chain, signer, sha256);
    if (!ctx || EVP_PKEY_verify(ctx, sig.val, sig.len, digest, dlen) != 1) {
        ERR_clear_error();
        return;
    }
    w->counts.signature_ok++;
    if (cloop_trusted(w, chain, signer)) w->counts.valid++;
}

void cloop_record(cloop_worker *w, const char *line, size_t len) {
    const char *vs, *ve;
    if (!find_receipt(line, line + len, &vs, &ve)) return;
    size_t need = (size_t)(ve - vs) / 4 * 3 + 3;
    if (need > w->der_cap) {
        free(w->der);
        w->der = malloc(need);
        w->der_cap = w->der ? need : 0;
        if (!w->der) return;
    }
    long n = b64_decode((const uint8_t *)vs, (const uint8_t *)ve, w->der);
    if (n <= 0) return;
    w->counts.decoded++;
    check_receipt(w, w->der, (size_t)n);
}
