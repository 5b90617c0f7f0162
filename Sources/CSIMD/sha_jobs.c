// Several SHA-1 / SHA-256 messages on two interleaved lanes (sha1x2.c and sha256x2.c explain why two lanes are
// faster than one): each lane takes the next message of the list as soon as its own is done, so a long message in
// one lane runs beside the other messages rather than alone, and a SHA-1 message can run beside a SHA-256 one (both
// algorithms' round instructions interleave in one loop). The worker hashes a pair of receipts as four messages:
// both receipts (SHA-256, `receipt_sha256`) and both signed contents (SHA-1 or SHA-256); a content is about 3 KB
// shorter than its receipt, so the lanes stay nearly balanced whatever the two receipts' lengths.
#include "CSIMD.h"
#include "sha_blocks.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "sha1_rounds.h"
#include "sha256_rounds.h"

/// One lane: the message it hashes now (`job` NULL when idle), its blocks, the next block, and its state.
typedef struct {
    const rf_sha_job *job;
    lane_blocks blocks;
    size_t next;
    sha1_lane s1;
    sha256_lane s256;
} job_lane;

// The four message groups of lane L in order g, g+1, g+2, g+3 (mod 4): group g's words are replaced by the schedule.
#define ROT0 w0, w1, w2, w3
#define ROT1 w1, w2, w3, w0
#define ROT2 w2, w3, w0, w1
#define ROT3 w3, w0, w1, w2
#define APPLY(m, ...) m(__VA_ARGS__)

// SHA-1 group g in lane a and SHA-256 group g in lane b (state sb), side by side.
#define MIXED(g, rot)                                                                                                 \
    do {                                                                                                              \
        APPLY(SHA1_GROUP, a, g, rot);                                                                                 \
        APPLY(SHA256_GROUP, sb, b, g, rot);                                                                           \
    } while (0)

/// Compresses SHA-1 block `pa` into `s1` and SHA-256 block `pb` into `s256`, the rounds of both interleaved.
__attribute__((target("sha,ssse3,sse4.1"))) static void compress_mixed(sha1_lane *s1, const uint8_t *pa,
                                                                          sha256_lane *s256, const uint8_t *pb) {
    __m128i aabcd = s1->abcd, ae0 = s1->e, aprev = aabcd;
    sha256_lane sb = *s256;
    SHA1_LOAD_BLOCK(pa, aw0, aw1, aw2, aw3);
    SHA256_LOAD_BLOCK(pb, bw0, bw1, bw2, bw3);
    // SHA-256 has 16 groups of four rounds, SHA-1 20: the last four SHA-1 groups run alone.
    MIXED(0, ROT0);
    MIXED(1, ROT1);
    MIXED(2, ROT2);
    MIXED(3, ROT3);
    MIXED(4, ROT0);
    MIXED(5, ROT1);
    MIXED(6, ROT2);
    MIXED(7, ROT3);
    MIXED(8, ROT0);
    MIXED(9, ROT1);
    MIXED(10, ROT2);
    MIXED(11, ROT3);
    MIXED(12, ROT0);
    MIXED(13, ROT1);
    MIXED(14, ROT2);
    MIXED(15, ROT3);
    APPLY(SHA1_GROUP, a, 16, ROT0);
    APPLY(SHA1_GROUP, a, 17, ROT1);
    APPLY(SHA1_GROUP, a, 18, ROT2);
    APPLY(SHA1_GROUP, a, 19, ROT3);
    SHA1_LANE_END(a, *s1);
    s256->abef = _mm_add_epi32(s256->abef, sb.abef);
    s256->cdgh = _mm_add_epi32(s256->cdgh, sb.cdgh);
}

/// Starts the next message of `jobs` in `l` (skipping none: every message has at least one padded block), or
/// leaves the lane idle when the list is done.
__attribute__((target("sha,ssse3,sse4.1"))) static void lane_take(job_lane *l, const rf_sha_job *jobs, size_t n,
                                                                     size_t *taken) {
    if (*taken >= n) {
        l->job = NULL;
        return;
    }
    l->job = &jobs[(*taken)++];
    lane_blocks_init(&l->blocks, l->job->data, l->job->count);
    l->next = 0;
    if (l->job->sha256) {
        l->s256 = sha256_start();
    } else {
        l->s1 = sha1_start();
    }
}

/// After a block: when the lane's message has no block left, writes its digest and takes the next message.
__attribute__((target("sha,ssse3,sse4.1"))) static void lane_advance(job_lane *l, const rf_sha_job *jobs, size_t n,
                                                                        size_t *taken) {
    l->next++;
    if (l->next < l->blocks.total) return;
    if (l->job->sha256) {
        sha256_finish(l->s256, l->job->out);
    } else {
        sha1_finish(l->s1, l->job->out);
    }
    lane_take(l, jobs, n, taken);
}

__attribute__((target("sha,ssse3,sse4.1"))) static void sha_jobs_ni(const rf_sha_job *jobs, size_t n) {
    job_lane lanes[2];
    size_t taken = 0;
    lane_take(&lanes[0], jobs, n, &taken);
    lane_take(&lanes[1], jobs, n, &taken);
    while (lanes[0].job || lanes[1].job) {
        job_lane *x = &lanes[0], *y = &lanes[1];
        if (x->job && y->job) {
            const uint8_t *px = lane_block(&x->blocks, x->next), *py = lane_block(&y->blocks, y->next);
            int a256 = x->job->sha256, b256 = y->job->sha256;
            if (a256 && b256) {
                sha256_lane s[2] = {x->s256, y->s256};
                sha256_compress_two(s, px, py);
                x->s256 = s[0];
                y->s256 = s[1];
            } else if (!a256 && !b256) {
                sha1_lane s[2] = {x->s1, y->s1};
                sha1_compress_two(s, px, py);
                x->s1 = s[0];
                y->s1 = s[1];
            } else if (!a256) {
                compress_mixed(&x->s1, px, &y->s256, py);
            } else {
                compress_mixed(&y->s1, py, &x->s256, px);
            }
            lane_advance(x, jobs, n, &taken);
            lane_advance(y, jobs, n, &taken);
        } else {
            // The list is done and one message is left: it finishes alone.
            job_lane *l = x->job ? x : y;
            const uint8_t *p = lane_block(&l->blocks, l->next);
            if (l->job->sha256) {
                sha256_compress_one(&l->s256, p);
            } else {
                sha1_compress_one(&l->s1, p);
            }
            lane_advance(l, jobs, n, &taken);
        }
    }
}

int rf_sha_jobs_x2(const rf_sha_job *jobs, size_t n) {
    if (!rf_sha256_x2_available()) return 0;
    sha_jobs_ni(jobs, n);
    return 1;
}

#else

int rf_sha_jobs_x2(const rf_sha_job *jobs, size_t n) {
    (void)jobs, (void)n;
    return 0;
}

#endif
