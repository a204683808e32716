/* base64 -- standard base64 (RFC 4648 section 4) text from bytes and back. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/base64.h"

#include <stdint.h>
#include <stdlib.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

err_t base64_encode(const void *data, size_t len, char **out)
{
    const unsigned char *in = data;
    size_t groups = len / 3 + (len % 3 != 0), n = 0;
    char *text;

    if (groups > (SIZE_MAX - 1) / 4)
        return ERR_NOMEM;
    text = malloc(groups * 4 + 1);
    if (text == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        size_t left = len - i;

        if (left > 1)
            v |= (uint32_t)in[i + 1] << 8;
        if (left > 2)
            v |= in[i + 2];
        text[n++] = alphabet[(v >> 18) & 63];
        text[n++] = alphabet[(v >> 12) & 63];
        text[n++] = left > 1 ? alphabet[(v >> 6) & 63] : '=';
        text[n++] = left > 2 ? alphabet[v & 63] : '=';
    }
    text[n] = '\0';
    *out = text;
    return ERR_OK;
}

static int sextet(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

err_t base64_decode(const char *s, size_t len, unsigned char **out, size_t *out_len, err_msg_t *msg)
{
    size_t n = 0, pad = 0, sextets = 0;
    uint32_t acc = 0;
    unsigned char *buf;

    buf = malloc(len / 4 * 3 + 4);
    if (buf == NULL)
        return err_set(msg, ERR_NOMEM, "base64: out of memory");
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        int v;

        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        if (c == '=') {
            pad++;
            continue;
        }
        v = sextet(c);
        if (v < 0 || pad > 0) {
            free(buf);
            return err_set(msg, ERR_PARSE, "bad base64 character at offset %zu", i);
        }
        acc = (acc << 6) | (uint32_t)v;
        sextets++;
        if (sextets % 4 == 0) {
            buf[n++] = (unsigned char)(acc >> 16);
            buf[n++] = (unsigned char)(acc >> 8);
            buf[n++] = (unsigned char)acc;
            acc = 0;
        }
    }
    /* A trailing group of 2 or 3 sextets carries 1 or 2 bytes; 1 sextet is never valid. */
    switch (sextets % 4) {
    case 0:
        break;
    case 2:
        buf[n++] = (unsigned char)(acc >> 4);
        break;
    case 3:
        buf[n++] = (unsigned char)(acc >> 10);
        buf[n++] = (unsigned char)(acc >> 2);
        break;
    default:
        free(buf);
        return err_set(msg, ERR_PARSE, "bad base64 length");
    }
    if (pad > 2 || (pad > 0 && (sextets + pad) % 4 != 0)) {
        free(buf);
        return err_set(msg, ERR_PARSE, "bad base64 padding");
    }
    buf[n] = '\0';
    *out = buf;
    *out_len = n;
    return ERR_OK;
}
