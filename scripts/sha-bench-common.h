// Shared by the standalone SHA micro-benchmarks (scripts/sha-x2-bench.c, scripts/sha-jobs-bench.c): thread CPU time
// and OpenSSL's one-message digest, the reference the two-lane kernels are timed and checked against.
#ifndef RECEIPTFLOW_SHA_BENCH_COMMON_H
#define RECEIPTFLOW_SHA_BENCH_COMMON_H
#include <openssl/sha.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/// SHA-256 (sha256 = 1) or SHA-1 of p[0..<n] into out, one message, OpenSSL's low-level API.
static void openssl_digest(const uint8_t *p, size_t n, int sha256, uint8_t *out) {
    if (sha256) {
        SHA256_CTX c;
        SHA256_Init(&c);
        SHA256_Update(&c, p, n);
        SHA256_Final(out, &c);
    } else {
        SHA_CTX c;
        SHA1_Init(&c);
        SHA1_Update(&c, p, n);
        SHA1_Final(out, &c);
    }
}
#endif
