/* strmap -- a string -> index hash map for the simulator's name lookups. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a, 64 bit: short keys, no adversary (the scenario author only slows their own run). */
static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

void sim_strmap_init(sim_strmap_t *m)
{
    m->slots = NULL;
    m->cap = 0;
    m->len = 0;
}

void sim_strmap_fini(sim_strmap_t *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->cap; i++)
        free(m->slots[i].key);
    free(m->slots);
    sim_strmap_init(m);
}

static sim_strmap_slot_t *find(const sim_strmap_t *m, const char *key)
{
    size_t i = (size_t)hash(key) & (m->cap - 1);
    for (;;) {
        sim_strmap_slot_t *s = &m->slots[i];
        if (s->key == NULL || strcmp(s->key, key) == 0)
            return s;
        i = (i + 1) & (m->cap - 1);
    }
}

bool sim_strmap_get(const sim_strmap_t *m, const char *key, size_t *out)
{
    if (m->cap == 0)
        return false;
    const sim_strmap_slot_t *s = find(m, key);
    if (s->key == NULL)
        return false;
    *out = s->value;
    return true;
}

static err_t grow(sim_strmap_t *m)
{
    size_t ncap = m->cap == 0 ? 64 : m->cap * 2;
    sim_strmap_t n = {calloc(ncap, sizeof(sim_strmap_slot_t)), ncap, m->len};

    if (n.slots == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slots[i].key != NULL)
            *find(&n, m->slots[i].key) = m->slots[i];
    }
    free(m->slots);
    *m = n;
    return ERR_OK;
}

err_t sim_strmap_put(sim_strmap_t *m, const char *key, size_t value)
{
    /* Keep the load factor at or below 1/2 so probes stay short. */
    if ((m->len + 1) * 2 > m->cap && grow(m) != ERR_OK)
        return ERR_NOMEM;
    sim_strmap_slot_t *s = find(m, key);
    if (s->key == NULL) {
        char *copy = strdup(key);
        if (copy == NULL)
            return ERR_NOMEM;
        s->key = copy;
        m->len++;
    }
    s->value = value;
    return ERR_OK;
}
