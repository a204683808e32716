/* provctl -- the ProvisioningRequest admission check in the operator: AdmissionChecks of
 * controllerName kueue.x-k8s.io/provisioning-request made Active, the cluster autoscaler's
 * ProvisioningRequests created for reserved Workloads, and their conditions turned into check
 * states (Kueue's pkg/controller/admissionchecks/provisioning). The pure parts: provreq.c. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl_int.h"

#include "ctrl/cond.h"
#include "ctrl/provreq.h"
#include "kube/problem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 *   AdmissionCheck (ours)  --once a second-->  Active=True "Active" when spec.parameters names a
 *                                              ProvisioningRequestConfig that exists, else
 *                                              Active=False BadParametersRef (Kueue's reasons)
 *   Workload reserved, check Pending, no request --> GET the Workload (its pod templates: the
 *        cache keeps none) --> POST ppt-<pr>-<podset> PodTemplates and <wl>-<check>-<attempt>
 *        (both owned by the Workload)
 *   request conditions --> check state (provreq_decide): Provisioned -> Ready + podSetUpdates;
 *        Failed / BookingExpired before admission -> Retry (requeueAfterSeconds from
 *        retryStrategy) or Rejected past backoffLimitCount; CapacityRevoked -> Rejected.
 *        checks.c does the rest (evict on Retry, deactivate on Rejected, admit when all Ready;
 *        the Job reconciler merges podSetUpdates into the pod templates at start).
 *   The next attempt is created once the Workload holds quota again with the check Pending.
 */

/* A failed create is tried again after this long. */
#define PROV_RETRY_MS 10000
/* A request just created is not created again for this long (its watch event comes first). */
#define PROV_SETTLE_MS 2000
/* Reserved Workloads waiting for a provisioning check are looked at again this often. */
#define PROV_RESYNC_MS 5000

struct ctrl_prov_s {
    kube_informer_t *prc_inf;   /* owned: ProvisioningRequestConfigs (raw JSON) */
    kube_informer_t *pr_inf;    /* owned: ProvisioningRequests (raw JSON), every namespace */
    bool prc_absent, pr_absent; /* their LIST answered 404: CRD not installed */
    bool marked;                /* every Workload queued once both informers synced */
    bool problem;               /* the missing-CRD problem is open */
    uint64_t next_resync;       /* loop ms of the next look at every waiting Workload */
    util_hmap_t creating;       /* "<wl key>|<check>" -> 1 while its creation runs, else the
                                   loop ms before which it is not tried again */
    util_hmap_t deleting;       /* "<ns>/<pr>" -> 1 while its DELETE runs */
    uint64_t rng;               /* xorshift64 state: the backoff jitter's draws */
    util_hmap_t handed;         /* "<ns>/<pr>" -> hand_t *: its PodTemplates' owner moved to it */
};

/* The handover of one request's PodTemplates (Kueue's syncProvisionRequestsPodTemplates). */
typedef struct hand_s {
    uint32_t pending;    /* PATCHes in flight */
    bool failed;         /* one of them failed: tried again after not_before */
    bool done;           /* every template is owned by the request */
    uint64_t not_before; /* loop ms */
} hand_t;

static const kube_resource_t prc_res = {"kueue.x-k8s.io", "v1beta2", "provisioningrequestconfigs",
                                        false};
static const kube_resource_t pr_res = {"autoscaling.x-k8s.io", "v1", "provisioningrequests", true};
static const kube_resource_t pt_res = {"", "v1", "podtemplates", true};

/* ---- informers ---------------------------------------------------------------------------- */

/* Queue every Workload that has admission checks (a config changed, the caches synced). */
static void mark_all(ctrl_t *c)
{
    const char *key;
    ctrl_wl_t *w;

    if (!c->fed)
        return;
    CTRL_FOREACH(c, CTRL_WORKLOAD, key, w)
    if (w->wl.ncheck_states > 0)
        ctrl__mark_wl(c, key);
}

/* A request changed: queue the Workload owning it. */
static void pr_changed(ctrl_t *c, const json_t *pr)
{
    const json_t *md = json_object_get(pr, "metadata"), *ref;
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    char key[CTRL_KEY_MAX];
    size_t i;

    json_array_foreach(json_object_get(md, "ownerReferences"), i, ref)
    {
        const char *kind = json_string_value(json_object_get(ref, "kind"));
        const char *name = json_string_value(json_object_get(ref, "name"));
        if (kind != NULL && name != NULL && ns != NULL && strcmp(kind, "Workload") == 0 && c->fed) {
            snprintf(key, sizeof(key), "%s/%s", ns, name);
            ctrl__mark_wl(c, key);
        }
    }
}

static void on_obj(kube_informer_t *inf, json_t *obj, void *data)
{
    ctrl_t *c = data;

    if (c->closing || c->prov == NULL)
        return;
    if (inf == c->prov->pr_inf)
        pr_changed(c, obj);
    else
        mark_all(c);
}

/* A request is gone: so is the record of its templates' handover. */
static void on_delete(kube_informer_t *inf, json_t *obj, void *data)
{
    ctrl_t *c = data;
    const json_t *md = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));
    char key[CTRL_KEY_MAX];
    hand_t *h;

    if (!c->closing && c->prov != NULL && inf == c->prov->pr_inf && ns != NULL && name != NULL) {
        snprintf(key, sizeof(key), "%s/%s", ns, name);
        h = util_hmap_get(&c->prov->handed, key);
        if (h != NULL && h->pending == 0) /* else on_handed forgets it */
            free(util_hmap_del(&c->prov->handed, key));
    }
    on_obj(inf, obj, data);
}

static void on_update(kube_informer_t *inf, json_t *old, json_t *obj, void *data)
{
    (void)old;
    on_obj(inf, obj, data);
}

