#ifndef C_RECEIPT_LOOP_H
#define C_RECEIPT_LOOP_H

#include <stddef.h>
#include <stdint.h>

/// What one pass of the plain C loop saw: how many lines, how many receipts it decoded, walked and hashed, and how
/// many passed the RSA check and the chain check. It writes nothing else.
typedef struct {
    int64_t lines;
    /// Lines with a receipt field whose base64 decoded.
    int64_t decoded;
    /// Receipts whose SignedData walk found content, certificates, signer and signature.
    int64_t walked;
    /// Receipts whose RSA PKCS #1 v1.5 signature verified (and whose signed attributes, if any, matched).
    int64_t signature_ok;
    /// Of those, the ones whose signer chains to the trust anchor (the cached chain verdict).
    int64_t valid;
    /// Chain checks actually run (cache misses), over all threads.
    int64_t chain_checks;
} rf_cloop_result;

/// The unavoidable work of every record of a zstd NDJSON receipt corpus, on `threads` worker threads plus one
/// reading thread: decompress, find the receipt field of each line, decode its base64, walk the SignedData to the
/// content, certificates, signer and signature, compute the receipt's SHA-256 and the signed digest, and check the
/// RSA signature and the chain (cached per distinct certificate set) through OpenSSL, as the exporter does.
/// `root_der` is the trust anchor. Returns 0, or -1 when the file cannot be read or decompressed, or the anchor
/// does not parse.
int rf_cloop_run(const char *path, const uint8_t *root_der, size_t root_len, int threads, rf_cloop_result *out);

/// The same for a zstd NDJSON corpus of StoreKit 2 / App Store Server JWS: every JWS of each line (the record
/// field, a notification body's `signedPayload` and the transaction and renewal info its data nests, a page's
/// `signedTransactions`) is hashed (SHA-256 of its text), its header decoded and its `x5c` chain checked (cached
/// per distinct header), its payload decoded, and its ES256 signature checked (`EVP_DigestVerify`). The counts:
/// `decoded` JWS met, `walked` with a usable key and payload, `signature_ok`, `valid` (and chaining).
int rf_cloop_run_jws(const char *path, const uint8_t *root_der, size_t root_len, int threads, rf_cloop_result *out);

#endif
