/* idlectl -- idle reclaim in the operator: query GPU utilisation, warn, then deactivate. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl_int.h"

#include "ctrl/idle.h"
#include "ctrl/promq.h"
#include "ctrl/wlstatus.h"
#include "jobs/framework.h"
#include "model/quantity.h"
#include "obs/metrics.h"
#include "util/duration.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Once per interval (leader only, caches synced):
 *
 *   query: max by (namespace, pod, gpu) (max_over_time(DCGM_FI_DEV_GPU_UTIL{pod!=""}[<interval>]))
 *     -> per pod: how many GPU series, the highest value, any undecodable one
 *   join: the Pods sluice started carry the label kueue.x-k8s.io/podset and the annotation
 *     kueue.x-k8s.io/workload (jobs_start() writes both into every admitted pod template); a
 *     Pod informer restricted to that label maps each running pod to its Workload and says how
 *     many GPUs (spec.containers[].resources limits, else requests, of the configured resource)
 *     it holds. A Workload's sample is the sum of its running pods (idle_sample_add).
 *   step: each admitted, active Workload under a policy (LocalQueue annotations, LocalQueue
 *     rule, ClusterQueue annotations, ClusterQueue rule: the first found) steps its state
 *     (idle.h) and the action is written:
 *       WARN        Event GPUsIdle + condition sluice.dev/Idle=True (reason GPUsIdle)
 *       DEACTIVATE  Event IdleGPUsDeactivated + spec.active=false, Evicted DeactivatedDueToIdleGPUs
 *       not idle    condition sluice.dev/Idle=False (GPUsActive / MetricsUnavailable) when True
 *
 * A query that fails or an answer that cannot be decoded is an UNKNOWN sample for every
 * Workload: the clocks restart and nothing is deactivated on missing data. The state lives in
 * memory only; a new leader starts every clock again (later, never sooner).
 */

#define QUERY_MAX 1024

typedef struct idle_pod_s {
    char *workload; /* owned: annotation kueue.x-k8s.io/workload */
    uint32_t gpus;  /* of the configured resource */
    bool terminal;  /* Succeeded or Failed: holds no GPU any more */
} idle_pod_t;

/* What the answer said about one pod. */
typedef struct pod_obs_s {
    uint32_t series;
    uint32_t max_milli;
    bool bad;
} pod_obs_t;

struct ctrl_idle_s {
    ctrl_t *c;
    const idle_config_t *cfg; /* borrowed from c->cfg */
    promq_t *q;               /* owned */
    kube_informer_t *pods;    /* owned */
    util_hmap_t state;        /* Workload key -> idle_state_t * (owned) */
    util_hmap_t bad;          /* "<Kind> <key>" of a queue with invalid annotations -> a hash of
                                 the error logged for it (logged once, again when it changes) */
    uint64_t last_ms;         /* loop time of the last query, 0: none yet */
    bool inflight;
    bool failing; /* the last query failed (logged once per failing stretch) */
    bool closing;
    int open; /* the informer and the query client until closed */
    char query[QUERY_MAX];
    metrics_registry_t *reg; /* owned */
    metrics_family_t *m_warn, *m_deact, *m_queries, *m_tracked;
    void (*on_closed)(void *data);
    void *closed_data;
};

static const kube_resource_t pods_res = {"", "v1", "pods", true};

/* ---- the Pod cache ----------------------------------------------------------------------- */

static uint32_t gpus_of(json_t *resources, const char *name)
{
    json_t *v = json_object_get(json_object_get(resources, "limits"), name);
    quantity_t q;
    int64_t n;

    if (v == NULL)
        v = json_object_get(json_object_get(resources, "requests"), name);
    if (!json_is_string(v) ||
        quantity_parse(json_string_value(v), json_string_length(v), &q, NULL) != ERR_OK ||
        quantity_value(q, &n) != ERR_OK || n <= 0)
        return 0;
    return n > 1024 ? 1024 : (uint32_t)n;
}

