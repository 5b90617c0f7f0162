// AVX2 kernels for the two byte-heavy loops of the input stage, chosen at run time (nothing without AVX2).
// Base64: classify every byte of a 32-character block with two nibble lookups, map it to its sextet with a
// third, then pack four sextets into three bytes with multiply-adds and shuffles (tables derived in the comments
// below). JSON: find the first quote, backslash, control or non-ASCII byte of a string. The Swift callers keep every
// decision about validity (whitespace, padding, escapes, errors, tails); these only go faster over plain runs.
#include "CSIMD.h"

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("avx2"))) static size_t decode_avx2(const uint8_t *src, size_t n, uint8_t *dst, size_t keep) {
    // A byte b is outside the alphabet iff lut_lo[b & 15] & lut_hi[b >> 4] != 0: each hi nibble gets one bit
    // for its class (0-1 and 8-F: nothing valid; 2: + and /; 3: digits; 4 and 6: letters from 1; 5 and 7:
    // letters up to A), and lut_lo sets, for each lo nibble, the bits of the classes in which it is invalid.
    const __m256i lut_lo = _mm256_setr_epi8(
        0x0b, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x07, 0x15, 0x17, 0x17, 0x17, 0x15,
        0x0b, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x07, 0x15, 0x17, 0x17, 0x17, 0x15);
    const __m256i lut_hi = _mm256_setr_epi8(
        0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x08, 0x10, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
        0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x08, 0x10, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01);
    // Sextet = byte + roll[hi nibble, or 1 for '/']: '/' 47+16, '+' 43+19, digits +4, A-Z -65, a-z -71.
    const __m256i lut_roll = _mm256_setr_epi8(
        0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m256i nibble = _mm256_set1_epi8(0x0f);
    const __m256i slash = _mm256_set1_epi8(0x2f);
    // (a*64 + b, c*64 + d) in 16-bit lanes, then (a*64+b)*4096 + (c*64+d): a 24-bit group per 32-bit lane.
    const __m256i merge1 = _mm256_set1_epi32(0x01400140);
    const __m256i merge2 = _mm256_set1_epi32(0x00011000);
    // Each 32-bit lane holds the group little-endian; output wants its three bytes high to low, 12 per half.
    const __m256i order = _mm256_setr_epi8(
        2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1,
        2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
    const __m256i halves = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);

    size_t i = 0;
    size_t o = 0;
    while (i + 32 + keep <= n) {
        __m256i in = _mm256_loadu_si256((const __m256i *)(src + i));
        __m256i hi = _mm256_and_si256(_mm256_srli_epi32(in, 4), nibble);
        __m256i lo = _mm256_and_si256(in, nibble);
        __m256i bad = _mm256_and_si256(_mm256_shuffle_epi8(lut_lo, lo), _mm256_shuffle_epi8(lut_hi, hi));
        if (!_mm256_testz_si256(bad, bad)) break;
        __m256i roll = _mm256_shuffle_epi8(lut_roll, _mm256_add_epi8(_mm256_cmpeq_epi8(in, slash), hi));
        __m256i sextets = _mm256_add_epi8(in, roll);
        __m256i groups = _mm256_madd_epi16(_mm256_maddubs_epi16(sextets, merge1), merge2);
        __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(groups, order), halves);
        _mm256_storeu_si256((__m256i *)(dst + o), bytes);
        i += 32;
        o += 24;
    }
    return i;
}

__attribute__((target("avx2"))) static size_t plain_run_avx2(const uint8_t *p, size_t n) {
    const __m256i quote = _mm256_set1_epi8('"');
    const __m256i backslash = _mm256_set1_epi8('\\');
    const __m256i below = _mm256_set1_epi8(0x1f);
    size_t i = 0;
    while (i + 32 <= n) {
        __m256i in = _mm256_loadu_si256((const __m256i *)(p + i));
        // x <= 0x1f exactly when max(x, 0x1f) == 0x1f (unsigned).
        __m256i special = _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi8(in, quote), _mm256_cmpeq_epi8(in, backslash)),
            _mm256_cmpeq_epi8(_mm256_max_epu8(in, below), below));
        // The high bit of a byte itself marks non-ASCII (UTF-8 the caller validates): also special.
        unsigned mask = (unsigned)_mm256_movemask_epi8(special) | (unsigned)_mm256_movemask_epi8(in);
        if (mask != 0) return i + (size_t)__builtin_ctz(mask);
        i += 32;
    }
    return i;
}

size_t rf_json_plain_run(const uint8_t *p, size_t n) {
    return __builtin_cpu_supports("avx2") ? plain_run_avx2(p, n) : 0;
}

size_t rf_base64_decode_blocks(const uint8_t *src, size_t n, uint8_t *dst, size_t keep) {
    // Reads the CPU features the runtime filled in at load time: no state of our own, so no race.
    return __builtin_cpu_supports("avx2") ? decode_avx2(src, n, dst, keep) : 0;
}
#else
size_t rf_json_plain_run(const uint8_t *p, size_t n) {
    (void)p; (void)n;
    return 0;
}
size_t rf_base64_decode_blocks(const uint8_t *src, size_t n, uint8_t *dst, size_t keep) {
    (void)src; (void)n; (void)dst; (void)keep;
    return 0;
}
#endif
