/* ctrl -- the operator: informers feed the engine, decisions become API writes. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_H
#define SLUICE_CTRL_H

#include "ctrl/config.h"
#include "ctrl/problems.h"
#include "kube/client.h"
#include "model/object.h"
#include "obs/metrics.h"
#include "sched/sched.h"
#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

/*
 * One ctrl_t runs on one libuv loop. It owns the engine and one informer per kind (Namespace,
 * ResourceFlavor, Cohort, ClusterQueue, LocalQueue, WorkloadPriorityClass, PriorityClass,
 * Workload, and each job kind integrations.frameworks enables: the configured Job resource for
 * batch/job, JobSet, ...).
 *
 *   start -> LIST every kind -> (all synced) feed the engine in dependency order: Workloads
 *   holding status.admission + QuotaReserved are taken as admitted (restart rebuild) ->
 *   reconcile every Job and Workload -> leader? run cycles, write decisions.
 *
 * Nothing is written before every cache has synced, and nothing at all unless leader (a standby
 * keeps its caches and engine fed). An admission is written to workloads/status first, with the
 * resourceVersion the decision was made on; only a Workload object that shows the admission
 * (from the API, never from memory) makes its Job start.
 */

typedef struct ctrl_s ctrl_t;

/* Kinds the controller watches, in the order the engine is fed after the initial LISTs. */
typedef enum {
    CTRL_NAMESPACE = 0,
    CTRL_TOPOLOGY, /* Topologies (topology-aware scheduling); optional: a server without the
                      CRD runs with TAS off (ctrl.c feed_queues()) */
    CTRL_FLAVOR,
    CTRL_COHORT,
    CTRL_CQ,
    CTRL_LQ,
    CTRL_WPC,
    CTRL_PC,
    CTRL_AC, /* AdmissionChecks */
    CTRL_WORKLOAD,
    CTRL_JOB, /* the first enabled job kind (the framework table's order: batch/job first);
                 the others follow as CTRL_JOB + 1, ... */
    CTRL__KINDS = CTRL_JOB + 32 /* room for every kind of the table */
} ctrl_kind_t;

/* Counters for logs and tests. */
typedef struct ctrl_stats_s {
    uint64_t admitted;        /* admission writes that succeeded */
    uint64_t admit_conflicts; /* admission writes refused (conflict/error): engine reverted */
    uint64_t admit_unknown;   /* admission writes without an answer: verified with a GET */
    uint64_t undone;          /* victims admitted and preempted in one cycle: nothing written */
    uint64_t evicted;         /* eviction writes that succeeded */
    uint64_t released;        /* quota releases after eviction */
    uint64_t started;         /* Jobs unsuspended */
    uint64_t stopped;         /* Jobs suspended */
    uint64_t created;         /* Workloads created for Jobs */
    uint64_t finished;        /* Workloads marked Finished */
    uint64_t write_errors;    /* failed writes of any kind */
    uint64_t write_conflicts; /* of those, refused with 409 Conflict or AlreadyExists (the
                                 optimistic-concurrency outcomes, decided again) */
    uint64_t passes;          /* reconcile passes */
    uint64_t cycles;          /* engine cycles (sched_cycle calls) */
    uint64_t decisions;       /* engine decisions written or queued */
    uint64_t engine_ns;       /* CPU-clock time inside sched_cycle */
    uint64_t writes[4];       /* writes started per class: admission, status, explain, event */
    uint64_t events_dropped;  /* Events over their budget */
    uint64_t acct_written;    /* accounting records written (acctlog.c) */
    uint64_t acct_failed;     /* accounting records that could not be written */
} ctrl_stats_t;

/* Log sink: `level` is a ctrl_log_level_t. */
typedef void (*ctrl_log_fn)(void *data, int level, const char *text);

/* A controller on `client`'s loop with `cfg` (borrowed; both must outlive it). `log` may be
 * NULL (stderr). Nothing runs until ctrl_start(). */
err_t ctrl_new(kube_client_t *client, const ctrl_config_t *cfg, ctrl_log_fn log, void *log_data,
               ctrl_t **out, err_msg_t *msg);

/* Start the informers. */
err_t ctrl_start(ctrl_t *c, err_msg_t *msg);

/* Leader or not: only a leader writes (admissions, Job changes, statuses, events). Becoming
 * leader schedules a full reconcile. */
void ctrl_set_leader(ctrl_t *c, bool leader);

/* Stop admitting and writing at once (SIGTERM, lost lease); caches keep running until close. */
void ctrl_stop_writes(ctrl_t *c);

/* Every informer has completed its first LIST and the engine has been fed. */
bool ctrl_synced(const ctrl_t *c);

/* Writes still in flight. */
size_t ctrl_inflight(const ctrl_t *c);

/* Counters so far. */
ctrl_stats_t ctrl_stats(const ctrl_t *c);

/* The engine (borrowed), e.g. for the webhook's quota-decrease warnings. */
const sched_t *ctrl_engine(const ctrl_t *c);

/* The cached queue-side object of `kind` "ns/name" (cluster-scoped: ns NULL), decoded
 * (borrowed), or NULL when absent or undecodable. Not for Workloads and Jobs. */
const object_t *ctrl_get(const ctrl_t *c, ctrl_kind_t kind, const char *ns, const char *name);

/* The open problems of the operator's surroundings (borrowed, owned by the controller): missing
 * CRDs, RBAC denials, an unreachable API server, webhook certificates. Other parts of `sluice
 * run` (webhooks, leader election) report into it too. */
problems_t *ctrl_problems(ctrl_t *c);

/* Record the outcome of a request made for sluice (`verb` on `rt`/`sub`, see kube/problem.h): a
 * failure that needs a person (RBAC, CRD, credentials, network) becomes a problem logged with
 * its remedy; a success clears what it disproves. */
void ctrl_note_result(ctrl_t *c, const kube_result_t *res, const char *verb,
                      const kube_resource_t *rt, const char *sub);

/* Ready (every cache synced and the engine fed)? When not, `buf` (size `n`) says what is
 * missing, e.g. "caches not synced: clusterqueues.kueue.x-k8s.io\n". */
bool ctrl_readiness(const ctrl_t *c, char *buf, size_t n);

/* Append /metrics in the Prometheus text format to `out`: Kueue's metrics and sluice's, the
 * gauges computed now from the engine and caches (docs/observability.md). ERR_NOMEM. */
err_t ctrl_metrics_render(ctrl_t *c, metrics_buf_t *out);

/* Count a webhook request answered on `path` with `status` and response `body` (the result is
 * read from it: allowed, denied, error). */
void ctrl_metrics_webhook(ctrl_t *c, const char *path, int status, const char *body, size_t len);

/* Close informers and timers, then free; `on_closed` (may be NULL) fires once done. */
void ctrl_close(ctrl_t *c, void (*on_closed)(void *data), void *data);

#endif
