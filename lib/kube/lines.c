/* lines -- split a byte stream into newline-terminated lines with a bounded buffer. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/lines.h"

#include <stdlib.h>
#include <string.h>

void kube_lines_init(kube_lines_t *l, size_t max)
{
    memset(l, 0, sizeof(*l));
    l->max = max ? max : 1;
}

void kube_lines_fini(kube_lines_t *l)
{
    free(l->buf);
    l->buf = NULL;
    l->len = l->cap = 0;
    l->skipping = false;
}

void kube_lines_reset(kube_lines_t *l)
{
    l->len = 0;
    l->skipping = false;
}

/* Make room for `extra` more bytes plus a NUL; `len + extra <= max` is guaranteed by callers. */
static int reserve(kube_lines_t *l, size_t extra)
{
    size_t need = l->len + extra + 1, cap = l->cap ? l->cap : (l->max < 255 ? l->max + 1 : 256);
    char *nb;

    if (need <= l->cap)
        return 0;
    while (cap < need)
        cap = cap > (l->max + 1) / 2 ? l->max + 1 : cap * 2;
    nb = realloc(l->buf, cap);
    if (nb == NULL)
        return -1;
    l->buf = nb;
    l->cap = cap;
    return 0;
}

int kube_lines_feed(kube_lines_t *l, const char *data, size_t len, kube_lines_cb cb, void *ctx)
{
    while (len > 0) {
        const char *nl = memchr(data, '\n', len);
        size_t chunk = nl ? (size_t)(nl - data) : len;
        int rc;

        if (l->skipping) {
            if (nl != NULL) {
                l->skipping = false;
                rc = cb(ctx, "", 0, true);
                if (rc != 0)
                    return rc;
            }
        } else if (l->len + chunk > l->max) {
            /* Over the bound: drop what we have and skip to the end of this line. */
            l->len = 0;
            if (nl == NULL) {
                l->skipping = true;
            } else {
                rc = cb(ctx, "", 0, true);
                if (rc != 0)
                    return rc;
            }
        } else {
            if (reserve(l, chunk) != 0) {
                l->len = 0;
                l->skipping = nl == NULL;
                return -1;
            }
            memcpy(l->buf + l->len, data, chunk);
            l->len += chunk;
            l->buf[l->len] = '\0';
            if (nl != NULL) {
                size_t n = l->len;

                if (n > 0 && l->buf[n - 1] == '\r')
                    l->buf[--n] = '\0';
                l->len = 0; /* before the callback, so it may reset or feed nothing more */
                rc = cb(ctx, l->buf, n, false);
                if (rc != 0)
                    return rc;
            }
        }
        if (nl == NULL)
            break;
        data += chunk + 1;
        len -= chunk + 1;
    }
    return 0;
}
