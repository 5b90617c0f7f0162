// The run: one thread decompresses the file into blocks of whole lines, the workers take the blocks from a
// bounded queue and process every line.
#include "loop_internal.h"

#include <openssl/err.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define BLOCK_SIZE (1 << 20)
#define QUEUE_SLOTS 8

typedef struct {
    char *data;
    size_t len;
    size_t cap;
} block;

/// Full blocks for the workers and empty ones back to the reader, each a bounded ring under one lock.
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    block *full[QUEUE_SLOTS];
    int full_head, full_count;
    block *free_list[QUEUE_SLOTS + 1];
    int free_count;
    int done;
} queue;

typedef void (*line_work)(cloop_worker *, const char *, size_t);

typedef struct {
    queue *q;
    cloop_worker *w;
    line_work process;
} worker_arg;

static void *work(void *arg) {
    queue *q = ((worker_arg *)arg)->q;
    cloop_worker *w = ((worker_arg *)arg)->w;
    line_work process = ((worker_arg *)arg)->process;
    for (;;) {
        pthread_mutex_lock(&q->lock);
        while (q->full_count == 0 && !q->done) pthread_cond_wait(&q->changed, &q->lock);
        if (q->full_count == 0) {
            pthread_mutex_unlock(&q->lock);
            return NULL;
        }
        block *b = q->full[q->full_head];
        q->full_head = (q->full_head + 1) % QUEUE_SLOTS;
        q->full_count--;
        pthread_cond_broadcast(&q->changed);
        pthread_mutex_unlock(&q->lock);

        const char *p = b->data, *end = b->data + b->len;
        while (p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            const char *stop = nl ? nl : end;
            if (stop > p) {
                w->counts.lines++;
                process(w, p, (size_t)(stop - p));
            }
            p = stop + 1;
        }

        pthread_mutex_lock(&q->lock);
        q->free_list[q->free_count++] = b;
        pthread_cond_broadcast(&q->changed);
        pthread_mutex_unlock(&q->lock);
    }
}

/// An empty block from the free list (waiting for one when all are queued or being processed).
static block *take_free(queue *q) {
    pthread_mutex_lock(&q->lock);
    while (q->free_count == 0) pthread_cond_wait(&q->changed, &q->lock);
    block *b = q->free_list[--q->free_count];
    pthread_mutex_unlock(&q->lock);
    b->len = 0;
    return b;
}

static void push_full(queue *q, block *b) {
    pthread_mutex_lock(&q->lock);
    while (q->full_count == QUEUE_SLOTS) pthread_cond_wait(&q->changed, &q->lock);
    q->full[(q->full_head + q->full_count) % QUEUE_SLOTS] = b;
    q->full_count++;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->lock);
}

/// Decompresses `f` into blocks cut after their last newline (the rest starts the next block); a line longer
/// than a block grows the block. Returns 0, or -1 on a zstd error.
static int read_blocks(FILE *f, queue *q) {
    ZSTD_DCtx *z = ZSTD_createDCtx();
    size_t in_cap = ZSTD_DStreamInSize();
    char *in = malloc(in_cap);
    int status = (z && in) ? 0 : -1;
    block *b = take_free(q);
    size_t got;
    while (status == 0 && (got = fread(in, 1, in_cap, f)) > 0) {
        ZSTD_inBuffer input = {in, got, 0};
        while (input.pos < input.size) {
            if (b->len == b->cap) {
                char *nl = NULL;
                for (char *s = b->data + b->len; s > b->data; s--)
                    if (s[-1] == '\n') {
                        nl = s;
                        break;
                    }
                if (!nl) {
                    char *grown = realloc(b->data, b->cap * 2);
                    if (!grown) {
                        status = -1;
                        break;
                    }
                    b->data = grown;
                    b->cap *= 2;
                } else {
                    block *next = take_free(q);
                    size_t rest = (size_t)(b->data + b->len - nl);
                    if (rest > next->cap) {
                        free(next->data);
                        next->data = malloc(b->cap);
                        next->cap = next->data ? b->cap : 0;
                    }
                    memcpy(next->data, nl, rest);
                    next->len = rest;
                    b->len = (size_t)(nl - b->data);
                    push_full(q, b);
                    b = next;
                }
            }
            ZSTD_outBuffer output = {b->data, b->cap, b->len};
            size_t r = ZSTD_decompressStream(z, &output, &input);
            if (ZSTD_isError(r)) {
                status = -1;
                break;
            }
            b->len = output.pos;
        }
    }
    if (ferror(f)) status = -1;
    push_full(q, b);
    pthread_mutex_lock(&q->lock);
    q->done = 1;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->lock);
    free(in);
    ZSTD_freeDCtx(z);
    return status;
}

