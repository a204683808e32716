/* str -- string copies and formatting onto the heap (NULL-tolerant copy, printf to a new string),
 * and HTML escaping. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_STR_H
#define SLUICE_STR_H

#include "util/err.h"

#include <stddef.h>
#include <stdio.h>

/* A copy of `s` into *out (owned by the caller); a NULL `s` gives a NULL *out, which is how
 * optional fields are copied. ERR_NOMEM leaves *out untouched. */
err_t util_strdup(const char *s, char **out);

/* printf into a new string (caller frees); NULL only when out of memory (or for a format that
 * vsnprintf rejects). */
char *util_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Write `n` bytes of `s` to `out` escaped for HTML and XML (SVG) text and attribute values:
 * & < > " ' as entities, everything else as is. */
void util_html_escape(FILE *out, const char *s, size_t n);

#endif
