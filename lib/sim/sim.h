/* sim -- `sluice sim`: run the admission engine over a scenario in virtual time. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SIM_H
#define SLUICE_SIM_H

#include "sim/record.h"
#include "sim/scenario.h"
#include "sim/vtime.h"
#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct sched_s; /* lib/sched/sched.h */

/*
 * The pipeline (cmd/sluice/cmd_sim.c drives it):
 *
 *   sim_scenario_load()  file -> typed objects + timing, or every error and nothing runs
 *   sim_run()            objects -> lib/sched in virtual time -> JSON Lines events + a record
 *   sim_summary_write()  record -> the --summary JSON document
 *   sim_human_write()    record -> the default summary for people
 *   sim_report_write()   record -> the --report HTML page (inline SVG)
 *
 * Everything is deterministic: the same scenario gives the same bytes on every output.
 */

/* Called after each instant of virtual time: `now`, workloads that have left (finished,
 * deactivated, deleted) and workloads seen so far. */
typedef void (*sim_progress_cb)(void *ud, sim_ms_t now, size_t done, size_t total);

typedef struct sim_options_s {
    bool has_until; /* stop at `until` (--until) */
    sim_ms_t until;
    FILE *events;                /* borrowed: where JSON Lines events go; NULL = nowhere */
    sim_progress_cb on_progress; /* may be NULL */
    void *progress_ud;
    /* borrowed: one record per admission that ended goes here (lib/acct; --accounting), with
     * virtual time 0 at Unix ms `accounting_epoch_ms`; NULL = none. A write failure is kept by
     * the log (acct_log_close() reports it), the run goes on. */
    struct acct_log_s *accounting;
    int64_t accounting_epoch_ms;
    /* Called after each instant with the engine, for observers that query it (the start-time
     * estimate's accuracy, bench/estimate_accuracy.c): read-only sched_* queries only. May be
     * NULL. */
    void (*on_instant)(void *ud, sim_ms_t now, const struct sched_s *engine);
    void *instant_ud;
} sim_options_t;

/* Run scenario `sc` (loaded without errors) and fill `rec` (initialised by the caller, which
 * owns it and frees it with sim_rec_fini even on failure). Events go to opts->events as they
 * happen. Returns ERR_NOMEM, ERR_IO (writing events), or ERR_INVALID when the engine refuses an
 * object the loader accepted (msg names the document). */
err_t sim_run(const sim_scenario_t *sc, const sim_options_t *opts, sim_rec_t *rec, err_msg_t *msg);

/* Write the --summary JSON document for `rec` to `out` (scenario-format.md, "Output"; the
 * computations are defined in docs/simulator.md). ERR_NOMEM, ERR_IO. */
err_t sim_summary_write(const sim_rec_t *rec, FILE *out, err_msg_t *msg);

/* Write the human summary of `rec` to `out`. ERR_NOMEM, ERR_IO. */
err_t sim_human_write(const sim_rec_t *rec, FILE *out, err_msg_t *msg);

/* Write a self-contained HTML report (inline SVG charts, no scripts, no network) for `rec` to
 * `out`; `title` names the scenario (e.g. its file name). ERR_NOMEM, ERR_IO. */
err_t sim_report_write(const sim_rec_t *rec, const char *title, FILE *out, err_msg_t *msg);

#endif
