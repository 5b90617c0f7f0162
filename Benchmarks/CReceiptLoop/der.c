// BER/DER TLVs: definite and indefinite lengths.
#include "loop_internal.h"

static int read_tlv(const uint8_t *p, const uint8_t *end, cloop_tlv *t, int depth) {
    if (end - p < 2 || depth > CLOOP_MAX_DEPTH) return 0;
    t->start = p;
    t->tag = *p++;
    uint8_t l = *p++;
    if (l == 0x80) {
        // Indefinite length (BER, constructed only): the children up to the end-of-contents octets.
        if (!(t->tag & 0x20)) return 0;
        t->val = p;
        for (;;) {
            if (end - p >= 2 && p[0] == 0 && p[1] == 0) {
                t->len = (size_t)(p - t->val);
                t->end = p + 2;
                return 1;
            }
            cloop_tlv child;
            if (!read_tlv(p, end, &child, depth + 1)) return 0;
            p = child.end;
        }
    }
    size_t len = l;
    if (l & 0x80) {
        int n = l & 0x7f;
        if (n > 4 || end - p < n) return 0;
        len = 0;
        for (int i = 0; i < n; i++) len = len << 8 | *p++;
    }
    if ((size_t)(end - p) < len) return 0;
    t->val = p;
    t->len = len;
    t->end = p + len;
    return 1;
}

int cloop_read_tlv(const uint8_t *p, const uint8_t *end, cloop_tlv *t) { return read_tlv(p, end, t, 0); }

int cloop_next(const uint8_t **p, const uint8_t *end, uint8_t tag, cloop_tlv *t) {
    if (!cloop_read_tlv(*p, end, t) || t->tag != tag) return 0;
    *p = t->end;
    return 1;
}

