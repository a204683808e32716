/* config -- the operator's configuration: Kueue's Configuration file (YAML), then flags. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/config.h"

#include "ctrl/idle.h"
#include "model/diag.h"
#include "model/jsonx.h"
#include "model/names.h"
#include "model/object.h"
#include "model/waitready.h"
#include "model/yaml.h"
#include "sched/sched.h"
#include "util/duration.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Replace owned string *dst with a copy of `s`. */
static err_t set_str(char **dst, const char *s, err_msg_t *msg)
{
    char *c = strdup(s);

    if (c == NULL)
        return err_set(msg, ERR_NOMEM, "configuration: out of memory");
    free(*dst);
    *dst = c;
    return ERR_OK;
}

/* ---- integrations ------------------------------------------------------------------------ */

/* Kueue's framework names (reference section 6, integrations.frameworks): what the file may
 * name. Which of them sluice has a kind for is lib/jobs' table (jobs_kind_named()); the others
 * are accepted and reported by the operator as not supported yet. */
static const char *const kueue_frameworks[] = {
    "batch/job",
    "jobset.x-k8s.io/jobset",
    "kubeflow.org/mpijob",
    "kubeflow.org/paddlejob",
    "kubeflow.org/pytorchjob",
    "kubeflow.org/tfjob",
    "kubeflow.org/xgboostjob",
    "kubeflow.org/jaxjob",
    "trainer.kubeflow.org/trainjob",
    "ray.io/rayjob",
    "ray.io/raycluster",
    "ray.io/rayservice",
    "workload.codeflare.dev/appwrapper",
    "sparkoperator.k8s.io/sparkapplication",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
    NULL,
};

bool ctrl_framework_known(const char *name)
{
    for (size_t i = 0; kueue_frameworks[i] != NULL; i++)
        if (strcmp(kueue_frameworks[i], name) == 0)
            return true;
    return false;
}

bool ctrl_framework_enabled(const ctrl_config_t *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->integrations.nframeworks; i++)
        if (strcmp(cfg->integrations.frameworks[i], name) == 0)
            return true;
    return false;
}

static void integrations_fini(ctrl_integrations_t *in)
{
    strv_free(in->frameworks, in->nframeworks);
    strv_free(in->external, in->nexternal);
    strv_free(in->label_keys, in->nlabel_keys);
    memset(in, 0, sizeof(*in));
}

/* A NULL-terminated copy of the strings of array `a` (n of them) into *out. */
static err_t strv_from(const json_t *a, char ***out, size_t *n, err_msg_t *msg)
{
    size_t len = json_array_size(a);
    char **v = calloc(len + 1, sizeof(*v));

    if (v == NULL)
        return err_set(msg, ERR_NOMEM, "configuration: out of memory");
    for (size_t i = 0; i < len; i++) {
        v[i] = strdup(json_string_value(json_array_get(a, i)));
        if (v[i] == NULL) {
            strv_free(v, i);
            return err_set(msg, ERR_NOMEM, "configuration: out of memory");
        }
    }
    *out = v;
    *n = len;
    return ERR_OK;
}

/* Kueue's default: frameworks ["batch/job"], nothing else. */
static err_t integrations_default(ctrl_integrations_t *in, err_msg_t *msg)
{
    ctrl_integrations_t d = {0};

    d.frameworks = calloc(2, sizeof(char *));
    d.external = calloc(1, sizeof(char *));
    d.label_keys = calloc(1, sizeof(char *));
    if (d.frameworks != NULL)
        d.frameworks[0] = strdup("batch/job");
    if (d.frameworks == NULL || d.frameworks[0] == NULL || d.external == NULL ||
        d.label_keys == NULL) {
        free(d.frameworks != NULL ? d.frameworks[0] : NULL);
        free(d.frameworks);
        free(d.external);
        free(d.label_keys);
        return err_set(msg, ERR_NOMEM, "configuration: out of memory");
    }
    d.nframeworks = 1;
    integrations_fini(in);
    *in = d;
    return ERR_OK;
}

/* `a` (at `path`) is absent or an array of strings, each accepted by `check` (which names the
 * problem after "path[i]: ", or returns NULL). */
static err_t string_list(const json_t *a, const char *path,
                         const char *(*check)(const char *s, char *why, size_t n), err_msg_t *msg)
{
    char why[200];

    if (a == NULL || json_is_null(a))
        return ERR_OK;
    if (!json_is_array(a))
        return err_set(msg, ERR_INVALID, "%s: must be a list of strings", path);
    for (size_t i = 0; i < json_array_size(a); i++) {
        const char *s = json_string_value(json_array_get(a, i)), *bad;
        if (s == NULL)
            return err_set(msg, ERR_INVALID, "%s[%zu]: must be a string", path, i);
        bad = check(s, why, sizeof(why));
        if (bad != NULL)
            return err_set(msg, ERR_INVALID, "%s[%zu]: %s", path, i, bad);
        for (size_t j = 0; j < i; j++)
            if (strcmp(json_string_value(json_array_get(a, j)), s) == 0)
                return err_set(msg, ERR_INVALID, "%s[%zu]: Duplicate value: \"%.100s\"", path, i,
                               s);
    }
    return ERR_OK;
}

static const char *check_framework(const char *s, char *why, size_t n)
{
    if (ctrl_framework_known(s))
        return NULL;
    snprintf(why, n,
             "Unsupported value: \"%.64s\": not a Kueue framework name (batch/job, "
             "jobset.x-k8s.io/jobset, kubeflow.org/pytorchjob, ray.io/rayjob, pod, ...)",
             s);
    return why;
}

