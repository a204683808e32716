/* annot -- the simulator's annotations (sim.sluice.dev/...): which exist, and typos in them. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SIM_ANNOT_H
#define SLUICE_SIM_ANNOT_H

#include "model/diag.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The domain of every simulator annotation. */
#define SIM_ANN_PREFIX "sim.sluice.dev/"

/* Is annotation key `key` in the simulator's domain (known or not)? */
bool sim_annot_is_sim(const char *key);

/* Is `key` one of the simulator's annotations (scenario.h's SIM_ANN_*)? */
bool sim_annot_known(const char *key);

/*
 * Report every annotation of `annotations` (a JSON object of metadata.annotations, borrowed;
 * anything else has none) in the simulator's domain that the simulator does not know, as an
 * error at metadata.annotations[KEY] naming the closest known one: a typo would otherwise be
 * ignored and, for a runtime, leave the workload running forever. *nsim (may be NULL) gets the
 * number of simulator annotations, known or not. Returns ERR_NOMEM when `d` ran out of memory.
 */
err_t sim_annot_check(const json_t *annotations, diags_t *d, size_t *nsim);

#endif
