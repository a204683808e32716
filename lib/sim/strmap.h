/* strmap -- a string -> index hash map for the simulator's name lookups. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SIM_STRMAP_H
#define SLUICE_SIM_STRMAP_H

#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>

/*
 * Open addressing with linear probing; keys are copied. Only lookups go through the hash:
 * nothing iterates it, so hash order never reaches any output (determinism).
 */
typedef struct sim_strmap_slot_s {
    char *key; /* owned; NULL = empty */
    size_t value;
} sim_strmap_slot_t;

typedef struct sim_strmap_s {
    sim_strmap_slot_t *slots; /* owned */
    size_t cap;               /* power of two, or 0 */
    size_t len;
} sim_strmap_t;

/* An empty map. */
void sim_strmap_init(sim_strmap_t *m);

/* Release every key; NULL-safe. */
void sim_strmap_fini(sim_strmap_t *m);

/* The value stored for `key` into *out; false when absent. */
bool sim_strmap_get(const sim_strmap_t *m, const char *key, size_t *out);

/* Store `value` for `key` (replacing any previous value). ERR_NOMEM. */
err_t sim_strmap_put(sim_strmap_t *m, const char *key, size_t value);

#endif
