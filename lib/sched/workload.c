/* sched workload -- workload records: create/update/delete/finish/evicted, quota bookkeeping. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cq_t *sched__cq_record(sched_t *s, const char *name);

/* ---- small helpers --------------------------------------------------------------------------- */

lq_t *sched__lq_of(const sched_t *s, const wl_t *w)
{
    return w->lq_key ? util_hmap_get(&s->lq_map, w->lq_key) : NULL;
}

cq_t *sched__cq_of(const sched_t *s, const wl_t *w)
{
    const lq_t *lq = sched__lq_of(s, w);
    if (lq == NULL)
        return NULL;
    cq_t *cq = util_hmap_get(&s->cq_map, lq->cq);
    return cq != NULL && cq->exists ? cq : NULL;
}

/* Make `m` (one reference, the caller's) `w`'s explanation, replacing the one it had. */
static void wl_take_message(wl_t *w, char *m)
{
    sched__str_unref(w->message);
    w->message = m;
}

void sched__wl_set_reason(wl_t *w, sched_reason_t r, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    w->reason = r;
    if (w->message != NULL && strcmp(w->message, buf) == 0)
        return;
    char *m = sched__str_new(buf, n < 0                     ? 0
                                  : (size_t)n < sizeof(buf) ? (size_t)n
                                                            : sizeof(buf) - 1);
    if (m == NULL)
        return; /* keep the previous explanation rather than fail an admission decision */
    wl_take_message(w, m);
}

void sched__wl_set_reason_str(wl_t *w, sched_reason_t r, const char *msg)
{
    const char *t = msg != NULL ? msg : "";
    size_t n = strnlen(t, 1023); /* sched__wl_set_reason's buffer keeps 1,023 bytes */
    char *m;

    w->reason = r;
    if (w->message != NULL && strncmp(w->message, t, n) == 0 && w->message[n] == '\0')
        return;
    m = sched__str_new(t, n);
    if (m == NULL)
        return; /* keep the previous explanation rather than fail an admission decision */
    wl_take_message(w, m);
}

/* The two explanations nearly every workload has at some point, kept once for all. */
SCHED_STR_STATIC(msg_pending_evaluation, "Workload is pending evaluation in the scheduling queue");
SCHED_STR_STATIC(msg_deactivated, "The workload is deactivated");

void sched__wl_set_pending_evaluation(wl_t *w)
{
    sched__wl_share_reason(w, SCHED_REASON_PENDING_EVALUATION, msg_pending_evaluation.text);
}

static void set_reason_deactivated(wl_t *w)
{
    sched__wl_share_reason(w, SCHED_REASON_DEACTIVATED, msg_deactivated.text);
}

void sched__wl_share_reason(wl_t *w, sched_reason_t r, char *shared)
{
    if (shared == NULL) {
        sched__wl_set_reason_str(w, r, "");
        return;
    }
    w->reason = r;
    if (w->message == shared)
        return;
    wl_take_message(w, sched__str_ref(shared));
}

static int32_t base_priority(const sched_t *s, const wl_t *w);

/* The effective priority: the base priority plus the workload's priority boost, saturated to the
 * int32 range (Kueue adds them in int64; priorities beyond int32 cannot be written anyway). */
