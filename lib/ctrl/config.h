/* config -- the operator's configuration: Kueue's Configuration file (YAML), then flags. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_CONFIG_H
#define SLUICE_CTRL_CONFIG_H

#include "hook/limits.h"
#include "model/types.h"
#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * The file is Kueue's config.kueue.x-k8s.io Configuration (v1beta2 or v1beta1), so an existing
 * Kueue controller_manager_config.yaml works. sluice reads from it: namespace, leaderElection
 * (leaderElect, resourceName, leaseDuration, renewDeadline, retryPeriod), webhook (host, port,
 * certDir), health.healthProbeBindAddress, metrics (enableClusterQueueResources,
 * localQueueMetrics.enable), clientConnection (qps, burst),
 * internalCertManagement (enable, webhookServiceName, webhookSecretName), fairSharing,
 * manageJobsWithoutQueueName, managedJobsNamespaceSelector, resources (excludeResourcePrefixes,
 * transformations, quotaCheckStrategy: decoded by lib/model, applied by the engine) and
 * waitForPodsReady (enable [v1beta1],
 * timeout, blockAdmission, recoveryTimeout, requeuingStrategy {timestamp, backoffLimitCount,
 * backoffBaseSeconds, backoffMaxSeconds}) and integrations (frameworks, externalFrameworks,
 * labelKeysToCopy). sluice-only settings live in
 * metadata.annotations so the file stays a valid Kueue Configuration:
 *   sluice.dev/job-resource: GROUP/VERSION/PLURAL   (default batch/v1/jobs)
 *   sluice.dev/log-level:    error|info|debug        (default info)
 *   sluice.dev/audit-log:    PATH                    (default: no audit log file)
 *   sluice.dev/audit-log-max-bytes: N                (default 104857600; 5 rotated files kept)
 *   sluice.dev/webhook-client-ca: PATH               (mutual TLS: callers of the webhooks must
 *                                                     present a certificate from this CA)
 *   sluice.dev/accounting-log: PATH                  (default: none; one JSON line per admission
 *                                                     that ended, docs/accounting.md)
 *   sluice.dev/accounting-log-max-bytes: N           (default 104857600; 5 rotated files kept)
 *   sluice.dev/idle-reclaim: YAML                    (default: off; idle GPU reclaim,
 *                                                     lib/ctrl/idle.h, docs/idle-reclaim.md)
 *   sluice.dev/server-limits: NAME=VALUE,...         (the HTTP servers' connection, body-budget
 *                                                     and timeout limits: lib/hook/limits.h)
 * Command-line flags override the file (see `sluice run --help`).
 */

typedef enum { CTRL_LOG_ERROR = 0, CTRL_LOG_INFO, CTRL_LOG_DEBUG } ctrl_log_level_t;

/* Kueue's waitForPodsReady: the one struct both drivers read (model/waitready.h decodes it). */
typedef pods_ready_config_t ctrl_pods_ready_t;

/* Kueue's integrations section (reference section 6). Each list is owned and NULL-terminated. */
typedef struct ctrl_integrations_s {
    char **frameworks; /* framework names ("batch/job", "jobset.x-k8s.io/jobset"), each a Kueue
                          name; default {"batch/job"}; no duplicates */
    size_t nframeworks;
    char **external; /* externalFrameworks: "Kind.version.group" (objects of these kinds are
                        managed by another controller: their child Jobs get no Workload) */
    size_t nexternal;
    char **label_keys; /* labelKeysToCopy: label keys copied from a job to its Workload */
    size_t nlabel_keys;
} ctrl_integrations_t;

typedef struct ctrl_config_s {
    char *namespace;             /* owned: sluice's namespace (default sluice-system) */
    bool namespace_set;          /* given by the file or a flag (else the pod's own, in-cluster) */
    bool leader_elect;           /* default false when no file, as `sluice run` alone */
    char *lease_name;            /* owned: default sluice.dev */
    char *lease_namespace;       /* owned: leaderElection.resourceNamespace, NULL = namespace */
    uint32_t lease_ms;           /* 15000 */
    uint32_t renew_ms;           /* 10000 */
    uint32_t retry_ms;           /* 2000 */
    char *job_group;             /* owned: "batch" */
    char *job_version;           /* owned: "v1" */
    char *job_resource;          /* owned: "jobs" */
    char *webhook_host;          /* owned: "" = all addresses */
    int webhook_port;            /* 9443; 0 = webhooks off */
    char *cert_dir;              /* owned: NULL = self-managed certificates in a Secret */
    bool internal_certs;         /* internalCertManagement.enable (default true) */
    char *webhook_service;       /* owned: sluice-webhook-service */
    char *webhook_secret;        /* owned: sluice-webhook-server-cert */
    char *webhook_config_prefix; /* owned: base of the webhook configurations' names, derived
                                    by ctrl_config_finish() from the service ("sluice") */
    char *health_host;           /* owned: "" = all addresses */
    int health_port;             /* 8081; 0 = off */
    uint64_t qps_milli;          /* 300000 */
    uint32_t burst;              /* 500 */
    ctrl_log_level_t log_level;
    char *audit_log;              /* owned: audit trail file (JSON lines), NULL = none */
    uint64_t audit_max_bytes;     /* rotate past this size (default 100 MiB) */
    char *webhook_client_ca;      /* owned: client CA file (mutual TLS), NULL = callers unchecked */
    char *acct_log;               /* owned: accounting log file (JSON lines), NULL = none */
    uint64_t acct_max_bytes;      /* rotate past this size (default 100 MiB) */
    struct idle_config_s *idle;   /* owned: idle reclaim (ctrl/idle.h), NULL = off */
    ctrl_pods_ready_t pods_ready; /* waitForPodsReady */
    ctrl_integrations_t integrations;
    /* metrics.enableClusterQueueResources (default false), metrics.localQueueMetrics.enable
     * (default true, as Kueue): the optional families of /metrics */
    bool metrics_cq_resources;
    bool metrics_lq;
    /* metrics.bindAddress: /metrics over HTTPS with TokenReview + SubjectAccessReview there
     * (port 0: off, /metrics is served in plain HTTP on the probe port) */
    char *metrics_host; /* owned: "" = all addresses */
    int metrics_port;
    /* sluice.dev/server-limits: the connection, body-budget and timeout limits of every HTTP
     * server (webhooks, probes, HTTPS /metrics, visibility API); default lib/hook/server.h's */
    hook_limits_t server_limits;
    configuration_t kueue; /* fairSharing, manageJobsWithoutQueueName, namespace selector,
                              resources (valid after ctrl_config_finish()) */
    json_t *doc;           /* owned: the Configuration document applied last, or NULL */
    char *no_effect;       /* owned: the file's fields that sluice run accepts and ignores, comma
                              separated ("metrics, integrations"), or NULL (ctrl_config_finish) */
    char *warnings;        /* owned: other warnings about the file, one "path: message" per line, or
                              NULL (ctrl_config_finish) */

    /* The start-time estimate (docs/observability.md "When will it start"): how often it runs
     * over the whole engine (0: off), how far ahead, and its engine-cycle budget per run. */
    uint32_t estimate_interval_ms; /* 60000 */
    uint32_t estimate_horizon_ms;  /* 86400000 (24 h) */
    uint32_t estimate_max_cycles;  /* 5000 */
} ctrl_config_t;

