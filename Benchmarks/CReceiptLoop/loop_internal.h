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

/// One distinct JWS header (its base64url text, the key): the leaf's key when the algorithm is ES256 and the
/// certificates parse, and whether they chain to the anchor.
typedef struct {
    char *header;
    size_t len;
    EVP_PKEY *key;
    int trusted;
} cloop_jws_chain;

/// One worker thread's state: its chain caches, digest contexts, scratch buffers and counts.
#define CLOOP_CACHE_SIZE 64
typedef struct {
    const cloop_shared *shared;
    cloop_chain cache[CLOOP_CACHE_SIZE];
    int cached;
    int next_evict;
    EVP_MD_CTX *md;
    uint8_t *der;
    size_t der_cap;
    cloop_jws_chain jws_cache[CLOOP_CACHE_SIZE];
    int jws_cached;
    int jws_next_evict;
    /// The decoded JWS header, payload (top level and nested) and signature.
    uint8_t *jws_buf[4];
    size_t jws_cap[4];
    EVP_MD_CTX *verify;
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

/// Nesting limit of indefinite lengths and chunked strings: hostile input cannot exhaust the stack.
#define CLOOP_MAX_DEPTH 32

/// Reads the TLV at `p` (which must end by `end`); returns 0 when it is malformed or nests too deep.
int cloop_read_tlv(const uint8_t *p, const uint8_t *end, cloop_tlv *t);
/// Reads the next child of a constructed value whose children run up to `end`, which must have tag `tag`, and
/// moves `*p` past it; returns 0 otherwise.
int cloop_next(const uint8_t **p, const uint8_t *end, uint8_t tag, cloop_tlv *t);

/// Finds the string value of the top-level receipt key (`receipt-data`, `receipt_data` or `receipt`) of a JSON
/// line: [*vs, *ve). Returns 0 when there is none.
int cloop_find_receipt(const char *s, const char *e, const char **vs, const char **ve);
/// The value (its first byte, after any spaces) of the top-level key `key` of the JSON object at `s`, or NULL.
const char *cloop_top_level_value(const char *s, const char *e, const char *key);
/// The closing quote of the JSON string whose contents start at `s`, or NULL.
const char *cloop_string_end(const char *s, const char *e);
/// Decodes base64 inside a JSON string (`\/` is `/`; `\r`, `\n`, `\t` and spaces are skipped; padding ends it)
/// into `out`, which holds at least 3 bytes per 4 input bytes plus 3. Returns the decoded length, or -1.
long cloop_base64_decode(const uint8_t *s, const uint8_t *e, uint8_t *out);

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
/// Processes one NDJSON line of receipts.
void cloop_record(cloop_worker *w, const char *line, size_t len);
/// Processes one NDJSON line of JWS.
void cloop_jws_record(cloop_worker *w, const char *line, size_t len);
void cloop_jws_chain_free(cloop_jws_chain *c);

#endif
