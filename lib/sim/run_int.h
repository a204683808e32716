/* run_int -- internals shared by run.c (the clock) and apply.c (object changes). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SIM_RUN_INT_H
#define SLUICE_SIM_RUN_INT_H

#include "model/waitready.h"
#include "sched/sched.h"
#include "sim/events.h"
#include "sim/record.h"
#include "sim/scenario.h"
#include "util/hmap.h"
#include "verify/verify.h"

#include <stdbool.h>
#include <stdint.h>

/* One scheduled object change: document `doc` is applied (or deleted) at `t`. */
typedef struct sim_change_s {
    sim_ms_t t;
    size_t doc;
    bool del;
} sim_change_t;

/* A running workload's runtime ends at `t`; valid while its generation is still `gen`. */
typedef struct sim_finish_s {
    sim_ms_t t;
    size_t wl; /* record index: creation order breaks ties */
    uint32_t gen;
    /* not a finish but the verdict of the workload's admission checks (docs/simulator.md,
     * "Admission checks"), due at `t` after its quota reservation */
    bool is_verdict;
    check_state_t verdict;
    int64_t requeue_s; /* a Retry verdict: its checks' requeueAfterSeconds, -1 for none */
} sim_finish_t;

/* A waitForPodsReady timer of workload `wl` (ready.c); valid while its generation is `gen`. */
typedef struct sim_timer_s {
    sim_ms_t t;
    size_t wl;
    uint32_t gen;
    int kind; /* ready.c's timer_kind_t */
} sim_timer_t;

/* Run-only state of a workload, parallel to rec->wls. */
typedef struct sim_wlrun_s {
    size_t doc;       /* document of its current version */
    sim_ms_t runtime; /* -1 = runs forever */
    uint32_t gen;     /* bumped on every admission and stop: stale finish entries are dropped */
    uint64_t seq;     /* queue-order tie-break: its first document's position + 1 */
    uint32_t reservations; /* quota reservations with admission checks so far */
    /* waitForPodsReady (ready.c): the pods of the current admission, when it was admitted and
     * when they stopped being ready; PodsReady timeouts so far (Kueue's requeueState.count),
     * the last one's time, and whether the workload waits out its backoff */
    waitready_pods_t pods;
    sim_ms_t admitted_at, unready_at, evicted_at;
    int32_t requeues;
    bool held;
    /* when the last eviction was by a Retry admission check (-1: it was not): Kueue's
     * queue-order timestamp is then that eviction's time */
    sim_ms_t check_evicted_at;
    /* quota reserved, its admission checks' verdict not yet due: not admitted, so no
     * waitForPodsReady timers and not counted by blockAdmission */
    bool awaiting_checks;
} sim_wlrun_t;

typedef struct acct_log_s acct_log_t;
typedef struct sim_acct_s sim_acct_t;

typedef struct sim_run_s {
    const sim_scenario_t *sc; /* borrowed */
    sim_rec_t *rec;           /* borrowed */
    sched_t *s;               /* owned */
    verify_t *verify;         /* owned: every decision is checked against it */
    sim_events_t ev;
    sched_decisions_t dec;
    sim_change_t *changes; /* owned, sorted by (t, doc, apply before delete) */
    size_t nchanges, next_change, last_wl_change;
    sim_finish_t *fin; /* owned: binary min-heap */
    size_t nfin, capfin;
    sim_wlrun_t *wr; /* owned */
    size_t capwr;
    size_t done;    /* workloads finished, deactivated or deleted */
    char **touched; /* owned: ClusterQueues where something happened this instant */
    size_t ntouched, captouched;
    util_hmap_t touched_index;
    size_t *sample; /* owned: workloads whose wait reason to read this instant */
    size_t nsample, capsample;
    util_hmap_t lq_live;  /* "ns/name" of LocalQueues that exist now (value 1) or not (0) */
    util_hmap_t wpc_live; /* WorkloadPriorityClass name -> live document index + 1, 0 = gone */
    util_hmap_t pc_live;  /* PriorityClass name -> live document index + 1, 0 = gone */
    util_hmap_t ns_live;  /* Namespace name -> live document index + 1, 0 = gone */
    util_hmap_t ac_live;  /* AdmissionCheck name -> live document index + 1, 0 = gone */
    size_t *pc_docs;      /* owned: documents holding PriorityClasses, in file order */
    size_t npc_docs;
    sim_acct_t *acct;       /* owned: the accounting observer (acct.c), NULL without a log */
    pods_ready_config_t pr; /* waitForPodsReady: the Configuration's, or Kueue's defaults */
    sim_timer_t *tim;       /* owned: binary min-heap of waitForPodsReady timers (ready.c) */
    size_t ntim, captim;
} sim_run_t;

