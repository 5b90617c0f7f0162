// SHA-256 (FIPS 180-4) of two independent messages at once with the SHA extensions, chosen at run time.
// One message through sha256rnds2 waits on the instruction's latency: every pair of rounds needs the state the
// previous pair produced. Two messages have no dependency on each other, so their rounds interleave and the
// core executes one lane's pair while the other's is still in flight. Blocks go in lockstep while both messages
// have some; the longer message then finishes alone. Each message's padding (0x80, zeros, 64-bit bit length
// big-endian) is laid into a small tail buffer, so the loop only ever sees whole 64-byte blocks.
#include "CSIMD.h"
#include "sha_blocks.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#include <stdatomic.h>

#include "sha256_rounds.h"

__attribute__((target("sha,ssse3,sse4.1"))) static void sha256_x2_ni(
    const uint8_t *a, size_t na, uint8_t *out_a, const uint8_t *b, size_t nb, uint8_t *out_b) {
    lane_blocks blocks[2];
    lane_blocks_init(&blocks[0], a, na);
    lane_blocks_init(&blocks[1], b, nb);
    sha256_lane s[2] = {sha256_start(), sha256_start()};
    size_t both = blocks[0].total < blocks[1].total ? blocks[0].total : blocks[1].total;
    size_t i = 0;
    for (; i < both; i++) sha256_compress_two(s, lane_block(&blocks[0], i), lane_block(&blocks[1], i));
    int longer = blocks[0].total > blocks[1].total ? 0 : 1;
    for (; i < blocks[longer].total; i++) sha256_compress_one(&s[longer], lane_block(&blocks[longer], i));
    sha256_finish(s[0], out_a);
    sha256_finish(s[1], out_b);
}

/// 2 when the CPU has the SHA extensions and SSE4.1 (and RECEIPTFLOW_NO_SHA_X2 is unset or empty), 1 when not, 0
/// before the first look. CPUID is slow under a hypervisor (a trap per call), so it is asked once; threads racing
/// on the first look store the same value.
static _Atomic int sha_ni_state = 0;

int rf_sha256_x2_available(void) {
    int state = atomic_load_explicit(&sha_ni_state, memory_order_relaxed);
    if (state == 0) {
        unsigned eax, ebx, ecx, edx;
        // Leaf 1 ECX: bit 9 SSSE3, bit 19 SSE4.1. Leaf 7 subleaf 0 EBX: bit 29 SHA.
        int ok = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx >> 9 & 1) && (ecx >> 19 & 1);
        ok = ok && __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (ebx >> 29 & 1);
        const char *off = getenv("RECEIPTFLOW_NO_SHA_X2");
        if (off && *off) ok = 0;
        state = ok ? 2 : 1;
        atomic_store_explicit(&sha_ni_state, state, memory_order_relaxed);
    }
    return state == 2;
}

int rf_sha256_x2(const uint8_t *a, size_t na, uint8_t *out_a, const uint8_t *b, size_t nb, uint8_t *out_b) {
    if (!rf_sha256_x2_available()) return 0;
    sha256_x2_ni(a, na, out_a, b, nb, out_b);
    return 1;
}

#else

int rf_sha256_x2_available(void) { return 0; }

int rf_sha256_x2(const uint8_t *a, size_t na, uint8_t *out_a, const uint8_t *b, size_t nb, uint8_t *out_b) {
    (void)a, (void)na, (void)out_a, (void)b, (void)nb, (void)out_b;
    return 0;
}

#endif