/* Kueue parses externalFrameworks with schema.ParseKindArg: "Kind.version.group", the group
 * being everything after the second dot. */
static const char *check_external(const char *s, char *why, size_t n)
{
    const char *d1 = strchr(s, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;

    if (d1 != NULL && d2 != NULL && d1 > s && d2 > d1 + 1 && d2[1] != '\0')
        return NULL;
    snprintf(why, n,
             "Invalid value: \"%.64s\": must be Kind.version.group (e.g. "
             "AppWrapper.v1beta2.workload.codeflare.dev)",
             s);
    return why;
}

static const char *check_label_key(const char *s, char *why, size_t n)
{
    names_msgs_t m;

    names_label_key(s, &m);
    if (m.n == 0)
        return NULL;
    snprintf(why, n, "Invalid value: \"%.64s\": %s", s, m.text[0]);
    return why;
}

/* Kueue's DependencyList: the serving kinds are admitted through their pods. */
static err_t check_dependencies(const json_t *fw, err_msg_t *msg)
{
    static const char *const deps[][2] = {{"deployment", "pod"},
                                          {"statefulset", "pod"},
                                          {"leaderworkerset.x-k8s.io/leaderworkerset", "pod"}};

    for (size_t d = 0; d < sizeof(deps) / sizeof(deps[0]); d++) {
        bool has = false, dep = false;
        for (size_t i = 0; i < json_array_size(fw); i++) {
            const char *s = json_string_value(json_array_get(fw, i));
            has = has || strcmp(s, deps[d][0]) == 0;
            dep = dep || strcmp(s, deps[d][1]) == 0;
        }
        if (has && !dep)
            return err_set(msg, ERR_INVALID,
                           "integrations.frameworks: \"%s\" requires \"%s\" to be enabled too",
                           deps[d][0], deps[d][1]);
    }
    return ERR_OK;
}

/* integrations of the Configuration `root`: replaces what `cfg` had only when it is valid. */
static err_t apply_integrations(ctrl_config_t *cfg, const json_t *root, bool v1beta1,
                                err_msg_t *msg)
{
    static const char *const fields[] = {"frameworks", "externalFrameworks", "labelKeysToCopy",
                                         "podOptions", NULL};
    const json_t *in = json_object_get(root, "integrations"), *fw, *ext, *keys;
    ctrl_integrations_t d = {0};
    json_t *none = NULL;
    err_t rc;

    if (in == NULL || json_is_null(in))
        return ERR_OK;
    if (!json_is_object(in))
        return err_set(msg, ERR_INVALID, "integrations: must be an object");
    if ((rc = jsonx_known_fields(in, fields, "integrations", msg)))
        return rc;
    if (!v1beta1 && json_object_get(in, "podOptions") != NULL)
        return err_set(msg, ERR_INVALID, "integrations.podOptions: unknown field (v1beta1 only)");
    fw = json_object_get(in, "frameworks");
    ext = json_object_get(in, "externalFrameworks");
    keys = json_object_get(in, "labelKeysToCopy");
    if ((rc = string_list(fw, "integrations.frameworks", check_framework, msg)) ||
        (rc = string_list(ext, "integrations.externalFrameworks", check_external, msg)) ||
        (rc = string_list(keys, "integrations.labelKeysToCopy", check_label_key, msg)) ||
        (rc = check_dependencies(fw, msg)))
        return rc;
    if (json_array_size(fw) == 0) { /* Kueue: an empty list means the default */
        if ((rc = integrations_default(&d, msg)))
            return rc;
        strv_free(d.external, d.nexternal);
        strv_free(d.label_keys, d.nlabel_keys);
        d.external = d.label_keys = NULL;
        d.nexternal = d.nlabel_keys = 0;
    } else if ((rc = strv_from(fw, &d.frameworks, &d.nframeworks, msg))) {
        return rc;
    }
    none = json_array();
    if (none == NULL)
        rc = err_set(msg, ERR_NOMEM, "configuration: out of memory");
    if (rc == ERR_OK)
        rc = strv_from(json_is_array(ext) ? ext : none, &d.external, &d.nexternal, msg);
    if (rc == ERR_OK)
        rc = strv_from(json_is_array(keys) ? keys : none, &d.label_keys, &d.nlabel_keys, msg);
    json_decref(none);
    if (rc != ERR_OK) {
        integrations_fini(&d);
        return rc;
    }
    integrations_fini(&cfg->integrations);
    cfg->integrations = d;
    return ERR_OK;
}

err_t ctrl_config_init(ctrl_config_t *cfg, err_msg_t *msg)
{
    err_t rc = ERR_OK;

    memset(cfg, 0, sizeof(*cfg));
    cfg->lease_ms = 15000;
    cfg->renew_ms = 10000;
    cfg->retry_ms = 2000;
    cfg->webhook_port = 9443;
    cfg->internal_certs = true;
    cfg->health_port = 8081;
    cfg->metrics_lq = true;
    cfg->qps_milli = 300000;
    cfg->burst = 500;
    cfg->log_level = CTRL_LOG_INFO;
    cfg->audit_max_bytes = 100u << 20;
    cfg->acct_max_bytes = 100u << 20;
    cfg->estimate_interval_ms = 60000;
    cfg->estimate_horizon_ms = 24u * 3600 * 1000;
    cfg->estimate_max_cycles = 5000;
    hook_limits_default(&cfg->server_limits);
    waitready_defaults(&cfg->pods_ready, false);
    if ((rc = set_str(&cfg->namespace, "sluice-system", msg)) ||
        (rc = set_str(&cfg->lease_name, "sluice.dev", msg)) ||
        (rc = set_str(&cfg->job_group, "batch", msg)) ||
        (rc = set_str(&cfg->job_version, "v1", msg)) ||
        (rc = set_str(&cfg->job_resource, "jobs", msg)) ||
        (rc = set_str(&cfg->webhook_host, "", msg)) ||
        (rc = set_str(&cfg->webhook_service, "sluice-webhook-service", msg)) ||
        (rc = set_str(&cfg->webhook_secret, "sluice-webhook-server-cert", msg)) ||
        (rc = set_str(&cfg->webhook_config_prefix, "sluice", msg)) ||
        (rc = set_str(&cfg->health_host, "", msg)) || (rc = set_str(&cfg->metrics_host, "", msg)))
        return rc;
    return integrations_default(&cfg->integrations, msg);
}

void ctrl_config_fini(ctrl_config_t *cfg)
{
    if (cfg == NULL)
        return;
    idle_config_free(cfg->idle);
    free(cfg->namespace);
    free(cfg->lease_name);
    free(cfg->job_group);
    free(cfg->job_version);
    free(cfg->job_resource);
    free(cfg->webhook_host);
    free(cfg->cert_dir);
    free(cfg->audit_log);
    free(cfg->acct_log);
    free(cfg->webhook_client_ca);
    free(cfg->webhook_service);
    free(cfg->webhook_secret);
    free(cfg->webhook_config_prefix);
    free(cfg->health_host);
    free(cfg->metrics_host);
    free(cfg->lease_namespace);
    free(cfg->no_effect);
    free(cfg->warnings);
    integrations_fini(&cfg->integrations);
    configuration_fini(&cfg->kueue);
    json_decref(cfg->doc);
    memset(cfg, 0, sizeof(*cfg));
}

err_t ctrl_duration_ms(const char *s, uint32_t *out, err_msg_t *msg)
{
    int64_t ms;
    err_t rc = duration_parse_ms(s ? s : "", s ? strlen(s) : 0, UINT32_MAX, &ms, msg);

    if (rc == ERR_OK)
        *out = (uint32_t)ms;
    return rc;
}

err_t ctrl_bind_address(const char *s, char **host, int *port, err_msg_t *msg)
{
    const char *colon = strrchr(s, ':');
    char *end = NULL, *h;
    long p;

    if (strcmp(s, "0") == 0) {
        *port = 0;
        return set_str(host, "", msg);
    }
    if (colon == NULL)
        return err_set(msg, ERR_PARSE, "bind address \"%s\": want [HOST]:PORT or 0", s);
    errno = 0;
    p = strtol(colon + 1, &end, 10);
    if (errno != 0 || end == colon + 1 || *end != '\0' || p < 0 || p > 65535)
        return err_set(msg, ERR_PARSE, "bind address \"%s\": bad port", s);
    h = strndup(s, (size_t)(colon - s));
    if (h == NULL)
        return err_set(msg, ERR_NOMEM, "configuration: out of memory");
    free(*host);
    *host = h;
    *port = (int)p;
    return ERR_OK;
}

err_t ctrl_log_level_parse(const char *s, ctrl_log_level_t *out, err_msg_t *msg)
{
    if (strcmp(s, "error") == 0)
        *out = CTRL_LOG_ERROR;
    else if (strcmp(s, "info") == 0)
        *out = CTRL_LOG_INFO;
    else if (strcmp(s, "debug") == 0)
        *out = CTRL_LOG_DEBUG;
    else
        return err_set(msg, ERR_PARSE, "log level \"%s\": want error, info or debug", s);
    return ERR_OK;
}

err_t ctrl_config_set_job_resource(ctrl_config_t *cfg, const char *text, err_msg_t *msg)
{
    const char *a = strchr(text, '/'), *b = a ? strchr(a + 1, '/') : NULL;
    char *g = NULL, *v = NULL, *r = NULL;

    if (a == NULL || b == NULL || strchr(b + 1, '/') != NULL || b == a + 1 || b[1] == '\0')
        return err_set(msg, ERR_PARSE, "job resource \"%s\": want GROUP/VERSION/PLURAL", text);
    g = strndup(text, (size_t)(a - text));
    v = strndup(a + 1, (size_t)(b - a - 1));
    r = strdup(b + 1);
    if (g == NULL || v == NULL || r == NULL) {
        free(g);
        free(v);
        free(r);
        return err_set(msg, ERR_NOMEM, "configuration: out of memory");
    }
    free(cfg->job_group);
    free(cfg->job_version);
    free(cfg->job_resource);
    cfg->job_group = g;
    cfg->job_version = v;
    cfg->job_resource = r;
    return ERR_OK;
}

/* String member `key` of `o` into *dst when present; a non-string is an error at `path`. */
static err_t opt_str(const json_t *o, const char *key, const char *path, char **dst, err_msg_t *msg)
{
    json_t *v = json_object_get(o, key);

    if (v == NULL || json_is_null(v))
        return ERR_OK;
    if (!json_is_string(v))
        return err_set(msg, ERR_INVALID, "%s.%s: must be a string", path, key);
    return set_str(dst, json_string_value(v), msg);
}

static err_t opt_duration(const json_t *o, const char *key, const char *path, uint32_t *dst,
                          err_msg_t *msg)
{
    json_t *v = json_object_get(o, key);
    err_t rc;

    if (v == NULL || json_is_null(v))
        return ERR_OK;
    if (!json_is_string(v))
        return err_set(msg, ERR_INVALID, "%s.%s: must be a duration string", path, key);
    rc = ctrl_duration_ms(json_string_value(v), dst, msg);
    return rc ? err_prefix(msg, rc, "%s.%s: ", path, key) : ERR_OK;
}

static err_t opt_bool(const json_t *o, const char *key, const char *path, bool *dst, err_msg_t *msg)
{
    json_t *v = json_object_get(o, key);

    if (v == NULL || json_is_null(v))
        return ERR_OK;
    if (!json_is_boolean(v))
        return err_set(msg, ERR_INVALID, "%s.%s: must be a boolean", path, key);
    *dst = json_is_true(v);
    return ERR_OK;
}

err_t ctrl_config_set_pods_ready_timeout(ctrl_config_t *cfg, const char *text, err_msg_t *msg)
{
    uint32_t ms = 0;
    err_t rc;

    if (strcmp(text, "false") == 0) {
        cfg->pods_ready.enabled = false;
        return ERR_OK;
    }
    rc = ctrl_duration_ms(text, &ms, msg);
    if (rc != ERR_OK)
        return rc;
    if (ms == 0) {
        cfg->pods_ready.enabled = false;
        return ERR_OK;
    }
    cfg->pods_ready.enabled = true;
    cfg->pods_ready.timeout_ms = ms;
    if (!cfg->pods_ready.recovery_set)
        cfg->pods_ready.recovery_timeout_ms = ms;
    return ERR_OK;
}

/* The fields of the operator's sections (reference section 6), and which of them sluice run
 * accepts without acting on (reported by ctrl_config_finish()). Anything else is a typo or a
 * newer Kueue field: an error naming its path. */
static const char *const le_fields[] = {
    "leaderElect",  "leaseDuration", "renewDeadline",     "retryPeriod",
    "resourceLock", "resourceName",  "resourceNamespace", NULL};
static const char *const webhook_fields[] = {"port", "host", "certDir", NULL};
static const char *const health_fields[] = {"healthProbeBindAddress", "readinessEndpointName",
                                            "livenessEndpointName", NULL};
static const char *const client_fields[] = {"qps", "burst", NULL};
static const char *const metrics_fields[] = {"bindAddress", "enableClusterQueueResources",
                                             "customLabels", "localQueueMetrics", NULL};
static const char *const lq_metrics_fields[] = {"enable", "localQueueSelector", NULL};
static const char *const icm_fields[] = {"enable", "webhookServiceName", "webhookSecretName", NULL};
static const char *const sluice_annotations[] = {"sluice.dev/job-resource",
                                                 "sluice.dev/log-level",
                                                 "sluice.dev/audit-log",
                                                 "sluice.dev/audit-log-max-bytes",
                                                 "sluice.dev/webhook-client-ca",
                                                 "sluice.dev/accounting-log",
                                                 "sluice.dev/accounting-log-max-bytes",
                                                 IDLE_CONFIG_ANNOTATION,
                                                 "sluice.dev/estimate-interval",
                                                 "sluice.dev/estimate-horizon",
                                                 "sluice.dev/estimate-max-cycles",
                                                 SCHED_LOOP_GUARDS_ANNOTATION,
                                                 SCHED_NODE_FIT_ANNOTATION,
                                                 "sluice.dev/watch-nodes",
                                                 HOOK_LIMITS_ANNOTATION,
                                                 NULL};
/* sluice serves /healthz, /livez and /readyz under those names only. */
static const char *const op_no_effect[] = {
    "health.readinessEndpointName", "health.livenessEndpointName", "integrations.podOptions",
    /* /metrics is served on the probe port (docs/observability.md) */
    "metrics.customLabels", NULL};

/* `o` (may be absent) is an object whose members are all in `known`. */
static err_t section(const json_t *o, const char *const *known, const char *path, err_msg_t *msg)
{
    if (o == NULL || json_is_null(o))
        return ERR_OK;
    if (!json_is_object(o))
        return err_set(msg, ERR_INVALID, "%s: must be an object", path);
    return jsonx_known_fields(o, known, path, msg);
}

/* The three lease timings against each other, as client-go's leaderelection.NewLeaderElector
 * checks them: leaseDuration > renewDeadline > 1.2 (its JitterFactor) x retryPeriod, each
 * positive. A leader stops renewing at renewDeadline, and a standby may take the Lease
 * leaseDuration after its last renewal, so the first inequality is what keeps two leaders
 * apart; the second leaves room for at least one jittered retry before giving up. The Lease
 * holds leaseDurationSeconds, whole seconds: a fraction would be cut, and a standby reading the
 * Lease would take over before this leader stops. */
static err_t lease_timings_check(const ctrl_config_t *cfg, err_msg_t *msg)
{
    char a[DURATION_STR_MAX], b[DURATION_STR_MAX];

    if (cfg->lease_ms == 0)
        return err_set(msg, ERR_INVALID, "leaderElection.leaseDuration: must be greater than zero");
    if (cfg->renew_ms == 0)
        return err_set(msg, ERR_INVALID, "leaderElection.renewDeadline: must be greater than zero");
    if (cfg->retry_ms == 0)
        return err_set(msg, ERR_INVALID, "leaderElection.retryPeriod: must be greater than zero");
    if (cfg->lease_ms % 1000 != 0)
        return err_set(msg, ERR_INVALID,
                       "leaderElection.leaseDuration (%s): must be whole seconds (the Lease "
                       "records leaseDurationSeconds)",
                       duration_format(cfg->lease_ms, a));
    if (cfg->lease_ms <= cfg->renew_ms)
        return err_set(msg, ERR_INVALID,
                       "leaderElection.leaseDuration (%s) must be greater than "
                       "leaderElection.renewDeadline (%s)",
                       duration_format(cfg->lease_ms, a), duration_format(cfg->renew_ms, b));
    if ((uint64_t)cfg->renew_ms * 5 <= (uint64_t)cfg->retry_ms * 6)
        return err_set(msg, ERR_INVALID,
                       "leaderElection.renewDeadline (%s) must be greater than 1.2 x "
                       "leaderElection.retryPeriod (%s)",
                       duration_format(cfg->renew_ms, a), duration_format(cfg->retry_ms, b));
    return ERR_OK;
}

static err_t apply_leader_election(ctrl_config_t *cfg, const json_t *le, err_msg_t *msg)
{
    static const char path[] = "leaderElection";
    const json_t *lock = json_object_get(le, "resourceLock");
    err_t rc;

    if ((rc = section(le, le_fields, path, msg)) || le == NULL || json_is_null(le))
        return rc;
    if ((rc = opt_bool(le, "leaderElect", path, &cfg->leader_elect, msg)) ||
        (rc = opt_str(le, "resourceName", path, &cfg->lease_name, msg)) ||
        (rc = opt_str(le, "resourceNamespace", path, &cfg->lease_namespace, msg)) ||
        (rc = opt_duration(le, "leaseDuration", path, &cfg->lease_ms, msg)) ||
        (rc = opt_duration(le, "renewDeadline", path, &cfg->renew_ms, msg)) ||
        (rc = opt_duration(le, "retryPeriod", path, &cfg->retry_ms, msg)))
        return rc;
    if (lock != NULL && !json_is_null(lock) &&
        !(json_is_string(lock) && strcmp(json_string_value(lock), "leases") == 0))
        return err_set(msg, ERR_INVALID,
                       "leaderElection.resourceLock: sluice elects its leader on a "
                       "coordination.k8s.io Lease only: want \"leases\"");
    return lease_timings_check(cfg, msg);
}

/* metrics: which optional families /metrics serves, Kueue's switches (docs/observability.md). */
static err_t apply_metrics(ctrl_config_t *cfg, const json_t *m, err_msg_t *msg)
{
    const json_t *lq = json_object_get(m, "localQueueMetrics"), *v;
    err_t rc;

    if ((rc = section(m, metrics_fields, "metrics", msg)) || m == NULL || json_is_null(m))
        return rc;
    if ((rc = opt_bool(m, "enableClusterQueueResources", "metrics", &cfg->metrics_cq_resources,
                       msg)) ||
        (rc = section(lq, lq_metrics_fields, "metrics.localQueueMetrics", msg)) ||
        (lq != NULL &&
         (rc = opt_bool(lq, "enable", "metrics.localQueueMetrics", &cfg->metrics_lq, msg))))
        return rc;
    v = json_object_get(m, "bindAddress");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_string(v))
            return err_set(msg, ERR_INVALID, "metrics.bindAddress: must be a string");
        rc = ctrl_bind_address(json_string_value(v), &cfg->metrics_host, &cfg->metrics_port, msg);
        if (rc)
            return err_prefix(msg, rc, "metrics.bindAddress: ");
    }
    if (json_object_get(lq, "localQueueSelector") != NULL)
        return err_set(msg, ERR_INVALID,
                       "metrics.localQueueMetrics.localQueueSelector: not supported by sluice "
                       "run: every LocalQueue is reported (remove it, or turn localQueueMetrics "
                       "off)");
    return ERR_OK;
}

