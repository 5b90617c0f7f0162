// The NDJSON key scan: the string value of the top-level receipt field.
#include "loop_internal.h"

#include <string.h>

/// The end of the JSON string whose contents start at `s` (its closing quote), or NULL.
static const char *string_end(const char *s, const char *e) {
    for (;;) {
        const char *q = memchr(s, '"', (size_t)(e - s));
        if (!q) return NULL;
        size_t slashes = 0;
        while (q - slashes > s && q[-1 - (ptrdiff_t)slashes] == '\\') slashes++;
        if (slashes % 2 == 0) return q;
        s = q + 1;
    }
}

const char *cloop_string_end(const char *s, const char *e) { return string_end(s, e); }

/// The value (its first byte) of the first top-level key of the object at `s` for which `wanted(key, length,
/// context)` holds, or NULL.
static const char *top_level_value(const char *s, const char *e, int (*wanted)(const char *, size_t, const void *),
                                   const void *context) {
    int depth = 0, expect_key = 0;
    while (s < e) {
        char c = *s;
        if (c == '"') {
            const char *q = string_end(s + 1, e);
            if (!q) return NULL;
            if (depth == 1 && expect_key) {
                int match = wanted(s + 1, (size_t)(q - s - 1), context);
                s = q + 1;
                while (s < e && (*s == ' ' || *s == '\t')) s++;
                if (s == e || *s != ':') return NULL;
                s++;
                while (s < e && (*s == ' ' || *s == '\t')) s++;
                expect_key = 0;
                if (match) return s < e ? s : NULL;
                continue;
            }
            s = q + 1;
            continue;
        }
        if (c == '{' || c == '[') {
            depth++;
            expect_key = c == '{' && depth == 1;
        } else if (c == '}' || c == ']') {
            depth--;
        } else if (c == ',' && depth == 1) {
            expect_key = 1;
        }
        s++;
    }
    return NULL;
}

static int is_receipt_key(const char *k, size_t n, const void *context) {
    (void)context;
    return (n == 12 && (memcmp(k, "receipt-data", 12) == 0 || memcmp(k, "receipt_data", 12) == 0)) ||
           (n == 7 && memcmp(k, "receipt", 7) == 0);
}

static int is_key(const char *k, size_t n, const void *key) {
    return strlen(key) == n && memcmp(k, key, n) == 0;
}

const char *cloop_top_level_value(const char *s, const char *e, const char *key) {
    return top_level_value(s, e, is_key, key);
}

int cloop_find_receipt(const char *s, const char *e, const char **vs, const char **ve) {
    const char *v = top_level_value(s, e, is_receipt_key, NULL);
    if (!v || *v != '"') return 0;
    *vs = v + 1;
    *ve = string_end(v + 1, e);
    return *ve != NULL;
}
