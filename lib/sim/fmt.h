/* fmt -- number formats shared by the simulator's outputs. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SIM_FMT_H
#define SLUICE_SIM_FMT_H

#include "model/quantity.h"
#include "sim/stats.h"

/* `nano` nano-units of `resource` as a Kubernetes quantity: binary suffixes (Ki, Mi, Gi...) for
 * memory-like resources whose value is a whole number of KiB, decimal otherwise. buf holds
 * QUANTITY_STR_MAX bytes. Returns buf. */
char *sim_fmt_quantity(qnano_t nano, const char *resource, char *buf);

/* An integral in nano-units x milliseconds as resource-seconds, 3 decimals. buf holds
 * SIM_RATIO_STR_MAX bytes. */
char *sim_fmt_resource_seconds(sim_wide_t nano_ms, char *buf);

/* An integral in nano-units x milliseconds as resource-hours (GPU-hours), 3 decimals. */
char *sim_fmt_gpu_hours(sim_wide_t nano_ms, char *buf);

/* An integral in nano-units x milliseconds as resource-hours for people: memory-like resources
 * in GiB-hours with a "Gi" suffix ("192Gi"), others plain ("2.667"); 3 decimals at most. */
char *sim_fmt_resource_hours(sim_wide_t nano_ms, const char *resource, char *buf);

/* num/den as a percentage with one decimal ("78.1%"); "-" when den is 0. */
char *sim_fmt_percent(sim_wide_t num, sim_wide_t den, char *buf);

/* A fraction in [0, 1] rounded to 4 decimals, written like sim_ratio_format. */
char *sim_fmt_fraction(double x, char *buf);

#endif
