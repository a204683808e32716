/* sched util -- quantity formatting, a stable sort with context and shared strings for the
 * engine. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched_int.h"

#include <stdlib.h>
#include <string.h>

/* The count sits right before the text (SCHED_STR_STATIC's layout). */
static uint32_t *str_refs(char *p)
{
    return (uint32_t *)(void *)(p - sizeof(uint32_t));
}

char *sched__str_new(const char *s, size_t n)
{
    char *b = malloc(sizeof(uint32_t) + n + 1);

    if (b == NULL)
        return NULL;
    memcpy(b, &(uint32_t){1}, sizeof(uint32_t));
    memcpy(b + sizeof(uint32_t), s, n);
    b[sizeof(uint32_t) + n] = '\0';
    return b + sizeof(uint32_t);
}

char *sched__str_ref(char *p)
{
    if (p != NULL && __atomic_load_n(str_refs(p), __ATOMIC_RELAXED) != SCHED_STR_IMMORTAL)
        __atomic_fetch_add(str_refs(p), 1, __ATOMIC_RELAXED);
    return p;
}

void sched__str_unref(char *p)
{
    if (p == NULL || __atomic_load_n(str_refs(p), __ATOMIC_RELAXED) == SCHED_STR_IMMORTAL)
        return;
    if (__atomic_sub_fetch(str_refs(p), 1, __ATOMIC_ACQ_REL) == 0)
        free(p - sizeof(uint32_t));
}

/* Let the strings only the table holds go. */
static void intern_sweep(sched_t *s)
{
    size_t pos = 0;
    const char *k;
    void *v;

    while (util_hmap_next(&s->interned, &pos, &k, &v)) {
        /* a copy of the engine on another thread only ever drops references: a count of one
         * is the table's alone, for good */
        if (__atomic_load_n(str_refs(v), __ATOMIC_ACQUIRE) == 1) {
            util_hmap_del(&s->interned, k);
            sched__str_unref(v);
        }
    }
    s->interned_swept = util_hmap_len(&s->interned);
}

char *sched__intern(sched_t *s, const char *text)
{
    char *p = util_hmap_get(&s->interned, text);

    if (p != NULL)
        return sched__str_ref(p);
    if (util_hmap_len(&s->interned) >= 2 * s->interned_swept + 64)
        intern_sweep(s);
    p = sched__str_new(text, strlen(text));
    if (p == NULL)
        return NULL;
    if (util_hmap_put(&s->interned, p, p, NULL) != ERR_OK)
        return p; /* not shared, still the caller's string */
    return sched__str_ref(p);
}

void sched__intern_fini(sched_t *s)
{
    size_t pos = 0;
    void *v;

    while (util_hmap_next(&s->interned, &pos, NULL, &v))
        sched__str_unref(v);
    util_hmap_fini(&s->interned);
    s->interned_swept = 0;
}

quantity_format_t sched__res_format(const char *res)
{
    /* Kueue's resources.ResourceQuantity(): bytes print in binary suffixes, the rest decimal */
    if (strcmp(res, "memory") == 0 || strcmp(res, "ephemeral-storage") == 0 ||
        strncmp(res, "hugepages-", 10) == 0)
        return QUANTITY_BINARY_SI;
    return QUANTITY_DECIMAL_SI;
}

char *sched__fmt_q(qnano_t v, quantity_format_t format, char *buf)
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
    quantity_t q = {.nano = v, .format = format};
    return quantity_format(q, buf);
}

/* Stable merge sort with a context pointer (qsort has none, and the engine keeps no global
 * state). Allocates n*size scratch bytes; ERR_NOMEM leaves the array unchanged. */
err_t sched__sort(void *base, size_t n, size_t size, sched_cmp_fn cmp, const void *ctx)
{
    char *tmp;

    if (n < 2)
        return ERR_OK;
    tmp = malloc(n * size);
    if (tmp == NULL)
        return ERR_NOMEM;
    if (size == sizeof(void *))
        sched__merge_sort(base, n, sizeof(void *), tmp, cmp, ctx);
    else
        sched__merge_sort(base, n, size, tmp, cmp, ctx);
    free(tmp);
    return ERR_OK;
}