static void on_synced(kube_informer_t *inf, void *data)
{
    ctrl_t *c = data;

    (void)inf;
    if (!c->closing && c->prov != NULL)
        mark_all(c);
}

/* A LIST that answers 404: the kind is not served (its CRD is missing); said by the tick, once,
 * when an AdmissionCheck of ours exists. Other failures are the informer's own retries. */
static void on_error(kube_informer_t *inf, const kube_result_t *res, const char *verb, void *data)
{
    ctrl_t *c = data;
    ctrl_prov_t *p = c->prov;
    bool *absent;

    if (c->closing || p == NULL)
        return;
    absent = inf == p->pr_inf ? &p->pr_absent : &p->prc_absent;
    if (res == NULL || res->err == ERR_OK) {
        if (*absent) {
            *absent = false;
            mark_all(c);
        }
        return;
    }
    if (strcmp(verb, "list") == 0 && res->err == ERR_NOT_FOUND)
        *absent = true;
}

err_t ctrl__prov_new(ctrl_t *c)
{
    kube_informer_handlers_t h = {on_obj, on_update, on_delete, on_synced, on_error};
    ctrl_prov_t *p = calloc(1, sizeof(*p));

    if (p == NULL)
        return ERR_NOMEM;
    util_hmap_init(&p->creating, 0);
    util_hmap_init(&p->deleting, 0);
    util_hmap_init(&p->handed, 0);
    p->rng = (uv_hrtime() ^ (uint64_t)(uintptr_t)p) | 1;
    c->prov = p;
    p->prc_inf = kube_informer_new(c->client, &prc_res, NULL, &h, c);
    p->pr_inf = kube_informer_new(c->client, &pr_res, NULL, &h, c);
    return p->prc_inf != NULL && p->pr_inf != NULL ? ERR_OK : ERR_NOMEM;
}

err_t ctrl__prov_start(ctrl_t *c, err_msg_t *msg)
{
    err_t rc;

    if (c->prov == NULL)
        return ERR_OK;
    rc = kube_informer_start(c->prov->prc_inf, msg);
    if (rc == ERR_OK)
        rc = kube_informer_start(c->prov->pr_inf, msg);
    return rc != ERR_OK ? err_prefix(msg, rc, "informer provisioning requests: ") : ERR_OK;
}

size_t ctrl__prov_close(ctrl_t *c, void (*on_closed)(void *data), void *data)
{
    ctrl_prov_t *p = c->prov;
    size_t n = 0;

    if (p == NULL)
        return 0;
    if (p->prc_inf != NULL) {
        kube_informer_close(p->prc_inf, on_closed, data);
        p->prc_inf = NULL;
        n++;
    }
    if (p->pr_inf != NULL) {
        kube_informer_close(p->pr_inf, on_closed, data);
        p->pr_inf = NULL;
        n++;
    }
    return n;
}

void ctrl__prov_free(ctrl_t *c)
{
    if (c->prov == NULL)
        return;
    util_hmap_fini(&c->prov->creating);
    util_hmap_fini(&c->prov->deleting);
    {
        void *h;
        for (size_t pos = 0; util_hmap_next(&c->prov->handed, &pos, NULL, &h);)
            free(h);
        util_hmap_fini(&c->prov->handed);
    }
    free(c->prov);
    c->prov = NULL;
}

/* ---- configuration ------------------------------------------------------------------------ */

/* Is `o` an AdmissionCheck of this controller? */
static const admission_check_t *our_check(const object_t *o)
{
    const admission_check_t *ac = o != NULL ? &o->u.ac : NULL;

    return ac != NULL && ac->controller_name != NULL &&
                   strcmp(ac->controller_name, PROVREQ_CONTROLLER) == 0
               ? ac
               : NULL;
}

/* Kueue's ConfigFromRef: the config `ac` names, decoded into *cfg (ERR_OK), or why not in
 * `why` (Kueue's messages, and sluice's for a config that does not decode). */
static err_t config_of(ctrl_t *c, const admission_check_t *ac, provreq_config_t *cfg,
                       err_msg_t *why)
{
    const json_t *obj;

    if (!ac->has_parameters)
        return err_set(why, ERR_INVALID, "missing parameters reference");
    if (ac->param_name == NULL || ac->param_name[0] == '\0')
        return err_set(why, ERR_INVALID, "empty name: bad parameters reference");
    if (ac->param_group == NULL || strcmp(ac->param_group, PROVREQ_CONFIG_GROUP) != 0)
        return err_set(why, ERR_INVALID,
                       "wrong group \"%s\", expecting \"%s\": bad parameters "
                       "reference",
                       ac->param_group ? ac->param_group : "", PROVREQ_CONFIG_GROUP);
    if (ac->param_kind == NULL || strcmp(ac->param_kind, PROVREQ_CONFIG_KIND) != 0)
        return err_set(why, ERR_INVALID,
                       "wrong kind \"%s\", expecting \"%s\": bad parameters "
                       "reference",
                       ac->param_kind ? ac->param_kind : "", PROVREQ_CONFIG_KIND);
    if (c->prov->prc_absent)
        return err_set(why, ERR_NOT_FOUND,
                       "the API server does not serve provisioningrequestconfigs.kueue.x-k8s.io "
                       "(its CustomResourceDefinition is not installed)");
    obj = kube_informer_get(c->prov->prc_inf, NULL, ac->param_name);
    if (obj == NULL)
        return err_set(why, ERR_NOT_FOUND,
                       "provisioningrequestconfigs.kueue.x-k8s.io \"%s\" not found",
                       ac->param_name);
    if (provreq_config_decode(obj, cfg, why) != ERR_OK)
        return err_prefix(why, ERR_INVALID, "ProvisioningRequestConfig %s: ", ac->param_name);
    return ERR_OK;
}

/* ---- AdmissionCheck Active ---------------------------------------------------------------- */

