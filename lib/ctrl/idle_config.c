/* idle_config -- the idle-reclaim section of the configuration (YAML in an annotation). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/idle.h"

#include "model/yaml.h"
#include "util/duration.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The section is YAML (or JSON) text in the Configuration's annotation sluice.dev/idle-reclaim,
 * so a Kueue Configuration file with it still loads in Kueue (which rejects unknown fields):
 *
 *   prometheus:
 *     url: http://prometheus-k8s.monitoring.svc:9090     # required; http or https
 *     bearerTokenFile: /var/run/secrets/.../token        # optional, re-read when it changes
 *     caFile: /etc/prometheus-ca/ca.crt                  # optional
 *     insecureSkipTLSVerify: false
 *     timeout: 10s
 *     maxResponseBytes: 8388608
 *   interval: 1m              # between queries, 10s..1h
 *   window: 1m                # max_over_time range: >= interval, default max(interval, 1m)
 *   metric: DCGM_FI_DEV_GPU_UTIL
 *   podLabel: pod             # the series' labels naming the GPU's pod (exported_pod, ...)
 *   namespaceLabel: namespace
 *   gpuLabel: gpu             # tells the GPUs of one pod apart
 *   gpuResource: nvidia.com/gpu
 *   idleFor: 1h               # defaults for queue annotations that leave them out
 *   threshold: 0              # percent (a string for decimals: "2.5")
 *   warnBefore: 15m           # default idleFor / 4
 *   policies:
 *   - clusterQueue: team-a    # or localQueue: namespace/name
 *     idleFor: 2h
 *
 * Every name that goes into the PromQL text is checked against Prometheus' name syntax here, so
 * nothing from the file can change the query's shape.
 */

#define MAX_BYTES_MIN   4096u
#define MAX_BYTES_MAX   ((size_t)256 << 20)
#define INTERVAL_MIN_MS 10000
#define INTERVAL_MAX_MS 3600000
#define TIMEOUT_MAX_MS  300000
#define IDLE_FOR_MIN_MS 60000
#define IDLE_FOR_MAX_MS ((int64_t)366 * 24 * 3600 * 1000)
#define DEFAULT_IDLE_MS 3600000

static const char *const top_fields[] = {
    "prometheus",     "interval", "window",      "metric",  "podLabel",
    "namespaceLabel", "gpuLabel", "gpuResource", "idleFor", "threshold",
    "warnBefore",     "policies", NULL};
static const char *const prom_fields[] = {
    "url",     "bearerTokenFile",  "caFile", "insecureSkipTLSVerify",
    "timeout", "maxResponseBytes", NULL};
static const char *const policy_fields[] = {"clusterQueue", "localQueue", "idleFor",
                                            "threshold",    "warnBefore", NULL};

void idle_config_free(idle_config_t *cfg)
{
    if (cfg == NULL)
        return;
    free(cfg->url);
    free(cfg->token_file);
    free(cfg->ca_file);
    free(cfg->metric);
    free(cfg->pod_label);
    free(cfg->namespace_label);
    free(cfg->gpu_label);
    free(cfg->resource);
    for (size_t i = 0; i < cfg->nrules; i++) {
        free(cfg->rules[i].cluster_queue);
        free(cfg->rules[i].local_queue);
    }
    free(cfg->rules);
    free(cfg);
}

static err_t known(const json_t *o, const char *const *names, const char *path, err_msg_t *msg)
{
    const char *key;
    json_t *v;

    if (!json_is_object(o))
        return err_set(msg, ERR_INVALID, "%s: must be an object", path);
    json_object_foreach((json_t *)o, key, v)
    {
        size_t i = 0;
        (void)v;
        while (names[i] != NULL && strcmp(names[i], key) != 0)
            i++;
        if (names[i] == NULL)
            return err_set(msg, ERR_INVALID, "%s%s%.64s: unknown field", path, path[0] ? "." : "",
                           key);
    }
    return ERR_OK;
}

/* A string member `key` of `o` into *dst (replacing it); absent: unchanged. */
static err_t str(const json_t *o, const char *key, const char *path, char **dst, err_msg_t *msg)
{
    const json_t *v = json_object_get(o, key);
    char *s;

    if (v == NULL)
        return ERR_OK;
    if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > 4096)
        return err_set(msg, ERR_INVALID, "%s%s: must be a non-empty string", path, key);
    s = strdup(json_string_value(v));
    if (s == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    free(*dst);
    *dst = s;
    return ERR_OK;
}