/* metadata.annotations: sluice's own settings, so the file stays a valid Kueue Configuration.
 * Other annotations are the user's; a sluice.dev/ key sluice does not know is a typo. */
static err_t apply_annotations(ctrl_config_t *cfg, const json_t *ann, err_msg_t *msg)
{
    const char *key;
    json_t *v;
    err_t rc;

    json_object_foreach((json_t *)ann, key, v)
    {
        size_t i = 0;
        if (strncmp(key, "sluice.dev/", 11) != 0)
            continue;
        while (sluice_annotations[i] != NULL && strcmp(sluice_annotations[i], key) != 0)
            i++;
        if (sluice_annotations[i] == NULL)
            return err_set(
                msg, ERR_INVALID,
                "metadata.annotations[%s]: unknown sluice setting (known: "
                "sluice.dev/job-resource, log-level, audit-log, audit-log-max-bytes, "
                "webhook-client-ca, accounting-log, accounting-log-max-bytes, "
                "idle-reclaim, estimate-interval, estimate-horizon, estimate-max-cycles, "
                "preemption-loop-guards, server-limits)",
                key);
        if (!json_is_string(v))
            return err_set(msg, ERR_INVALID, "metadata.annotations[%s]: must be a string", key);
    }
    v = json_object_get(ann, "sluice.dev/job-resource");
    if (json_is_string(v) && (rc = ctrl_config_set_job_resource(cfg, json_string_value(v), msg)))
        return err_prefix(msg, rc, "metadata.annotations[sluice.dev/job-resource]: ");
    v = json_object_get(ann, "sluice.dev/log-level");
    if (json_is_string(v) &&
        (rc = ctrl_log_level_parse(json_string_value(v), &cfg->log_level, msg)))
        return err_prefix(msg, rc, "metadata.annotations[sluice.dev/log-level]: ");
    v = json_object_get(ann, "sluice.dev/audit-log");
    if (json_is_string(v) && (rc = set_str(&cfg->audit_log, json_string_value(v), msg)))
        return rc;
    v = json_object_get(ann, "sluice.dev/audit-log-max-bytes");
    if (json_is_string(v) && (rc = ctrl_config_set_audit_max(cfg, json_string_value(v), msg)))
        return err_prefix(msg, rc, "metadata.annotations[sluice.dev/audit-log-max-bytes]: ");
    v = json_object_get(ann, "sluice.dev/webhook-client-ca");
    if (json_is_string(v) && (rc = set_str(&cfg->webhook_client_ca, json_string_value(v), msg)))
        return rc;
    v = json_object_get(ann, "sluice.dev/accounting-log");
    if (json_is_string(v) && (rc = set_str(&cfg->acct_log, json_string_value(v), msg)))
        return rc;
    v = json_object_get(ann, "sluice.dev/accounting-log-max-bytes");
    if (json_is_string(v) && (rc = ctrl_config_set_accounting_max(cfg, json_string_value(v), msg)))
        return err_prefix(msg, rc, "metadata.annotations[sluice.dev/accounting-log-max-bytes]: ");
    v = json_object_get(ann, IDLE_CONFIG_ANNOTATION);
    if (json_is_string(v)) {
        idle_config_t *idle = NULL;
        if ((rc = idle_config_parse(json_string_value(v), json_string_length(v), &idle, msg)))
            return err_prefix(msg, rc, "metadata.annotations[" IDLE_CONFIG_ANNOTATION "]: ");
        idle_config_free(cfg->idle);
        cfg->idle = idle;
    }
    static const struct {
        const char *key;
        err_t (*set)(ctrl_config_t *, const char *, err_msg_t *);
    } est[] = {{"sluice.dev/estimate-interval", ctrl_config_set_estimate_interval},
               {"sluice.dev/estimate-horizon", ctrl_config_set_estimate_horizon},
               {"sluice.dev/estimate-max-cycles", ctrl_config_set_estimate_max_cycles}};
    for (size_t i = 0; i < sizeof(est) / sizeof(est[0]); i++) {
        v = json_object_get(ann, est[i].key);
        if (json_is_string(v) && (rc = est[i].set(cfg, json_string_value(v), msg)))
            return err_prefix(msg, rc, "metadata.annotations[%s]: ", est[i].key);
    }
    v = json_object_get(ann, HOOK_LIMITS_ANNOTATION);
    if (json_is_string(v) &&
        (rc = hook_limits_parse(&cfg->server_limits, json_string_value(v), msg)) != ERR_OK)
        return err_prefix(msg, rc, "metadata.annotations[" HOOK_LIMITS_ANNOTATION "]: ");
    unsigned guards; /* read by sched_config_from(); checked here so a typo stops the start */
    v = json_object_get(ann, SCHED_LOOP_GUARDS_ANNOTATION);
    if (json_is_string(v) && (rc = sched_loop_guards_parse(json_string_value(v), &guards, msg)))
        return err_prefix(msg, rc, "metadata.annotations[" SCHED_LOOP_GUARDS_ANNOTATION "]: ");
    bool node_fit; /* likewise */
    v = json_object_get(ann, SCHED_NODE_FIT_ANNOTATION);
    if (json_is_string(v) && (rc = sched_node_fit_parse(json_string_value(v), &node_fit, msg)))
        return err_prefix(msg, rc, "metadata.annotations[" SCHED_NODE_FIT_ANNOTATION "]: ");
    v = json_object_get(ann, "sluice.dev/watch-nodes"); /* the same two values */
    if (json_is_string(v) && (rc = sched_node_fit_parse(json_string_value(v), &node_fit, msg)))
        return err_prefix(msg, rc, "metadata.annotations[sluice.dev/watch-nodes]: ");
    return ERR_OK;
}

