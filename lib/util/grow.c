/* grow -- amortised growth of heap arrays. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/grow.h"

#include <stdint.h>
#include <stdlib.h>

err_t util__grow(void **p, size_t *cap, size_t need, size_t elem)
{
    size_t ncap;
    void *np;

    if (need <= *cap)
        return ERR_OK;
    if (elem == 0)
        return ERR_INVALID;
    ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return ERR_NOMEM;
        ncap *= 2;
    }
    if (ncap > SIZE_MAX / elem)
        return ERR_NOMEM;
    np = realloc(*p, ncap * elem);
    if (np == NULL)
        return ERR_NOMEM;
    *p = np;
    *cap = ncap;
    return ERR_OK;
}
