#ifndef RECEIPTFLOW_CBASE64SIMD_H
#define RECEIPTFLOW_CBASE64SIMD_H
#include <stddef.h>
#include <stdint.h>

/// Decodes the longest prefix of `src` made of whole 32-character blocks of the standard base64 alphabet
/// (no whitespace, no padding) into `dst`, with AVX2 when the CPU has it. Stops before the first block holding
/// any other byte, and leaves at least `keep` input bytes undecoded (for the caller's careful tail path).
/// Writes up to 8 bytes past the decoded ones: `dst` must have room for 3/4 of the consumed input plus 8.
/// Returns the number of input bytes consumed (a multiple of 32; 0 without AVX2); 3/4 of it were written.
size_t rf_base64_decode_blocks(const uint8_t *src, size_t n, uint8_t *dst, size_t keep);

/// The number of leading bytes of `p[0..<n]` that can stay inside a JSON string as they are: none is `"`, `\\`,
/// a control character below 0x20 or a non-ASCII byte (UTF-8, which the caller validates). Looks at whole 32-byte
/// blocks with AVX2 and stops at the first special byte; returns 0 without AVX2 (the caller scans the rest).
size_t rf_json_plain_run(const uint8_t *p, size_t n);

/// Writes the SHA-256 of `a[0..<na]` to `out_a` and of `b[0..<nb]` to `out_b` (32 bytes each), hashing the two
/// messages interleaved with the SHA extensions (about twice one message's speed). A pointer may be NULL when its
/// length is 0. Returns 1, or 0 without writing anything when the CPU lacks the SHA extensions (the caller then
/// hashes another way).
int rf_sha256_x2(const uint8_t *a, size_t na, uint8_t *out_a, const uint8_t *b, size_t nb, uint8_t *out_b);

/// The SHA-1 of `a[0..<na]` into `out_a` and of `b[0..<nb]` into `out_b` (20 bytes each), the two messages
/// interleaved with the SHA extensions, as `rf_sha256_x2`. Returns 1, or 0 without writing anything when the CPU
/// lacks the SHA extensions.
int rf_sha1_x2(const uint8_t *a, size_t na, uint8_t *out_a, const uint8_t *b, size_t nb, uint8_t *out_b);

/// One message for `rf_sha_jobs_x2`: `count` bytes at `data` (NULL only when `count` is 0), its digest to `out`
/// (32 bytes for SHA-256, 20 for SHA-1).
typedef struct {
    const uint8_t *data;
    size_t count;
    uint8_t *out;
    int sha256; // 1: SHA-256, 0: SHA-1
} rf_sha_job;

/// The digests of `n` messages on two interleaved lanes with the SHA extensions, each lane taking the next message
/// in list order as soon as its own is done (SHA-1 and SHA-256 messages may share the two lanes). Returns 1, or 0
/// without writing anything when the CPU lacks the SHA extensions.
int rf_sha_jobs_x2(const rf_sha_job *jobs, size_t n);

/// 1 when `rf_sha256_x2`, `rf_sha1_x2` and `rf_sha_jobs_x2` can run on this CPU (CPUID: SHA extensions, SSSE3 and SSE4.1), else 0.
/// Also 0 when the environment variable RECEIPTFLOW_NO_SHA_X2 is set to anything non-empty (to run the fallback
/// path on a CPU that has the extensions); read once.
int rf_sha256_x2_available(void);

#endif
