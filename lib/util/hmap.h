/* hmap -- a string-keyed hash map of pointers: get, put, delete, iterate. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_UTIL_HMAP_H
#define SLUICE_UTIL_HMAP_H

#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Open addressing with linear probing and tombstones; keys are copied (or borrowed, see
 * util_hmap_init_borrowed), values are the caller's.
 * Keys come from the API server (object names chosen by users), so the hash is SipHash-1-3 with
 * a per-map key: nobody can pick names that collide on purpose. Iteration order is the table's,
 * not insertion order; deleting the current entry while iterating is allowed, putting is not.
 * Code whose output must not depend on hashing (the engine's decisions, the simulator's reports)
 * never iterates a map: it keeps a sorted array beside it and uses the map for lookups only.
 */
typedef struct util_hmap_slot_s {
    char *key;   /* owned; NULL = empty; UTIL_HMAP_TOMBSTONE = deleted */
    void *value; /* the caller's */
    uint64_t hash;
} util_hmap_slot_t;

typedef struct util_hmap_s {
    util_hmap_slot_t *slots; /* owned */
    size_t cap;              /* power of two, or 0 */
    size_t len;              /* live entries */
    size_t used;             /* live entries + tombstones */
    uint64_t k0, k1;         /* SipHash key */
    bool borrowed;           /* keys are the caller's (util_hmap_init_borrowed) */
} util_hmap_t;

/* An empty map whose hash key comes from `seed` (0: from the clock and the map's address). */
void util_hmap_init(util_hmap_t *m, uint64_t seed);

/* An empty map like util_hmap_init's whose keys are borrowed, not copied: each key put must stay
 * valid and unchanged until its entry is deleted or replaced (a replacing put keeps the new key),
 * e.g. a key held by the value itself. Saves a copy of every key. */
void util_hmap_init_borrowed(util_hmap_t *m, uint64_t seed);

/* Release the keys and the table (not the values); the map is empty and usable afterwards. */
void util_hmap_fini(util_hmap_t *m);

/* The value of `key`, or NULL when absent. */
void *util_hmap_get(const util_hmap_t *m, const char *key);

/* Store `value` (not NULL) for `key`, replacing any previous value, which goes to *old (may be
 * NULL; set to NULL when there was none). ERR_NOMEM leaves the map unchanged. */
err_t util_hmap_put(util_hmap_t *m, const char *key, void *value, void **old);

/* Remove `key`; returns its value, or NULL when absent. */
void *util_hmap_del(util_hmap_t *m, const char *key);

/* Number of entries. */
size_t util_hmap_len(const util_hmap_t *m);

/* Iterate: start with *pos = 0; each call returns the next entry (its key and value through the
 * out-parameters, either may be NULL) and true, or false at the end. */
int util_hmap_next(const util_hmap_t *m, size_t *pos, const char **key, void **value);

/* An index (any size_t but SIZE_MAX) as the value, stored as index + 1 since a value is never
 * NULL. */
static inline err_t util_hmap_put_index(util_hmap_t *m, const char *key, size_t index)
{
    return util_hmap_put(m, key, (void *)(uintptr_t)(index + 1), NULL);
}

/* Whether `key` is present; its index (util_hmap_put_index) into *out when it is and `out` is
 * not NULL, *out untouched otherwise. */
static inline bool util_hmap_get_index(const util_hmap_t *m, const char *key, size_t *out)
{
    void *v = util_hmap_get(m, key);

    if (v == NULL)
        return false;
    if (out != NULL)
        *out = (size_t)(uintptr_t)v - 1;
    return true;
}

/* SipHash-c-d of `len` bytes at `data` with key (k0, k1): the map uses c = 1, d = 3. */
uint64_t util_siphash(int c, int d, uint64_t k0, uint64_t k1, const void *data, size_t len);

#endif