void ctrl__prov_tick(ctrl_t *c)
{
    ctrl_prov_t *p = c->prov;
    const char *key;
    const ctrl_qobj_t *q;
    bool ours = false;

    if (p == NULL || !c->fed)
        return;
    /* Forget the creations whose pause is over (the map would keep one entry per Workload). */
    if (util_hmap_len(&p->creating) > 0) {
        json_t *done = json_array();
        size_t pos = 0, i;
        void *v;
        json_t *k;
        while (done != NULL && util_hmap_next(&p->creating, &pos, &key, &v))
            if ((size_t)(uintptr_t)v - 1 != 1 && (size_t)(uintptr_t)v - 1 <= uv_now(c->loop))
                json_array_append_new(done, json_string(key));
        json_array_foreach(done, i, k) util_hmap_del(&p->creating, json_string_value(k));
        json_decref(done);
    }
    /* A safety net under the events: a Workload whose reconcile was skipped while a write held
     * it busy gets no second event from a request that no longer changes. Every few seconds each
     * reserved Workload with a provisioning check not yet Ready is looked at again. */
    if (uv_now(c->loop) >= p->next_resync) {
        ctrl_wl_t *w;
        p->next_resync = uv_now(c->loop) + PROV_RESYNC_MS;
        CTRL_FOREACH(c, CTRL_WORKLOAD, key, w)
        {
            bool waiting = false;
            if (w->wl.ncheck_states == 0 || !ctrl_wl_reserved(w) || w->wl.conditions.finished)
                continue;
            for (size_t i = 0; i < w->wl.ncheck_states; i++)
                waiting =
                    waiting || (w->wl.check_states[i].state != CHECK_STATE_READY &&
                                our_check(ctrl__q(c, CTRL_AC, w->wl.check_states[i].name)) != NULL);
            if (waiting) {
                ctrl__log(c, CTRL_LOG_DEBUG, "workload %s: provisioning: looked at again", key);
                ctrl__mark_wl(c, key);
            }
        }
    }
    CTRL_FOREACH(c, CTRL_AC, key, q)
    {
        const admission_check_t *ac = q->valid ? our_check(&q->obj) : NULL;
        provreq_config_t cfg;
        err_msg_t why = {{0}};
        const char *reason = "Active", *message = "The admission check is active";
        bool active = true;
        char ts[32];
        json_t *patch;
        ctrl_op_t *op;

        if (ac == NULL)
            continue;
        ours = true;
        if (!p->pr_absent && !kube_informer_synced(p->pr_inf))
            continue; /* not known yet */
        if (p->pr_absent) {
            active = false;
            reason = "ProvisioningRequestNotServed";
            message = "the API server does not serve provisioningrequests.autoscaling.x-k8s.io "
                      "(the cluster autoscaler's CustomResourceDefinition is not installed)";
        } else if (!p->prc_absent && !kube_informer_synced(p->prc_inf)) {
            continue;
        } else if (config_of(c, ac, &cfg, &why) != ERR_OK) {
            active = false;
            reason = "BadParametersRef";
            message = why.text;
        } else {
            provreq_config_fini(&cfg);
        }
        /* Kueue writes the condition when its status changes, not for a new reason alone. */
        if ((ac->active == CHECK_ACTIVE_TRUE) == active && ac->active != CHECK_ACTIVE_UNSET)
            continue;
        if (ctrl__busy(c, CTRL_AC, key) || !ctrl__can_write(c, CTRL_WRITE_STATUS))
            continue;
        patch = json_pack("{s:{s:[{s:s,s:s,s:s,s:s,s:s,s:I}]}}", "status", "conditions", "type",
                          "Active", "status", active ? "True" : "False", "reason", reason,
                          "message", message, "lastTransitionTime",
                          cond_time_str(ctrl__now_ms() / 1000, ts, sizeof(ts)),
                          "observedGeneration", (json_int_t)q->obj.u.ac.meta.generation);
        op = patch != NULL ? ctrl__op_new(c, CTRL_OP_QUEUE_STATUS, CTRL_AC, key, CTRL_AC, key)
                           : NULL;
        if (op != NULL) {
            op->cls = CTRL_WRITE_STATUS;
            ctrl__patch(c, op, "status", patch);
            ctrl__log(c, CTRL_LOG_INFO, "admissioncheck %s: Active=%s %s: %s", key,
                      active ? "True" : "False", reason, message);
        }
        json_decref(patch);
    }
    /* A missing CRD is said once, while a check of ours needs it. */
    if (ours && (p->pr_absent || p->prc_absent) && !p->problem) {
        p->problem = true;
        problems_set(c->problems, "crd:provisioningrequests", (uint64_t)ctrl__now_ms(),
                     "the API server does not serve %s: the ProvisioningRequest admission "
                     "checks stay inactive until the CustomResourceDefinition is installed",
                     p->pr_absent ? "provisioningrequests.autoscaling.x-k8s.io"
                                  : "provisioningrequestconfigs.kueue.x-k8s.io");
    } else if (p->problem && !(ours && (p->pr_absent || p->prc_absent))) {
        p->problem = false;
        problems_clear(c->problems, "crd:provisioningrequests", (uint64_t)ctrl__now_ms());
    }
}

/* ---- requests ----------------------------------------------------------------------------- */

/* Is request `pr` owned by the Workload with `uid`? */
static bool owned_by(const json_t *pr, const char *uid)
{
    const json_t *ref;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(pr, "metadata"), "ownerReferences"), i, ref)
    {
        const char *u = json_string_value(json_object_get(ref, "uid"));
        if (u != NULL && uid != NULL && strcmp(u, uid) == 0)
            return true;
    }
    return false;
}

