/* stats -- exact summary statistics: nearest-rank percentiles, rounded means, ratios, Jain. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SIM_STATS_H
#define SLUICE_SIM_STATS_H

#include "sim/vtime.h"

#include <stddef.h>

/* An exact wide integer for integrals (quantity nano-units x milliseconds). */
__extension__ typedef __int128 sim_wide_t;

/* Longest text sim_ratio_format() writes, including the terminating NUL. */
#define SIM_RATIO_STR_MAX 64

/* Sort `n` durations ascending (in place). */
void sim_stats_sort(sim_ms_t *v, size_t n);

/* Nearest-rank percentile `p` (1..100) of `n` ascending values: the value at 1-based rank
 * ceil(p * n / 100). 0 when n == 0. */
sim_ms_t sim_stats_percentile(const sim_ms_t *sorted, size_t n, unsigned p);

/* Arithmetic mean of `n` values, rounded half away from zero to a whole millisecond. 0 when
 * n == 0. */
sim_ms_t sim_stats_mean(const sim_ms_t *v, size_t n);

/* num / den rounded half up to `decimals` (0..9) places and printed without trailing zeros
 * ("0.6667", "1", "0"); num >= 0, den > 0. Returns buf (SIM_RATIO_STR_MAX bytes). */
char *sim_ratio_format(sim_wide_t num, sim_wide_t den, int decimals, char *buf);

/* Jain's fairness index (sum x)^2 / (n * sum x^2) of `n` values x_i >= 0. 1 when every x_i is
 * equal (including all zero), 1/n when one value holds everything, 0 when n == 0. */
double sim_stats_jain(const long double *x, size_t n);

#endif
