/* intern -- shared, reference-counted copies of strings that many objects repeat. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_UTIL_INTERN_H
#define SLUICE_UTIL_INTERN_H

#include "util/hmap.h"

#include <stddef.h>

/*
 * A table of strings with a reference count each: condition types, reasons and messages,
 * namespaces, queue and flavor names that thousands of cached objects share are held once. A
 * string goes away with its last reference. The text of an interned string must never be
 * changed or passed to free(3). One owner (the controller's loop): not thread-safe.
 */
typedef struct util_intern_s {
    util_hmap_t map; /* text -> entry; the keys borrow the entries' text */
} util_intern_t;

/* An empty table. */
void util_intern_init(util_intern_t *t);

/* Free the table and any string still in it (its references are then dangling). */
void util_intern_fini(util_intern_t *t);

/* A reference to the shared copy of `s` (NUL-terminated) in `t`, NULL on out-of-memory or when
 * `s` is NULL. */
const char *util_intern(util_intern_t *t, const char *s);

/* Drop a reference util_intern(t, ...) returned; NULL-safe. */
void util_intern_drop(util_intern_t *t, const char *s);

/* Distinct strings in `t` now (tests, measurements). */
size_t util_intern_count(const util_intern_t *t);

#endif