static err_t duration(const json_t *o, const char *key, const char *path, int64_t min, int64_t max,
                      int64_t *dst, bool *set, err_msg_t *msg)
{
    const json_t *v = json_object_get(o, key);
    const char *s;
    int64_t ms;

    if (v == NULL)
        return ERR_OK;
    s = json_string_value(v);
    if (s == NULL)
        return err_set(msg, ERR_INVALID, "%s%s: must be a duration such as 30m", path, key);
    if (duration_parse_ms(s, strlen(s), max, &ms, msg) != ERR_OK)
        return err_prefix(msg, ERR_INVALID, "%s%s: ", path, key);
    if (ms < min) {
        char b[DURATION_STR_MAX];
        return err_set(msg, ERR_INVALID, "%s%s: %.32s: must be at least %s", path, key, s,
                       duration_format(min, b));
    }
    *dst = ms;
    if (set != NULL)
        *set = true;
    return ERR_OK;
}

static err_t percent(const json_t *o, const char *key, const char *path, uint32_t *dst,
                     err_msg_t *msg)
{
    const json_t *v = json_object_get(o, key);
    char buf[32];

    if (v == NULL)
        return ERR_OK;
    if (json_is_integer(v)) {
        if (json_integer_value(v) < 0 || json_integer_value(v) > 100)
            return err_set(msg, ERR_INVALID, "%s%s: must be a percentage in 0..100", path, key);
        *dst = (uint32_t)json_integer_value(v) * 1000u;
        return ERR_OK;
    }
    if (!json_is_string(v)) /* a YAML 2.5 is a float: decimals are exact only as text */
        return err_set(msg, ERR_INVALID,
                       "%s%s: must be a percentage: an integer, or a string for "
                       "decimals (\"2.5\")",
                       path, key);
    snprintf(buf, sizeof(buf), "%s", json_string_value(v));
    if (idle_percent_parse(buf, dst, msg) != ERR_OK)
        return err_prefix(msg, ERR_INVALID, "%s%s: ", path, key);
    return ERR_OK;
}

/* Prometheus metric and label names: [a-zA-Z_][a-zA-Z0-9_]* (':' also in metric names). */
static bool prom_name(const char *s, bool metric)
{
    if (s == NULL || s[0] == '\0' || (s[0] >= '0' && s[0] <= '9') || strlen(s) > 200)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || (metric && *p == ':')))
            return false;
    return strncmp(s, "__", 2) != 0;
}

static err_t policy(const json_t *o, const char *path, idle_policy_t *p, err_msg_t *msg)
{
    err_t rc;

    if ((rc = duration(o, "idleFor", path, IDLE_FOR_MIN_MS, IDLE_FOR_MAX_MS, &p->idle_ms, NULL,
                       msg)) ||
        (rc = percent(o, "threshold", path, &p->threshold_milli, msg)) ||
        (rc = duration(o, "warnBefore", path, 0, IDLE_FOR_MAX_MS, &p->warn_ms, &p->warn_set, msg)))
        return rc;
    if (p->warn_set && p->warn_ms >= p->idle_ms && json_object_get(o, "warnBefore") == NULL)
        p->warn_set = false; /* the default lead does not fit this shorter idleFor */
    if (p->warn_set && p->warn_ms >= p->idle_ms)
        return err_set(msg, ERR_INVALID, "%swarnBefore: must be shorter than idleFor", path);
    return ERR_OK;
}

