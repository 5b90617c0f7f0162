// SHA-1 (FIPS 180-4 section 6.1) of two independent messages at once with the SHA extensions, chosen at run time.
// Like sha256x2.c: one message through sha1rnds4 waits on the instruction's latency (every four rounds need the
// state of the four before), so two messages' rounds interleave and the core works on one lane while the other's
// instruction is in flight. Blocks go in lockstep while both messages have some; the longer then finishes alone.
// Padding is SHA-256's (sha_blocks.h).
//
// Register layout of the SHA-1 instructions: the state a, b, c, d sits in one register with a in the highest
// dword (lane 3) and d in lane 0; e sits alone in lane 3 of another. Message words go in with the earliest word in
// lane 3, so a block's 16 bytes are loaded with all 16 bytes reversed (which also makes each word big-endian).
// - sha1rnds4(abcd, x, f) runs four rounds with round function/constant f (0: rounds 0-19 ... 3: rounds 60-79),
//   taking W[t] + e in lane 3 of x and W[t+1..t+3] in lanes 2..0.
// - sha1nexte(prev, w) adds rotl(lane 3 of prev, 30) to lane 3 of w: four rounds after state `prev`, e is the
//   old a rotated by 30 (e <- d <- c <- rotl30(b) <- a), so this supplies "W[t] + e" for the next four rounds.
// - sha1msg1(w0, w1) and sha1msg2(x, w3) compute W[t..t+3] = rotl1(W[t-3] ^ W[t-8] ^ W[t-14] ^ W[t-16]) from the
//   four previous groups: msg1 gives W[t-16+j] ^ W[t-14+j], the caller XORs W[t-8..t-5], and msg2 XORs W[t-3+j]
//   (the last of which it has just computed itself) and rotates.
#include "CSIMD.h"
#include "sha_blocks.h"

#if defined(__x86_64__)
#include <immintrin.h>

// Reverses all 16 bytes of a register (see the layout above).
#define REVERSE_BYTES _mm_set_epi64x(0x0001020304050607LL, 0x08090a0b0c0d0e0fLL)

/// One message's state: `abcd` (a in lane 3) and `e` (in lane 3, the other lanes zero).
typedef struct {
    __m128i abcd;
    __m128i e;
} sha1_lane;

__attribute__((target("sha,ssse3,sse4.1"))) static inline sha1_lane sha1_start(void) {
    // FIPS 180-4 section 5.3.1: H(0).
    sha1_lane s;
    s.abcd = _mm_set_epi32((int)0x67452301, (int)0xefcdab89, (int)0x98badcfe, (int)0x10325476);
    s.e = _mm_set_epi32((int)0xc3d2e1f0, 0, 0, 0);
    return s;
}

__attribute__((target("sha,ssse3,sse4.1"))) static inline void sha1_finish(sha1_lane s, uint8_t *out) {
    // The digest is a, b, c, d, e, each big-endian.
    _mm_storeu_si128((__m128i *)out, _mm_shuffle_epi8(s.abcd, REVERSE_BYTES));
    uint32_t e = (uint32_t)_mm_extract_epi32(s.e, 3);
    out[16] = (uint8_t)(e >> 24);
    out[17] = (uint8_t)(e >> 16);
    out[18] = (uint8_t)(e >> 8);
    out[19] = (uint8_t)e;
}

// The 16 words of a block as four groups, earliest word of each in lane 3 (unaligned loads: 64 readable bytes).
#define LOAD_BLOCK(p, w0, w1, w2, w3)                                                                             \
    __m128i w0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p)), REVERSE_BYTES);                         \
    __m128i w1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)((p) + 16)), REVERSE_BYTES);                  \
    __m128i w2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)((p) + 32)), REVERSE_BYTES);                  \
    __m128i w3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)((p) + 48)), REVERSE_BYTES)

// W[4g..4g+3] replacing the group four back (x0), from it and the three after it.
#define SCHEDULE(x0, x1, x2, x3) _mm_sha1msg2_epu32(_mm_xor_si128(_mm_sha1msg1_epu32((x0), (x1)), (x2)), (x3))

