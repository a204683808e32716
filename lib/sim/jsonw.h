/* jsonw -- a small streaming JSON writer with stable key order and 2-space indentation. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SIM_JSONW_H
#define SLUICE_SIM_JSONW_H

#include <stdbool.h>
#include <stdio.h>

#define JSONW_MAX_DEPTH 16

/* Keys are written in the order the caller writes them; numbers are passed as text already
 * formatted exactly (see duration_format_secs, sim_ratio_format), so nothing here rounds. */
typedef struct jsonw_s {
    FILE *out; /* borrowed */
    int depth;
    bool first[JSONW_MAX_DEPTH];
    bool after_key;
} jsonw_t;

/* Start writing to `out`. */
void jsonw_init(jsonw_t *w, FILE *out);

/* Open / close an object or array (as a value: after a key, in an array, or at the top). */
void jsonw_object_begin(jsonw_t *w);
void jsonw_object_end(jsonw_t *w);
void jsonw_array_begin(jsonw_t *w);
void jsonw_array_end(jsonw_t *w);

/* Write a key inside an object; the next call writes its value. */
void jsonw_key(jsonw_t *w, const char *key);

/* Values. */
void jsonw_string(jsonw_t *w, const char *s);
void jsonw_raw(jsonw_t *w, const char *number_text); /* a number already formatted, or "null" */
void jsonw_uint(jsonw_t *w, unsigned long long v);
void jsonw_bool(jsonw_t *w, bool v);

#endif