static err_t prometheus(idle_config_t *cfg, const json_t *o, err_msg_t *msg)
{
    const json_t *v;
    int64_t ms = cfg->timeout_ms;
    err_t rc;

    if (o == NULL)
        return err_set(msg, ERR_INVALID, "prometheus.url: required");
    if ((rc = known(o, prom_fields, "prometheus", msg)) ||
        (rc = str(o, "url", "prometheus.", &cfg->url, msg)) ||
        (rc = str(o, "bearerTokenFile", "prometheus.", &cfg->token_file, msg)) ||
        (rc = str(o, "caFile", "prometheus.", &cfg->ca_file, msg)) ||
        (rc = duration(o, "timeout", "prometheus.", 1000, TIMEOUT_MAX_MS, &ms, NULL, msg)))
        return rc;
    cfg->timeout_ms = (uint32_t)ms;
    if (cfg->url == NULL)
        return err_set(msg, ERR_INVALID, "prometheus.url: required");
    if (strncmp(cfg->url, "http://", 7) != 0 && strncmp(cfg->url, "https://", 8) != 0)
        return err_set(msg, ERR_INVALID,
                       "prometheus.url: %.128s: must start with http:// or "
                       "https://",
                       cfg->url);
    for (const char *p = cfg->url; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == '?' || *p == '#' || *p == 0x7f)
            return err_set(msg, ERR_INVALID,
                           "prometheus.url: %.128s: no spaces, query or "
                           "fragment",
                           cfg->url);
    while (strlen(cfg->url) > 8 && cfg->url[strlen(cfg->url) - 1] == '/')
        cfg->url[strlen(cfg->url) - 1] = '\0';
    v = json_object_get(o, "insecureSkipTLSVerify");
    if (v != NULL && !json_is_boolean(v))
        return err_set(msg, ERR_INVALID, "prometheus.insecureSkipTLSVerify: must be a boolean");
    cfg->insecure = json_is_true(v);
    v = json_object_get(o, "maxResponseBytes");
    if (v != NULL) {
        if (!json_is_integer(v) || json_integer_value(v) < (json_int_t)MAX_BYTES_MIN ||
            (uint64_t)json_integer_value(v) > (uint64_t)MAX_BYTES_MAX)
            return err_set(msg, ERR_INVALID,
                           "prometheus.maxResponseBytes: must be an integer in %u..%zu",
                           MAX_BYTES_MIN, MAX_BYTES_MAX);
        cfg->max_bytes = (size_t)json_integer_value(v);
    }
    return ERR_OK;
}

