// Base64 decoding of the receipt field (JSON escapes included) and of JWS segments (base64url).
#include "loop_internal.h"

#include <string.h>

/// Base64 alphabet values; 64 marks every other byte.
static uint8_t b64[256];

void cloop_init_tables(void) {
    static const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    memset(b64, 64, sizeof b64);
    for (int i = 0; i < 64; i++) b64[(uint8_t)alphabet[i]] = (uint8_t)i;
    // The base64url alphabet's two letters, for JWS.
    b64['-'] = 62;
    b64['_'] = 63;
}

long cloop_base64_decode(const uint8_t *s, const uint8_t *e, uint8_t *out) {
    uint8_t *o = out;
    uint32_t acc = 0;
    int bits = 0;
    while (s < e) {
        // Four plain characters at a time while the accumulator is empty.
        if (bits == 0 && e - s >= 4) {
            uint8_t a = b64[s[0]], b = b64[s[1]], c = b64[s[2]], d = b64[s[3]];
            if ((a | b | c | d) < 64) {
                uint32_t v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | d;
                o[0] = (uint8_t)(v >> 16);
                o[1] = (uint8_t)(v >> 8);
                o[2] = (uint8_t)v;
                o += 3;
                s += 4;
                continue;
            }
        }
        uint8_t ch = *s++, v = b64[ch];
        if (v == 64) {
            if (ch == '\\' && s < e) {
                ch = *s++;
                if (ch == '/') v = 63;
                else if (ch == 'r' || ch == 'n' || ch == 't') continue;
                else return -1;
            } else if (ch == ' ') {
                continue;
            } else if (ch == '=') {
                break;
            } else {
                return -1;
            }
        }
        acc = acc << 6 | v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            *o++ = (uint8_t)(acc >> bits);
        }
    }
    return o - out;
}

