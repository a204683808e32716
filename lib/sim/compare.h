/* compare -- `sluice sim --compare A.yaml B.yaml`: one workload stream, two quota designs. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SIM_COMPARE_H
#define SLUICE_SIM_COMPARE_H

#include "sim/record.h"
#include "sim/scenario.h"
#include "util/err.h"

#include <stdbool.h>
#include <stdio.h>

/*
 * A scenario's documents are of two sorts (docs/simulator.md, "Comparing designs"):
 *   design  ResourceFlavor, ClusterQueue, Cohort, LocalQueue, Configuration: the quota design
 *   stream  everything else (Namespaces, priority classes, Workloads and jobs of every kind with
 *           their sim.sluice.dev/ timing): the workload stream
 * Side A runs A.yaml as it is. Side B runs B.yaml's design documents with A.yaml's stream
 * documents (B's own stream documents are ignored and counted), design first, each part in its
 * file's order. Both runs are deterministic, so the two columns differ only by the design.
 */

/* Is a document of kind `k` part of the design (else of the workload stream)? */
bool sim_compare_is_design(kind_t k);

/* Fill `out` (initialised; sim_scenario_init) with `design`'s design documents then `stream`'s
 * stream documents: shallow copies that borrow the objects of both, which must outlive `out`;
 * release it with sim_compare_scenario_fini(), never sim_scenario_fini(). *ignored gets the
 * number of stream documents of `design` left out. ERR_NOMEM. */
err_t sim_compare_scenario(const sim_scenario_t *stream, const sim_scenario_t *design,
                           sim_scenario_t *out, size_t *ignored, err_msg_t *msg);

/* Release what sim_compare_scenario() made. */
void sim_compare_scenario_fini(sim_scenario_t *sc);

/* Write the side-by-side comparison of the runs `a` and `b` (named `name_a`, `name_b`) to `out`:
 * a table for people, or (json) one JSON document. ERR_NOMEM, ERR_IO. */
err_t sim_compare_write(const sim_rec_t *a, const char *name_a, const sim_rec_t *b,
                        const char *name_b, bool json, FILE *out, err_msg_t *msg);

/* Write one self-contained HTML page to `out`: the table of sim_compare_write(), then each run's
 * own report (sim_report_write()) side by side, A left, B right (stacked on narrow screens); no
 * scripts, no network. ERR_NOMEM, ERR_IO. */
err_t sim_compare_html(const sim_rec_t *a, const char *name_a, const sim_rec_t *b,
                       const char *name_b, FILE *out, err_msg_t *msg);

#endif
