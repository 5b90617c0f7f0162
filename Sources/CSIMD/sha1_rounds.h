// Private to CSIMD: SHA-1 (FIPS 180-4 section 6.1) block compression with the SHA extensions, one lane or two
// interleaved, shared by the two-lane kernels (sha1x2.c, sha_jobs.c); sha1x2.c explains the register layout.
// Include inside `#if defined(__x86_64__)`.
#ifndef RECEIPTFLOW_CSIMD_SHA1_ROUNDS_H
#define RECEIPTFLOW_CSIMD_SHA1_ROUNDS_H
#include <immintrin.h>
#include <stdint.h>

#include "sha_blocks.h"

// Reverses all 16 bytes of a register (see the layout above).
#define SHA1_REVERSE_BYTES _mm_set_epi64x(0x0001020304050607LL, 0x08090a0b0c0d0e0fLL)

/// One message's state: `abcd` (a in lane 3) and `e` (in lane 3, the other lanes zero).
typedef struct {
    __m128i abcd;
    __m128i e;
} sha1_lane;

SHA_NI_HELPER static inline sha1_lane sha1_start(void) {
    // FIPS 180-4 section 5.3.1: H(0).
    sha1_lane s;
    s.abcd = _mm_set_epi32((int)0x67452301, (int)0xefcdab89, (int)0x98badcfe, (int)0x10325476);
    s.e = _mm_set_epi32((int)0xc3d2e1f0, 0, 0, 0);
    return s;
}

SHA_NI_HELPER static inline void sha1_finish(sha1_lane s, uint8_t *out) {
    // The digest is a, b, c, d, e, each big-endian.
    _mm_storeu_si128((__m128i *)out, _mm_shuffle_epi8(s.abcd, SHA1_REVERSE_BYTES));
    uint32_t e = (uint32_t)_mm_extract_epi32(s.e, 3);
    out[16] = (uint8_t)(e >> 24);
    out[17] = (uint8_t)(e >> 16);
    out[18] = (uint8_t)(e >> 8);
    out[19] = (uint8_t)e;
}

// The 16 words of a block as four groups, earliest word of each in lane 3 (unaligned loads: 64 readable bytes).
#define SHA1_LOAD_BLOCK(p, w0, w1, w2, w3)                                                                            \
    __m128i w0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p)), SHA1_REVERSE_BYTES);                         \
    __m128i w1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)((p) + 16)), SHA1_REVERSE_BYTES);                  \
    __m128i w2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)((p) + 32)), SHA1_REVERSE_BYTES);                  \
    __m128i w3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)((p) + 48)), SHA1_REVERSE_BYTES)

// W[4g..4g+3] replacing the group four back (x0), from it and the three after it.
#define SHA1_SCHEDULE(x0, x1, x2, x3) _mm_sha1msg2_epu32(_mm_xor_si128(_mm_sha1msg1_epu32((x0), (x1)), (x2)), (x3))

// Group g (rounds 4g..4g+3) of lane L: `L##prev` is the lane's abcd before the previous group (for e), `L##e0`
// its e at the start of the block. Group 0 adds that e directly; the round function changes every five groups.
#define SHA1_GROUP(L, g, x0, x1, x2, x3)                                                                              \
    do {                                                                                                              \
        if ((g) >= 4) L##x0 = SHA1_SCHEDULE(L##x0, L##x1, L##x2, L##x3);                                              \
        __m128i in_ = (g) == 0 ? _mm_add_epi32(L##e0, L##x0) : _mm_sha1nexte_epu32(L##prev, L##x0);                   \
        L##prev = L##abcd;                                                                                            \
        L##abcd = _mm_sha1rnds4_epu32(L##abcd, in_, (g) / 5);                                                         \
    } while (0)

#define SHA1_GROUP_ONE(g, x0, x1, x2, x3) SHA1_GROUP(a, g, x0, x1, x2, x3)

#define SHA1_GROUP_TWO(g, x0, x1, x2, x3)                                                                             \
    do {                                                                                                              \
        SHA1_GROUP(a, g, x0, x1, x2, x3);                                                                             \
        SHA1_GROUP(b, g, x0, x1, x2, x3);                                                                             \
    } while (0)

#define SHA1_TWENTY_GROUPS(G)                                                                                         \
    G(0, w0, w1, w2, w3);                                                                                             \
    G(1, w1, w2, w3, w0);                                                                                             \
    G(2, w2, w3, w0, w1);                                                                                             \
    G(3, w3, w0, w1, w2);                                                                                             \
    G(4, w0, w1, w2, w3);                                                                                             \
    G(5, w1, w2, w3, w0);                                                                                             \
    G(6, w2, w3, w0, w1);                                                                                             \
    G(7, w3, w0, w1, w2);                                                                                             \
    G(8, w0, w1, w2, w3);                                                                                             \
    G(9, w1, w2, w3, w0);                                                                                             \
    G(10, w2, w3, w0, w1);                                                                                            \
    G(11, w3, w0, w1, w2);                                                                                            \
    G(12, w0, w1, w2, w3);                                                                                            \
    G(13, w1, w2, w3, w0);                                                                                            \
    G(14, w2, w3, w0, w1);                                                                                            \
    G(15, w3, w0, w1, w2);                                                                                            \
    G(16, w0, w1, w2, w3);                                                                                            \
    G(17, w1, w2, w3, w0);                                                                                            \
    G(18, w2, w3, w0, w1);                                                                                            \
    G(19, w3, w0, w1, w2)

// After the 80 rounds: e is rotl30 of a four rounds back (in `prev`) plus the block's starting e; a..d add up.
#define SHA1_LANE_END(L, s)                                                                                           \
    do {                                                                                                              \
        (s).e = _mm_sha1nexte_epu32(L##prev, L##e0);                                                                  \
        (s).abcd = _mm_add_epi32(L##abcd, (s).abcd);                                                                  \
    } while (0)

/// Compresses block `pa` into lane `s[0]` and block `pb` into lane `s[1]`, rounds interleaved.
SHA_NI_HELPER static void sha1_compress_two(sha1_lane *s, const uint8_t *pa, const uint8_t *pb) {
    __m128i aabcd = s[0].abcd, ae0 = s[0].e, aprev = aabcd;
    __m128i babcd = s[1].abcd, be0 = s[1].e, bprev = babcd;
    SHA1_LOAD_BLOCK(pa, aw0, aw1, aw2, aw3);
    SHA1_LOAD_BLOCK(pb, bw0, bw1, bw2, bw3);
    SHA1_TWENTY_GROUPS(SHA1_GROUP_TWO);
    SHA1_LANE_END(a, s[0]);
    SHA1_LANE_END(b, s[1]);
}

/// Compresses block `pa` into the one lane `s`.
SHA_NI_HELPER static void sha1_compress_one(sha1_lane *s, const uint8_t *pa) {
    __m128i aabcd = s->abcd, ae0 = s->e, aprev = aabcd;
    SHA1_LOAD_BLOCK(pa, aw0, aw1, aw2, aw3);
    SHA1_TWENTY_GROUPS(SHA1_GROUP_ONE);
    SHA1_LANE_END(a, *s);
}

#endif
