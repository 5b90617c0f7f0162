// Private to CSIMD: SHA-256 (FIPS 180-4 section 6.2) block compression with the SHA extensions, one lane or two
// interleaved, shared by the two-lane kernels (sha256x2.c, sha_jobs.c). Include inside `#if defined(__x86_64__)`.
#ifndef RECEIPTFLOW_CSIMD_SHA256_ROUNDS_H
#define RECEIPTFLOW_CSIMD_SHA256_ROUNDS_H
#include <immintrin.h>
#include <stdint.h>

#include "sha_blocks.h"

// FIPS 180-4 section 4.2.2: the first 32 bits of the fractional parts of the cube roots of the first 64 primes.
static const uint32_t sha256_round_constants[64] __attribute__((aligned(16))) = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

// FIPS 180-4 section 5.3.3: H(0), a..h.
static const uint32_t sha256_initial_state[8] __attribute__((aligned(16))) = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

// Reverses the bytes of each 32-bit word: message words and digest words are big-endian.
#define SHA256_BYTE_SWAP _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL)

/// One message's state in the register layout sha256rnds2 works on: `abef` holds (from lane 3 down to lane 0)
/// a, b, e, f and `cdgh` holds c, d, g, h.
typedef struct {
    __m128i abef;
    __m128i cdgh;
} sha256_lane;

SHA_NI_HELPER static inline sha256_lane sha256_start(void) {
    // Loaded as (lane 0 first) a b c d and e f g h; rearranged into f e b a and h g d c.
    __m128i abcd = _mm_load_si128((const __m128i *)sha256_initial_state);
    __m128i efgh = _mm_load_si128((const __m128i *)(sha256_initial_state + 4));
    __m128i badc = _mm_shuffle_epi32(abcd, 0xB1); // b a d c
    __m128i hgfe = _mm_shuffle_epi32(efgh, 0x1B); // h g f e
    sha256_lane s;
    s.abef = _mm_alignr_epi8(badc, hgfe, 8);     // f e b a
    s.cdgh = _mm_blend_epi16(hgfe, badc, 0xF0);  // h g d c
    return s;
}

SHA_NI_HELPER static inline void sha256_finish(sha256_lane s, uint8_t *out) {
    __m128i abef = _mm_shuffle_epi32(s.abef, 0x1B); // a b e f
    __m128i cdgh = _mm_shuffle_epi32(s.cdgh, 0xB1); // g h c d
    __m128i abcd = _mm_blend_epi16(abef, cdgh, 0xF0);
    __m128i efgh = _mm_alignr_epi8(cdgh, abef, 8);
    // The digest is the eight words big-endian.
    _mm_storeu_si128((__m128i *)out, _mm_shuffle_epi8(abcd, SHA256_BYTE_SWAP));
    _mm_storeu_si128((__m128i *)(out + 16), _mm_shuffle_epi8(efgh, SHA256_BYTE_SWAP));
}

// Four rounds on one lane: W+SHA256_K for rounds t..t+3 in `wk`; sha256rnds2 takes two at a time from the low half.
#define SHA256_FOUR_ROUNDS(s, wk)                                                                                     \
    do {                                                                                                              \
        __m128i wk_ = (wk);                                                                                           \
        (s).cdgh = _mm_sha256rnds2_epu32((s).cdgh, (s).abef, wk_);                                                    \
        (s).abef = _mm_sha256rnds2_epu32((s).abef, (s).cdgh, _mm_shuffle_epi32(wk_, 0x0E));                           \
    } while (0)

// W[t..t+3] from the four previous groups w0 = W[t-16..t-13] .. w3 = W[t-4..t-1] (section 6.2.2, step 1):
// msg1 adds sigma0(W[t-15+j]) to W[t-16+j], the alignr supplies W[t-7..t-4], msg2 adds sigma1(W[t-2+j]).
#define SHA256_SCHEDULE(w0, w1, w2, w3)                                                                               \
    _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32((w0), (w1)), _mm_alignr_epi8((w3), (w2), 4)), (w3))

// The 16 words of a block, big-endian, as four groups (unaligned loads: a block is 64 readable bytes).
#define SHA256_LOAD_BLOCK(p, w0, w1, w2, w3)                                                                          \
    __m128i w0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p)), SHA256_BYTE_SWAP);                           \
    __m128i w1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)((p) + 16)), SHA256_BYTE_SWAP);                    \
    __m128i w2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)((p) + 32)), SHA256_BYTE_SWAP);                    \
    __m128i w3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)((p) + 48)), SHA256_BYTE_SWAP)

#define SHA256_K(g) _mm_load_si128((const __m128i *)sha256_round_constants + (g))

