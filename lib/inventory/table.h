/* table -- plain-text tables with aligned columns (the inventory's and the graph's listings). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_INV_TABLE_H
#define SLUICE_INV_TABLE_H

#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Rows of cells; the first row is the header. Cells are copied. A failed append sets `oom`,
 * which later appends keep and table_write() returns as ERR_NOMEM, so callers check once. */
typedef struct inv_table_s {
    char **cells; /* owned: row-major, ncols per row */
    size_t ncols;
    size_t nrows;
    size_t cap;
    size_t col; /* cells of the current row so far */
    bool oom;
} inv_table_t;

/* An empty table of `ncols` columns. */
void inv_table_init(inv_table_t *t, size_t ncols);

/* Release the cells; NULL-safe. */
void inv_table_fini(inv_table_t *t);

/* Append one cell to the current row (NULL prints as "-"); a row is complete after ncols cells. */
void inv_table_cell(inv_table_t *t, const char *text);

/* Append a printf-formatted cell. */
void inv_table_cellf(inv_table_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Write the rows, each column padded to its widest cell (two spaces between columns, none after
 * the last) with `indent` spaces before each row. ERR_NOMEM after a failed append, ERR_IO. */
err_t inv_table_write(const inv_table_t *t, size_t indent, FILE *out);

#endif