static void *pod_decode(json_t *obj, void *data)
{
    const ctrl_idle_t *ix = data;
    idle_pod_t *p = calloc(1, sizeof(*p));
    const char *wl = json_string_value(
        json_object_get(json_object_get(json_object_get(obj, "metadata"), "annotations"),
                        JOBS_ANNOTATION_WORKLOAD));
    const char *phase = json_string_value(json_object_get(json_object_get(obj, "status"), "phase"));
    json_t *ctr;
    size_t i;

    if (p == NULL)
        return NULL;
    if (wl != NULL && (p->workload = strdup(wl)) == NULL) {
        free(p);
        return NULL;
    }
    p->terminal =
        phase != NULL && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0);
    json_array_foreach(json_object_get(json_object_get(obj, "spec"), "containers"), i, ctr)
    {
        uint32_t g = gpus_of(json_object_get(ctr, "resources"), ix->cfg->resource);
        p->gpus = p->gpus + g > 4096 ? 4096 : p->gpus + g;
    }
    return p;
}

static void pod_free(void *value, void *data)
{
    idle_pod_t *p = value;

    (void)data;
    if (p != NULL)
        free(p->workload);
    free(p);
}

static void on_pods_error(kube_informer_t *inf, const kube_result_t *res, const char *verb,
                          void *data)
{
    ctrl_idle_t *ix = data;

    ctrl__on_informer_error(inf, res, verb, ix->c);
}

/* ---- metrics ------------------------------------------------------------------------------ */

static const char *const L_Q[] = {"cluster_queue", "namespace", "local_queue", NULL};
static const char *const L_RESULT[] = {"result", NULL};
static const char *const L_STATE[] = {"state", NULL};

static err_t metrics_init(ctrl_idle_t *ix)
{
    err_msg_t msg;

    ix->reg = metrics_registry_new(0);
    if (ix->reg == NULL ||
        metrics_family_add(ix->reg, "sluice_idle_warnings_total",
                           "Workloads warned that their GPUs are idle (idle reclaim)",
                           METRICS_COUNTER, L_Q, NULL, 0, &ix->m_warn, &msg) != ERR_OK ||
        metrics_family_add(ix->reg, "sluice_idle_deactivations_total",
                           "Workloads deactivated because their GPUs were idle (idle reclaim)",
                           METRICS_COUNTER, L_Q, NULL, 0, &ix->m_deact, &msg) != ERR_OK ||
        metrics_family_add(ix->reg, "sluice_idle_queries_total",
                           "GPU utilisation queries of idle reclaim by result (success, error)",
                           METRICS_COUNTER, L_RESULT, NULL, 0, &ix->m_queries, &msg) != ERR_OK ||
        metrics_family_add(ix->reg, "sluice_idle_workloads",
                           "Admitted Workloads whose GPUs are idle now, by state (idle: the clock "
                           "runs; warned: deactivation follows unless they are used)",
                           METRICS_GAUGE, L_STATE, NULL, 0, &ix->m_tracked, &msg) != ERR_OK)
        return ERR_NOMEM;
    return ERR_OK;
}

err_t ctrl__idle_metrics_render(ctrl_t *c, metrics_buf_t *out)
{
    ctrl_idle_t *ix = c->idle;
    size_t idle = 0, warned = 0;
    const char *key;
    void *v;

    if (ix == NULL)
        return ERR_OK;
    /* From the states of the last answer: a follower, which queries nothing, shows zeros. */
    for (size_t pos = 0; util_hmap_next(&ix->state, &pos, &key, &v);) {
        const idle_state_t *st = v;
        if (st->warned_ms != 0)
            warned++;
        else
            idle++;
    }
    if (metrics_gauge_set(ix->m_tracked, (const char *const[]){"idle"}, (double)idle) != ERR_OK ||
        metrics_gauge_set(ix->m_tracked, (const char *const[]){"warned"}, (double)warned) != ERR_OK)
        return ERR_NOMEM;
    return metrics_render(ix->reg, out);
}

