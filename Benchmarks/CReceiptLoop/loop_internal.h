#ifndef C_RECEIPT_LOOP_INTERNAL_H
#define C_RECEIPT_LOOP_INTERNAL_H

#include "CReceiptLoop.h"
#include <openssl/evp.h>
#include <openssl/x509.h>

/// The shared, read-only state of a run: the trust store and the fetched digests.
typedef struct {
    X509_STORE *store;
    EVP_MD *sha1;
    EVP_MD *sha256;
} cloop_shared;

/// One distinct certificates field: its bytes (the key), the parsed certificates, each one's issuer and serial
/// (to find the signer), its chain verdict (computed on first use) and its kept verify contexts.
#define CLOOP_MAX_CERTS 8
typedef struct {
    uint8_t *bytes;
    size_t len;
    int count;
    X509 *certs[CLOOP_MAX_CERTS];
    const uint8_t *issuer[CLOOP_MAX_CERTS];
    size_t issuer_len[CLOOP_MAX_CERTS];
    const uint8_t *serial[CLOOP_MAX_CERTS];
    size_t serial_len[CLOOP_MAX_CERTS];
    int trusted[CLOOP_MAX_CERTS];
    EVP_PKEY_CTX *ctx_sha1[CLOOP_MAX_CERTS];
    EVP_PKEY_CTX *ctx_sha256[CLOOP_MAX_CERTS];
} cloop_chain;

/// One worker thread's state: its chain cache, digest context, scratch buffer and counts.
#define CLOOP_CACHE_SIZE 64
typedef struct {
    const cloop_shared *shared;
    cloop_chain cache[CLOOP_CACHE_SIZE];
    int cached;
    int next_evict;
    EVP_MD_CTX *md;
    uint8_t *der;
    size_t der_cap;
    rf_cloop_result counts;
} cloop_worker;

/// A TLV: its tag, its value [val, val + len) and where the element ends (after the end-of-contents octets of an
/// indefinite length).
typedef struct {
    uint8_t tag;
    const uint8_t *start;
    const uint8_t *val;
    size_t len;
    const uint8_t *end;
} cloop_tlv;

int cloop_read_tlv(const uint8_t *p, const uint8_t *end, cloop_tlv *t);

/// The chain entry for a certificates field (parsing and caching it on a miss), or NULL when it does not parse.
cloop_chain *cloop_chain_for(cloop_worker *w, const uint8_t *certs, size_t len);
/// Index of the certificate with this issuer and serial in `c`, or -1.
int cloop_find_signer(const cloop_chain *c, const uint8_t *issuer, size_t issuer_len, const uint8_t *serial,
                      size_t serial_len);
/// 1 when certificate `i` chains to the anchor (computed once per entry and certificate).
int cloop_trusted(cloop_worker *w, cloop_chain *c, int i);
/// The kept `EVP_PKEY_verify` context for certificate `i`'s key with `md`.
EVP_PKEY_CTX *cloop_verify_ctx(cloop_worker *w, cloop_chain *c, int i, int sha256);
void cloop_chain_free(cloop_chain *c);

/// Fills the base64 table; called once before the workers start.
void cloop_init_tables(void);
/// Processes one NDJSON line.
void cloop_record(cloop_worker *w, const char *line, size_t len);

#endif