err_t ctrl_config_apply(ctrl_config_t *cfg, json_t *root, err_msg_t *msg)
{
    const json_t *wh, *health, *cc, *icm, *v;
    err_t rc;

    if (!json_is_object(root))
        return err_set(msg, ERR_INVALID, "configuration: must be an object");
    if (json_is_string(json_object_get(root, "namespace")))
        cfg->namespace_set = true;
    if ((rc = opt_str(root, "namespace", "configuration", &cfg->namespace, msg)) ||
        (rc = apply_leader_election(cfg, json_object_get(root, "leaderElection"), msg)))
        return rc;
    wh = json_object_get(root, "webhook");
    if ((rc = section(wh, webhook_fields, "webhook", msg)))
        return rc;
    v = json_object_get(wh, "port");
    if (v != NULL &&
        (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 65535))
        return err_set(msg, ERR_INVALID, "webhook.port: must be an integer in 0..65535");
    if (v != NULL)
        cfg->webhook_port = (int)json_integer_value(v);
    if (wh != NULL && ((rc = opt_str(wh, "host", "webhook", &cfg->webhook_host, msg)) ||
                       (rc = opt_str(wh, "certDir", "webhook", &cfg->cert_dir, msg))))
        return rc;
    health = json_object_get(root, "health");
    if ((rc = section(health, health_fields, "health", msg)))
        return rc;
    v = json_object_get(health, "healthProbeBindAddress");
    if (v != NULL) {
        if (!json_is_string(v))
            return err_set(msg, ERR_INVALID, "health.healthProbeBindAddress: must be a string");
        rc = ctrl_bind_address(json_string_value(v), &cfg->health_host, &cfg->health_port, msg);
        if (rc)
            return err_prefix(msg, rc, "health.healthProbeBindAddress: ");
    }
    if ((rc = apply_metrics(cfg, json_object_get(root, "metrics"), msg)))
        return rc;
    cc = json_object_get(root, "clientConnection");
    if ((rc = section(cc, client_fields, "clientConnection", msg)))
        return rc;
    v = json_object_get(cc, "qps");
    if (v != NULL) {
        if (!json_is_number(v) || json_number_value(v) <= 0 || json_number_value(v) > 1e6)
            return err_set(msg, ERR_INVALID, "clientConnection.qps: must be a number in (0, 1e6]");
        /* qps is a float32 in Kueue's type; thousandths are exact enough for a rate limit. */
        cfg->qps_milli = json_is_integer(v) ? (uint64_t)json_integer_value(v) * 1000
                                            : (uint64_t)(json_real_value(v) * 1000.0 + 0.5);
    }
    v = json_object_get(cc, "burst");
    if (v != NULL) {
        if (!json_is_integer(v) || json_integer_value(v) <= 0 || json_integer_value(v) > 1000000)
            return err_set(msg, ERR_INVALID, "clientConnection.burst: must be a positive integer");
        cfg->burst = (uint32_t)json_integer_value(v);
    }
    icm = json_object_get(root, "internalCertManagement");
    if ((rc = section(icm, icm_fields, "internalCertManagement", msg)))
        return rc;
    if (icm != NULL &&
        ((rc = opt_bool(icm, "enable", "internalCertManagement", &cfg->internal_certs, msg)) ||
         (rc = opt_str(icm, "webhookServiceName", "internalCertManagement", &cfg->webhook_service,
                       msg)) ||
         (rc = opt_str(icm, "webhookSecretName", "internalCertManagement", &cfg->webhook_secret,
                       msg))))
        return rc;
    if ((rc = waitready_decode(root, &cfg->pods_ready, msg)) ||
        (rc = apply_integrations(cfg, root,
                                 strcmp(json_string_value(json_object_get(root, "apiVersion"))
                                            ? json_string_value(json_object_get(root, "apiVersion"))
                                            : "",
                                        "config.kueue.x-k8s.io/v1beta1") == 0,
                                 msg)) ||
        (rc = apply_annotations(
             cfg, json_object_get(json_object_get(root, "metadata"), "annotations"), msg)))
        return rc;
    json_incref(root);
    json_decref(cfg->doc);
    cfg->doc = root;
    return ERR_OK;
}

