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

#include "sha1_rounds.h"

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
