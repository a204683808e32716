/* idle -- idle GPU reclaim: its configuration, the policy of a queue, the state of a Workload. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_IDLE_H
#define SLUICE_CTRL_IDLE_H

#include "model/types.h"
#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Idle reclaim (docs/idle-reclaim.md) deactivates admitted Workloads whose GPUs have done
 * nothing for a while, by the GPU metrics the cluster already exports (DCGM exporter's
 * DCGM_FI_DEV_GPU_UTIL read from a Prometheus-compatible query API). This header holds the pure
 * parts, which the tests drive without a loop:
 *
 *   the configuration: YAML in the Configuration's annotation sluice.dev/idle-reclaim (so the
 *   file stays a valid Kueue Configuration) -- the endpoint, the query's names, default policy
 *   values and policies per ClusterQueue or LocalQueue;
 *
 *   a queue's policy from its annotations (sluice.dev/idle-for, idle-threshold,
 *   idle-warn-before on a ClusterQueue or a LocalQueue);
 *
 *   the state machine of one admitted Workload, stepped once per query with what the query
 *   said about its GPUs:
 *
 *     ACTIVE -(idle sample)-> IDLE since t -(t + idleFor - warnBefore)-> WARNED at w
 *       -(t + idleFor reached, and w + warnBefore)-> DEACTIVATE
 *     any state -(busy sample, or data missing / incomplete / undecodable)-> ACTIVE
 *
 *   Missing data never moves a Workload towards deactivation: it restarts the clock.
 */

/* Annotation of the Configuration that holds the YAML section. */
#define IDLE_CONFIG_ANNOTATION "sluice.dev/idle-reclaim"
/* Annotations of a ClusterQueue or LocalQueue: the policy of its Workloads. */
#define IDLE_ANN_FOR       "sluice.dev/idle-for"
#define IDLE_ANN_THRESHOLD "sluice.dev/idle-threshold"
#define IDLE_ANN_WARN      "sluice.dev/idle-warn-before"
/* The Workload condition of a warning, and the eviction reason of the deactivation. */
#define IDLE_CONDITION "sluice.dev/Idle"
#define IDLE_REASON    "DeactivatedDueToIdleGPUs"

/* Utilisation is kept in thousandths of a percent: 100% is 100000. */
#define IDLE_MILLI_MAX 100000u

/* When a Workload counts as idle and what happens then. */
typedef struct idle_policy_s {
    int64_t idle_ms;          /* idle this long -> deactivated (> 0) */
    int64_t warn_ms;          /* warned at least this long before (0 <= warn_ms < idle_ms) */
    uint32_t threshold_milli; /* idle while every GPU's utilisation is at most this */
    bool warn_set;            /* warn_ms given (else idle_ms / 4 applies) */
} idle_policy_t;

/* A policy of the configuration for one queue. */
typedef struct idle_rule_s {
    char *cluster_queue; /* owned: a ClusterQueue name, or NULL */
    char *local_queue;   /* owned: a LocalQueue "namespace/name", or NULL */
    idle_policy_t policy;
} idle_rule_t;

/* The configuration section (all strings owned). */
typedef struct idle_config_s {
    char *url;              /* Prometheus query API base, "http(s)://host:port[/prefix]", no '/' at
                               the end */
    char *token_file;       /* bearer token re-read on change, or NULL */
    char *ca_file;          /* CA bundle for https, or NULL (system CAs) */
    bool insecure;          /* insecureSkipTLSVerify */
    uint32_t timeout_ms;    /* per query: 10s */
    size_t max_bytes;       /* largest response accepted: 8 MiB */
    int64_t interval_ms;    /* between queries: 1m, >= 10s */
    int64_t window_ms;      /* the query's max_over_time range: >= interval, default
                               max(interval, 1m) (it must hold a scrape of the exporter) */
    char *metric;           /* DCGM_FI_DEV_GPU_UTIL */
    char *pod_label;        /* label of the series naming the pod: "pod" */
    char *namespace_label;  /* "namespace" */
    char *gpu_label;        /* label telling a pod's GPUs apart: "gpu" */
    char *resource;         /* the GPU resource of pods: "nvidia.com/gpu" */
    idle_policy_t defaults; /* for queue annotations that leave a value out */
    idle_rule_t *rules;     /* owned */
    size_t nrules;
} idle_config_t;