/* Kueue's provReqSyncedWithConfig: the same class and every parameter of the config. */
static bool synced_with(const json_t *pr, const provreq_config_t *cfg)
{
    const json_t *spec = json_object_get(pr, "spec"), *v;
    const char *cls = json_string_value(json_object_get(spec, "provisioningClassName")), *k;

    if (cls == NULL || strcmp(cls, cfg->class_name) != 0)
        return false;
    json_object_foreach(cfg->parameters, k, v)
    {
        if (!json_equal(json_object_get(json_object_get(spec, "parameters"), k), v))
            return false;
    }
    return true;
}

static const char *pr_name(const json_t *pr)
{
    return json_string_value(json_object_get(json_object_get(pr, "metadata"), "name"));
}

/* The request of check `check` of Workload `w` with the highest attempt that still matches the
 * config (Kueue's activeOrLastPRForChecks), its attempt in *attempt; NULL when none. */
static const json_t *last_request(ctrl_t *c, const ctrl_wl_t *w, const char *check,
                                  const provreq_config_t *cfg, int32_t *attempt)
{
    const json_t *best = NULL, *pr;
    const char *key;
    size_t pos = 0;

    *attempt = 0;
    while (kube_informer_next(c->prov->pr_inf, &pos, &key, (void **)&pr)) {
        const char *ns =
            json_string_value(json_object_get(json_object_get(pr, "metadata"), "namespace"));
        int32_t a;
        if (ns == NULL || strcmp(ns, w->wl.meta.namespace) != 0 || !owned_by(pr, w->wl.meta.uid))
            continue;
        a = provreq_attempt(pr_name(pr), w->wl.meta.name, check);
        if (a > *attempt && synced_with(pr, cfg)) {
            best = pr;
            *attempt = a;
        }
    }
    return best;
}

static void on_deleted(const kube_result_t *res, void *data)
{
    ctrl_op_t *op = data;

    if (op->c->prov != NULL)
        util_hmap_del(&op->c->prov->deleting, op->key);
    ctrl__on_done(res, op);
}

static bool send_delete(ctrl_op_t *op)
{
    const char *slash = strchr(op->key, '/');
    char ns[256];

    if (slash == NULL)
        return false;
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - op->key), op->key);
    return kube_delete(op->c->client, &pr_res, ns, slash + 1, NULL, on_deleted, op, NULL, NULL) ==
           ERR_OK;
}

/* Delete Workload `w`'s requests except those in `keep` (Kueue's
 * deleteUnusedProvisioningRequests); every one when `keep` is NULL. */
static void delete_unused(ctrl_t *c, const ctrl_wl_t *w, const json_t *const *keep, size_t nkeep)
{
    const json_t *pr;
    const char *key;
    size_t pos = 0;

    while (kube_informer_next(c->prov->pr_inf, &pos, &key, (void **)&pr)) {
        const char *ns =
            json_string_value(json_object_get(json_object_get(pr, "metadata"), "namespace"));
        char pkey[CTRL_KEY_MAX];
        bool kept = false;
        ctrl_op_t *op;
        for (size_t i = 0; i < nkeep; i++)
            kept = kept || keep[i] == pr;
        if (kept || ns == NULL || pr_name(pr) == NULL || strcmp(ns, w->wl.meta.namespace) != 0 ||
            !owned_by(pr, w->wl.meta.uid))
            continue;
        snprintf(pkey, sizeof(pkey), "%s/%s", ns, pr_name(pr));
        /* Its DELETE already runs (each reconcile until the watch shows it gone comes here). */
        if (util_hmap_get(&c->prov->deleting, pkey) != NULL ||
            util_hmap_put_index(&c->prov->deleting, pkey, 1) != ERR_OK)
            continue;
        op = ctrl__op_new(c, CTRL_OP_PROV, CTRL_WORKLOAD, pkey, 0, NULL);
        if (op == NULL) {
            util_hmap_del(&c->prov->deleting, pkey);
            continue;
        }
        op->res = &pr_res;
        op->verb = "delete";
        op->send = send_delete;
        ctrl__log(c, CTRL_LOG_INFO, "provisioningrequest %s: deleted (not used by workload %s/%s)",
                  pkey, w->wl.meta.namespace, w->wl.meta.name);
        if (!ctrl__submit(c, op))
            util_hmap_del(&c->prov->deleting, pkey);
    }
}

/* ---- check states ------------------------------------------------------------------------- */

/* The next 32 random bits (xorshift64), for the backoff jitter. */
static uint32_t draw(ctrl_prov_t *p)
{
    p->rng ^= p->rng << 13;
    p->rng ^= p->rng >> 7;
    p->rng ^= p->rng << 17;
    return (uint32_t)(p->rng >> 32);
}

/* Was pod set `k` of reserved Workload `w` part of its requests under `cfg` (a positive count
 * admitted, and a managed resource among those its assignment gives a flavor)? The cache keeps
 * no pod templates: the assignment's resources stand for the pod set's requests. */
static bool in_request(const ctrl_wl_t *w, size_t k, const provreq_config_t *cfg)
{
    const admission_t *a = w->wl.admission;
    const ctrl_podset_t *ps = &w->podsets[k];

    for (size_t i = 0; a != NULL && i < a->nassignments; i++) {
        const pod_set_assignment_t *psa = &a->assignments[i];
        if (psa->name == NULL || ps->name == NULL || strcmp(psa->name, ps->name) != 0)
            continue;
        if ((psa->has_count ? psa->count : ps->count) <= 0)
            return false;
        if (cfg->nmanaged == 0)
            return true;
        for (size_t m = 0; m < cfg->nmanaged; m++)
            if (kv_list_get(&psa->flavors, cfg->managed[m]) != NULL)
                return true;
        return false;
    }
    return false;
}

