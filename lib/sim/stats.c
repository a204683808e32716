/* stats -- exact summary statistics: nearest-rank percentiles, rounded means, ratios, Jain. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_ms(const void *a, const void *b)
{
    sim_ms_t x = *(const sim_ms_t *)a, y = *(const sim_ms_t *)b;
    return (x > y) - (x < y);
}

void sim_stats_sort(sim_ms_t *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof(*v), cmp_ms);
}

sim_ms_t sim_stats_percentile(const sim_ms_t *sorted, size_t n, unsigned p)
{
    size_t rank;

    if (n == 0)
        return 0;
    if (p > 100)
        p = 100;
    /* ceil(p*n/100) in integers; rank 0 (p == 0) reads as the minimum. */
    rank = ((size_t)p * n + 99) / 100;
    if (rank == 0)
        rank = 1;
    return sorted[rank - 1];
}

sim_ms_t sim_stats_mean(const sim_ms_t *v, size_t n)
{
    sim_wide_t sum = 0;

    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    if (sum >= 0)
        return (sim_ms_t)((2 * sum + (sim_wide_t)n) / (2 * (sim_wide_t)n));
    return -(sim_ms_t)((-2 * sum + (sim_wide_t)n) / (2 * (sim_wide_t)n));
}

char *sim_ratio_format(sim_wide_t num, sim_wide_t den, int decimals, char *buf)
{
    sim_wide_t scale = 1, q, whole, frac;
    char digits[16];
    int nd = decimals;

    if (decimals < 0)
        decimals = nd = 0;
    if (decimals > 9)
        decimals = nd = 9;
    for (int i = 0; i < decimals; i++)
        scale *= 10;
    if (den <= 0 || num < 0) {
        snprintf(buf, SIM_RATIO_STR_MAX, "0");
        return buf;
    }
    /* Keep 2 * num * scale inside 127 bits: integrals can reach ~1e34, so shed low bits of
     * both terms together (the quotient's leading digits are unaffected). */
    while (num > ((sim_wide_t)1 << 92) || den > ((sim_wide_t)1 << 92)) {
        num >>= 1;
        den >>= 1;
    }
    if (den == 0)
        den = 1;
    q = (2 * num * scale + den) / (2 * den);
    whole = q / scale;
    frac = q % scale;
    if (whole > (sim_wide_t)999999999999999999LL) {
        snprintf(buf, SIM_RATIO_STR_MAX, "999999999999999999");
        return buf;
    }
    if (frac == 0) {
        snprintf(buf, SIM_RATIO_STR_MAX, "%lld", (long long)whole);
        return buf;
    }
    snprintf(digits, sizeof(digits), "%0*lld", decimals, (long long)frac);
    while (nd > 0 && digits[nd - 1] == '0')
        digits[--nd] = '\0';
    snprintf(buf, SIM_RATIO_STR_MAX, "%lld.%s", (long long)whole, digits);
    return buf;
}

double sim_stats_jain(const long double *x, size_t n)
{
    long double sum = 0, sumsq = 0;

    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        sum += x[i];
        sumsq += x[i] * x[i];
    }
    if (sumsq == 0)
        return 1;
    return (double)(sum * sum / ((long double)n * sumsq));
}
