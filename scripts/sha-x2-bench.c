// Microbenchmark: a two-lane SHA kernel of Sources/CSIMD (SHA-1 or SHA-256) against OpenSSL's low-level function
// for the same algorithm (what the verifier and the pipeline called before; OpenSSL uses the SHA extensions too,
// one message at a time), for one buffer and for two buffers one after the other, at sizes 0.5-8 KB (receipt
// contents are about 1.6 KB, receipts about 5.6 KB). Thread CPU time, best of three. Not part of the package build;
// run from the repository root:
//   cc -O2 -ISources/CSIMD/include scripts/sha-x2-bench.c Sources/CSIMD/sha1x2.c Sources/CSIMD/sha256x2.c
//     -lcrypto -o /tmp/sha-x2-bench
//   /tmp/sha-x2-bench sha1      (or sha256)
#define _GNU_SOURCE
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "CSIMD.h"
#include "sha-bench-common.h"

static int use_sha256;

static void two_lane(const uint8_t *a, size_t na, uint8_t *da, const uint8_t *b, size_t nb, uint8_t *db) {
    if (use_sha256) {
        rf_sha256_x2(a, na, da, b, nb, db);
    } else {
        rf_sha1_x2(a, na, da, b, nb, db);
    }
}

int main(int argc, char **argv) {
    if (argc != 2 || (strcmp(argv[1], "sha1") && strcmp(argv[1], "sha256"))) {
        fputs("usage: sha-x2-bench sha1|sha256\n", stderr);
        return 2;
    }
    use_sha256 = strcmp(argv[1], "sha256") == 0;
    const size_t size = use_sha256 ? 32 : 20;
    static uint8_t a[1 << 14], b[1 << 14];
    srand(7);
    for (size_t i = 0; i < sizeof a; i++) {
        a[i] = (uint8_t)rand();
        b[i] = (uint8_t)rand();
    }
    if (!rf_sha256_x2_available()) {
        puts("no SHA extensions on this CPU: nothing to compare");
        return 1;
    }
    // A sanity check only; Tests/ReceiptVerifyTests compare the two thoroughly.
    for (size_t n = 0; n < 200; n++) {
        uint8_t x[32], y[32], ex[32], ey[32];
        two_lane(a, n, x, b, 199 - n, y);
        openssl_digest(a, n, use_sha256, ex);
        openssl_digest(b, 199 - n, use_sha256, ey);
        if (memcmp(x, ex, size) || memcmp(y, ey, size)) {
            printf("MISMATCH at %zu\n", n);
            return 1;
        }
    }
    printf("%s\n%6s %14s %20s %12s %9s %15s\n", argv[1], "bytes", "openssl MB/s", "openssl x2 seq MB/s",
           "2-lane MB/s", "ratio", "us/msg (vs)");
    const size_t sizes[] = {512, 1024, 1600, 2048, 3072, 4096, 5600, 8192};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        int pairs = (int)(200e6 / (double)n);
        uint8_t d1[32], d2[32];
        double one = 1e9, seq = 1e9, two = 1e9;
        for (int rep = 0; rep < 3; rep++) {
            // Feeding a digest byte back into the input keeps every call live.
            double t0 = cpu_now();
            for (int i = 0; i < 2 * pairs; i++) {
                openssl_digest(a + (i & 63), n, use_sha256, d1);
                a[0] ^= d1[0];
            }
            double t1 = cpu_now();
            for (int i = 0; i < pairs; i++) {
                openssl_digest(a + (i & 63), n, use_sha256, d1);
                openssl_digest(b + (i & 63), n, use_sha256, d2);
                a[0] ^= d1[0] ^ d2[0];
            }
            double t2 = cpu_now();
            for (int i = 0; i < pairs; i++) {
                two_lane(a + (i & 63), n, d1, b + (i & 63), n, d2);
                a[0] ^= d1[0] ^ d2[0];
            }
            double t3 = cpu_now();
            if (t1 - t0 < one) one = t1 - t0;
            if (t2 - t1 < seq) seq = t2 - t1;
            if (t3 - t2 < two) two = t3 - t2;
        }
        double bytes = 2.0 * pairs * (double)n;
        printf("%6zu %14.0f %20.0f %12.0f %8.2fx %7.2f (%5.2f)\n", n, bytes / one / 1e6, bytes / seq / 1e6,
               bytes / two / 1e6, one / two, two / (2.0 * pairs) * 1e6, one / (2.0 * pairs) * 1e6);
    }
    return 0;
}