/* Set check `i`'s entry of `list` (status.admissionChecks as written) to verdict `v`. */
static bool apply_verdict(json_t *list, size_t i, const admission_check_state_t *cur,
                          const provreq_verdict_t *v, json_t *updates)
{
    json_t *e = json_array_get(list, i);
    char ts[32];

    if (e == NULL)
        return false;
    if (v->state != cur->state &&
        json_object_set_new(e, "lastTransitionTime",
                            json_string(cond_time_str(ctrl__now_ms() / 1000, ts, sizeof(ts)))))
        return false;
    if (json_object_set_new(e, "state", json_string(ctrl__check_state_name(v->state))) ||
        json_object_set_new(e, "message", json_string(v->message)))
        return false;
    if (v->set_requeue &&
        json_object_set_new(e, "requeueAfterSeconds", json_integer(v->requeue_after_s)))
        return false;
    if (v->state == CHECK_STATE_READY && updates != NULL)
        return json_object_set(e, "podSetUpdates", updates) == 0;
    if (v->state == CHECK_STATE_READY)
        json_object_del(e, "podSetUpdates"); /* no request needed */
    return true;
}

/* The Workload's status.admissionChecks as it is, one entry per state. NULL on OOM. */
static json_t *current_list(const ctrl_wl_t *w)
{
    json_t *list = json_array();
    int64_t now = ctrl__now_ms() / 1000;

    for (size_t i = 0; i < w->wl.ncheck_states && list != NULL; i++)
        if (json_array_append_new(list, ctrl__checks_entry(&w->wl.check_states[i], now)) != 0) {
            json_decref(list);
            list = NULL;
        }
    return list;
}

static void write_list(ctrl_t *c, const char *key, const ctrl_wl_t *w, json_t *list)
{
    json_t *patch = json_pack("{s:{s:s},s:{s:O}}", "metadata", "resourceVersion",
                              w->wl.meta.resource_version ? w->wl.meta.resource_version : "",
                              "status", "admissionChecks", list);

    ctrl__wl_status(c, CTRL_OP_WL_CHECKS, key, patch); /* consumes patch */
}

/* ---- creating a request ------------------------------------------------------------------- */

static void create_key(const char *wkey, const char *check, char *buf, size_t n)
{
    snprintf(buf, n, "%s|%s", wkey, check);
}

/* Creation of `ckey` ended: not tried again for PROV_SETTLE_MS (ok: until the informer has
 * the new request) or PROV_RETRY_MS (failed). */
static void create_end(ctrl_t *c, const char *ckey, bool ok)
{
    if (c->prov == NULL)
        return;
    util_hmap_put_index(&c->prov->creating, ckey,
                        (size_t)uv_now(c->loop) + (ok ? PROV_SETTLE_MS : PROV_RETRY_MS));
}

static void on_created(const kube_result_t *res, void *data)
{
    ctrl_op_t *op = data;
    ctrl_t *c = op->c;
    const char *what = json_string_value(json_object_get(op->data, "what"));
    const char *wkey = json_string_value(json_object_get(op->data, "key"));
    const char *ckey = json_string_value(json_object_get(op->data, "ckey"));
    const char *name =
        json_string_value(json_object_get(json_object_get(op->body, "metadata"), "name"));
    bool ok = res->err == ERR_OK || res->err == ERR_EXISTS;
    const ctrl_wl_t *w = wkey != NULL ? ctrl__wl(c, wkey) : NULL;

    if (!c->closing && what != NULL && strcmp(what, "pr") == 0) {
        if (res->err == ERR_OK && w != NULL)
            ctrl__event(c, CTRL_WORKLOAD, &w->wl.meta, "Normal", "ProvisioningRequestCreated",
                        "Created ProvisioningRequest: \"%s\"", name ? name : "");
        else if (!ok && !res->canceled && w != NULL)
            ctrl__event(c, CTRL_WORKLOAD, &w->wl.meta, "Warning", "FailedCreate",
                        "Error creating ProvisioningRequest \"%s\": %s", name ? name : "",
                        res->msg.text);
        if (res->err == ERR_OK)
            ctrl__log(c, CTRL_LOG_INFO, "workload %s: created ProvisioningRequest %s", wkey,
                      name ? name : "");
        if (ckey != NULL)
            create_end(c, ckey, ok);
    } else if (!c->closing && !ok && !res->canceled && w != NULL) {
        ctrl__event(c, CTRL_WORKLOAD, &w->wl.meta, "Warning", "FailedCreate",
                    "Error creating PodTemplate \"%s\": %s", name ? name : "", res->msg.text);
    }
    ctrl__on_done(res, op);
}

static bool send_create(ctrl_op_t *op)
{
    const char *ns =
        json_string_value(json_object_get(json_object_get(op->body, "metadata"), "namespace"));

    return kube_create(op->c->client, op->res, ns, op->body, on_created, op, NULL, NULL) == ERR_OK;
}

/* POST `obj` (stolen) of resource `res`; `what` "pr" or "pt". */
static bool submit_create(ctrl_t *c, const kube_resource_t *res, json_t *obj, const char *what,
                          const char *wkey, const char *ckey)
{
    ctrl_op_t *op =
        obj != NULL ? ctrl__op_new(c, CTRL_OP_PROV, CTRL_WORKLOAD, wkey, 0, NULL) : NULL;

    if (op == NULL) {
        json_decref(obj);
        return false;
    }
    op->res = res;
    op->verb = "create";
    op->body = obj;
    op->data = json_pack("{s:s,s:s,s:s}", "what", what, "key", wkey, "ckey", ckey);
    op->send = send_create;
    if (op->data == NULL) {
        ctrl__op_free(op);
        return false;
    }
    return ctrl__submit(c, op);
}

/* Merge the node labels and tolerations of the flavors assigned to pod set `ps` into pod
 * template `tmpl` (Kueue's podset.FromAssignment + Merge). */