/* Append `text` to the owned list *dst, separated by `sep`. */
static err_t list_add(char **dst, const char *sep, const char *text, err_msg_t *msg)
{
    size_t have = *dst ? strlen(*dst) : 0, n = strlen(text), sl = have ? strlen(sep) : 0;
    char *p = realloc(*dst, have + sl + n + 1);

    if (p == NULL)
        return err_set(msg, ERR_NOMEM, "configuration: out of memory");
    memcpy(p + have, sep, sl);
    memcpy(p + have + sl, text, n + 1);
    *dst = p;
    return ERR_OK;
}

/* What the file sets that has no effect, and its other warnings, from the decode diagnostics of
 * the Kueue part and the operator fields sluice ignores. */
static err_t collect_warnings(ctrl_config_t *cfg, const diags_t *diags, err_msg_t *msg)
{
    char line[1024];
    err_t rc = ERR_OK;

    free(cfg->no_effect);
    free(cfg->warnings);
    cfg->no_effect = cfg->warnings = NULL;
    for (size_t i = 0; op_no_effect[i] != NULL && rc == ERR_OK; i++) {
        const char *dot = strchr(op_no_effect[i], '.');
        char sec[64];
        snprintf(sec, sizeof(sec), "%.*s", (int)(dot - op_no_effect[i]), op_no_effect[i]);
        if (json_object_get(json_object_get(cfg->doc, sec), dot + 1) != NULL)
            rc = list_add(&cfg->no_effect, ", ", op_no_effect[i], msg);
    }
    for (size_t i = 0; i < diags->len && rc == ERR_OK; i++) {
        const diag_t *d = &diags->items[i];
        if (!d->warning)
            continue;
        if (strstr(d->message, "has no effect") != NULL) {
            rc = list_add(&cfg->no_effect, ", ", d->path, msg);
        } else {
            snprintf(line, sizeof(line), "%s: %s", d->path, d->message);
            rc = list_add(&cfg->warnings, "\n", line, msg);
        }
    }
    return rc;
}