// Group g (rounds 4g..4g+3) of lane L: `L##prev` is the lane's abcd before the previous group (for e), `L##e0`
// its e at the start of the block. Group 0 adds that e directly; the round function changes every five groups.
#define GROUP(L, g, x0, x1, x2, x3)                                                                               \
    do {                                                                                                          \
        if ((g) >= 4) L##x0 = SCHEDULE(L##x0, L##x1, L##x2, L##x3);                                               \
        __m128i in_ = (g) == 0 ? _mm_add_epi32(L##e0, L##x0) : _mm_sha1nexte_epu32(L##prev, L##x0);               \
        L##prev = L##abcd;                                                                                        \
        L##abcd = _mm_sha1rnds4_epu32(L##abcd, in_, (g) / 5);                                                     \
    } while (0)

#define GROUP_ONE(g, x0, x1, x2, x3) GROUP(a, g, x0, x1, x2, x3)

#define GROUP_TWO(g, x0, x1, x2, x3)                                                                              \
    do {                                                                                                          \
        GROUP(a, g, x0, x1, x2, x3);                                                                              \
        GROUP(b, g, x0, x1, x2, x3);                                                                              \
    } while (0)

#define TWENTY_GROUPS(G)                                                                                          \
    G(0, w0, w1, w2, w3);                                                                                         \
    G(1, w1, w2, w3, w0);                                                                                         \
    G(2, w2, w3, w0, w1);                                                                                         \
    G(3, w3, w0, w1, w2);                                                                                         \
    G(4, w0, w1, w2, w3);                                                                                         \
    G(5, w1, w2, w3, w0);                                                                                         \
    G(6, w2, w3, w0, w1);                                                                                         \
    G(7, w3, w0, w1, w2);                                                                                         \
    G(8, w0, w1, w2, w3);                                                                                         \
    G(9, w1, w2, w3, w0);                                                                                         \
    G(10, w2, w3, w0, w1);                                                                                        \
    G(11, w3, w0, w1, w2);                                                                                        \
    G(12, w0, w1, w2, w3);                                                                                        \
    G(13, w1, w2, w3, w0);                                                                                        \
    G(14, w2, w3, w0, w1);                                                                                        \
    G(15, w3, w0, w1, w2);                                                                                        \
    G(16, w0, w1, w2, w3);                                                                                        \
    G(17, w1, w2, w3, w0);                                                                                        \
    G(18, w2, w3, w0, w1);                                                                                        \
    G(19, w3, w0, w1, w2)

// After the 80 rounds: e is rotl30 of a four rounds back (in `prev`) plus the block's starting e; a..d add up.
#define LANE_END(L, s)                                                                                            \
    do {                                                                                                          \
        (s).e = _mm_sha1nexte_epu32(L##prev, L##e0);                                                              \
        (s).abcd = _mm_add_epi32(L##abcd, (s).abcd);                                                              \
    } while (0)

/// Compresses block `pa` into lane `s[0]` and block `pb` into lane `s[1]`, rounds interleaved.
__attribute__((target("sha,ssse3,sse4.1"))) static void sha1_compress_two(sha1_lane *s, const uint8_t *pa,
                                                                             const uint8_t *pb) {
    __m128i aabcd = s[0].abcd, ae0 = s[0].e, aprev = aabcd;
    __m128i babcd = s[1].abcd, be0 = s[1].e, bprev = babcd;
    LOAD_BLOCK(pa, aw0, aw1, aw2, aw3);
    LOAD_BLOCK(pb, bw0, bw1, bw2, bw3);
    TWENTY_GROUPS(GROUP_TWO);
    LANE_END(a, s[0]);
    LANE_END(b, s[1]);
}

/// Compresses block `pa` into the one lane `s`.
__attribute__((target("sha,ssse3,sse4.1"))) static void sha1_compress_one(sha1_lane *s, const uint8_t *pa) {
    __m128i aabcd = s->abcd, ae0 = s->e, aprev = aabcd;
    LOAD_BLOCK(pa, aw0, aw1, aw2, aw3);
    TWENTY_GROUPS(GROUP_ONE);
    LANE_END(a, *s);
}

__attribute__((target("sha,ssse3,sse4.1"))) static void sha1_x2_ni(
    const uint8_t *a, size_t na, uint8_t *out_a, const uint8_t *b, size_t nb, uint8_t *out_b) {
    lane_blocks blocks[2];
    lane_blocks_init(&blocks[0], a, na);
    lane_blocks_init(&blocks[1], b, nb);
    sha1_lane s[2] = {sha1_start(), sha1_start()};
    size_t both = blocks[0].total < blocks[1].total ? blocks[0].total : blocks[1].total;
    size_t i = 0;
    for (; i < both; i++) sha1_compress_two(s, lane_block(&blocks[0], i), lane_block(&blocks[1], i));
    int longer = blocks[0].total > blocks[1].total ? 0 : 1;
    for (; i < blocks[longer].total; i++) sha1_compress_one(&s[longer], lane_block(&blocks[longer], i));
    sha1_finish(s[0], out_a);
    sha1_finish(s[1], out_b);
}

int rf_sha1_x2(const uint8_t *a, size_t na, uint8_t *out_a, const uint8_t *b, size_t nb, uint8_t *out_b) {
    // The same CPUID bits as the SHA-256 kernel: one bit covers all seven SHA instructions.
    if (!rf_sha256_x2_available()) return 0;
    sha1_x2_ni(a, na, out_a, b, nb, out_b);
    return 1;
}

#else

int rf_sha1_x2(const uint8_t *a, size_t na, uint8_t *out_a, const uint8_t *b, size_t nb, uint8_t *out_b) {
    (void)a, (void)na, (void)out_a, (void)b, (void)nb, (void)out_b;
    return 0;
}

#endif
