/* diag -- a list of validation problems, each with a field path and a message. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_DIAG_H
#define SLUICE_DIAG_H

#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct diag_s {
    char *path;    /* owned, e.g. "spec.resourceGroups[0].flavors[1].resources[0].lendingLimit" */
    char *message; /* owned, e.g. "must be less than or equal to the nominalQuota" */
    bool warning;  /* true: reported but does not make the object invalid */
} diag_t;

typedef struct diags_s {
    diag_t *items; /* owned */
    size_t len;
    size_t cap;
    size_t nerrors; /* items with warning == false */
    bool oom;       /* an append failed for lack of memory: the list is incomplete */
} diags_t;

/* Zero-initialise an empty list. */
void diags_init(diags_t *d);

/* Release every item; the list is empty afterwards. NULL-safe. */
void diags_fini(diags_t *d);

/* Append an error at `path` with a formatted message. ERR_NOMEM drops it and also sets d->oom,
 * which stays set: code that appends many problems and checks once (the validators) reads the
 * flag at the end, or the ERR_NOMEM of the function that filled the list. */
err_t diags_error(diags_t *d, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Append a warning (does not count as an error); as diags_error(). */
err_t diags_warn(diags_t *d, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* `s` quoted as Go's %q quotes it, roughly (quotes, backslashes and control characters escaped;
 * NULL reads as ""), into `buf` of `cap` bytes, cut short when it does not fit. Returns `buf`. */
const char *diag_quote(const char *s, char *buf, size_t cap);

#endif
