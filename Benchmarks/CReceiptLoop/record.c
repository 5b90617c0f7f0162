// One line's work: the receipt field, its base64, the SignedData walk, the digests and the RSA check.
#include "loop_internal.h"

#include <openssl/err.h>
#include <stdlib.h>
#include <string.h>

/// Hashes the content OCTET STRING, primitive or chunked (BER); returns 0 on a malformed chunk.
static int digest_octets(EVP_MD_CTX *md, const cloop_tlv *s, int depth) {
    if (s->tag == 0x04) return EVP_DigestUpdate(md, s->val, s->len);
    if (s->tag != 0x24 || depth > CLOOP_MAX_DEPTH) return 0;
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
    while (p < end && cloop_next(&p, end, 0x30, &attr)) {
        const uint8_t *q = attr.val, *qe = attr.val + attr.len;
        if (!cloop_next(&q, qe, 0x06, &oid) || !cloop_next(&q, qe, 0x31, &set)) return NULL;
        if (oid.len == sizeof oid_message_digest && memcmp(oid.val, oid_message_digest, oid.len) == 0) {
            const uint8_t *v = set.val;
            return cloop_next(&v, set.val + set.len, 0x04, out) ? out : NULL;
        }
    }
    return NULL;
}

/// Walks one receipt's SignedData, hashes it and checks its signature and chain.
static void check_receipt(cloop_worker *w, const uint8_t *der, size_t n) {
    const uint8_t *end = der + n, *p = der;
    cloop_tlv ci, oid, wrap, sd, version, algs, encap, econtent, octets, certs, signers, si, sid, issuer, serial,
        dalg, attrs, salg, sig, t;
    if (!cloop_next(&p, end, 0x30, &ci)) return;
    p = ci.val;
    const uint8_t *e = ci.val + ci.len;
    if (!cloop_next(&p, e, 0x06, &oid) || !cloop_next(&p, e, 0xA0, &wrap)) return;
    p = wrap.val;
    if (!cloop_next(&p, wrap.val + wrap.len, 0x30, &sd)) return;
    p = sd.val;
    e = sd.val + sd.len;
    if (!cloop_next(&p, e, 0x02, &version) || !cloop_next(&p, e, 0x31, &algs) || !cloop_next(&p, e, 0x30, &encap)) return;
    if (!cloop_next(&p, e, 0xA0, &certs)) return;
    if (cloop_read_tlv(p, e, &t) && t.tag == 0xA1) p = t.end;  // CRLs
    if (!cloop_next(&p, e, 0x31, &signers)) return;
    // The encapsulated content.
    p = encap.val;
    const uint8_t *ee = encap.val + encap.len;
    if (!cloop_next(&p, ee, 0x06, &oid) || !cloop_next(&p, ee, 0xA0, &econtent)) return;
    if (!cloop_read_tlv(econtent.val, econtent.val + econtent.len, &octets)) return;
    // The first SignerInfo: version, issuerAndSerialNumber, digest algorithm, [signed attributes], signature
    // algorithm, signature.
    p = signers.val;
    if (!cloop_next(&p, signers.val + signers.len, 0x30, &si)) return;
    p = si.val;
    e = si.val + si.len;
    if (!cloop_next(&p, e, 0x02, &version) || !cloop_next(&p, e, 0x30, &sid) || !cloop_next(&p, e, 0x30, &dalg)) return;
    int has_attrs = cloop_read_tlv(p, e, &attrs) && attrs.tag == 0xA0;
    if (has_attrs) p = attrs.end;
    if (!cloop_next(&p, e, 0x30, &salg) || !cloop_next(&p, e, 0x04, &sig)) return;
    const uint8_t *q = sid.val;
    if (!cloop_next(&q, sid.val + sid.len, 0x30, &issuer) || !cloop_next(&q, sid.val + sid.len, 0x02, &serial)) return;
    q = dalg.val;
    if (!cloop_next(&q, dalg.val + dalg.len, 0x06, &oid)) return;
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
    if (!cloop_find_receipt(line, line + len, &vs, &ve)) return;
    size_t need = (size_t)(ve - vs) / 4 * 3 + 3;
    if (need > w->der_cap) {
        free(w->der);
        w->der = malloc(need);
        w->der_cap = w->der ? need : 0;
        if (!w->der) return;
    }
    long n = cloop_base64_decode((const uint8_t *)vs, (const uint8_t *)ve, w->der);
    if (n <= 0) return;
    w->counts.decoded++;
    check_receipt(w, w->der, (size_t)n);
}