/* The section from `text` (YAML or JSON). Errors name the field path inside the section
 * ("policies[1].idleFor: ..."); ERR_NOMEM. *out is a new config (idle_config_free). */
err_t idle_config_parse(const char *text, size_t len, idle_config_t **out, err_msg_t *msg);

/* The section from a decoded document `doc` (borrowed), as idle_config_parse(). */
err_t idle_config_from_json(const json_t *doc, idle_config_t **out, err_msg_t *msg);

/* Release `cfg`; NULL-safe. */
void idle_config_free(idle_config_t *cfg);

/* The rule of the configuration for LocalQueue `lq_key` ("ns/name", may be NULL), else for
 * ClusterQueue `cq` (may be NULL): borrowed, NULL when none. */
const idle_policy_t *idle_config_rule(const idle_config_t *cfg, const char *lq_key, const char *cq);

/* A queue's policy from its annotations `ann`: *found false when it has no sluice.dev/idle-for
 * (the other two alone do nothing); values left out come from `defaults`. ERR_INVALID names the
 * annotation ("sluice.dev/idle-threshold: ..."); *out is untouched on failure. */
err_t idle_policy_from_annotations(const kv_list_t *ann, const idle_policy_t *defaults,
                                   idle_policy_t *out, bool *found, err_msg_t *msg);

/* The warning lead of `p`: warn_ms when given, else idle_ms / 4. */
int64_t idle_policy_warn_ms(const idle_policy_t *p);

/* Parse a percentage ("5", "2.5", "0.125") into thousandths in [0, IDLE_MILLI_MAX]: at most
 * three decimals, no sign, no exponent. ERR_INVALID otherwise. */
err_t idle_percent_parse(const char *s, uint32_t *out, err_msg_t *msg);

/* Format thousandths of a percent for people ("5%", "2.5%", "0.125%") into buf (>= 16 bytes). */
char *idle_percent_format(uint32_t milli, char *buf, size_t n);

/* ---- one Workload ------------------------------------------------------------------------ */

/* What one query said about a Workload's GPUs. */
typedef enum {
    IDLE_SAMPLE_UNKNOWN = 0, /* no answer, or some GPU of it without a decodable series */
    IDLE_SAMPLE_BUSY,        /* some GPU above the threshold */
    IDLE_SAMPLE_IDLE,        /* every GPU at or below the threshold */
} idle_sample_kind_t;

typedef struct idle_sample_s {
    idle_sample_kind_t kind; /* set by idle_sample_end() */
    uint32_t gpus;           /* GPUs of its running pods */
    uint32_t series;         /* series seen for them */
    uint32_t max_milli;      /* the highest utilisation among them over the query's window */
    bool incomplete;         /* a pod with fewer series than GPUs, or an undecodable series */
} idle_sample_t;

/* Per-Workload state (zero: active). */
typedef struct idle_state_s {
    int64_t since_ms;   /* first idle sample of the current idle stretch, 0: not idle */
    int64_t warned_ms;  /* the warning of this stretch, 0: none yet */
    uint32_t max_milli; /* the highest utilisation seen during the stretch */
} idle_state_t;

typedef enum {
    IDLE_ACT_NONE = 0,
    IDLE_ACT_WARN,       /* write the warning (Event + condition) */
    IDLE_ACT_CLEAR,      /* the stretch ended (busy or unknown): take the warning back */
    IDLE_ACT_DEACTIVATE, /* spec.active=false */
} idle_action_t;

/* Step `st` with sample `s` taken at `now_ms` under policy `p`: the action to take. A warning
 * comes first, at idle time idle_ms - warn; deactivation at idle_ms, and never sooner than warn
 * after the warning (a single warning and one more idle sample when warn is 0). */
idle_action_t idle_step(idle_state_t *st, const idle_policy_t *p, const idle_sample_t *s,
                        int64_t now_ms);

/* Add one pod's part to sample `s` (start from all zero): a pod holding `gpus` GPUs whose
 * answer had `series` series, the highest `max_milli`, `bad` when one was undecodable. */
void idle_sample_add(idle_sample_t *s, uint32_t gpus, uint32_t series, uint32_t max_milli,
                     bool bad);

/* Classify `s` once every pod is in, against `threshold`: BUSY when a series is above it (a GPU
 * in use is proof enough, whatever else is missing), else UNKNOWN when the Workload has no GPU
 * pod or is incomplete, else IDLE. */
void idle_sample_end(idle_sample_t *s, uint32_t threshold);

#endif
