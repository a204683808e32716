/* intern -- shared, reference-counted copies of strings that many objects repeat. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_UTIL_INTERN_H
#define SLUICE_UTIL_INTERN_H

#include <stddef.h>

/*
 * One process-wide table (thread-safe) of strings with a reference count each: condition
 * types, reasons and messages, namespaces, queue and flavor names that thousands of cached
 * objects share are held once. A string goes away with its last reference (the table frees its
 * own storage when it empties). The text of an interned string must never be changed or
 * passed to free(3).
 */

/* A reference to the shared copy of `s` (NUL-terminated), NULL on out-of-memory or when `s` is
 * NULL. */
const char *util_intern(const char *s);

/* Drop a reference util_intern() returned; NULL-safe. */
void util_intern_drop(const char *s);

/* Distinct strings in the table now (tests, measurements). */
size_t util_intern_count(void);

#endif
