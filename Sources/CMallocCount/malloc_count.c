// Interposes the allocator entry points to count heap allocations; linked only into the benchmark executable.
#define _GNU_SOURCE
#include "CMallocCount.h"
#include <stdatomic.h>
#include <malloc.h>
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static _Atomic uint64_t counter;

uint64_t rf_malloc_count(void) { return atomic_load_explicit(&counter, memory_order_relaxed); }

void *malloc(size_t n) {
    atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b) {
    atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n) {
    atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
    return __libc_realloc(p, n);
}
int posix_memalign(void **out, size_t align, size_t n) {
    atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
    void *p = __libc_memalign(align, n);
    if (!p) return 12;
    *out = p;
    return 0;
}
void *aligned_alloc(size_t align, size_t n) {
    atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
    return __libc_memalign(align, n);
}

/// Hands freed heap memory back to the system (glibc's malloc_trim), so that a peak RSS measured after it is not
/// inflated by what earlier work freed.
void rf_malloc_trim(void) { malloc_trim(0); }
