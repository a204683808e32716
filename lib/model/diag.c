/* diag -- a list of validation problems, each with a field path and a message. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/diag.h"

#include "util/grow.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void diags_init(diags_t *d)
{
    memset(d, 0, sizeof(*d));
}

void diags_fini(diags_t *d)
{
    if (d == NULL)
        return;
    for (size_t i = 0; i < d->len; i++) {
        free(d->items[i].path);
        free(d->items[i].message);
    }
    free(d->items);
    memset(d, 0, sizeof(*d));
}

static err_t diags_vadd(diags_t *d, bool warning, const char *path, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

static err_t diags_vadd(diags_t *d, bool warning, const char *path, const char *fmt, va_list ap)
{
    char text[1024];
    diag_t *item;

    if (util_grow((void **)&d->items, &d->cap, d->len + 1, sizeof(*d->items)) != ERR_OK) {
        d->oom = true;
        return ERR_NOMEM;
    }
    vsnprintf(text, sizeof(text), fmt, ap);
    item = &d->items[d->len];
    item->path = strdup(path ? path : "");
    item->message = strdup(text);
    item->warning = warning;
    if (item->path == NULL || item->message == NULL) {
        free(item->path);
        free(item->message);
        d->oom = true;
        return ERR_NOMEM;
    }
    d->len++;
    if (!warning)
        d->nerrors++;
    return ERR_OK;
}

err_t diags_error(diags_t *d, const char *path, const char *fmt, ...)
{
    va_list ap;
    err_t rc;

    va_start(ap, fmt);
    rc = diags_vadd(d, false, path, fmt, ap);
    va_end(ap);
    return rc;
}

err_t diags_warn(diags_t *d, const char *path, const char *fmt, ...)
{
    va_list ap;
    err_t rc;

    va_start(ap, fmt);
    rc = diags_vadd(d, true, path, fmt, ap);
    va_end(ap);
    return rc;
}

const char *diag_quote(const char *s, char *buf, size_t cap)
{
    size_t n = 0;

    if (cap < 3) {
        if (cap)
            buf[0] = '\0';
        return buf;
    }
    buf[n++] = '"';
    for (; s != NULL && *s != '\0' && n + 6 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            buf[n++] = '\\';
            buf[n++] = (char)c;
        } else if (c == '\n') {
            buf[n++] = '\\';
            buf[n++] = 'n';
        } else if (c == '\t') {
            buf[n++] = '\\';
            buf[n++] = 't';
        } else if (c < 0x20 || c == 0x7f) {
            n += (size_t)snprintf(buf + n, cap - n, "\\x%02x", c);
        } else {
            buf[n++] = (char)c;
        }
    }
    buf[n++] = '"';
    buf[n] = '\0';
    return buf;
}