int32_t sched__resolve_priority(const sched_t *s, const wl_t *w)
{
    int64_t v = (int64_t)base_priority(s, w) + w->boost;
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

/* Kueue's kueue.x-k8s.io/priority-boost (pkg/util/priority PriorityBoost): a signed 32-bit
 * decimal integer added to the priority; absent -> 0; malformed -> 0 (Kueue logs it and uses
 * the base priority; its webhook rejects such a Workload). */
int32_t sched__priority_boost(const kv_list_t *annotations)
{
    const char *v = kv_list_get(annotations, SCHED_PRIORITY_BOOST_ANNOTATION);
    if (v == NULL || *v == '\0')
        return 0;
    const char *p = v;
    bool neg = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    if (*p == '\0')
        return 0;
    int64_t x = 0;
    for (; *p != '\0'; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        x = x * 10 + (*p - '0');
        if (x > (int64_t)INT32_MAX + 1)
            return 0;
    }
    x = neg ? -x : x;
    if (x > INT32_MAX || x < INT32_MIN)
        return 0;
    return (int32_t)x;
}

static int32_t base_priority(const sched_t *s, const wl_t *w)
{
    if (w->prio_class != NULL) {
        const prio_rec_t *p = NULL;
        if (w->prio_source == PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS)
            p = util_hmap_get(&s->wpc_map, w->prio_class);
        else if (w->prio_source == PRIORITY_SOURCE_PRIORITY_CLASS)
            p = util_hmap_get(&s->pc_map, w->prio_class);
        if (p != NULL)
            return p->value;
    }
    if (w->has_explicit_prio)
        return w->explicit_prio;
    if (w->prio_class == NULL) {
        bool found = false;
        int32_t v = 0;
        for (size_t i = 0; i < s->npcs; i++) {
            if (s->pcs[i]->global_default && (!found || s->pcs[i]->value < v)) {
                v = s->pcs[i]->value;
                found = true;
            }
        }
        return v;
    }
    return 0;
}

void sched__admission_fini(admission_t *a)
{
    if (a == NULL)
        return;
    free(a->cluster_queue);
    for (size_t i = 0; i < a->nassignments; i++) {
        pod_set_assignment_t *p = &a->assignments[i];
        free(p->name);
        kv_list_fini(&p->flavors);
        for (size_t r = 0; r < p->usage.len; r++)
            free(p->usage.items[r].name);
        free(p->usage.items);
        topology_assignment_fini(p->topology);
        free(p->topology);
    }
    free(a->assignments);
    memset(a, 0, sizeof(*a));
}

err_t sched__admission_copy(admission_t *dst, const admission_t *src)
{
    memset(dst, 0, sizeof(*dst));
    if (util_strdup(src->cluster_queue, &dst->cluster_queue) != ERR_OK)
        goto nomem;
    if (src->nassignments) {
        dst->assignments = calloc(src->nassignments, sizeof(pod_set_assignment_t));
        if (dst->assignments == NULL)
            goto nomem;
    }
    dst->nassignments = src->nassignments;
    for (size_t i = 0; i < src->nassignments; i++) {
        const pod_set_assignment_t *s = &src->assignments[i];
        pod_set_assignment_t *d = &dst->assignments[i];
        d->has_count = s->has_count;
        d->count = s->count;
        d->name = strdup(s->name ? s->name : "main");
        if (d->name == NULL || sched__kv_copy(&d->flavors, &s->flavors) != ERR_OK ||
            topology_assignment_dup(s->topology, &d->topology) != ERR_OK)
            goto nomem;
        if (s->usage.len) {
            d->usage.items = calloc(s->usage.len, sizeof(resource_t));
            if (d->usage.items == NULL)
                goto nomem;
            d->usage.len = s->usage.len;
            for (size_t r = 0; r < s->usage.len; r++) {
                d->usage.items[r].value = s->usage.items[r].value;
                d->usage.items[r].name = strdup(s->usage.items[r].name);
                if (d->usage.items[r].name == NULL)
                    goto nomem;
            }
        }
    }
    return ERR_OK;
nomem:
    sched__admission_fini(dst);
    return ERR_NOMEM;
}

wl_rare_t *sched__wl_rare(wl_t *w)
{
    if (w->rare == NULL)
        w->rare = calloc(1, sizeof(*w->rare));
    return w->rare;
}

void sched__wl_rare_trim(wl_t *w)
{
    const wl_rare_t *r = w->rare;

    if (r != NULL && r->pin_cq == NULL && r->pin_counts == NULL && r->pin_flavors == NULL &&
        r->preemptor == NULL && r->unhealthy == NULL && r->nunhealthy == 0 && r->afs_pen == NULL) {
        free(w->rare);
        w->rare = NULL;
    }
}

void sched__wl_pin_clear(wl_t *w)
{
    wl_rare_t *r = w->rare;

    if (r == NULL)
        return;
    free(r->pin_counts);
    free(r->pin_flavors);
    r->pin_counts = NULL;
    r->pin_flavors = NULL;
    r->pin_cq = NULL;
    sched__wl_rare_trim(w);
}

/* Forget w's preemptor (it is no longer EVICTING by preemption). */
static void wl_preemptor_clear(wl_t *w)
{
    if (w->rare == NULL)
        return;
    free(w->rare->preemptor);
    w->rare->preemptor = NULL;
    sched__wl_rare_trim(w);
}

static void wps_fini(wps_t *p)
{
    sched__str_unref(p->name);
    free(p->reqs);
    kv_list_fini(&p->node_selector);
    sched__tolerations_fini(p->tolerations, p->ntolerations);
    sched__terms_fini(p->terms, p->nterms);
    free(p->tas_level);
    free(p->tas_slice_level);
    for (size_t k = 0; k < p->tas_ninner; k++)
        free(p->tas_inner_level[k]);
    free(p->tas_group);
}

/* ---- pod-set blocks (wps_block_t) -------------------------------------------------------- */

static wps_block_t *ps_block(const wps_t *ps)
{
    return (wps_block_t *)(void *)((char *)(uintptr_t)ps - offsetof(wps_block_t, ps));
}

wps_t *sched__ps_new(size_t n)
{
    wps_block_t *b;

    if (n == 0 || n > UINT32_MAX || n > (SIZE_MAX - sizeof(*b)) / sizeof(wps_t))
        return NULL;
    b = calloc(1, sizeof(*b) + n * sizeof(wps_t));
    if (b == NULL)
        return NULL;
    atomic_init(&b->refs, 1);
    b->n = (uint32_t)n;
    return b->ps;
}

wps_t *sched__ps_ref(wps_t *ps)
{
    if (ps != NULL)
        atomic_fetch_add_explicit(&ps_block(ps)->refs, 1, memory_order_relaxed);
    return ps;
}

void sched__ps_unref(wps_t *ps)
{
    wps_block_t *b;

    if (ps == NULL)
        return;
    b = ps_block(ps);
    /* release: this thread's reads of the block come before its free on another thread;
     * acquire (the last one): every other thread's reads come before the free below */
    if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (uint32_t i = 0; i < b->n; i++)
        wps_fini(&b->ps[i]);
    free(b);
}

bool sched__ps_shared(const wps_t *ps)
{
    return ps != NULL && atomic_load_explicit(&ps_block(ps)->refs, memory_order_acquire) > 1;
}

/* A deep copy of pod set `s` into `c` (c's pointers its own; on ERR_NOMEM wps_fini(c) frees
 * what was copied). */
static err_t wps_copy(wps_t *c, const wps_t *s)
{
    *c = *s;
    c->name = NULL;
    c->reqs = NULL;
    memset(&c->node_selector, 0, sizeof(c->node_selector));
    c->tolerations = NULL;
    c->ntolerations = 0;
    c->terms = NULL;
    c->nterms = 0;
    c->tas_level = c->tas_slice_level = c->tas_group = NULL;
    c->tas_ninner = 0;
    for (size_t k = 0; k < s->tas_ninner; k++) {
        if (util_strdup(s->tas_inner_level[k], &c->tas_inner_level[k]) != ERR_OK)
            return ERR_NOMEM;
        c->tas_ninner = k + 1;
    }
    if (util_strdup(s->tas_level, &c->tas_level) != ERR_OK ||
        util_strdup(s->tas_slice_level, &c->tas_slice_level) != ERR_OK ||
        util_strdup(s->tas_group, &c->tas_group) != ERR_OK)
        return ERR_NOMEM;
    c->name = sched__str_ref(s->name);
    if (s->nreqs > 0) {
        c->reqs = malloc(s->nreqs * sizeof(req_t));
        if (c->reqs == NULL)
            return ERR_NOMEM;
        memcpy(c->reqs, s->reqs, s->nreqs * sizeof(req_t));
    }
    if (sched__kv_copy(&c->node_selector, &s->node_selector) != ERR_OK ||
        sched__tolerations_copy(&c->tolerations, s->tolerations, s->ntolerations) != ERR_OK)
        return ERR_NOMEM;
    c->ntolerations = s->ntolerations;
    if (sched__terms_copy(&c->terms, s->terms, s->nterms) != ERR_OK)
        return ERR_NOMEM;
    c->nterms = s->nterms;
    return ERR_OK;
}

err_t sched__wl_ps_own(wl_t *w)
{
    wps_t *ps;

    if (!sched__ps_shared(w->ps))
        return ERR_OK; /* ours alone: no copy can take a reference but on this thread */
    ps = sched__ps_new(w->nps);
    if (ps == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < w->nps; i++) {
        if (wps_copy(&ps[i], &w->ps[i]) != ERR_OK) {
            sched__ps_unref(ps); /* the block frees what its pod sets hold so far */
            return ERR_NOMEM;
        }
    }
    sched__ps_unref(w->ps);
    w->ps = ps;
    return ERR_OK;
}

static void wl_spec_fini(wl_t *w)
{
    sched__ps_unref(w->ps);
    w->ps = NULL;
    w->nps = 0;
    sched__str_unref(w->lq_key);
    sched__str_unref(w->prio_class);
    w->lq_key = w->prio_class = NULL;
    free(w->last_tried);
    w->last_tried = NULL;
    w->nlast_tried = 0;
    sched__wl_pin_clear(w);
}

void sched__wl_free(wl_t *w)
{
    if (w == NULL)
        return;
    wl_spec_fini(w);
    sched__str_unref(w->key);
    sched__str_unref(w->ns);
    sched__admission_fini(&w->adm);
    free(w->use);
    free(w->place); /* only at sched_free or a delete, which unplaced it first */
    sched__str_unref(w->message);
    strv_free(w->checks, w->nchecks);
    if (w->rare != NULL) {
        strv_free(w->rare->unhealthy, w->rare->nunhealthy);
        free(w->rare->pin_counts);
        free(w->rare->pin_flavors);
        free(w->rare->preemptor);
        sched__afs_pen_free(w->rare->afs_pen);
        free(w->rare);
    }
    free(w);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
    return s ? fnv(h, s, strlen(s) + 1) : fnv(h, "\xff", 1);
}

/* Kueue's SchedulingEquivalenceHashing: priority, pod shapes, counts, requests, minCount. */
static uint64_t shape_hash(const wl_t *w)
{
    uint64_t h = 1469598103934665603ULL;
    h = fnv(h, &w->priority, sizeof(w->priority));
    for (size_t i = 0; i < w->nps; i++) {
        const wps_t *p = &w->ps[i];
        h = fnv(h, &p->count, sizeof(p->count));
        int32_t mc = p->has_min ? p->min_count : -1;
        h = fnv(h, &mc, sizeof(mc));
        for (size_t r = 0; r < p->nreqs; r++) {
            h = fnv(h, &p->reqs[r].res, sizeof(int));
            h = fnv(h, &p->reqs[r].per_pod, sizeof(qnano_t));
        }
        for (size_t k = 0; k < p->node_selector.len; k++) {
            h = fnv_str(h, p->node_selector.items[k].key);
            h = fnv_str(h, p->node_selector.items[k].value);
        }
        for (size_t k = 0; k < p->ntolerations; k++) {
            h = fnv_str(h, p->tolerations[k].key);
            h = fnv_str(h, p->tolerations[k].value);
            h = fnv(h, &p->tolerations[k].op, sizeof(int));
            h = fnv(h, &p->tolerations[k].effect, sizeof(int));
        }
        if (p->tas_mode != TASREQ_MODE_NONE) {
            h = fnv(h, &p->tas_mode, sizeof(p->tas_mode));
            h = fnv_str(h, p->tas_level);
            h = fnv_str(h, p->tas_slice_level);
            h = fnv(h, &p->tas_slice_size, sizeof(p->tas_slice_size));
            for (size_t k = 0; k < p->tas_ninner; k++) {
                h = fnv_str(h, p->tas_inner_level[k]);
                h = fnv(h, &p->tas_inner_size[k], sizeof(p->tas_inner_size[k]));
            }
            if (p->tas_group != NULL)
                h = fnv_str(h, p->tas_group);
        }
        for (size_t t = 0; t < p->nterms; t++)
            for (size_t e = 0; e < p->terms[t].nexprs; e++) {
                const selector_req_t *r = &p->terms[t].exprs[e];
                h = fnv_str(h, r->key);
                h = fnv(h, &r->op, sizeof(int));
                for (size_t v = 0; v < r->nvalues; v++)
                    h = fnv_str(h, r->values[v]);
            }
    }
    return h;
}

static int req_cmp_name(const sched_t *s, const req_t *a, const req_t *b)
{
    return strcmp(s->res_names[a->res], s->res_names[b->res]);
}

/* Copy the admission-relevant spec of `in` into `w` (replacing any previous spec). ERR_NOMEM
 * (msg not set), or ERR_OVERFLOW from the `resources` rules (msg set). */
/* status.reclaimablePods' count for pod set `name` of `in` (0 when none). */
static int32_t reclaimable_of(const workload_t *in, const char *name)
{
    for (size_t i = 0; i < in->nreclaimable_pods; i++) {
        const reclaimable_pod_t *rp = &in->reclaimable_pods[i];
        if (rp->name != NULL && strcmp(rp->name, name) == 0 && rp->count > 0)
            return rp->count;
    }
    return 0;
}

static err_t wl_load_spec(sched_t *s, wl_t *w, const workload_t *in, err_msg_t *msg)
{
    wl_spec_fini(w);
    if (in->queue_name != NULL && in->queue_name[0] != '\0') {
        char *lq_key = util_asprintf("%s/%s", w->ns, in->queue_name);
        w->lq_key = lq_key != NULL ? sched__intern(s, lq_key) : NULL;
        free(lq_key);
        if (w->lq_key == NULL)
            return ERR_NOMEM;
    }
    w->prio_source = in->priority_source;
    if (in->priority_class != NULL && in->priority_source != PRIORITY_SOURCE_NONE) {
        w->prio_class = sched__intern(s, in->priority_class);
        if (w->prio_class == NULL)
            return ERR_NOMEM;
    }
    w->has_explicit_prio = in->has_priority;
    w->explicit_prio = in->priority;
    w->boost = sched__priority_boost(&in->meta.annotations);
    w->has_max_exec = in->has_max_exec_seconds && in->max_exec_seconds > 0;
    w->max_exec_ms = (int64_t)in->max_exec_seconds * 1000;
    if (in->npod_sets) {
        w->ps = sched__ps_new(in->npod_sets);
        if (w->ps == NULL)
            return ERR_NOMEM;
    }
    w->nps = in->npod_sets;
    for (size_t i = 0; i < in->npod_sets; i++) {
        const pod_set_t *src = &in->pod_sets[i];
        wps_t *p = &w->ps[i];
        /* shared (sched__intern): nearly every pod set is "main" */
        p->name = sched__intern(s, src->name ? src->name : "main");
        if (p->name == NULL)
            return ERR_NOMEM;
        /* Kueue's totalRequests: the pods of status.reclaimablePods need no quota. */
        p->reclaim = reclaimable_of(in, p->name);
        if (p->reclaim > src->count)
            p->reclaim = src->count; /* never below zero pods (Kueue: kueue#12670) */
        p->count = src->count - p->reclaim;
        p->has_min = src->has_min_count;
        p->min_count = src->min_count;
        /* The quota requests: the pod's requests under the Configuration's `resources`
         * (excluded prefixes dropped, transformations applied), as Kueue's workload.Info. */
        resource_list_t eff = {0};
        err_t rc = requests_effective(&s->rules, &src->pod_requests, &eff, msg);
        if (rc != ERR_OK)
            return rc == ERR_NOMEM
                       ? rc
                       : err_prefix(msg, rc, "Workload %s: podset %s: ", w->key, p->name);
        if (eff.len) {
            p->reqs = calloc(eff.len, sizeof(req_t));
            if (p->reqs == NULL) {
                resource_list_fini(&eff);
                return ERR_NOMEM;
            }
        }
        for (size_t r = 0; r < eff.len; r++) {
            const resource_t *rs = &eff.items[r];
            int id;
            if (sched__intern_res(s, rs->name, &id) != ERR_OK) {
                resource_list_fini(&eff);
                return ERR_NOMEM;
            }
            /* merge duplicates, keep sorted by name */
            size_t k = 0;
            while (k < p->nreqs && p->reqs[k].res != id)
                k++;
            if (k < p->nreqs) {
                p->reqs[k].per_pod += rs->value.nano;
                continue;
            }
            req_t nr = {.res = id, .per_pod = rs->value.nano};
            size_t j = p->nreqs++;
            while (j > 0 && req_cmp_name(s, &p->reqs[j - 1], &nr) > 0) {
                p->reqs[j] = p->reqs[j - 1];
                j--;
            }
            p->reqs[j] = nr;
        }
        resource_list_fini(&eff);
        /* topology request: Kueue's annotations of the pod template (tasreq.c) */
        tasreq_t tr = {0};
        /* a driver that feeds no Topologies: the annotations mean nothing */
        if (s->cfg.tas &&
            tasreq_from_annotations(src->has_topology_request ? &src->topology_request
                                                              : &src->template_annotations,
                                    &tr) != ERR_OK)
            return ERR_NOMEM;
        p->tas_mode = tr.mode;
        p->tas_slice_size = tr.nlayers > 0 ? tr.layers[0].size : 0;
        if (util_strdup(tr.level, &p->tas_level) != ERR_OK ||
            util_strdup(tr.nlayers > 0 ? tr.layers[0].level : NULL, &p->tas_slice_level) !=
                ERR_OK ||
            util_strdup(tr.group, &p->tas_group) != ERR_OK)
            return ERR_NOMEM;
        for (size_t k = 1; k < tr.nlayers; k++) {
            if (util_strdup(tr.layers[k].level, &p->tas_inner_level[k - 1]) != ERR_OK)
                return ERR_NOMEM;
            p->tas_inner_size[k - 1] = tr.layers[k].size;
            p->tas_ninner = k;
        }
        p->ntolerations = src->spec.ntolerations;
        p->nterms = src->spec.naffinity_terms;
        if (sched__kv_copy(&p->node_selector, &src->spec.node_selector) != ERR_OK ||
            sched__tolerations_copy(&p->tolerations, src->spec.tolerations,
                                    src->spec.ntolerations) != ERR_OK ||
            sched__terms_copy(&p->terms, src->spec.affinity_terms, src->spec.naffinity_terms) !=
                ERR_OK) {
            if (p->tolerations == NULL)
                p->ntolerations = 0;
            if (p->terms == NULL)
                p->nterms = 0;
            return ERR_NOMEM;
        }
    }
    w->priority = sched__resolve_priority(s, w);
    w->shape = shape_hash(w);
    w->last_gen = 0;
    return ERR_OK;
}

/* ---- quota bookkeeping --------------------------------------------------------------------- */

static void expiring_remove(sched_t *s, wl_t *w)
{
    for (size_t i = 0; i < s->expiring.len; i++) {
        if (s->expiring.items[i] == w) {
            memmove(&s->expiring.items[i], &s->expiring.items[i + 1],
                    (s->expiring.len - i - 1) * sizeof(wl_t *));
            s->expiring.len--;
            return;
        }
    }
}

err_t sched__wl_apply_admission(sched_t *s, wl_t *w, cq_t *cq, use_t *use, size_t nuse)
{
    sched__afs_before(s, w, s->now); /* admission fair sharing: samples before usage moves */
    if (s->tree_dirty && sched__tree_rebuild(s) != ERR_OK)
        return ERR_NOMEM;
    for (node_t *n = &cq->node; n != NULL; n = n->parent)
        if (sched__node_reserve(s, n) != ERR_OK)
            return ERR_NOMEM;
    if (sched__admitted_add(cq, w) != ERR_OK)
        return ERR_NOMEM;
    if (w->has_max_exec && sched__wlvec_push(&s->expiring, w) != ERR_OK) {
        sched__admitted_remove(w);
        return ERR_NOMEM;
    }
    free(w->use);
    w->use = use;
    w->nuse = nuse;
    for (size_t i = 0; i < nuse; i++)
        sched__usage_add(&cq->node, use[i].fr, use[i].v);
    return ERR_OK;
}

void sched__wl_usage_apply(wl_t *w, int sign)
{
    for (size_t i = 0; i < w->nuse; i++) {
        if (sign > 0)
            sched__usage_add(&w->acq->node, w->use[i].fr, w->use[i].v);
        else
            sched__usage_remove(&w->acq->node, w->use[i].fr, w->use[i].v);
    }
}

void sched__wl_release(sched_t *s, wl_t *w, int64_t now)
{
    cq_t *cq = w->acq;
    if (cq == NULL)
        return;
    sched__afs_before(s, w, now); /* admission fair sharing: samples before usage moves */
    sched__wl_usage_apply(w, -1);
    if (w->nplace > 0) {
        sched__nodes_unplace(s, w);
        if (s->cfg.node_fit)
            s->requeue_all = true; /* node capacity freed: other cohorts' workloads may fit */
    }
    sched__admitted_remove(w);
    if (w->has_max_exec)
        expiring_remove(s, w);
    if (!w->awaiting_checks && now > w->exec_since)
        w->accumulated_ms += now - w->exec_since;
    strv_free(w->checks, w->nchecks);
    w->checks = NULL;
    w->nchecks = 0;
    w->awaiting_checks = false;
    free(w->use);
    w->use = NULL;
    w->nuse = 0;
    sched__admission_fini(&w->adm);
    wl_preemptor_clear(w);
    w->borrowing = false;
    cq->alloc_gen++;
    sched__mark_requeue(s, &cq->node);
    if (!cq->exists && cq->admitted.len == 0)
        s->tree_dirty = true; /* a deleted ClusterQueue leaves the forest with its last workload */
}

err_t sched__checks_for(const sched_t *s, const cq_t *cq, const admission_t *a, char ***out,
                        size_t *n)
{
    char **v = NULL;
    size_t k = 0;

    *out = NULL;
    *n = 0;
    for (size_t i = 0; i < cq->nacs; i++) {
        const cq_check_t *c = &cq->acs[i];
        bool applies = c->nflavors == 0;
        for (size_t f = 0; f < c->nflavors && !applies; f++) {
            const char *fname = s->flavors[c->flavors[f]]->name;
            for (size_t p = 0; p < a->nassignments && !applies; p++)
                for (size_t r = 0; r < a->assignments[p].flavors.len && !applies; r++)
                    applies = strcmp(a->assignments[p].flavors.items[r].value, fname) == 0;
        }
        if (!applies)
            continue;
        if (v == NULL) {
            v = calloc(cq->nacs, sizeof(char *));
            if (v == NULL)
                return ERR_NOMEM;
        }
        if (util_strdup(c->name, &v[k]) != ERR_OK) {
            strv_free(v, k);
            return ERR_NOMEM;
        }
        k++;
    }
    *out = v;
    *n = k;
    return ERR_OK;
}

/* `v`, the usage of admitted pod set `p` of `w`, scaled down to the pods its spec still needs
 * when fewer than admitted (Kueue's totalRequestsFromAdmission: spec count less reclaimable
 * pods; a partial admission's smaller count is kept). */
static qnano_t reclaimed(const wl_t *w, const pod_set_assignment_t *p, qnano_t v)
{
    for (size_t i = 0; i < w->nps; i++) {
        const wps_t *ps = &w->ps[i];
        int32_t admitted, after = ps->count; /* the spec's count less the reclaimable pods */
        if (p->name == NULL || strcmp(ps->name, p->name) != 0 || ps->reclaim == 0)
            continue;
        admitted = p->has_count ? p->count : ps->count + ps->reclaim;
        if (admitted <= 0 || after >= admitted)
            return v;
        return v / admitted * after;
    }
    return v;
}

/* Usage of admission `a` of `w` (given from outside at an operator restart, or the engine's own
 * when its reclaimable pods change): fr ids from the assignments, each pod set's usage less its
 * reclaimable pods' share, as Kueue's totalRequestsFromAdmission (usage / count per pod). */
static err_t use_from_admission(sched_t *s, const wl_t *w, const admission_t *a, use_t **out,
                                size_t *nout)
{
    use_t *use = NULL;
    size_t n = 0;
    for (size_t i = 0; i < a->nassignments; i++) {
        const pod_set_assignment_t *p = &a->assignments[i];
        for (size_t r = 0; r < p->usage.len; r++) {
            const char *res = p->usage.items[r].name;
            const char *flv = kv_list_get(&p->flavors, res);
            if (flv == NULL)
                continue; /* not quota-managed */
            int rid;
            flavor_rec_t *f;
            int fr;
            if (sched__intern_res(s, res, &rid) != ERR_OK ||
                sched__intern_flavor(s, flv, &f) != ERR_OK ||
                sched__intern_fr(s, f->id, rid, &fr) != ERR_OK ||
                sched__use_add(&use, &n, fr, reclaimed(w, p, p->usage.items[r].value.nano)) !=
                    ERR_OK) {
                free(use);
                return ERR_NOMEM;
            }
        }
    }
    *out = use;
    *nout = n;
    return ERR_OK;
}

/* Admitted `w`'s status.reclaimablePods grew (Kueue lets them only grow while quota is
 * reserved): its usage shrinks to what its pods still running need, and the freed quota may
 * admit others (Kueue's cache updates the workload's usage the same way). */
static err_t wl_reclaim(sched_t *s, wl_t *w, const workload_t *in)
{
    bool changed = false;
    use_t *use = NULL;
    size_t nuse = 0;

    for (size_t i = 0; i < w->nps; i++) {
        int32_t spec = w->ps[i].count + w->ps[i].reclaim, r = reclaimable_of(in, w->ps[i].name);
        changed = changed || (r < spec ? r : spec) != w->ps[i].reclaim;
    }
    if (!changed || w->acq == NULL)
        return ERR_OK;
    /* the pod sets change in place: a copy of the engine keeps the ones it has */
    if (sched__wl_ps_own(w) != ERR_OK)
        return ERR_NOMEM;
    for (size_t i = 0; i < w->nps; i++) {
        wps_t *ps = &w->ps[i];
        int32_t spec = ps->count + ps->reclaim, r = reclaimable_of(in, ps->name);
        ps->reclaim = r < spec ? r : spec;
        ps->count = spec - ps->reclaim;
    }
    if (use_from_admission(s, w, &w->adm, &use, &nuse) != ERR_OK)
        return ERR_NOMEM;
    sched__wl_usage_apply(w, -1);
    free(w->use);
    w->use = use;
    w->nuse = nuse;
    sched__wl_usage_apply(w, +1);
    w->acq->alloc_gen++;
    sched__mark_requeue(s, &w->acq->node);
    return ERR_OK;
}

/* ---- the wls array ------------------------------------------------------------------------- */

static err_t wls_add(sched_t *s, wl_t *w)
{
    if (util_grow((void **)&s->wls, &s->cwls, s->nwls + 1, sizeof(void *)) != ERR_OK)
        return ERR_NOMEM;
    if (util_hmap_put(&s->wl_map, w->key, w, NULL) != ERR_OK)
        return ERR_NOMEM;
    w->sorted_idx = s->nwls;
    s->wls[s->nwls++] = w;
    if (s->nwls > 1 && strcmp(s->wls[s->nwls - 2]->key, w->key) > 0)
        s->wls_sorted = false;
    return ERR_OK;
}

static void wls_remove(sched_t *s, wl_t *w)
{
    util_hmap_del(&s->wl_map, w->key);
    size_t i = w->sorted_idx;
    s->wls[i] = s->wls[--s->nwls];
    s->wls[i]->sorted_idx = i;
    if (i < s->nwls)
        s->wls_sorted = false;
}

/* ---- public workload API -------------------------------------------------------------------- */

static void set_deactivated(sched_t *s, wl_t *w, int64_t now)
{
    sched__queue_remove(w);
    sched__wl_release(s, w, now);
    sched__afs_drop(s, w); /* inactive without quota: its entry penalty never settles */
    w->state = SCHED_WL_DEACTIVATED;
    set_reason_deactivated(w);
}

err_t sched_workload_upsert(sched_t *s, const workload_t *in, const sched_wl_opts_t *opts,
                            err_msg_t *msg)
{
    if (in->meta.name == NULL || in->meta.name[0] == '\0')
        return err_set(msg, ERR_INVALID, "Workload: metadata.name: required");
    const char *ns = in->meta.namespace ? in->meta.namespace : "default";
    char *key = util_asprintf("%s/%s", ns, in->meta.name);
    if (key == NULL)
        return err_set(msg, ERR_NOMEM, "Workload %s: out of memory", in->meta.name);
    wl_t *w = util_hmap_get(&s->wl_map, key);
    int64_t now = opts ? opts->created : 0;
    if (w != NULL) {
        free(key);
        /* ---- update ---- */
        if (in->conditions.finished)
            return sched_workload_finish(s, w->key, now, msg);
        if (w->state == SCHED_WL_PENDING || w->state == SCHED_WL_DEACTIVATED) {
            bool was_deact = w->state == SCHED_WL_DEACTIVATED;
            err_t rc = wl_load_spec(s, w, in, msg);
            if (rc != ERR_OK)
                return rc == ERR_NOMEM
                           ? err_set(msg, ERR_NOMEM, "Workload %s: out of memory", w->key)
                           : rc;
            if (!in->active) {
                w->seen_inactive = true;
                set_deactivated(s, w, now);
                return ERR_OK;
            }
            if (sched__wl_afs_pen(w) != NULL &&
                (w->lq_key == NULL || strcmp(w->lq_key, sched__wl_afs_pen(w)->lq) != 0))
                sched__afs_drop(s, w); /* moved to another LocalQueue: never settles there */
            if (was_deact && w->deact_by_engine && !w->seen_inactive)
                return ERR_OK; /* our DEACTIVATE has not reached the object yet */
            if (opts != NULL)
                w->created = opts->created; /* the queue-order timestamp may move on requeue */
            w->held = opts != NULL && opts->hold;
            w->failed_checks = opts != NULL && opts->failed_checks;
            w->state = SCHED_WL_PENDING;
            w->deact_by_engine = false;
            w->seen_inactive = false;
            if (was_deact)
                sched__wl_set_pending_evaluation(w);
            if (sched__wl_enqueue(s, w) != ERR_OK)
                return err_set(msg, ERR_NOMEM, "Workload %s: out of memory", w->key);
            return ERR_OK;
        }
        /* admitted or evicting: priority, active and reclaimable pods matter */
        if (w->state == SCHED_WL_ADMITTED && wl_reclaim(s, w, in) != ERR_OK)
            return err_set(msg, ERR_NOMEM, "Workload %s: out of memory", w->key);
        w->prio_source = in->priority_source;
        sched__str_unref(w->prio_class);
        w->prio_class = in->priority_class && in->priority_source != PRIORITY_SOURCE_NONE
                            ? sched__intern(s, in->priority_class)
                            : NULL;
        w->has_explicit_prio = in->has_priority;
        w->explicit_prio = in->priority;
        w->boost = sched__priority_boost(&in->meta.annotations);
        w->priority = sched__resolve_priority(s, w);
        if (!in->active) {
            w->seen_inactive = true;
            set_deactivated(s, w, now);
        }
        return ERR_OK;
    }
    /* ---- create ---- */
    if (in->conditions.finished) {
        /* Finished is forgotten (sched_workload_finish): a finished Workload the engine does
         * not know -- fed after the finish, or first seen finished at a restart -- holds
         * nothing and is never queued again, so there is nothing to create. */
        free(key);
        return ERR_OK;
    }
    w = calloc(1, sizeof(*w));
    if (w == NULL) {
        free(key);
        return err_set(msg, ERR_NOMEM, "Workload %s: out of memory", in->meta.name);
    }
    w->key = sched__str_new(key, strlen(key));
    free(key);
    w->ns = w->key != NULL ? sched__intern(s, ns) : NULL;
    w->created = opts ? opts->created : in->meta.creation_time * 1000;
    w->seq = opts ? opts->seq : 0;
    w->held = opts != NULL && opts->hold;
    w->failed_checks = opts != NULL && opts->failed_checks;
    w->accumulated_ms = (int64_t)in->accumulated_exec_seconds * 1000;
    err_t lrc = w->ns == NULL ? ERR_NOMEM : wl_load_spec(s, w, in, msg);
    if (lrc != ERR_OK || wls_add(s, w) != ERR_OK) {
        if (w->key != NULL && util_hmap_get(&s->wl_map, w->key) == w)
            util_hmap_del(&s->wl_map, w->key);
        sched__wl_free(w);
        return lrc != ERR_OK && lrc != ERR_NOMEM
                   ? lrc
                   : err_set(msg, ERR_NOMEM, "Workload %s: out of memory", in->meta.name);
    }
    if (!in->active) {
        w->state = SCHED_WL_DEACTIVATED;
        w->seen_inactive = true;
        set_reason_deactivated(w);
        return ERR_OK;
    }
    if (in->admission != NULL && in->conditions.quota_reserved &&
        in->admission->cluster_queue != NULL) {
        use_t *use = NULL;
        size_t nuse = 0;
        cq_t *cq = sched__cq_record(s, in->admission->cluster_queue);
        if (cq == NULL || use_from_admission(s, w, in->admission, &use, &nuse) != ERR_OK ||
            sched__admission_copy(&w->adm, in->admission) != ERR_OK) {
            free(use);
            return err_set(msg, ERR_NOMEM, "Workload %s: out of memory", w->key);
        }
        bool rebuild = !cq->in_tree;
        w->admitted_at = opts ? opts->admitted_at : in->conditions.admitted_time * 1000;
        if (sched__wl_apply_admission(s, w, cq, use, nuse) != ERR_OK) {
            free(use);
            return err_set(msg, ERR_NOMEM, "Workload %s: out of memory", w->key);
        }
        w->state = SCHED_WL_ADMITTED;
        w->exec_since = w->admitted_at;
        /* Quota reserved but not Admitted: waiting for the checks that apply to it. */
        if (sched__checks_for(s, cq, &w->adm, &w->checks, &w->nchecks) != ERR_OK)
            return err_set(msg, ERR_NOMEM, "Workload %s: out of memory", w->key);
        w->awaiting_checks = w->nchecks > 0 && !in->conditions.admitted;
        /* topology-aware scheduling: its pods count on the nodes its admission names */
        if (sched__nodes_place_admission(s, w) != ERR_OK)
            return err_set(msg, ERR_NOMEM, "Workload %s: out of memory", w->key);
        if (rebuild && sched__tree_rebuild(s) != ERR_OK)
            return err_set(msg, ERR_NOMEM, "Workload %s: out of memory", w->key);
        for (size_t i = 0; i < nuse; i++)
            if (sched__borrowing_with(&cq->node, use[i].fr, 0) && cq->node.parent != NULL)
                w->borrowing = true;
        return ERR_OK;
    }
    w->state = SCHED_WL_PENDING;
    sched__wl_set_pending_evaluation(w);
    if (sched__wl_enqueue(s, w) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "Workload %s: out of memory", w->key);
    return ERR_OK;
}

err_t sched_workload_delete(sched_t *s, const char *key, int64_t now, err_msg_t *msg)
{
    wl_t *w = util_hmap_get(&s->wl_map, key);
    if (w == NULL)
        return err_set(msg, ERR_NOT_FOUND, "Workload %s not found", key);
    sched__queue_remove(w);
    sched__wl_release(s, w, now);
    sched__afs_drop(s, w);
    /* a preemptor waiting for this workload no longer waits for it (only one that has been
     * sticky somewhere can be: finishing thousands need not walk every ClusterQueue) */
    for (size_t i = 0; w->was_sticky && i < s->ncqs; i++)
        if (s->cqs[i]->sticky == w)
            s->cqs[i]->sticky = NULL;
    wls_remove(s, w);
    sched__wl_free(w);
    return ERR_OK;
}

/*
 * A finished workload is forgotten: it is never queued, admitted or reloaded again, and no cycle,
 * estimate or status reads it, so it is freed like a deleted one instead of kept until its object
 * is deleted (most Workloads at Kueue's large scale: 50,000 records of some 0.5 KB each). Its
 * later upserts (finished, as the API keeps them) create nothing; its delete answers
 * ERR_NOT_FOUND. The driver must not feed an older, unfinished view after the finish (the
 * operator compares resourceVersions and skips retired records; the simulator skips finished
 * workloads): that would queue it as a new Workload.
 */
err_t sched_workload_finish(sched_t *s, const char *key, int64_t now, err_msg_t *msg)
{
    return sched_workload_delete(s, key, now, msg);
}

err_t sched_evicted(sched_t *s, const char *key, int64_t now, err_msg_t *msg)
{
    wl_t *w = util_hmap_get(&s->wl_map, key);
    if (w == NULL)
        return err_set(msg, ERR_NOT_FOUND, "Workload %s not found", key);
    if (w->state != SCHED_WL_EVICTING)
        return err_set(msg, ERR_INVALID, "Workload %s is not being evicted", key);
    bool retry = w->check_retry;
    sched__wl_release(s, w, now);
    sched__wl_unhealthy_clear(w); /* Kueue resets status.unhealthyNodes on eviction */
    w->state = SCHED_WL_PENDING;
    w->last_gen = 0;
    w->check_retry = false;
    if (retry)
        w->created = now; /* Kueue's queue-order timestamp: Evicted(AdmissionCheck) time */
    sched__wl_set_pending_evaluation(w);
    if (sched__wl_enqueue(s, w) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "Workload %s: out of memory", key);
    return ERR_OK;
}

err_t sched_workload_evict(sched_t *s, const char *key, err_msg_t *msg)
{
    wl_t *w = util_hmap_get(&s->wl_map, key);
    if (w == NULL)
        return err_set(msg, ERR_NOT_FOUND, "Workload %s not found", key);
    if (w->state == SCHED_WL_EVICTING)
        return ERR_OK;
    if (w->state != SCHED_WL_ADMITTED)
        return err_set(msg, ERR_INVALID, "Workload %s holds no quota", key);
    /* As an EVICT decision: the quota stays counted until the driver reports the workload
     * stopped (sched_evicted), and preemption treats it as already on its way out. */
    w->state = SCHED_WL_EVICTING;
    return ERR_OK;
}

err_t sched_workload_checks(sched_t *s, const char *key, check_state_t verdict, int64_t now,
                            err_msg_t *msg)
{
    wl_t *w = util_hmap_get(&s->wl_map, key);
    if (w == NULL)
        return err_set(msg, ERR_NOT_FOUND, "Workload %s not found", key);
    if (w->state != SCHED_WL_ADMITTED || !w->awaiting_checks)
        return err_set(msg, ERR_INVALID, "Workload %s is not waiting for admission checks", key);
    switch (verdict) {
    case CHECK_STATE_READY:
        sched__afs_before(s, w, now); /* the samples due, without it */
        w->awaiting_checks = false;
        w->exec_since = now;
        sched__afs_settle(s, w, now); /* Admitted: its entry penalty settles */
        return ERR_OK;
    case CHECK_STATE_RETRY:
        /* As Kueue's eviction by AdmissionCheck: the quota stays counted until the driver has
         * stopped it (sched_evicted), then the workload waits in its queue again. */
        w->state = SCHED_WL_EVICTING;
        w->check_retry = true;
        return ERR_OK;
    case CHECK_STATE_REJECTED:
        set_deactivated(s, w, now);
        w->deact_by_engine = true;
        w->seen_inactive = false;
        sched__wl_set_reason(w, SCHED_REASON_DEACTIVATED,
                             "The workload is deactivated: rejected by an admission check");
        return ERR_OK;
    case CHECK_STATE_PENDING:
        break;
    }
    return err_set(msg, ERR_INVALID, "Workload %s: Pending is not a verdict", key);
}