static void merge_flavors(ctrl_t *c, const ctrl_wl_t *w, const char *ps, json_t *tmpl)
{
    const admission_t *a = w->wl.admission;
    json_t *nodes = NULL, *tols = NULL, *spec;
    err_msg_t msg = {{0}};
    const char *k;
    json_t *v;
    size_t i;

    for (i = 0; a != NULL && i < a->nassignments; i++)
        if (a->assignments[i].name != NULL && strcmp(a->assignments[i].name, ps) == 0)
            break;
    if (a == NULL || i == a->nassignments ||
        ctrl__flavor_info(c, &a->assignments[i], &nodes, &tols, &msg) != ERR_OK)
        return;
    spec = json_object_get(tmpl, "spec");
    if (!json_is_object(spec) && json_object_set_new(tmpl, "spec", spec = json_object()) != 0)
        spec = NULL;
    if (spec != NULL && json_object_size(nodes) > 0) {
        json_t *sel = json_object_get(spec, "nodeSelector");
        if (!json_is_object(sel))
            json_object_set_new(spec, "nodeSelector", sel = json_object());
        json_object_foreach(nodes, k, v) if (json_object_get(sel, k) == NULL)
            json_object_set(sel, k, v);
    }
    if (spec != NULL && json_array_size(tols) > 0) {
        json_t *have = json_object_get(spec, "tolerations");
        if (!json_is_array(have))
            json_object_set_new(spec, "tolerations", have = json_array());
        json_array_foreach(tols, i, v) json_array_append(have, v);
    }
    json_decref(nodes);
    json_decref(tols);
}

static void on_wl_got(const kube_result_t *res, void *data)
{
    ctrl_op_t *op = data;
    ctrl_t *c = op->c;
    const char *wkey = json_string_value(json_object_get(op->data, "key"));
    const char *check = json_string_value(json_object_get(op->data, "check"));
    const char *ckey = json_string_value(json_object_get(op->data, "ckey"));
    int32_t attempt = (int32_t)json_integer_value(json_object_get(op->data, "attempt"));
    const ctrl_wl_t *w = wkey != NULL ? ctrl__wl(c, wkey) : NULL;
    const object_t *o = check != NULL ? ctrl__q(c, CTRL_AC, check) : NULL;
    const admission_check_t *ac = our_check(o);
    provreq_config_t cfg;
    err_msg_t msg = {{0}};
    json_t *pr = NULL, *tmpls = NULL, *t;
    kube_result_t r = *res;
    size_t i;

    r.body = NULL; /* a read: nothing for the overlay */
    if (c->closing || c->prov == NULL || ckey == NULL) {
        ctrl__on_done(&r, op);
        return;
    }
    if (res->err != ERR_OK || w == NULL || ac == NULL || config_of(c, ac, &cfg, &msg) != ERR_OK) {
        create_end(c, ckey, res->err == ERR_OK);
        ctrl__on_done(&r, op);
        return;
    }
    if (provreq_build(res->body, check, attempt, &cfg, &pr, &tmpls, &msg) != ERR_OK) {
        ctrl__log(c, CTRL_LOG_ERROR, "workload %s: ProvisioningRequest for check %s: %s", wkey,
                  check, msg.text);
        create_end(c, ckey, false);
    } else if (pr == NULL) {
        /* No pod set uses a managed resource: no request, the check is Ready. */
        json_t *list = current_list(w);
        for (i = 0; list != NULL && i < w->wl.ncheck_states; i++) {
            const admission_check_state_t *cs = &w->wl.check_states[i];
            provreq_verdict_t v = {.state = CHECK_STATE_READY};
            if (cs->name == NULL || strcmp(cs->name, check) != 0 || cs->state == CHECK_STATE_READY)
                continue;
            snprintf(v.message, sizeof(v.message), "%s", PROVREQ_MSG_NOT_NEEDED);
            if (apply_verdict(list, i, cs, &v, NULL) && !ctrl__busy(c, CTRL_WORKLOAD, wkey))
                write_list(c, wkey, w, list);
        }
        json_decref(list);
        create_end(c, ckey, true);
    } else {
        bool ok = true;
        json_array_foreach(tmpls, i, t)
        {
            json_t *obj = json_object_get(t, "object");
            merge_flavors(c, w, json_string_value(json_object_get(t, "podset")),
                          json_object_get(obj, "template"));
            ok = ok && submit_create(c, &pt_res, json_incref(obj), "pt", wkey, ckey);
        }
        if (ok)
            ok = submit_create(c, &pr_res, pr, "pr", wkey, ckey);
        else
            json_decref(pr);
        if (!ok)
            create_end(c, ckey, false);
    }
    json_decref(tmpls);
    provreq_config_fini(&cfg);
    ctrl__on_done(&r, op);
}

static bool send_get(ctrl_op_t *op)
{
    const char *slash = strchr(op->key, '/');
    char ns[256];

    if (slash == NULL)
        return false;
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - op->key), op->key);
    return kube_get(op->c->client, &op->c->res[CTRL_WORKLOAD], ns, slash + 1, NULL, on_wl_got, op,
                    NULL, NULL) == ERR_OK;
}

/* Start creating attempt `attempt` of check `check` of Workload `key`: its pod templates are read
 * from the API (the cache keeps none). */
static void start_create(ctrl_t *c, const char *key, const char *check, int32_t attempt)
{
    char ckey[CTRL_KEY_MAX * 2];
    size_t v = 0;
    ctrl_op_t *op;

    create_key(key, check, ckey, sizeof(ckey));
    if (util_hmap_get_index(&c->prov->creating, ckey, &v) && (v == 1 || uv_now(c->loop) < v))
        return; /* running, or failed a moment ago */
    if (util_hmap_put_index(&c->prov->creating, ckey, 1) != ERR_OK)
        return;
    op = ctrl__op_new(c, CTRL_OP_PROV, CTRL_WORKLOAD, key, 0, NULL);
    if (op == NULL) {
        util_hmap_del(&c->prov->creating, ckey);
        return;
    }
    op->res = &c->res[CTRL_WORKLOAD];
    op->data = json_pack("{s:s,s:s,s:s,s:i}", "key", key, "check", check, "ckey", ckey, "attempt",
                         (int)attempt);
    op->send = send_get;
    if (op->data == NULL) {
        ctrl__op_free(op);
        util_hmap_del(&c->prov->creating, ckey);
        return;
    }
    if (!ctrl__submit(c, op))
        util_hmap_del(&c->prov->creating, ckey);
}

