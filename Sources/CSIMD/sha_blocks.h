// Private to CSIMD: the message blocks of SHA-1 and SHA-256 (FIPS 180-4 section 5.1.1: both pad the same way),
// shared by the two-lane kernels.
#ifndef RECEIPTFLOW_CSIMD_SHA_BLOCKS_H
#define RECEIPTFLOW_CSIMD_SHA_BLOCKS_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/// A helper compiled for the SHA extensions (callers check CPUID first); unused in some of the including files.
#define SHA_NI_HELPER __attribute__((target("sha,ssse3,sse4.1"), unused))

/// Where one message's 64-byte blocks come from: the whole blocks of the input, then one or two padded blocks.
typedef struct {
    const uint8_t *data;
    size_t whole;      // complete 64-byte blocks in `data`
    size_t total;      // `whole` plus the padded tail blocks
    uint8_t tail[128]; // the last partial block, 0x80, zeros, and the bit length
} lane_blocks;

static inline void lane_blocks_init(lane_blocks *b, const uint8_t *data, size_t n) {
    b->data = data;
    b->whole = n / 64;
    size_t rest = n % 64;
    // The 0x80 byte and the 8-byte length need 9 bytes after the rest; otherwise they spill into a second block.
    size_t tail_blocks = rest + 9 <= 64 ? 1 : 2;
    b->total = b->whole + tail_blocks;
    memset(b->tail, 0, sizeof b->tail);
    if (rest) memcpy(b->tail, data + b->whole * 64, rest);
    b->tail[rest] = 0x80;
    uint64_t bits = (uint64_t)n * 8; // lengths up to 2^61 bytes; the buffers hashed here are far smaller
    uint8_t *end = b->tail + tail_blocks * 64;
    for (int i = 0; i < 8; i++) end[-1 - i] = (uint8_t)(bits >> (8 * i));
}

static inline const uint8_t *lane_block(const lane_blocks *b, size_t i) {
    return i < b->whole ? b->data + i * 64 : b->tail + (i - b->whole) * 64;
}

#endif