/* ---- lifecycle ---------------------------------------------------------------------------- */

static void idle_free(ctrl_idle_t *ix)
{
    const char *key;
    void *v;

    for (size_t pos = 0; util_hmap_next(&ix->state, &pos, &key, &v);)
        free(v);
    util_hmap_fini(&ix->state);
    util_hmap_fini(&ix->bad);
    metrics_registry_free(ix->reg);
    free(ix);
}

err_t ctrl__idle_new(ctrl_t *c, err_msg_t *msg)
{
    const idle_config_t *cfg = c->cfg->idle;
    ctrl_idle_t *ix;
    kube_codec_t codec = {pod_decode, pod_free, NULL};
    kube_informer_opts_t opts = {.label_selector = JOBS_LABEL_PODSET};
    kube_informer_typed_handlers_t h = {NULL, NULL, NULL, NULL, on_pods_error};
    err_t rc;

    if (cfg == NULL)
        return ERR_OK;
    ix = calloc(1, sizeof(*ix));
    if (ix == NULL)
        return err_set(msg, ERR_NOMEM, "idle reclaim: out of memory");
    ix->c = c;
    ix->cfg = cfg;
    util_hmap_init(&ix->state, 0);
    util_hmap_init(&ix->bad, 0);
    codec.data = ix;
    if (metrics_init(ix) != ERR_OK) {
        idle_free(ix);
        return err_set(msg, ERR_NOMEM, "idle reclaim: out of memory");
    }
    rc = promq_idle_query(cfg, ix->query, sizeof(ix->query), msg);
    if (rc == ERR_OK)
        rc = promq_new(c->loop, cfg, &ix->q, msg);
    if (rc != ERR_OK) {
        idle_free(ix);
        return err_prefix(msg, rc, "idle reclaim: ");
    }
    ix->pods = kube_informer_new_typed(c->client, &pods_res, &opts, &codec, &h, ix);
    if (ix->pods == NULL) {
        promq_close(ix->q, NULL, NULL);
        idle_free(ix);
        return err_set(msg, ERR_NOMEM, "idle reclaim: out of memory");
    }
    ix->open = 2;
    c->idle = ix;
    return ERR_OK;
}

err_t ctrl__idle_start(ctrl_t *c, err_msg_t *msg)
{
    if (c->idle == NULL)
        return ERR_OK;
    return kube_informer_start(c->idle->pods, msg);
}

static void on_part_closed(void *data)
{
    ctrl_idle_t *ix = data;
    void (*cb)(void *) = ix->on_closed;
    void *cb_data = ix->closed_data;

    if (--ix->open > 0)
        return;
    idle_free(ix);
    if (cb != NULL)
        cb(cb_data);
}

void ctrl__idle_close(ctrl_t *c, void (*on_closed)(void *data), void *data)
{
    ctrl_idle_t *ix = c->idle;

    if (ix == NULL)
        return;
    ix->closing = true;
    ix->on_closed = on_closed;
    ix->closed_data = data;
    kube_informer_close(ix->pods, on_part_closed, ix);
    promq_close(ix->q, on_part_closed, ix);
}

/* ---- policy ------------------------------------------------------------------------------ */

/* The policy in the annotations of queue `what` ("LocalQueue ns/name"): ERR_OK with *found;
 * ERR_INVALID when they are wrong, logged once per queue and error text (each Workload of the
 * queue asks again at each query). */
