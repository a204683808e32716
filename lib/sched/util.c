/* sched util -- quantity formatting and a stable sort with context for the engine. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched_int.h"

#include <stdlib.h>
#include <string.h>

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
