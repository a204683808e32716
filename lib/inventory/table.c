/* table -- plain-text tables with aligned columns. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "inventory/table.h"

#include "util/grow.h"
#include "util/str.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void inv_table_init(inv_table_t *t, size_t ncols)
{
    memset(t, 0, sizeof(*t));
    t->ncols = ncols;
}

void inv_table_fini(inv_table_t *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->nrows * t->ncols + t->col; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof(*t));
}

/* Takes `text` (owned, NULL = out of memory). */
static void put(inv_table_t *t, char *text)
{
    size_t n = t->nrows * t->ncols + t->col;

    if (t->oom || text == NULL ||
        util_grow((void **)&t->cells, &t->cap, n + 1, sizeof(*t->cells)) != ERR_OK) {
        free(text);
        t->oom = true;
        return;
    }
    t->cells[n] = text;
    if (++t->col == t->ncols) {
        t->col = 0;
        t->nrows++;
    }
}

void inv_table_cell(inv_table_t *t, const char *text)
{
    char *copy = NULL;

    if (util_strdup(text ? text : "-", &copy) != ERR_OK)
        copy = NULL;
    put(t, copy);
}

void inv_table_cellf(inv_table_t *t, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n >= 0) {
        s = malloc((size_t)n + 1);
        if (s != NULL) {
            va_start(ap, fmt);
            vsnprintf(s, (size_t)n + 1, fmt, ap);
            va_end(ap);
        }
    }
    put(t, s);
}

/* Display width: UTF-8 continuation bytes take no column. */
static size_t width(const char *s)
{
    size_t w = 0;

    for (; *s != '\0'; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            w++;
    return w;
}

err_t inv_table_write(const inv_table_t *t, size_t indent, FILE *out)
{
    size_t *w;

    if (t->oom)
        return ERR_NOMEM;
    w = calloc(t->ncols ? t->ncols : 1, sizeof(*w));
    if (w == NULL)
        return ERR_NOMEM;
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++) {
            size_t cw = width(t->cells[r * t->ncols + c]);
            if (cw > w[c])
                w[c] = cw;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        fprintf(out, "%*s", (int)indent, "");
        for (size_t c = 0; c < t->ncols; c++) {
            const char *s = t->cells[r * t->ncols + c];
            if (c + 1 == t->ncols)
                fprintf(out, "%s\n", s);
            else
                fprintf(out, "%s%*s", s, (int)(w[c] - width(s) + 2), "");
        }
    }
    free(w);
    return ferror(out) ? ERR_IO : ERR_OK;
}
