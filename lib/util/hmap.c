/* hmap -- a string-keyed hash map of pointers: get, put, delete, iterate. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/hmap.h"

#include "util/str.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A deleted slot: probing continues past it, a put may reuse it. */
static char tombstone_mark;
#define TOMBSTONE (&tombstone_mark)

static uint64_t rotl(uint64_t x, int b)
{
    return (x << b) | (x >> (64 - b));
}

#define SIPROUND(v0, v1, v2, v3) \
    do {                         \
        v0 += v1;                \
        v1 = rotl(v1, 13);       \
        v1 ^= v0;                \
        v0 = rotl(v0, 32);       \
        v2 += v3;                \
        v3 = rotl(v3, 16);       \
        v3 ^= v2;                \
        v0 += v3;                \
        v3 = rotl(v3, 21);       \
        v3 ^= v0;                \
        v2 += v1;                \
        v1 = rotl(v1, 17);       \
        v1 ^= v2;                \
        v2 = rotl(v2, 32);       \
    } while (0)

/* Eight bytes as a little-endian integer, whatever the machine (one load where it is little
 * endian: the map hashes every name the engine looks up). */
static inline uint64_t load_le64(const unsigned char *p)
{
    uint64_t m;

    memcpy(&m, p, sizeof(m));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    m = __builtin_bswap64(m);
#endif
    return m;
}

/* Always inlined, so that hash_of()'s constant rounds unroll. */
static inline __attribute__((always_inline)) uint64_t
siphash(int c, int d, uint64_t k0, uint64_t k1, const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
    uint64_t b = (uint64_t)len << 56, m;
    size_t i, left = len & 7;

    for (i = 0; i + 8 <= len; i += 8) {
        m = load_le64(p + i);
        v3 ^= m;
        for (int r = 0; r < c; r++)
            SIPROUND(v0, v1, v2, v3);
        v0 ^= m;
    }
    for (size_t j = 0; j < left; j++)
        b |= (uint64_t)p[i + j] << (8 * j);
    v3 ^= b;
    for (int r = 0; r < c; r++)
        SIPROUND(v0, v1, v2, v3);
    v0 ^= b;
    v2 ^= 0xff;
    for (int r = 0; r < d; r++)
        SIPROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t util_siphash(int c, int d, uint64_t k0, uint64_t k1, const void *data, size_t len)
{
    return siphash(c, d, k0, k1, data, len);
}

/* splitmix64: spreads a seed over the SipHash key. */
static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void util_hmap_init(util_hmap_t *m, uint64_t seed)
{
    memset(m, 0, sizeof(*m));
    if (seed == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        seed = ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec) ^ (uintptr_t)m;
    }
    m->k0 = mix(&seed);
    m->k1 = mix(&seed);
}

void util_hmap_init_borrowed(util_hmap_t *m, uint64_t seed)
{
    util_hmap_init(m, seed);
    m->borrowed = true;
}

void util_hmap_fini(util_hmap_t *m)
{
    for (size_t i = 0; i < m->cap && !m->borrowed; i++)
        if (m->slots[i].key != NULL && m->slots[i].key != TOMBSTONE)
            free(m->slots[i].key);
    free(m->slots);
    m->slots = NULL;
    m->cap = m->len = m->used = 0;
}

static uint64_t hash_of(const util_hmap_t *m, const char *key)
{
    return siphash(1, 3, m->k0, m->k1, key, strlen(key));
}

/* The slot holding `key`, or NULL. */
static util_hmap_slot_t *find(const util_hmap_t *m, const char *key, uint64_t h)
{
    size_t mask = m->cap - 1;

    if (m->cap == 0)
        return NULL;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        util_hmap_slot_t *s = &m->slots[i];
        if (s->key == NULL)
            return NULL;
        if (s->key != TOMBSTONE && s->hash == h && strcmp(s->key, key) == 0)
            return s;
    }
}

void *util_hmap_get(const util_hmap_t *m, const char *key)
{
    util_hmap_slot_t *s = find(m, key, hash_of(m, key));

    return s != NULL ? s->value : NULL;
}

/* Rebuild the table at `cap` slots (dropping tombstones). */
static err_t rehash(util_hmap_t *m, size_t cap)
{
    util_hmap_slot_t *slots = calloc(cap, sizeof(*slots));

    if (slots == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < m->cap; i++) {
        util_hmap_slot_t *s = &m->slots[i];
        size_t j;
        if (s->key == NULL || s->key == TOMBSTONE)
            continue;
        for (j = (size_t)s->hash & (cap - 1); slots[j].key != NULL; j = (j + 1) & (cap - 1))
            ;
        slots[j] = *s;
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    m->used = m->len;
    return ERR_OK;
}

err_t util_hmap_put(util_hmap_t *m, const char *key, void *value, void **old)
{
    uint64_t h = hash_of(m, key);
    util_hmap_slot_t *s = find(m, key, h), *free_slot = NULL;
    size_t mask;
    char *copy;

    if (old != NULL)
        *old = NULL;
    if (s != NULL) {
        if (old != NULL)
            *old = s->value;
        s->value = value;
        if (m->borrowed)
            s->key = (char *)key; /* the old key may go with the old value */
        return ERR_OK;
    }
    /* Keep the table at most 3/4 full, tombstones included. */
    if ((m->used + 1) * 4 > m->cap * 3) {
        size_t cap = m->cap ? m->cap : 16;
        while ((m->len + 1) * 2 > cap)
            cap *= 2;
        if (rehash(m, cap) != ERR_OK)
            return ERR_NOMEM;
    }
    if (m->borrowed)
        copy = (char *)key;
    else if (util_strdup(key, &copy) != ERR_OK)
        return ERR_NOMEM;
    mask = m->cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        if (m->slots[i].key == NULL || m->slots[i].key == TOMBSTONE) {
            free_slot = &m->slots[i];
            break;
        }
    }
    if (free_slot->key == NULL)
        m->used++;
    free_slot->key = copy;
    free_slot->value = value;
    free_slot->hash = h;
    m->len++;
    return ERR_OK;
}

void *util_hmap_del(util_hmap_t *m, const char *key)
{
    util_hmap_slot_t *s = find(m, key, hash_of(m, key));
    void *v;

    if (s == NULL)
        return NULL;
    v = s->value;
    if (!m->borrowed)
        free(s->key);
    s->key = TOMBSTONE;
    s->value = NULL;
    m->len--;
    return v;
}

size_t util_hmap_len(const util_hmap_t *m)
{
    return m->len;
}

int util_hmap_next(const util_hmap_t *m, size_t *pos, const char **key, void **value)
{
    for (size_t i = *pos; i < m->cap; i++) {
        const util_hmap_slot_t *s = &m->slots[i];
        if (s->key == NULL || s->key == TOMBSTONE)
            continue;
        *pos = i + 1;
        if (key != NULL)
            *key = s->key;
        if (value != NULL)
            *value = s->value;
        return 1;
    }
    *pos = m->cap;
    return 0;
}
