/* str -- string copies and formatting onto the heap. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/str.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

err_t util_strdup(const char *s, char **out)
{
    char *c;
    size_t n;

    if (s == NULL) {
        *out = NULL;
        return ERR_OK;
    }
    n = strlen(s) + 1;
    c = malloc(n);
    if (c == NULL)
        return ERR_NOMEM;
    memcpy(c, s, n);
    *out = c;
    return ERR_OK;
}

char *util_asprintf(const char *fmt, ...)
{
    char small[512], *buf;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    buf = malloc((size_t)n + 1);
    if (buf == NULL)
        return NULL;
    if ((size_t)n < sizeof(small)) { /* one formatting pass for the common short text */
        memcpy(buf, small, (size_t)n + 1);
        return buf;
    }
    va_start(ap, fmt);
    vsnprintf(buf, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return buf;
}

void util_html_escape(FILE *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&#39;", out);
            break;
        default:
            putc(s[i], out);
        }
    }
}
