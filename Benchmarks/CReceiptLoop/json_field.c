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

static int is_receipt_key(const char *k, size_t n) {
    return (n == 12 && (memcmp(k, "receipt-data", 12) == 0 || memcmp(k, "receipt_data", 12) == 0)) ||
           (n == 7 && memcmp(k, "receipt", 7) == 0);
}

int cloop_find_receipt(const char *s, const char *e, const char **vs, const char **ve) {
    int depth = 0, expect_key = 0;
    while (s < e) {
        char c = *s;
        if (c == '"') {
            const char *q = string_end(s + 1, e);
            if (!q) return 0;
            if (depth == 1 && expect_key) {
                int wanted = is_receipt_key(s + 1, (size_t)(q - s - 1));
                s = q + 1;
                while (s < e && (*s == ' ' || *s == '\t')) s++;
                if (s == e || *s != ':') return 0;
                s++;
                while (s < e && (*s == ' ' || *s == '\t')) s++;
                expect_key = 0;
                if (wanted) {
                    if (s == e || *s != '"') return 0;
                    *vs = s + 1;
                    *ve = string_end(s + 1, e);
                    return *ve != NULL;
                }
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
    return 0;
}

