// XXH64 (the xxHash 64-bit algorithm, as its specification describes it), streaming: the checksum a zstd frame
// carries is the low 32 bits of XXH64 of its content with seed 0. Written for ZstdByteSource's block-by-block
// decoding, where libzstd no longer computes it.
#include "CSIMD.h"
#include <string.h>

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t read64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8); // x86-64 (little-endian), the only target this package builds the kernels for
    return v;
}

static inline uint32_t read32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint64_t round64(uint64_t acc, uint64_t input) {
    acc += input * P2;
    acc = rotl(acc, 31);
    return acc * P1;
}

static inline uint64_t merge(uint64_t acc, uint64_t v) {
    acc ^= round64(0, v);
    return acc * P1 + P4;
}

void rf_xxh64_reset(rf_xxh64_state *s) {
    s->v[0] = P1 + P2;
    s->v[1] = P2;
    s->v[2] = 0;
    s->v[3] = 0 - P1;
    s->total = 0;
    s->buffered = 0;
}

// Consumes whole 32-byte stripes from p; returns the bytes consumed. The four lanes one after the other.
static size_t stripes_portable(rf_xxh64_state *s, const uint8_t *p, size_t n) {
    size_t done = 0;
    uint64_t v0 = s->v[0], v1 = s->v[1], v2 = s->v[2], v3 = s->v[3];
    while (n - done >= 32) {
        v0 = round64(v0, read64(p + done));
        v1 = round64(v1, read64(p + done + 8));
        v2 = round64(v2, read64(p + done + 16));
        v3 = round64(v3, read64(p + done + 24));
        done += 32;
    }
    s->v[0] = v0, s->v[1] = v1, s->v[2] = v2, s->v[3] = v3;
    return done;
}

#if defined(__x86_64__)
#include <immintrin.h>

// The same rounds with the four lanes in one 256-bit register: AVX-512 has 64-bit lane products (VPMULLQ) and
// rotations (VPROLQ), so a stripe is two products, an add and a rotation for all four lanes. The scalar loop is
// bound by its eight 64-bit products per stripe; this one by a stripe's chain (add, rotate, product), about twice
// the bytes per second on the machine it was measured on (docs/performance.md).
__attribute__((target("avx512f,avx512vl,avx512dq"))) static size_t stripes_avx512(rf_xxh64_state *s,
                                                                                   const uint8_t *p, size_t n) {
    size_t done = 0;
    __m256i acc = _mm256_loadu_si256((const __m256i *)s->v);
    const __m256i p1 = _mm256_set1_epi64x((long long)P1), p2 = _mm256_set1_epi64x((long long)P2);
    while (n - done >= 32) {
        // Unaligned load of 32 input bytes: the lanes' four little-endian words, as read64 reads them.
        __m256i x = _mm256_loadu_si256((const __m256i *)(p + done));
        acc = _mm256_add_epi64(acc, _mm256_mullo_epi64(x, p2));
        acc = _mm256_rol_epi64(acc, 31);
        acc = _mm256_mullo_epi64(acc, p1);
        done += 32;
    }
    _mm256_storeu_si256((__m256i *)s->v, acc);
    return done;
}

int rf_xxh64_avx512_available(void) {
    // Reads the CPU model the runtime filled in at start-up (no CPUID per call, nothing written, so any thread may
    // ask); it also requires that the OS saves the AVX-512 state.
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq");
}
#else
int rf_xxh64_avx512_available(void) { return 0; }
#endif

static size_t stripes(rf_xxh64_state *s, const uint8_t *p, size_t n, int vector) {
#if defined(__x86_64__)
    if (vector) return stripes_avx512(s, p, n);
#endif
    (void)vector;
    return stripes_portable(s, p, n);
}

void rf_xxh64_update_path(rf_xxh64_state *s, const uint8_t *p, size_t n, int vector) {
    if (n == 0) return;
    vector = vector && rf_xxh64_avx512_available();
    s->total += n;
    if (s->buffered > 0) {
        size_t take = 32 - s->buffered;
        if (take > n) take = n;
        memcpy(s->buffer + s->buffered, p, take);
        s->buffered += (uint32_t)take;
        p += take, n -= take;
        if (s->buffered < 32) return;
        stripes(s, s->buffer, 32, vector);
        s->buffered = 0;
    }
    size_t done = stripes(s, p, n, vector);
    memcpy(s->buffer, p + done, n - done);
    s->buffered = (uint32_t)(n - done);
}

void rf_xxh64_update(rf_xxh64_state *s, const uint8_t *p, size_t n) {
    rf_xxh64_update_path(s, p, n, 1);
}

uint64_t rf_xxh64_digest(const rf_xxh64_state *s) {
    uint64_t h;
    if (s->total >= 32) {
        h = rotl(s->v[0], 1) + rotl(s->v[1], 7) + rotl(s->v[2], 12) + rotl(s->v[3], 18);
        for (int i = 0; i < 4; i++) h = merge(h, s->v[i]);
    } else {
        h = s->v[2] + P5; // v[2] is the seed (0)
    }
    h += s->total;
    const uint8_t *p = s->buffer;
    size_t n = s->buffered;
    while (n >= 8) {
        h ^= round64(0, read64(p));
        h = rotl(h, 27) * P1 + P4;
        p += 8, n -= 8;
    }
    if (n >= 4) {
        h ^= (uint64_t)read32(p) * P1;
        h = rotl(h, 23) * P2 + P3;
        p += 4, n -= 4;
    }
    while (n > 0) {
        h ^= (*p) * P5;
        h = rotl(h, 11) * P1;
        p++, n--;
    }
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}