static err_t queue_policy(ctrl_idle_t *ix, const char *what, const object_t *o, idle_policy_t *out,
                          bool *found)
{
    err_msg_t msg = {{0}};
    uint64_t h = 1469598103934665603ULL;

    if (idle_policy_from_annotations(&object_meta_const(o)->annotations, &ix->cfg->defaults, out,
                                     found, &msg) == ERR_OK) {
        util_hmap_del(&ix->bad, what);
        return ERR_OK;
    }
    for (const char *p = msg.text; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    h |= 1; /* never NULL as a map value */
    if ((uint64_t)(uintptr_t)util_hmap_get(&ix->bad, what) != (h & UINTPTR_MAX)) {
        ctrl__log(ix->c, CTRL_LOG_ERROR,
                  "idle reclaim: %s: %s (no idle-reclaim policy applies to its Workloads)", what,
                  msg.text);
        if (util_hmap_put(&ix->bad, what, (void *)(uintptr_t)h, NULL) != ERR_OK)
            ctrl__log(ix->c, CTRL_LOG_DEBUG, "idle reclaim: out of memory");
    }
    return ERR_INVALID;
}

/* The policy of Workload `w` (into *out), false when none applies; `origin` names the queue it
 * comes from. A queue with invalid annotations applies no policy (its Workloads are left alone
 * rather than judged by a guess). */
static bool policy_of(ctrl_idle_t *ix, const ctrl_wl_t *w, const char *ns, idle_policy_t *out,
                      char *origin, size_t n)
{
    ctrl_t *c = ix->c;
    const char *cq = w->wl.admission ? w->wl.admission->cluster_queue : NULL;
    char lq_key[CTRL_KEY_MAX] = "", what[CTRL_KEY_MAX + 16];
    const object_t *o;
    const idle_policy_t *rule;
    bool found = false;

    if (w->wl.queue_name != NULL)
        snprintf(lq_key, sizeof(lq_key), "%s/%s", ns, w->wl.queue_name);
    o = lq_key[0] ? ctrl__q(c, CTRL_LQ, lq_key) : NULL;
    snprintf(what, sizeof(what), "LocalQueue %s", lq_key);
    if (o != NULL && queue_policy(ix, what, o, out, &found) != ERR_OK)
        return false;
    if (found || (rule = idle_config_rule(ix->cfg, lq_key[0] ? lq_key : NULL, NULL)) != NULL) {
        if (!found)
            *out = *rule;
        snprintf(origin, n, "%s", what);
        return true;
    }
    o = cq != NULL ? ctrl__q(c, CTRL_CQ, cq) : NULL;
    snprintf(what, sizeof(what), "ClusterQueue %s", cq ? cq : "");
    if (o != NULL && queue_policy(ix, what, o, out, &found) != ERR_OK)
        return false;
    if (found || (rule = idle_config_rule(ix->cfg, NULL, cq)) != NULL) {
        if (!found)
            *out = *rule;
        snprintf(origin, n, "%s", what);
        return true;
    }
    return false;
}

/* ---- one answer -------------------------------------------------------------------------- */

static void on_series(const promq_series_t *s, void *ud)
{
    util_hmap_t *pods = ud;
    char key[CTRL_KEY_MAX];
    pod_obs_t *o;

    if (s->ns == NULL || s->pod == NULL)
        return; /* not a pod's GPU: nothing to join */
    snprintf(key, sizeof(key), "%s/%s", s->ns, s->pod);
    o = util_hmap_get(pods, key);
    if (o == NULL) {
        o = calloc(1, sizeof(*o));
        if (o == NULL || util_hmap_put(pods, key, o, NULL) != ERR_OK) {
            free(o);
            return; /* out of memory: the pod reads as without series (unknown, not idle) */
        }
    }
    if (o->series < UINT32_MAX)
        o->series++;
    if (!s->valid)
        o->bad = true;
    else if (s->milli > o->max_milli)
        o->max_milli = s->milli;
}

static void free_values(util_hmap_t *m)
{
    const char *key;
    void *v;

    for (size_t pos = 0; util_hmap_next(m, &pos, &key, &v);)
        free(v);
    util_hmap_fini(m);
}

/* Each Workload's sample from the pod cache and the per-pod answer `obs` (NULL: no answer). */
static void samples(ctrl_idle_t *ix, util_hmap_t *obs, util_hmap_t *out)
{
    const char *key;
    void *v;

    for (size_t pos = 0; kube_informer_next(ix->pods, &pos, &key, &v);) {
        const idle_pod_t *p = v;
        const char *slash = strchr(key, '/');
        const pod_obs_t *o = obs != NULL ? util_hmap_get(obs, key) : NULL;
        char wkey[CTRL_KEY_MAX];
        idle_sample_t *s;

        if (p->workload == NULL || p->terminal || p->gpus == 0 || slash == NULL)
            continue;
        snprintf(wkey, sizeof(wkey), "%.*s/%s", (int)(slash - key), key, p->workload);
        s = util_hmap_get(out, wkey);
        if (s == NULL) {
            s = calloc(1, sizeof(*s));
            if (s == NULL || util_hmap_put(out, wkey, s, NULL) != ERR_OK) {
                free(s);
                continue; /* out of memory: no sample, which reads as unknown */
            }
        }
        idle_sample_add(s, p->gpus, o ? o->series : 0, o ? o->max_milli : 0, o ? o->bad : false);
    }
}

/* Condition sluice.dev/Idle of `w` set to `status`/`reason`/`message` when it differs. */
static void set_condition(ctrl_t *c, const char *key, const ctrl_wl_t *w, const char *status,
                          const char *reason, const char *message)
{
    json_t *view = ctrl_wl_json(w);
    bool changed = false;
    json_t *patch = view ? wlstatus_cond_patch(view, IDLE_CONDITION, status, reason, message,
                                               ctrl__now_ms() / 1000, &changed)
                         : NULL;

    if (patch != NULL || changed || view == NULL)
        ctrl__wl_status(c, CTRL_OP_WL_IDLE, key, patch);
    json_decref(view);
}

static void act(ctrl_idle_t *ix, const char *key, const ctrl_wl_t *w, const char *ns,
                const idle_policy_t *p, const char *origin, idle_state_t *st,
                const idle_sample_t *s, idle_action_t a, int64_t now)
{
    ctrl_t *c = ix->c;
    char text[1024], idle[DURATION_STR_MAX], total[DURATION_STR_MAX], left[DURATION_STR_MAX];
    char util[16], thr[16];
    const char *labels[] = {w->wl.admission ? w->wl.admission->cluster_queue : "", ns,
                            w->wl.queue_name ? w->wl.queue_name : "", NULL};

    duration_format((now - st->since_ms) / 1000 * 1000, idle);
    duration_format(p->idle_ms, total);
    idle_percent_format(st->max_milli, util, sizeof(util));
    idle_percent_format(p->threshold_milli, thr, sizeof(thr));
    switch (a) {
    case IDLE_ACT_WARN: {
        int64_t rest = p->idle_ms - (now - st->since_ms);
        duration_format(rest > 0 ? rest / 1000 * 1000 : 0, left);
        snprintf(text, sizeof(text),
                 "The workload's %u GPUs have been idle for %s (utilisation at most %s, threshold "
                 "%s, policy of %s): it will be deactivated (spec.active=false) once idle for %s, "
                 "in about %s, unless its GPUs are used",
                 s->gpus, idle, util, thr, origin, total, left);
        ctrl__event(c, CTRL_WORKLOAD, &w->wl.meta, "Warning", "GPUsIdle", "%s", text);
        set_condition(c, key, w, "True", "GPUsIdle", text);
        metrics_counter_add(ix->m_warn, labels, 1);
        ctrl__log(c, CTRL_LOG_INFO, "workload %s: GPUsIdle: %s", key, text);
        break;
    }
    case IDLE_ACT_DEACTIVATE:
        snprintf(text, sizeof(text),
                 "The workload is deactivated by idle reclaim: its %u GPUs were idle for %s "
                 "(utilisation at most %s, threshold %s, idleFor %s, policy of %s). Set "
                 "spec.active to true to queue it again",
                 s->gpus, idle, util, thr, total, origin);
        ctrl__event(c, CTRL_WORKLOAD, &w->wl.meta, "Warning", "IdleGPUsDeactivated", "%s", text);
        ctrl__log(c, CTRL_LOG_INFO, "workload %s: %s: %s", key, IDLE_REASON, text);
        ctrl__deactivate(c, key, IDLE_REASON, text, NULL);
        metrics_counter_add(ix->m_deact, labels, 1);
        free(util_hmap_del(&ix->state, key));
        break;
    default:
        break;
    }
}

/* Is `w` holding GPUs the policy may take back: admitted, active, not finishing or leaving? */
static bool eligible(ctrl_t *c, const char *key, const ctrl_wl_t *w)
{
    return w->valid && w->wl.active && !w->wl.meta.deleting && !w->wl.conditions.finished &&
           !w->wl.conditions.evicted && w->wl.admission != NULL && ctrl_wl_reserved(w) &&
           ctrl_wl_is(w, "Admitted") && ctrl__eviction(c, key) == NULL;
}

/* Step every admitted Workload with the answer `obs` (NULL: the query failed). */
static void evaluate(ctrl_idle_t *ix, util_hmap_t *obs)
{
    ctrl_t *c = ix->c;
    util_hmap_t wls;
    const char *key;
    ctrl_wl_t *rec;
    int64_t now = ctrl__now_ms();

    util_hmap_init(&wls, 0);
    samples(ix, obs, &wls);
    CTRL_FOREACH(c, CTRL_WORKLOAD, key, rec)
    {
        const ctrl_wl_t *w = ctrl__wl(c, key);
        idle_sample_t none = {0}, *sp;
        idle_policy_t p;
        idle_state_t *st;
        idle_action_t a;
        char ns[256], origin[CTRL_KEY_MAX + 32];
        const char *slash = strchr(key, '/');
        bool warned;

        if (w == NULL || slash == NULL || ctrl__busy(c, CTRL_WORKLOAD, key))
            continue;
        snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key), key);
        warned = ctrl_wl_is(w, IDLE_CONDITION);
        if (!eligible(c, key, w) || !policy_of(ix, w, ns, &p, origin, sizeof(origin))) {
            free(util_hmap_del(&ix->state, key));
            if (warned && eligible(c, key, w))
                set_condition(c, key, w, "False", "NoPolicy",
                              "No idle-reclaim policy applies to the workload's queues any more");
            continue;
        }
        sp = util_hmap_get(&wls, key);
        if (sp == NULL)
            sp = &none;
        idle_sample_end(sp, p.threshold_milli);
        if (obs == NULL)
            sp->kind = IDLE_SAMPLE_UNKNOWN;
        st = util_hmap_get(&ix->state, key);
        if (st == NULL && sp->kind == IDLE_SAMPLE_IDLE) {
            st = calloc(1, sizeof(*st));
            if (st == NULL || util_hmap_put(&ix->state, key, st, NULL) != ERR_OK) {
                free(st);
                continue; /* out of memory: this Workload's clock starts next time */
            }
        }
        if (st == NULL) {
            if (warned) /* a warning of an earlier leader, or of a stretch that ended */
                set_condition(c, key, w, "False",
                              sp->kind == IDLE_SAMPLE_BUSY ? "GPUsActive" : "MetricsUnavailable",
                              sp->kind == IDLE_SAMPLE_BUSY
                                  ? "The workload's GPUs are in use"
                                  : "No complete GPU utilisation for the workload: idle time is "
                                    "not counted");
            continue;
        }
        a = idle_step(st, &p, sp, now);
        if (a == IDLE_ACT_CLEAR || sp->kind != IDLE_SAMPLE_IDLE) {
            free(util_hmap_del(&ix->state, key));
            if (warned)
                set_condition(c, key, w, "False",
                              sp->kind == IDLE_SAMPLE_BUSY ? "GPUsActive" : "MetricsUnavailable",
                              sp->kind == IDLE_SAMPLE_BUSY
                                  ? "The workload's GPUs are in use"
                                  : "No complete GPU utilisation for the workload: idle time is "
                                    "not counted");
            continue;
        }
        act(ix, key, w, ns, &p, origin, st, sp, a, now);
    }
    /* States of Workloads that are gone. */
    for (size_t pos = 0; util_hmap_next(&ix->state, &pos, &key, NULL);)
        if (ctrl__wl(c, key) == NULL)
            free(util_hmap_del(&ix->state, key));
    free_values(&wls);
}