// Group g (rounds 4g..4g+3) of each lane, the lanes' instructions side by side. Groups 0-3 use the message
// words as loaded; from group 4 on, the group in x0 (four groups old, no longer needed) is replaced by the next.
// Group g of one lane whose state is `S` and whose message words are L##w0..L##w3 (for kernels that interleave this
// lane with a lane of another algorithm).
#define SHA256_GROUP(S, L, g, x0, x1, x2, x3)                                                                         \
    do {                                                                                                              \
        if ((g) >= 4) L##x0 = SHA256_SCHEDULE(L##x0, L##x1, L##x2, L##x3);                                            \
        SHA256_FOUR_ROUNDS(S, _mm_add_epi32(L##x0, SHA256_K(g)));                                                     \
    } while (0)

#define SHA256_GROUP_ONE(g, x0, x1, x2, x3)                                                                           \
    do {                                                                                                              \
        if ((g) >= 4) a##x0 = SHA256_SCHEDULE(a##x0, a##x1, a##x2, a##x3);                                            \
        SHA256_FOUR_ROUNDS(sa, _mm_add_epi32(a##x0, SHA256_K(g)));                                                    \
    } while (0)

#define SHA256_GROUP_TWO(g, x0, x1, x2, x3)                                                                           \
    do {                                                                                                              \
        if ((g) >= 4) {                                                                                               \
            a##x0 = SHA256_SCHEDULE(a##x0, a##x1, a##x2, a##x3);                                                      \
            b##x0 = SHA256_SCHEDULE(b##x0, b##x1, b##x2, b##x3);                                                      \
        }                                                                                                             \
        SHA256_FOUR_ROUNDS(sa, _mm_add_epi32(a##x0, SHA256_K(g)));                                                    \
        SHA256_FOUR_ROUNDS(sb, _mm_add_epi32(b##x0, SHA256_K(g)));                                                    \
    } while (0)

#define SHA256_SIXTEEN_GROUPS(GROUP)                                                                                  \
    GROUP(0, w0, w1, w2, w3);                                                                                         \
    GROUP(1, w1, w2, w3, w0);                                                                                         \
    GROUP(2, w2, w3, w0, w1);                                                                                         \
    GROUP(3, w3, w0, w1, w2);                                                                                         \
    GROUP(4, w0, w1, w2, w3);                                                                                         \
    GROUP(5, w1, w2, w3, w0);                                                                                         \
    GROUP(6, w2, w3, w0, w1);                                                                                         \
    GROUP(7, w3, w0, w1, w2);                                                                                         \
    GROUP(8, w0, w1, w2, w3);                                                                                         \
    GROUP(9, w1, w2, w3, w0);                                                                                         \
    GROUP(10, w2, w3, w0, w1);                                                                                        \
    GROUP(11, w3, w0, w1, w2);                                                                                        \
    GROUP(12, w0, w1, w2, w3);                                                                                        \
    GROUP(13, w1, w2, w3, w0);                                                                                        \
    GROUP(14, w2, w3, w0, w1);                                                                                        \
    GROUP(15, w3, w0, w1, w2)

/// Compresses block `pa` into lane `s[0]` and block `pb` into lane `s[1]` (section 6.2.2), rounds interleaved.
SHA_NI_HELPER static void sha256_compress_two(sha256_lane *s, const uint8_t *pa, const uint8_t *pb) {
    sha256_lane sa = s[0], sb = s[1];
    SHA256_LOAD_BLOCK(pa, aw0, aw1, aw2, aw3);
    SHA256_LOAD_BLOCK(pb, bw0, bw1, bw2, bw3);
    SHA256_SIXTEEN_GROUPS(SHA256_GROUP_TWO);
    s[0].abef = _mm_add_epi32(s[0].abef, sa.abef);
    s[0].cdgh = _mm_add_epi32(s[0].cdgh, sa.cdgh);
    s[1].abef = _mm_add_epi32(s[1].abef, sb.abef);
    s[1].cdgh = _mm_add_epi32(s[1].cdgh, sb.cdgh);
}

/// Compresses block `pa` into the one lane `s`.
SHA_NI_HELPER static void sha256_compress_one(sha256_lane *s, const uint8_t *pa) {
    sha256_lane sa = *s;
    SHA256_LOAD_BLOCK(pa, aw0, aw1, aw2, aw3);
    SHA256_SIXTEEN_GROUPS(SHA256_GROUP_ONE);
    s->abef = _mm_add_epi32(s->abef, sa.abef);
    s->cdgh = _mm_add_epi32(s->cdgh, sa.cdgh);
}

#endif