/* Apply change `c` at `now`: upsert or delete its object in the engine, create/update/delete
 * workloads (with their events and records). Sets *queues_changed when LocalQueues,
 * ClusterQueues or a workload's queue changed. */
err_t sim__run_apply(sim_run_t *r, const sim_change_t *c, sim_ms_t now, bool *queues_changed,
                     err_msg_t *msg);

/* Holder index of ClusterQueue `cq` (created on first use) into *out; SIM_NONE for NULL/"".
 * ERR_NOMEM. */
err_t sim__run_holder(sim_run_t *r, const char *cq, size_t *out);

/* Make r->wr as long as rec->wls. */
err_t sim__run_wr_grow(sim_run_t *r);

/* Workload `w`'s runtime ends at `end` (its current admission). ERR_NOMEM. */
err_t sim__run_finish_at(sim_run_t *r, size_t w, sim_ms_t end);

/* Something happened in ClusterQueue `cq` this instant ("" and NULL: nothing to note). */
err_t sim__run_touch(sim_run_t *r, const char *cq);

/* Upsert workload `w` again, built from its current document: queue-order timestamp `created`
 * (for an inactive one: the release time), in requeue backoff when `hold`, deactivated (its
 * quota freed) when !`active`. */
err_t sim__run_wl_reupsert(sim_run_t *r, size_t w, sim_ms_t created, bool hold, bool active,
                           err_msg_t *msg);

/* ---- waitForPodsReady (ready.c) ---- */

/* Workload `w` was admitted at `t`: its pods' timers (and its runtime once they are ready). */
err_t sim__ready_admitted(sim_run_t *r, size_t w, sim_ms_t t);
/* Fire the timers due at `t`: readiness changes, timeouts (evictions, deactivations), requeues. */
err_t sim__ready_due(sim_run_t *r, sim_ms_t t, err_msg_t *msg);
/* The time of the next live timer, INT64_MAX when none. */
sim_ms_t sim__ready_next(sim_run_t *r);
/* Workload `w`, evicted at `t` by a Retry check that asked for `requeue_ms`, waits that long
 * out of its queue (held) before a Requeued BackoffFinished event queues it again. */
err_t sim__ready_check_backoff(sim_run_t *r, size_t w, sim_ms_t t, sim_ms_t requeue_ms,
                               err_msg_t *msg);
/* blockAdmission: is some admitted workload's pods not ready? Then no cycle runs. */
bool sim__ready_blocked(const sim_run_t *r);
/* The queue-order timestamp of workload `w`: its submission, or after a PodsReady timeout the
 * requeuingStrategy's (waitready_queue_ts()). */
sim_ms_t sim__ready_queue_ts(const sim_run_t *r, size_t w);

/* Read workload `w`'s wait reason at the end of this instant. */
err_t sim__run_sample_later(sim_run_t *r, size_t w);

/* The accounting observer (acct.c): hooks into `rec` and writes one record per ended admission
 * to `log` (NULL: no observer, NULL returned); virtual time 0 is Unix ms `epoch_ms`. Out of
 * memory is kept as the log's failure (acct_log_close() reports it). */
sim_acct_t *sim__acct_new(acct_log_t *log, const sched_t *s, sim_rec_t *rec, int64_t epoch_ms);
/* Unhook from `rec` and free; NULL-safe. */
void sim__acct_free(sim_acct_t *a, sim_rec_t *rec);

/* report_graph.c: the queue graph of `sc` (its ResourceFlavors, ClusterQueues, Cohorts and
 * LocalQueues as first defined) drawn by lib/graph as one inline <svg> element for the report,
 * malloc'ed into *out. ERR_NOMEM. */
err_t sim__graph_svg(const sim_scenario_t *sc, char **out, err_msg_t *msg);

#endif
