/* fmt -- number formats shared by the simulator's outputs. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/fmt.h"

#include <stdio.h>
#include <string.h>

#define NANO_PER_UNIT ((sim_wide_t)1000000000)

static bool memory_like(const char *resource)
{
    return strstr(resource, "memory") != NULL || strstr(resource, "storage") != NULL ||
           strncmp(resource, "hugepages-", 10) == 0;
}

char *sim_fmt_quantity(qnano_t nano, const char *resource, char *buf)
{
    quantity_t q = {nano, QUANTITY_DECIMAL_SI};

    if (nano != 0 && memory_like(resource) && nano % (NANO_PER_UNIT * 1024) == 0)
        q.format = QUANTITY_BINARY_SI;
    return quantity_format(q, buf);
}

char *sim_fmt_resource_seconds(sim_wide_t nano_ms, char *buf)
{
    return sim_ratio_format(nano_ms, NANO_PER_UNIT * 1000, 3, buf);
}

char *sim_fmt_gpu_hours(sim_wide_t nano_ms, char *buf)
{
    return sim_ratio_format(nano_ms, NANO_PER_UNIT * 3600000, 3, buf);
}

char *sim_fmt_resource_hours(sim_wide_t nano_ms, const char *resource, char *buf)
{
    if (!memory_like(resource) || nano_ms == 0)
        return sim_fmt_gpu_hours(nano_ms, buf);
    sim_ratio_format(nano_ms, NANO_PER_UNIT * 3600000 * 1073741824, 3, buf);
    size_t n = strlen(buf);
    if (n + 3 <= SIM_RATIO_STR_MAX)
        memcpy(buf + n, "Gi", 3);
    return buf;
}

char *sim_fmt_percent(sim_wide_t num, sim_wide_t den, char *buf)
{
    if (den <= 0) {
        snprintf(buf, SIM_RATIO_STR_MAX, "-");
        return buf;
    }
    sim_ratio_format(num * 100, den, 1, buf);
    size_t n = strlen(buf);
    if (n + 2 <= SIM_RATIO_STR_MAX) {
        buf[n] = '%';
        buf[n + 1] = '\0';
    }
    return buf;
}

char *sim_fmt_fraction(double x, char *buf)
{
    if (!(x >= 0))
        x = 0;
    /* Rounded once to an integer number of ten-thousandths, then printed exactly. */
    long long scaled = (long long)(x * 10000 + 0.5);
    return sim_ratio_format(scaled, 10000, 4, buf);
}