static void on_answer(promq_t *q, err_t err, const json_t *body, const char *why, void *ud)
{
    ctrl_idle_t *ix = ud;
    ctrl_t *c = ix->c;
    util_hmap_t obs;
    err_msg_t msg = {{0}};
    size_t n = 0;

    (void)q;
    ix->inflight = false;
    if (ix->closing || c->closing)
        return;
    util_hmap_init(&obs, 0);
    if (err == ERR_OK)
        err = promq_parse(body, ix->cfg->namespace_label, ix->cfg->pod_label, on_series, &obs, &n,
                          &msg);
    else
        snprintf(msg.text, sizeof(msg.text), "%s", why);
    metrics_counter_add(ix->m_queries, (const char *const[]){err == ERR_OK ? "success" : "error"},
                        1);
    if (err != ERR_OK) {
        ctrl__log(c, ix->failing ? CTRL_LOG_DEBUG : CTRL_LOG_ERROR,
                  "idle reclaim: query %s: %s (no Workload is judged idle until an answer "
                  "decodes)",
                  ix->cfg->url, msg.text);
        ix->failing = true;
    } else {
        if (ix->failing)
            ctrl__log(c, CTRL_LOG_INFO, "idle reclaim: query %s answers again", ix->cfg->url);
        ix->failing = false;
        ctrl__log(c, CTRL_LOG_DEBUG, "idle reclaim: %zu series", n);
    }
    if (c->fed && c->leader && !c->writes_stopped)
        evaluate(ix, err == ERR_OK ? &obs : NULL);
    free_values(&obs);
}

