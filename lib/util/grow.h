/* grow -- amortised growth of heap arrays (the one growth helper of every module). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_GROW_H
#define SLUICE_GROW_H

#include "util/err.h"

#include <stddef.h>

/*
 * Make the array *p (elements of `elem` bytes, *cap of them allocated) hold at least `need`
 * elements: the capacity doubles from 8 until it is at least `need`, so appending one element at
 * a time costs amortised O(1). Nothing happens when *cap >= need. The new elements are not
 * initialised. ERR_NOMEM (allocation failure or a size that overflows size_t) leaves *p and *cap
 * untouched, so the caller's array stays valid.
 *
 *     if (util_grow((void **)&v->items, &v->cap, v->len + 1, sizeof(*v->items)) != ERR_OK)
 *         return ERR_NOMEM;
 *     v->items[v->len++] = x;
 */
static inline err_t util_grow(void **p, size_t *cap, size_t need, size_t elem);

/* The reallocation behind util_grow() (call util_grow(), whose inline check keeps the common
 * "there is room" case free of a call in the engine's hot loops). */
err_t util__grow(void **p, size_t *cap, size_t need, size_t elem);

static inline err_t util_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    return need <= *cap ? ERR_OK : util__grow(p, cap, need, elem);
}

#endif