/* Kueue names the webhook configurations after the service: "<base>-webhook-service" gives
 * "<base>-validating-webhook-configuration" (base "kueue" by default). */
static err_t derive_prefix(ctrl_config_t *cfg, err_msg_t *msg)
{
    static const char suffix[] = "-webhook-service";
    size_t n = strlen(cfg->webhook_service), sl = sizeof(suffix) - 1;
    char *p = n > sl && strcmp(cfg->webhook_service + n - sl, suffix) == 0
                  ? strndup(cfg->webhook_service, n - sl)
                  : strdup(cfg->webhook_service);

    if (p == NULL)
        return err_set(msg, ERR_NOMEM, "configuration: out of memory");
    free(cfg->webhook_config_prefix);
    cfg->webhook_config_prefix = p;
    return ERR_OK;
}

err_t ctrl_config_finish(ctrl_config_t *cfg, err_msg_t *msg)
{
    json_t *doc = cfg->doc ? json_deep_copy(cfg->doc)
                           : json_pack("{s:s,s:s}", "apiVersion", "config.kueue.x-k8s.io/v1beta2",
                                       "kind", "Configuration");
    object_t obj;
    diags_t diags;
    err_t rc;

    if (doc == NULL || json_object_set_new(doc, "namespace", json_string(cfg->namespace))) {
        json_decref(doc);
        return err_set(msg, ERR_NOMEM, "configuration: out of memory");
    }
    diags_init(&diags);
    rc = object_decode(doc, &obj, &diags);
    if (rc == ERR_OK && obj.kind != KIND_CONFIGURATION) {
        object_fini(&obj);
        rc = err_set(msg, ERR_INVALID, "configuration: kind must be Configuration");
    } else if (rc != ERR_OK) {
        const diag_t *d = NULL;
        for (size_t i = 0; i < diags.len && d == NULL; i++)
            if (!diags.items[i].warning)
                d = &diags.items[i];
        err_set(msg, rc, "configuration: %s%s%s", d ? d->path : "", d && d->path[0] ? ": " : "",
                d ? d->message : err_str(rc));
    } else {
        configuration_fini(&cfg->kueue);
        cfg->kueue = obj.u.config;
        free(obj.api_version);
        rc = collect_warnings(cfg, &diags, msg);
    }
    diags_fini(&diags);
    json_decref(doc);
    return rc == ERR_OK ? derive_prefix(cfg, msg) : rc;
}

