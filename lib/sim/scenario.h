/* scenario -- load a simulator scenario: a multi-document YAML file of Kubernetes objects with
 * timing annotations (scenario-format.md, "Input"). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SIM_SCENARIO_H
#define SLUICE_SIM_SCENARIO_H

#include "model/node.h"
#include "model/object.h"
#include "sim/vtime.h"
#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SIM_ANN_AT        "sim.sluice.dev/at"
#define SIM_ANN_DELETE_AT "sim.sluice.dev/delete-at"
#define SIM_ANN_RUNTIME   "sim.sluice.dev/runtime"
#define SIM_ANN_VERDICT   "sim.sluice.dev/verdict"  /* AdmissionCheck: its verdicts */
#define SIM_ANN_VERDICTS  "sim.sluice.dev/verdicts" /* Job/Workload: per check, overriding */
/* waitForPodsReady (docs/simulator.md): when a workload's pods are ready after each admission,
 * when one of them fails after that, and when they are ready again; each a duration or "never" */
#define SIM_ANN_PODS_READY_AFTER   "sim.sluice.dev/pods-ready-after"
#define SIM_ANN_PODS_UNREADY_AFTER "sim.sluice.dev/pods-unready-after"
#define SIM_ANN_PODS_RECOVER_AFTER "sim.sluice.dev/pods-recover-after"
/* A pods-* annotation's "never". */
#define SIM_NEVER ((sim_ms_t)-1)

/* One document of the scenario, decoded. */
typedef struct sim_doc_s {
    object_t obj;  /* owned */
    size_t number; /* 1-based position of the document in the file (empty ones count) */
    int line;      /* 1-based line where the document starts */
    char *label;   /* owned: "doc 3 (ClusterQueue cq-a)", the prefix of its messages */
    sim_ms_t at;   /* sim.sluice.dev/at, default 0 */
    bool has_delete_at;
    sim_ms_t delete_at;
    bool has_runtime; /* absent: runs forever once admitted */
    sim_ms_t runtime;
    /* waitForPodsReady (a zeroed document has none of them): since each admission, until its
     * pods are ready (absent: 0, at once); since they were ready, until one fails (absent:
     * never); since then, until they are ready again (absent: never). SIM_NEVER is "never". */
    bool has_pods_ready, has_pods_unready, has_pods_recover;
    sim_ms_t pods_ready_after, pods_unready_after, pods_recover_after;
    size_t prev;  /* index of the earlier document this one updates, SIM_DOC_NONE when none */
    node_t *node; /* owned: a v1 Node (obj.kind is then KIND_UNKNOWN), else NULL */
    /* owned: a Pod of a pod group whose arrival completes the group carries the group's one
     * Workload (obj.u.integ.wl, named after the group: this name), else NULL. The group's other
     * Pods have no workload of their own (obj.u.integ.built false). */
    char *group;
} sim_doc_t;

#define SIM_DOC_NONE ((size_t)-1)

/* The workload of replica `i` of a serving owner admitted per replica (a Deployment, a
 * LeaderWorkerSet: integration_t.per_replica) is named `<name>-<i>`: written into `buf`
 * (SIM_REPLICA_NAME_MAX bytes; a longer name is cut, which validation never lets through). */
#define SIM_REPLICA_NAME_MAX 270
/* At most this many replicas (workloads) per such object: a scenario, not a cluster. */
#define SIM_REPLICAS_MAX 100000
void sim_replica_name(const char *name, int32_t i, char *buf);

typedef struct sim_scenario_s {
    sim_doc_t *docs; /* owned, in file order (documents that were empty are not here) */
    size_t ndocs;
    size_t cap;
    char **errors; /* owned: "doc N (Kind name): path: message", in document order */
    size_t nerrors;
    char **warnings; /* owned: the same shape; each distinct path + message once */
    size_t nwarnings;
    const configuration_t *config; /* borrowed from docs: the Configuration, NULL when none */
} sim_scenario_t;

/* An empty scenario. */
void sim_scenario_init(sim_scenario_t *sc);

/* Release everything; NULL-safe. */
void sim_scenario_fini(sim_scenario_t *sc);

/*
 * Read every document of `f` (streamed: one document's tree at a time) into `sc` (initialised).
 * Each document is decoded, validated with Kueue's rules (as an update of the earlier document it
 * replaces, if any), cross-checked against the others, and checked against the simulator's
 * rules (timing annotations, one Configuration at 0s, unique workload names).
 * Returns ERR_OK when the scenario can run; ERR_INVALID when any document has an error (every
 * error is in sc->errors: a scenario never half-loads); ERR_NOMEM; ERR_IO (msg) on a read error.
 * Warnings are collected either way.
 */
err_t sim_scenario_load(FILE *f, sim_scenario_t *sc, err_msg_t *msg);

/* As sim_scenario_load(), from `len` bytes of memory. */
err_t sim_scenario_load_string(const char *s, size_t len, sim_scenario_t *sc, err_msg_t *msg);

#endif
