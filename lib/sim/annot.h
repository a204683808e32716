/* annot -- the simulator's annotations (sim.sluice.dev/...): which exist, and typos in them. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SIM_ANNOT_H
#define SLUICE_SIM_ANNOT_H

#include "model/diag.h"
#include "model/types.h"

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

/*
 * Admission check verdicts (docs/simulator.md, "Admission checks"). A sequence is
 * "STEP[,STEP...]", a STEP "Ready|Retry|Rejected[:DURATION]" (the delay after quota is
 * reserved; 0 when absent), a Retry optionally "Retry:DURATION:REQUEUE_AFTER" (whole seconds:
 * Kueue's requeueAfterSeconds). The k-th quota reservation of a workload (0-based) takes step
 * k, the last step repeating. Into *state, *delay (ms) and *requeue_s (seconds, -1 when the
 * step gives none; `requeue_s` may be NULL); ERR_INVALID (msg) on a malformed sequence.
 */
err_t sim_verdict_step(const char *seq, size_t len, size_t k, check_state_t *state, int64_t *delay,
                       int64_t *requeue_s, err_msg_t *msg);

/* In a workload's "CHECK=SEQ[; CHECK=SEQ...]" list, the sequence of `check` into *seq and *len
 * (NULL when the list does not name it); `check` NULL: only validate every entry. ERR_INVALID
 * (msg). */
err_t sim_verdicts_find(const char *list, const char *check, const char **seq, size_t *len,
                        err_msg_t *msg);

#endif