static err_t on_doc(void *ctx, size_t index, int line, json_t *doc)
{
    json_t **first = ctx;

    (void)index;
    (void)line;
    if (*first == NULL) { /* the first non-empty document is the Configuration */
        json_incref(doc);
        *first = doc;
    }
    return ERR_OK;
}

err_t ctrl_config_load(ctrl_config_t *cfg, const char *path, err_msg_t *msg)
{
    bool is_stdin = strcmp(path, "-") == 0; /* `sluice run --config -` */
    FILE *f = is_stdin ? stdin : fopen(path, "r");
    json_t *doc = NULL;
    err_t rc;

    if (f == NULL)
        return err_set(msg, ERR_IO, "%s: %s", path, strerror(errno));
    rc = yaml_load_file(f, on_doc, &doc, msg);
    if (!is_stdin)
        fclose(f);
    if (rc != ERR_OK) {
        json_decref(doc);
        return err_prefix(msg, rc, "%s: ", path);
    }
    if (doc == NULL)
        return err_set(msg, ERR_INVALID, "%s: no Configuration document", path);
    rc = ctrl_config_apply(cfg, doc, msg);
    json_decref(doc);
    return rc ? err_prefix(msg, rc, "%s: ", path) : ERR_OK;
}

/* A log's size limit: decimal bytes, at least 4096. */
static err_t max_bytes(const char *text, uint64_t *out, err_msg_t *msg)
{
    uint64_t v = 0;

    if (text[0] == '\0')
        return err_set(msg, ERR_INVALID, "want a number of bytes, got \"\"");
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9' || v > UINT64_MAX / 10)
            return err_set(msg, ERR_INVALID, "want a number of bytes, got \"%.64s\"", text);
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (v < 4096)
        return err_set(msg, ERR_INVALID, "%s: must be at least 4096 bytes", text);
    *out = v;
    return ERR_OK;
}