/* ---- PodTemplates handed to their request ------------------------------------------------- */

static void on_handed(const kube_result_t *res, void *data)
{
    ctrl_op_t *op = data;
    ctrl_t *c = op->c;
    const char *pkey = json_string_value(json_object_get(op->data, "pr"));
    hand_t *h = c->prov != NULL && pkey != NULL ? util_hmap_get(&c->prov->handed, pkey) : NULL;

    if (h != NULL) {
        h->pending--;
        h->failed = h->failed || res->err != ERR_OK;
        if (h->pending == 0) {
            h->done = !h->failed;
            h->not_before = uv_now(c->loop) + PROV_RETRY_MS;
            if (h->done)
                ctrl__log(c, CTRL_LOG_DEBUG,
                          "provisioningrequest %s: its PodTemplates are owned by it", pkey);
            if (!c->closing && kube_informer_get(c->prov->pr_inf,
                                                 json_string_value(json_object_get(op->data, "ns")),
                                                 strchr(pkey, '/') + 1) == NULL)
                free(util_hmap_del(&c->prov->handed, pkey)); /* deleted meanwhile */
        }
    }
    ctrl__on_done(res, op);
}

static bool send_hand(ctrl_op_t *op)
{
    const char *slash = strchr(op->key, '/');
    char ns[256];

    if (slash == NULL)
        return false;
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - op->key), op->key);
    return kube_patch(op->c->client, &pt_res, ns, slash + 1, NULL, KUBE_PATCH_MERGE, op->body,
                      on_handed, op, NULL, NULL) == ERR_OK;
}

/* Kueue's syncProvisionRequestsPodTemplates: the PodTemplates of request `pr` (created owned by
 * Workload `w`, so that a request never created leaves none behind) are owned by the request
 * once it exists, and go with it when it is superseded and deleted. Each template is patched
 * once per request (again after a failure, PROV_RETRY_MS later); the templates are sluice's own,
 * created with the Workload as their only owner, so the list is replaced whole. */
static void hand_templates(ctrl_t *c, const ctrl_wl_t *w, const json_t *pr)
{
    ctrl_prov_t *p = c->prov;
    const json_t *md = json_object_get(pr, "metadata"), *ps;
    const char *uid = json_string_value(json_object_get(md, "uid"));
    char pkey[CTRL_KEY_MAX], tkey[CTRL_KEY_MAX];
    hand_t *h;
    size_t i;

    if (uid == NULL || pr_name(pr) == NULL)
        return;
    snprintf(pkey, sizeof(pkey), "%s/%s", w->wl.meta.namespace, pr_name(pr));
    h = util_hmap_get(&p->handed, pkey);
    if (h != NULL && (h->done || h->pending > 0 || uv_now(c->loop) < h->not_before))
        return;
    if (h == NULL) {
        if ((h = calloc(1, sizeof(*h))) == NULL)
            return;
        if (util_hmap_put(&p->handed, pkey, h, NULL) != ERR_OK) {
            free(h);
            return;
        }
    }
    h->failed = false;
    json_array_foreach(json_object_get(json_object_get(pr, "spec"), "podSets"), i, ps)
    {
        const char *tn =
            json_string_value(json_object_get(json_object_get(ps, "podTemplateRef"), "name"));
        ctrl_op_t *op;
        if (tn == NULL)
            continue;
        snprintf(tkey, sizeof(tkey), "%s/%s", w->wl.meta.namespace, tn);
        op = ctrl__op_new(c, CTRL_OP_PROV, CTRL_WORKLOAD, tkey, 0, NULL);
        if (op == NULL) {
            h->failed = true;
            break;
        }
        op->res = &pt_res;
        op->verb = "patch";
        op->send = send_hand;
        op->body =
            json_pack("{s:{s:[{s:s,s:s,s:s,s:s,s:b,s:b}]}}", "metadata", "ownerReferences",
                      "apiVersion", "autoscaling.x-k8s.io/v1", "kind", "ProvisioningRequest",
                      "name", pr_name(pr), "uid", uid, "controller", 1, "blockOwnerDeletion", 1);
        op->data = json_pack("{s:s,s:s}", "pr", pkey, "ns", w->wl.meta.namespace);
        if (op->body == NULL || op->data == NULL) {
            ctrl__op_free(op);
            h->failed = true;
            break;
        }
        h->pending++;
        if (!ctrl__submit(c, op)) {
            h->pending--;
            h->failed = true;
        }
    }
    if (h->pending == 0) {
        h->done = !h->failed;
        h->not_before = uv_now(c->loop) + PROV_RETRY_MS;
    }
}

/* ---- the Workload reconcile --------------------------------------------------------------- */

