// Microbenchmark: receipt_sha256 and the signed-content digest of receipts with the bench corpus's lengths, hashed
// four ways: OpenSSL one message at a time; receipt_sha256 in pairs with the two-lane SHA-256 and the contents through
// OpenSSL (the earlier one-at-a-time path); plus same-algorithm content pairs through the two-lane kernels; and all four
// messages of a pair on two lanes (rf_sha_jobs_x2, what RecordProcessor does). Contents are taken as the receipt's
// length minus 3,000 bytes (the certificates and signature around them), 72% SHA-1 as in the corpus. Thread CPU
// time, best of three. Not part of the package build; run from the repository root:
//   zstd -dc bench-out/corpus-50000-s2-b0.050.ndjson.zst | head -20000 | python3 -c 'import sys, json, base64
//   for l in sys.stdin:
//       try: print(len(base64.b64decode(json.loads(l)["receipt-data"])))
//       except Exception: pass' > /tmp/der-lengths.txt
//   cc -O2 -ISources/CSIMD/include scripts/sha-jobs-bench.c Sources/CSIMD/sha_jobs.c Sources/CSIMD/sha1x2.c
//     Sources/CSIMD/sha256x2.c -lcrypto -o /tmp/sha-jobs-bench
//   /tmp/sha-jobs-bench /tmp/der-lengths.txt
// (The corpus's bad records, which have no receipt bytes, are skipped.)
#define _GNU_SOURCE
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "CSIMD.h"
#include "sha-bench-common.h"

enum { MAX_RECEIPTS = 20000 };
static size_t der[MAX_RECEIPTS], content[MAX_RECEIPTS];
static int sha256[MAX_RECEIPTS];
static uint8_t buf[900000];

int main(int argc, char **argv) {
    FILE *f = fopen(argc > 1 ? argv[1] : "/tmp/der-lengths.txt", "r");
    if (!f) {
        perror("lengths file");
        return 1;
    }
    size_t m = 0;
    srand(7);
    while (m < MAX_RECEIPTS && fscanf(f, "%zu", &der[m]) == 1) {
        if (der[m] > sizeof buf - 16) continue;
        content[m] = der[m] > 3000 ? der[m] - 3000 : der[m] / 2;
        sha256[m] = rand() % 100 >= 72;
        m++;
    }
    fclose(f);
    if (!rf_sha256_x2_available()) {
        puts("no SHA extensions on this CPU: nothing to compare");
        return 1;
    }
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)rand();
    uint8_t o[4][32];
    double best[4] = {1e9, 1e9, 1e9, 1e9};
    for (int rep = 0; rep < 3; rep++) {
        double t[5];
        t[0] = cpu_now();
        for (size_t i = 0; i < m; i++) {
            openssl_digest(buf, der[i], 1, o[0]);
            openssl_digest(buf + 7, content[i], sha256[i], o[1]);
        }
        t[1] = cpu_now();
        for (size_t i = 0; i + 1 < m; i += 2) {
            rf_sha256_x2(buf, der[i], o[0], buf + 1, der[i + 1], o[1]);
            openssl_digest(buf + 7, content[i], sha256[i], o[2]);
            openssl_digest(buf + 9, content[i + 1], sha256[i + 1], o[3]);
        }
        t[2] = cpu_now();
        for (size_t i = 0; i + 1 < m; i += 2) {
            rf_sha256_x2(buf, der[i], o[0], buf + 1, der[i + 1], o[1]);
            if (sha256[i] != sha256[i + 1]) {
                openssl_digest(buf + 7, content[i], sha256[i], o[2]);
                openssl_digest(buf + 9, content[i + 1], sha256[i + 1], o[3]);
            } else if (sha256[i]) {
                rf_sha256_x2(buf + 7, content[i], o[2], buf + 9, content[i + 1], o[3]);
            } else {
                rf_sha1_x2(buf + 7, content[i], o[2], buf + 9, content[i + 1], o[3]);
            }
        }
        t[3] = cpu_now();
        for (size_t i = 0; i + 1 < m; i += 2) {
            rf_sha_job jobs[4] = {
                {buf, der[i], o[0], 1},
                {buf + 1, der[i + 1], o[1], 1},
                {buf + 7, content[i], o[2], sha256[i]},
                {buf + 9, content[i + 1], o[3], sha256[i + 1]},
            };
            rf_sha_jobs_x2(jobs, 4);
        }
        t[4] = cpu_now();
        for (int k = 0; k < 4; k++)
            if (t[k + 1] - t[k] < best[k]) best[k] = t[k + 1] - t[k];
    }
    const char *names[4] = {
        "OpenSSL one at a time",
        "receipt_sha256 x2, contents OpenSSL",
        "+ same-algorithm content pairs x2",
        "four messages per pair on two lanes",
    };
    printf("%zu receipts, µs of thread CPU per receipt for its receipt_sha256 and content digest:\n", m);
    for (int k = 0; k < 4; k++) printf("  %-40s %6.3f\n", names[k], best[k] / (double)m * 1e6);
    return 0;
}