err_t ctrl_config_set_audit_max(ctrl_config_t *cfg, const char *text, err_msg_t *msg)
{
    return max_bytes(text, &cfg->audit_max_bytes, msg);
}

err_t ctrl_config_set_accounting_max(ctrl_config_t *cfg, const char *text, err_msg_t *msg)
{
    return max_bytes(text, &cfg->acct_max_bytes, msg);
}

err_t ctrl_config_set_estimate_interval(ctrl_config_t *cfg, const char *text, err_msg_t *msg)
{
    uint32_t ms;

    if (strcmp(text, "0") == 0) {
        cfg->estimate_interval_ms = 0;
        return ERR_OK;
    }
    if (ctrl_duration_ms(text, &ms, msg) != ERR_OK || ms < 1000)
        return err_set(msg, ERR_INVALID,
                       "\"%.64s\": want a duration of at least 1s (\"60s\"), "
                       "or 0 to turn the estimate off",
                       text);
    cfg->estimate_interval_ms = ms;
    return ERR_OK;
}

err_t ctrl_config_set_estimate_horizon(ctrl_config_t *cfg, const char *text, err_msg_t *msg)
{
    uint32_t ms;

    if (ctrl_duration_ms(text, &ms, msg) != ERR_OK || ms == 0)
        return err_set(msg, ERR_INVALID,
                       "\"%.64s\": want a duration above 0, at most 49 days (\"24h\")", text);
    cfg->estimate_horizon_ms = ms;
    return ERR_OK;
}

err_t ctrl_config_set_estimate_max_cycles(ctrl_config_t *cfg, const char *text, err_msg_t *msg)
{
    uint32_t v = 0;

    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9' || v > 100000000u)
            return err_set(msg, ERR_INVALID, "\"%.64s\": want a number of cycles, 1 to 1000000000",
                           text);
        v = v * 10 + (uint32_t)(*p - '0');
    }
    if (v == 0 || v > 1000000000u)
        return err_set(msg, ERR_INVALID, "\"%.64s\": want a number of cycles, 1 to 1000000000",
                       text);
    cfg->estimate_max_cycles = v;
    return ERR_OK;
}