static int run(const char *path, const uint8_t *root_der, size_t root_len, int threads, rf_cloop_result *out,
               line_work process) {
    memset(out, 0, sizeof *out);
    if (threads < 1) threads = 1;
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    const unsigned char *d = root_der;
    X509 *root = d2i_X509(NULL, &d, (long)root_len);
    cloop_shared shared = {X509_STORE_new(), EVP_MD_fetch(NULL, "SHA1", NULL), EVP_MD_fetch(NULL, "SHA256", NULL)};
    if (!root || !shared.store || !shared.sha1 || !shared.sha256 || !X509_STORE_add_cert(shared.store, root)) {
        fclose(f);
        X509_free(root);
        X509_STORE_free(shared.store);
        EVP_MD_free(shared.sha1);
        EVP_MD_free(shared.sha256);
        ERR_clear_error();
        return -1;
    }
    cloop_init_tables();

    queue q;
    memset(&q, 0, sizeof q);
    pthread_mutex_init(&q.lock, NULL);
    pthread_cond_init(&q.changed, NULL);
    block blocks[QUEUE_SLOTS + 1];
    for (int i = 0; i <= QUEUE_SLOTS; i++) {
        blocks[i].data = malloc(BLOCK_SIZE);
        blocks[i].cap = blocks[i].data ? BLOCK_SIZE : 0;
        blocks[i].len = 0;
        q.free_list[q.free_count++] = &blocks[i];
    }
    cloop_worker *workers = calloc((size_t)threads, sizeof *workers);
    worker_arg *args = calloc((size_t)threads, sizeof *args);
    pthread_t *ids = calloc((size_t)threads, sizeof *ids);
    for (int t = 0; t < threads; t++) {
        workers[t].shared = &shared;
        workers[t].md = EVP_MD_CTX_new();
        workers[t].verify = EVP_MD_CTX_new();
        args[t] = (worker_arg){&q, &workers[t], process};
        pthread_create(&ids[t], NULL, work, &args[t]);
    }
    int status = read_blocks(f, &q);
    for (int t = 0; t < threads; t++) {
        pthread_join(ids[t], NULL);
        cloop_worker *w = &workers[t];
        out->lines += w->counts.lines;
        out->decoded += w->counts.decoded;
        out->walked += w->counts.walked;
        out->signature_ok += w->counts.signature_ok;
        out->valid += w->counts.valid;
        out->chain_checks += w->counts.chain_checks;
        for (int i = 0; i < w->cached; i++) cloop_chain_free(&w->cache[i]);
        for (int i = 0; i < w->jws_cached; i++) cloop_jws_chain_free(&w->jws_cache[i]);
        for (int i = 0; i < 4; i++) free(w->jws_buf[i]);
        EVP_MD_CTX_free(w->md);
        EVP_MD_CTX_free(w->verify);
        free(w->der);
    }
    for (int i = 0; i <= QUEUE_SLOTS; i++) free(blocks[i].data);
    free(workers);
    free(args);
    free(ids);
    pthread_mutex_destroy(&q.lock);
    pthread_cond_destroy(&q.changed);
    fclose(f);
    X509_free(root);
    X509_STORE_free(shared.store);
    EVP_MD_free(shared.sha1);
    EVP_MD_free(shared.sha256);
    return status;
}

int rf_cloop_run(const char *path, const uint8_t *root_der, size_t root_len, int threads, rf_cloop_result *out) {
    return run(path, root_der, root_len, threads, out, cloop_record);
}

int rf_cloop_run_jws(const char *path, const uint8_t *root_der, size_t root_len, int threads, rf_cloop_result *out) {
    return run(path, root_der, root_len, threads, out, cloop_jws_record);
}