static err_t rules(idle_config_t *cfg, const json_t *a, err_msg_t *msg)
{
    size_t i;
    json_t *item;
    err_t rc;

    if (a == NULL)
        return ERR_OK;
    if (!json_is_array(a) || json_array_size(a) > 10000)
        return err_set(msg, ERR_INVALID, "policies: must be a list (at most 10000)");
    cfg->rules = calloc(json_array_size(a) + 1, sizeof(*cfg->rules));
    if (cfg->rules == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    json_array_foreach(a, i, item)
    {
        idle_rule_t *r = &cfg->rules[i];
        char path[64];

        snprintf(path, sizeof(path), "policies[%zu]", i);
        cfg->nrules = i + 1;
        if ((rc = known(item, policy_fields, path, msg)))
            return rc;
        snprintf(path, sizeof(path), "policies[%zu].", i);
        r->policy = cfg->defaults;
        if ((rc = str(item, "clusterQueue", path, &r->cluster_queue, msg)) ||
            (rc = str(item, "localQueue", path, &r->local_queue, msg)) ||
            (rc = policy(item, path, &r->policy, msg)))
            return rc;
        if ((r->cluster_queue == NULL) == (r->local_queue == NULL))
            return err_set(msg, ERR_INVALID,
                           "policies[%zu]: exactly one of clusterQueue and "
                           "localQueue",
                           i);
        if (r->local_queue != NULL &&
            (strchr(r->local_queue, '/') == NULL || strchr(r->local_queue, '/') == r->local_queue ||
             strchr(r->local_queue, '/')[1] == '\0'))
            return err_set(msg, ERR_INVALID, "%slocalQueue: %.128s: must be namespace/name", path,
                           r->local_queue);
        for (size_t j = 0; j < i; j++) {
            const idle_rule_t *o = &cfg->rules[j];
            if ((r->cluster_queue && o->cluster_queue &&
                 strcmp(r->cluster_queue, o->cluster_queue) == 0) ||
                (r->local_queue && o->local_queue && strcmp(r->local_queue, o->local_queue) == 0))
                return err_set(msg, ERR_INVALID, "policies[%zu]: the same queue as policies[%zu]",
                               i, j);
        }
    }
    return ERR_OK;
}

static err_t dup_default(char **dst, const char *s, err_msg_t *msg)
{
    if (*dst != NULL)
        return ERR_OK;
    *dst = strdup(s);
    return *dst == NULL ? err_set(msg, ERR_NOMEM, "out of memory") : ERR_OK;
}

err_t idle_config_from_json(const json_t *doc, idle_config_t **out, err_msg_t *msg)
{
    idle_config_t *cfg = calloc(1, sizeof(*cfg));
    static const struct {
        const char *field;
        size_t off;
        bool metric;
    } names[] = {
        {"metric", offsetof(idle_config_t, metric), true},
        {"podLabel", offsetof(idle_config_t, pod_label), false},
        {"namespaceLabel", offsetof(idle_config_t, namespace_label), false},
        {"gpuLabel", offsetof(idle_config_t, gpu_label), false},
    };
    err_t rc;

    if (cfg == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    cfg->timeout_ms = 10000;
    cfg->max_bytes = (size_t)8 << 20;
    cfg->interval_ms = 60000;
    cfg->defaults.idle_ms = DEFAULT_IDLE_MS;
    if ((rc = known(doc, top_fields, "", msg)) ||
        (rc = prometheus(cfg, json_object_get(doc, "prometheus"), msg)) ||
        (rc = duration(doc, "interval", "", INTERVAL_MIN_MS, INTERVAL_MAX_MS, &cfg->interval_ms,
                       NULL, msg)) ||
        (rc = duration(doc, "window", "", INTERVAL_MIN_MS, INTERVAL_MAX_MS, &cfg->window_ms, NULL,
                       msg)) ||
        (rc = str(doc, "gpuResource", "", &cfg->resource, msg)) ||
        (rc = policy(doc, "", &cfg->defaults, msg)))
        goto fail;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char **dst = (char **)((char *)cfg + names[i].off);
        if ((rc = str(doc, names[i].field, "", dst, msg)))
            goto fail;
        if (*dst != NULL && !prom_name(*dst, names[i].metric)) {
            rc = err_set(msg, ERR_INVALID, "%s: %.128s: not a Prometheus %s name", names[i].field,
                         *dst, names[i].metric ? "metric" : "label");
            goto fail;
        }
    }
    if ((rc = dup_default(&cfg->metric, "DCGM_FI_DEV_GPU_UTIL", msg)) ||
        (rc = dup_default(&cfg->pod_label, "pod", msg)) ||
        (rc = dup_default(&cfg->namespace_label, "namespace", msg)) ||
        (rc = dup_default(&cfg->gpu_label, "gpu", msg)) ||
        (rc = dup_default(&cfg->resource, "nvidia.com/gpu", msg)) ||
        (rc = rules(cfg, json_object_get(doc, "policies"), msg)))
        goto fail;
    if (cfg->window_ms == 0)
        cfg->window_ms = cfg->interval_ms > 60000 ? cfg->interval_ms : 60000;
    if (cfg->window_ms < cfg->interval_ms) {
        rc = err_set(msg, ERR_INVALID,
                     "window: must be at least interval (each query covers the "
                     "time since the one before)");
        goto fail;
    }
    if (strcmp(cfg->pod_label, cfg->namespace_label) == 0 ||
        strcmp(cfg->pod_label, cfg->gpu_label) == 0 ||
        strcmp(cfg->namespace_label, cfg->gpu_label) == 0) {
        rc = err_set(msg, ERR_INVALID, "podLabel, namespaceLabel, gpuLabel: must differ");
        goto fail;
    }
    *out = cfg;
    return ERR_OK;
fail:
    idle_config_free(cfg);
    return rc;
}

static err_t on_doc(void *ctx, size_t index, int line, json_t *doc)
{
    json_t **first = ctx;

    (void)line;
    if (index > 0 || *first != NULL)
        return ERR_INVALID; /* one document only */
    *first = json_incref(doc);
    return ERR_OK;
}

err_t idle_config_parse(const char *text, size_t len, idle_config_t **out, err_msg_t *msg)
{
    json_t *doc = NULL;
    err_t rc = yaml_load_string(text, len, on_doc, &doc, msg);

    if (rc == ERR_INVALID && doc != NULL)
        rc = err_set(msg, ERR_INVALID, "one YAML document only");
    else if (rc == ERR_OK && doc == NULL)
        rc = err_set(msg, ERR_INVALID, "prometheus.url: required");
    if (rc == ERR_OK)
        rc = idle_config_from_json(doc, out, msg);
    json_decref(doc);
    return rc;
}

const idle_policy_t *idle_config_rule(const idle_config_t *cfg, const char *lq_key, const char *cq)
{
    for (size_t i = 0; lq_key != NULL && i < cfg->nrules; i++)
        if (cfg->rules[i].local_queue != NULL && strcmp(cfg->rules[i].local_queue, lq_key) == 0)
            return &cfg->rules[i].policy;
    for (size_t i = 0; cq != NULL && i < cfg->nrules; i++)
        if (cfg->rules[i].cluster_queue != NULL && strcmp(cfg->rules[i].cluster_queue, cq) == 0)
            return &cfg->rules[i].policy;
    return NULL;
}
