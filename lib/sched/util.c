/* sched util -- string map, growable arrays and formatting helpers of the engine. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The map is open addressing with linear probing over FNV-1a hashes. It is used for lookups
 * only: the engine never iterates it, so its (hash-dependent) slot order can never leak into a
 * decision. Deleted slots become tombstones (value NULL, key non-NULL) and are dropped on growth.
 */

static const char smap_tomb[] = "";

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

void *sched__smap_get(const smap_t *m, const char *key)
{
    if (m->cap == 0)
        return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = hash_str(key) & mask;; i = (i + 1) & mask) {
        const smap_entry_t *e = &m->slots[i];
        if (e->key == NULL)
            return NULL;
        if (e->key != smap_tomb && strcmp(e->key, key) == 0)
            return e->value;
    }
}

static err_t smap_resize(smap_t *m, size_t cap)
{
    smap_entry_t *slots = calloc(cap, sizeof(*slots));
    if (slots == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < m->cap; i++) {
        smap_entry_t *e = &m->slots[i];
        if (e->key == NULL || e->key == smap_tomb)
            continue;
        size_t j = hash_str(e->key) & (cap - 1);
        while (slots[j].key != NULL)
            j = (j + 1) & (cap - 1);
        slots[j] = *e;
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    m->tombs = 0;
    return ERR_OK;
}

err_t sched__smap_put(smap_t *m, const char *key, void *value)
{
    if ((m->len + m->tombs + 1) * 4 >= m->cap * 3) {
        size_t cap = 16;
        while (cap < (m->len + 1) * 4)
            cap *= 2;
        if (smap_resize(m, cap) != ERR_OK)
            return ERR_NOMEM;
    }
    size_t mask = m->cap - 1;
    size_t tomb = SIZE_MAX;
    for (size_t i = hash_str(key) & mask;; i = (i + 1) & mask) {
        smap_entry_t *e = &m->slots[i];
        if (e->key == NULL) {
            if (tomb != SIZE_MAX) {
                e = &m->slots[tomb];
                m->tombs--;
            }
            e->key = key;
            e->value = value;
            m->len++;
            return ERR_OK;
        }
        if (e->key == smap_tomb) {
            if (tomb == SIZE_MAX)
                tomb = i;
            continue;
        }
        if (strcmp(e->key, key) == 0) {
            e->key = key;
            e->value = value;
            return ERR_OK;
        }
    }
}

void sched__smap_del(smap_t *m, const char *key)
{
    if (m->cap == 0)
        return;
    size_t mask = m->cap - 1;
    for (size_t i = hash_str(key) & mask;; i = (i + 1) & mask) {
        smap_entry_t *e = &m->slots[i];
        if (e->key == NULL)
            return;
        if (e->key != smap_tomb && strcmp(e->key, key) == 0) {
            e->key = smap_tomb;
            e->value = NULL;
            m->len--;
            m->tombs++;
            return;
        }
    }
}

void sched__smap_fini(smap_t *m)
{
    free(m->slots);
    memset(m, 0, sizeof(*m));
}

err_t sched__grow(void **arr, size_t *cap, size_t need, size_t sz)
{
    if (need <= *cap)
        return ERR_OK;
    size_t ncap = *cap ? *cap * 2 : 8;
    while (ncap < need)
        ncap *= 2;
    void *p = realloc(*arr, ncap * sz);
    if (p == NULL)
        return ERR_NOMEM;
    *arr = p;
    *cap = ncap;
    return ERR_OK;
}

char *sched__strdup(const char *s)
{
    if (s == NULL)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

char *sched__asprintf(const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *buf = malloc((size_t)n + 1);
    if (buf == NULL)
        return NULL;
    if ((size_t)n < sizeof(small)) { /* one formatting pass for the common short text */
        memcpy(buf, small, (size_t)n + 1);
        return buf;
    }
    va_start(ap, fmt);
    vsnprintf(buf, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return buf;
}

char *sched__fmt_q(qnano_t v, char *buf)
{
    /* whole numbers below 1000 print as themselves in canonical DecimalSI form ("20"); a fast
     * path for the explanation messages, which format several numbers per failed check */
    if (v >= 0 && v % 1000000000 == 0 && v / 1000000000 < 1000) {
        unsigned u = (unsigned)(v / 1000000000);
        char tmp[4];
        size_t k = 0;
        do {
            tmp[k++] = (char)('0' + u % 10);
            u /= 10;
        } while (u > 0);
        for (size_t i = 0; i < k; i++)
            buf[i] = tmp[k - 1 - i];
        buf[k] = '\0';
        return buf;
    }
    quantity_t q = {.nano = v, .format = QUANTITY_DECIMAL_SI};
    return quantity_format(q, buf);
}

/* Stable merge sort with a context pointer (qsort has none, and the engine keeps no global
 * state). Allocates n*size scratch bytes; ERR_NOMEM leaves the array unchanged. */
err_t sched__sort(void *base, size_t n, size_t size, sched_cmp_fn cmp, const void *ctx)
{
    if (n < 2)
        return ERR_OK;
    char *a = base;
    char *tmp = malloc(n * size);
    if (tmp == NULL)
        return ERR_NOMEM;
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                if (cmp(a + j * size, a + i * size, ctx) < 0)
                    memcpy(tmp + (k++) * size, a + (j++) * size, size);
                else
                    memcpy(tmp + (k++) * size, a + (i++) * size, size);
            }
            while (i < mid)
                memcpy(tmp + (k++) * size, a + (i++) * size, size);
            while (j < hi)
                memcpy(tmp + (k++) * size, a + (j++) * size, size);
        }
        memcpy(a, tmp, n * size);
    }
    free(tmp);
    return ERR_OK;
}