void ctrl__prov_wl(ctrl_t *c, const char *key, const ctrl_wl_t *w)
{
    ctrl_prov_t *p = c->prov;
    const json_t *keep[16];
    size_t nkeep = 0;
    json_t *list = NULL;
    bool changed = false, ours = false;

    if (p == NULL || !w->valid || w->wl.ncheck_states == 0)
        return;
    if (p->pr_absent || !kube_informer_synced(p->pr_inf) ||
        (!p->prc_absent && !kube_informer_synced(p->prc_inf))) {
        ctrl__log(c, CTRL_LOG_DEBUG, "workload %s: provisioning: skipped (%s)", key,
                  p->pr_absent ? "no ProvisioningRequest CRD" : "caches not synced");
        return;
    }
    for (size_t i = 0; i < w->wl.ncheck_states; i++)
        ours = ours || our_check(ctrl__q(c, CTRL_AC, w->wl.check_states[i].name)) != NULL;
    if (!ours)
        return;
    if (w->wl.conditions.finished) {
        delete_unused(c, w, NULL, 0); /* Kueue deletes a finished Workload's requests */
        return;
    }
    if (!ctrl_wl_reserved(w) || w->wl.conditions.evicted || !w->wl.active) {
        ctrl__log(c, CTRL_LOG_DEBUG, "workload %s: provisioning: skipped (%s)", key,
                  !ctrl_wl_reserved(w)       ? "no quota reserved"
                  : w->wl.conditions.evicted ? "evicted"
                                             : "inactive");
        return;
    }
    /* The Workload's watch event for a check state written here usually arrives while that
     * write still holds the Workload busy, and the engine feed then leaves the verdict alone:
     * act on it now (level-based: admit, evict or deactivate once). */
    if (util_hmap_get(&c->evictions, key) == NULL)
        ctrl__checks_sync(c, key, w);
    if (ctrl__busy(c, CTRL_WORKLOAD, key) || util_hmap_get(&c->evictions, key) != NULL) {
        ctrl__log(c, CTRL_LOG_DEBUG, "workload %s: provisioning: skipped (%s)", key,
                  ctrl__busy(c, CTRL_WORKLOAD, key) ? "a write in flight" : "an eviction to write");
        return;
    }
    list = current_list(w);
    for (size_t i = 0; list != NULL && i < w->wl.ncheck_states; i++) {
        const admission_check_state_t *cs = &w->wl.check_states[i];
        const admission_check_t *ac = our_check(ctrl__q(c, CTRL_AC, cs->name));
        provreq_config_t cfg;
        provreq_verdict_t v;
        err_msg_t why = {{0}};
        const json_t *pr;
        int32_t attempt = 0;
        check_state_t now;
        json_t *updates = NULL;

        if (ac == NULL)
            continue;
        if (config_of(c, ac, &cfg, &why) != ERR_OK) {
            /* the check is not active */
            admission_check_state_t cur = *cs;
            memset(&v, 0, sizeof(v));
            v.state = CHECK_STATE_PENDING;
            snprintf(v.message, sizeof(v.message), "%s", PROVREQ_MSG_INACTIVE);
            if (cur.state != v.state ||
                strcmp(cur.message ? cur.message : "", PROVREQ_MSG_INACTIVE) != 0)
                changed = apply_verdict(list, i, cs, &v, NULL) || changed;
            continue;
        }
        pr = last_request(c, w, cs->name, &cfg, &attempt);
        now = cs->state;
        if (pr != NULL) {
            if (nkeep < sizeof(keep) / sizeof(keep[0]))
                keep[nkeep++] = pr;
            hand_templates(c, w, pr);
            provreq_decide(pr, attempt, cs, &cfg, w->wl.conditions.admitted,
                           w->wl.active && !w->wl.conditions.finished, draw(p), &v);
            if (v.change) {
                char **names = calloc(w->npodsets + 1, sizeof(char *));
                bool *in = calloc(w->npodsets + 1, sizeof(bool));
                for (size_t k = 0; names != NULL && in != NULL && k < w->npodsets; k++) {
                    names[k] = w->podsets[k].name;
                    in[k] = in_request(w, k, &cfg);
                }
                if (v.podset_updates && names != NULL && in != NULL)
                    updates = provreq_updates(pr, names, cfg.merge_policy != NULL ? in : NULL,
                                              w->npodsets, &cfg);
                free(names);
                free(in);
                if (apply_verdict(list, i, cs, &v, updates)) {
                    changed = true;
                    now = v.state;
                    ctrl__log(c, CTRL_LOG_INFO, "workload %s: check %s: %s -> %s (%s: %s)", key,
                              cs->name, ctrl__check_state_name(cs->state),
                              ctrl__check_state_name(v.state), pr_name(pr), v.message);
                    if (v.state != cs->state)
                        ctrl__event(
                            c, CTRL_WORKLOAD, &w->wl.meta, "Normal", "AdmissionCheckUpdated",
                            "Admission check %s updated state from %s to %s%s%s", cs->name,
                            ctrl__check_state_name(cs->state), ctrl__check_state_name(v.state),
                            v.message[0] ? " with message: " : "", v.message);
                }
                json_decref(updates);
            } else {
                ctrl__log(c, CTRL_LOG_DEBUG,
                          "workload %s: check %s: %s (attempt %d) leaves it %s (retries %d)", key,
                          cs->name, pr_name(pr), (int)attempt, ctrl__check_state_name(cs->state),
                          cs->has_retry_count ? (int)cs->retry_count : 0);
            }
        } else {
            ctrl__log(c, CTRL_LOG_DEBUG, "workload %s: check %s: no request yet (%s)", key,
                      cs->name, ctrl__check_state_name(cs->state));
        }
        /* Kueue's syncOwnedProvisionRequest: a new request when there is none, or when the last
         * one failed (or its booking expired before admission) and the check is Pending again
         * (the Workload was requeued and holds quota again). */
        if (now != CHECK_STATE_READY) {
            int32_t next = 0;
            if (pr == NULL)
                next = (cs->has_retry_count ? cs->retry_count : 0) + 1;
            else if ((provreq_cond(pr, "Failed", NULL) ||
                      (provreq_cond(pr, "BookingExpired", NULL) && !w->wl.conditions.admitted)) &&
                     now == CHECK_STATE_PENDING)
                next = attempt + 1;
            if (next > 0)
                start_create(c, key, cs->name, next);
        }
        provreq_config_fini(&cfg);
    }
    if (changed && list != NULL)
        write_list(c, key, w, list);
    json_decref(list);
    delete_unused(c, w, keep, nkeep);
}