void ctrl__idle_tick(ctrl_t *c)
{
    ctrl_idle_t *ix = c->idle;
    uint64_t now;
    err_msg_t msg = {{0}};

    if (ix == NULL || ix->inflight || ix->closing || !kube_informer_synced(ix->pods))
        return;
    /* The first query goes out at the first tick after the Pods are listed, the next ones an
     * interval after the one before (read each time: the configuration is borrowed). */
    now = uv_now(c->loop);
    if (ix->last_ms != 0 && now - ix->last_ms < (uint64_t)ix->cfg->interval_ms)
        return;
    if (ix->last_ms != 0 && now - ix->last_ms > 3 * (uint64_t)ix->cfg->interval_ms &&
        util_hmap_len(&ix->state) > 0) {
        /* Queries were missed (not leading, writes stopped, caches resyncing): nobody watched
         * the GPUs meanwhile, so no clock may count that time. */
        ctrl__log(c, CTRL_LOG_INFO, "idle reclaim: no query for %llus: every idle clock restarts",
                  (unsigned long long)((now - ix->last_ms) / 1000));
        free_values(&ix->state);
        util_hmap_init(&ix->state, 0);
    }
    ix->last_ms = now > 0 ? now : 1;
    if (promq_query(ix->q, ix->query, on_answer, ix, &msg) != ERR_OK) {
        ctrl__log(c, CTRL_LOG_ERROR, "idle reclaim: query: %s", msg.text);
        return;
    }
    ix->inflight = true;
}
