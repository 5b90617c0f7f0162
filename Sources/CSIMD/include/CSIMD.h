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

#endif