/* Defaults: Kueue's, with sluice's names (namespace sluice-system, Lease sluice.dev, Service
 * sluice-webhook-service, Secret sluice-webhook-server-cert), no leader election, batch/v1 jobs.
 * NULL-safe
 * against OOM: ERR_NOMEM leaves `cfg` safe to ctrl_config_fini(). */
err_t ctrl_config_init(ctrl_config_t *cfg, err_msg_t *msg);

/* Release what `cfg` owns; NULL-safe. */
void ctrl_config_fini(ctrl_config_t *cfg);

/* Apply the Configuration document `root` (borrowed; decoded JSON/YAML) over `cfg`. Errors name
 * the field path ("leaderElection.leaseDuration: ..."). */
err_t ctrl_config_apply(ctrl_config_t *cfg, json_t *root, err_msg_t *msg);

/* Read the YAML (or JSON) Configuration file at `path` ("-": standard input) and apply it. */
err_t ctrl_config_load(ctrl_config_t *cfg, const char *path, err_msg_t *msg);

/* Decode the Kueue part of the configuration with the final namespace (flags applied): the
 * default managedJobsNamespaceSelector excludes kube-system and that namespace. */
err_t ctrl_config_finish(ctrl_config_t *cfg, err_msg_t *msg);

/* Set the Job resource from "GROUP/VERSION/PLURAL" ("batch/v1/jobs"). */
err_t ctrl_config_set_job_resource(ctrl_config_t *cfg, const char *text, err_msg_t *msg);

/* Parse a Go duration made of whole units ("15s", "500ms", "2m", "1h") into milliseconds. */
err_t ctrl_duration_ms(const char *s, uint32_t *out, err_msg_t *msg);

/* Parse a bind address ":8081", "0.0.0.0:8081", "0" (off) into host (owned, "" = any) and port. */
err_t ctrl_bind_address(const char *s, char **host, int *port, err_msg_t *msg);

/* Set waitForPodsReady.timeout from a duration ("3s", "30m"; recoveryTimeout follows unless the
 * file set it); "0" or "false" turns waitForPodsReady off. */
err_t ctrl_config_set_pods_ready_timeout(ctrl_config_t *cfg, const char *text, err_msg_t *msg);

/* Set the audit log's maximum size from decimal text (bytes, >= 4096). */
err_t ctrl_config_set_audit_max(ctrl_config_t *cfg, const char *text, err_msg_t *msg);

/* Set the accounting log's maximum size from decimal text (bytes, >= 4096). */
err_t ctrl_config_set_accounting_max(ctrl_config_t *cfg, const char *text, err_msg_t *msg);

/* The start-time estimate's interval ("60s"; "0" turns it off), horizon ("24h", > 0) and cycle
 * budget per run (decimal, 1..1000000000). ERR_INVALID names what is wrong. */
err_t ctrl_config_set_estimate_interval(ctrl_config_t *cfg, const char *text, err_msg_t *msg);
err_t ctrl_config_set_estimate_horizon(ctrl_config_t *cfg, const char *text, err_msg_t *msg);
err_t ctrl_config_set_estimate_max_cycles(ctrl_config_t *cfg, const char *text, err_msg_t *msg);

/* Is `name` one of Kueue's integrations.frameworks names (whether sluice has a kind for it or
 * not)? */
bool ctrl_framework_known(const char *name);

/* Is integrations.frameworks naming `name`? */
bool ctrl_framework_enabled(const ctrl_config_t *cfg, const char *name);

/* Parse "error", "info" or "debug". */
err_t ctrl_log_level_parse(const char *s, ctrl_log_level_t *out, err_msg_t *msg);

#endif
