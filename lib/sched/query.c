/* sched query -- read-only views: workload explanations, ClusterQueue status and usage. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *sched_reason_str(sched_reason_t r)
{
    static const char *const names[] = {
        [SCHED_REASON_NONE] = "",
        [SCHED_REASON_PENDING_EVALUATION] = "PendingEvaluation",
        [SCHED_REASON_WAITING_FOR_QUOTA] = "WaitingForQuota",
        [SCHED_REASON_NO_MATCHING_FLAVOR] = "NoMatchingFlavor",
        [SCHED_REASON_EXCEEDS_MAX_QUOTA] = "ExceedsMaxQuota",
        [SCHED_REASON_WAITING_FOR_PREEMPTED] = "WaitingForPreemptedWorkloads",
        [SCHED_REASON_MISCONFIGURED] = "Misconfigured",
        [SCHED_REASON_SUSPENDED] = "Suspended",
        [SCHED_REASON_ON_HOLD] = "OnHold",
        [SCHED_REASON_INADMISSIBLE] = "Inadmissible",
        [SCHED_REASON_DEACTIVATED] = "Deactivated",
        [SCHED_REASON_NO_FITTING_NODE] = "NoFittingNode",
        [SCHED_REASON_TOPOLOGY_PLACEMENT_FAILED] = "TopologyPlacementFailed",
    };
    if ((size_t)r >= sizeof(names) / sizeof(names[0]))
        return "";
    return names[r];
}

const char *sched_cq_reason_str(sched_cq_reason_t r)
{
    switch (r) {
    case SCHED_CQ_READY:
        return "Ready";
    case SCHED_CQ_STOPPED:
        return "Stopped";
    case SCHED_CQ_FLAVOR_NOT_FOUND:
        return "FlavorNotFound";
    case SCHED_CQ_TERMINATING:
        return "Terminating";
    case SCHED_CQ_COHORT_CYCLE:
        return "CohortCycle";
    case SCHED_CQ_NOT_FOUND:
        return "NotFound";
    case SCHED_CQ_CHECK_NOT_FOUND:
        return "AdmissionCheckNotFound";
    case SCHED_CQ_CHECK_INACTIVE:
        return "AdmissionCheckInactive";
    case SCHED_CQ_TOPOLOGY_NOT_FOUND:
        return "TopologyNotFound";
    }
    return "Unknown";
}

static void fill_info(const sched_t *s, const wl_t *w, sched_wl_info_t *out)
{
    memset(out, 0, sizeof(*out));
    out->key = w->key;
    out->local_queue = sched__wl_lq_name(w);
    out->local_queue_key = w->lq_key;
    out->priority_class = w->prio_class;
    out->state = w->state;
    out->priority = w->priority;
    out->created = w->created;
    out->message = "";
    if (w->acq != NULL) {
        out->cluster_queue = w->acq->name;
        out->admitted_at = w->admitted_at;
        out->borrowing = w->borrowing;
        out->admission = &w->adm;
        out->preemptor = sched__wl_preemptor(w);
        out->awaiting_checks = w->awaiting_checks;
        out->checks = w->checks;
        out->nchecks = w->nchecks;
    } else {
        const lq_t *lq = sched__lq_of(s, w);
        out->cluster_queue = lq ? lq->cq : NULL;
    }
    out->max_exec_ms = w->has_max_exec ? w->max_exec_ms : 0;
    if (w->state == SCHED_WL_PENDING || w->state == SCHED_WL_DEACTIVATED) {
        out->reason = w->reason;
        out->message = w->message ? w->message : "";
    }
}

err_t sched_workload_info(const sched_t *s, const char *key, sched_wl_info_t *out, err_msg_t *msg)
{
    const wl_t *w = util_hmap_get(&s->wl_map, key);
    if (w == NULL)
        return err_set(msg, ERR_NOT_FOUND, "Workload %s not found", key);
    fill_info(s, w, out);
    return ERR_OK;
}

err_t sched_workload_requests(const sched_t *s, const char *key, sched_request_cb cb, void *ud,
                              err_msg_t *msg)
{
    const wl_t *w = util_hmap_get(&s->wl_map, key);

    if (w == NULL)
        return err_set(msg, ERR_NOT_FOUND, "Workload %s not found", key);
    /* Resource ids are interned in first-seen order, not name order: emit by name (a
     * workload asks for a handful of resources, so a selection pass per resource will do). */
    for (const char *last = NULL;;) {
        const char *best = NULL;
        int best_res = -1;
        qnano_t total = 0;
        for (size_t p = 0; p < w->nps; p++)
            for (size_t r = 0; r < w->ps[p].nreqs; r++) {
                const char *name = s->res_names[w->ps[p].reqs[r].res];
                if (last != NULL && strcmp(name, last) <= 0)
                    continue;
                if (best == NULL || strcmp(name, best) < 0) {
                    best = name;
                    best_res = w->ps[p].reqs[r].res;
                }
            }
        if (best == NULL)
            return ERR_OK;
        for (size_t p = 0; p < w->nps; p++)
            for (size_t r = 0; r < w->ps[p].nreqs; r++)
                if (w->ps[p].reqs[r].res == best_res)
                    total += w->ps[p].reqs[r].per_pod * (qnano_t)w->ps[p].count;
        cb(ud, best, total);
        last = best;
    }
}

/* ctx: the ClusterQueue, whose order may put LocalQueue usage first (admission fair sharing) */
static int wl_ptr_cmp(const void *a, const void *b, const void *ctx)
{
    return sched__queue_cmp(ctx, *(wl_t *const *)a, *(wl_t *const *)b);
}

err_t sched_cq_workloads(const sched_t *s, const char *name, sched_wl_cb cb, void *ud,
                         err_msg_t *msg)
{
    const cq_t *cq = util_hmap_get(&s->cq_map, name);
    if (cq == NULL || (!cq->exists && cq->admitted.len == 0))
        return err_set(msg, ERR_NOT_FOUND, "ClusterQueue %s not found", name);
    sched_wl_info_t info;
    for (size_t i = 0; i < cq->admitted.len; i++) {
        fill_info(s, cq->admitted.items[i], &info);
        if (!cb(&info, ud))
            return ERR_OK;
    }
    size_t n = cq->heap.len + cq->inadm.len;
    wl_t **all = malloc((n ? n : 1) * sizeof(wl_t *));
    if (all == NULL)
        return err_set(msg, ERR_NOMEM, "ClusterQueue %s: out of memory", name);
    if (cq->heap.len)
        memcpy(all, cq->heap.items, cq->heap.len * sizeof(wl_t *));
    if (cq->inadm.len)
        memcpy(all + cq->heap.len, cq->inadm.items, cq->inadm.len * sizeof(wl_t *));
    if (sched__sort(all, n, sizeof(wl_t *), wl_ptr_cmp, cq) != ERR_OK) {
        free(all);
        return err_set(msg, ERR_NOMEM, "ClusterQueue %s: out of memory", name);
    }
    for (size_t i = 0; i < n; i++) {
        fill_info(s, all[i], &info);
        if (!cb(&info, ud))
            break;
    }
    free(all);
    return ERR_OK;
}

static int key_cmp(const void *a, const void *b, const void *ctx)
{
    (void)ctx;
    return strcmp((*(wl_t *const *)a)->key, (*(wl_t *const *)b)->key);
}

void sched_workloads(const sched_t *s, sched_wl_cb cb, void *ud)
{
    sched_t *m = (sched_t *)s; /* sorting the index is not an observable change */
    if (!m->wls_sorted && sched__sort(m->wls, m->nwls, sizeof(wl_t *), key_cmp, NULL) == ERR_OK) {
        for (size_t i = 0; i < m->nwls; i++)
            m->wls[i]->sorted_idx = i;
        m->wls_sorted = true;
    }
    sched_workloads_unordered(s, cb, ud);
}

void sched_workloads_unordered(const sched_t *s, sched_wl_cb cb, void *ud)
{
    sched_wl_info_t info;
    for (size_t i = 0; i < s->nwls; i++) {
        fill_info(s, s->wls[i], &info);
        if (!cb(&info, ud))
            return;
    }
}

/* ---- usage
 * ------------------------------------------------------------------------------------------ */

static void fill_usage(const sched_t *s, const node_t *n, int fr, sched_fr_usage_t *u)
{
    const qfr_t *q = sched__qfr(n, fr);
    memset(u, 0, sizeof(*u));
    u->flavor = s->flavors[s->frs[fr].flavor]->name;
    u->resource = s->res_names[s->frs[fr].res];
    u->nominal.nano = q->nominal;
    u->subtree_quota.nano = q->subtree;
    u->has_borrowing_limit = q->has_borrowing_limit;
    u->borrowing_limit.nano = q->borrowing_limit;
    u->has_lending_limit = q->has_lending_limit;
    u->lending_limit.nano = q->lending_limit;
    u->usage.nano = q->usage;
    u->borrowed.nano = n->parent != NULL && q->usage > q->subtree ? q->usage - q->subtree : 0;
    u->available.nano = sched__available(n, fr);
    u->potential_available.nano = sched__potential_available(n, fr);
}

void sched_usage_list_fini(sched_usage_list_t *l)
{
    if (l == NULL)
        return;
    free(l->items);
    memset(l, 0, sizeof(*l));
}

static err_t usage_list(const sched_t *s, const node_t *n, const quota_decl_t *decl, size_t nd,
                        sched_usage_list_t *out)
{
    memset(out, 0, sizeof(*out));
    size_t cap = nd + n->nfr + 1;
    out->items = calloc(cap, sizeof(sched_fr_usage_t));
    if (out->items == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < nd; i++)
        fill_usage(s, n, decl[i].fr, &out->items[out->len++]);
    for (size_t fr = 0; fr < n->nfr; fr++) {
        const qfr_t *q = &n->fr[fr];
        if (q->declared || (q->usage == 0 && q->subtree == 0))
            continue;
        fill_usage(s, n, (int)fr, &out->items[out->len++]);
    }
    return ERR_OK;
}

err_t sched_cq_usage(const sched_t *s, const char *name, sched_usage_list_t *out, err_msg_t *msg)
{
    const cq_t *cq = util_hmap_get(&s->cq_map, name);
    if (cq == NULL || (!cq->exists && cq->admitted.len == 0))
        return err_set(msg, ERR_NOT_FOUND, "ClusterQueue %s not found", name);
    if (usage_list(s, &cq->node, cq->quotas, cq->nquotas, out) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "ClusterQueue %s: out of memory", name);
    return ERR_OK;
}

err_t sched_cq_fr_usage(const sched_t *s, const char *name, const char *flavor,
                        const char *resource, sched_fr_usage_t *out, err_msg_t *msg)
{
    const cq_t *cq = util_hmap_get(&s->cq_map, name);
    if (cq == NULL || (!cq->exists && cq->admitted.len == 0))
        return err_set(msg, ERR_NOT_FOUND, "ClusterQueue %s not found", name);
    const flavor_rec_t *f = util_hmap_get(&s->flavor_map, flavor);
    int res = sched__find_res(s, resource);
    int fr = f ? sched__find_fr(s, f->id, res) : SCHED__NONE;
    if (fr == SCHED__NONE)
        return err_set(msg, ERR_NOT_FOUND, "ClusterQueue %s: no quota or usage for %s in flavor %s",
                       name, resource, flavor);
    fill_usage(s, &cq->node, fr, out);
    return ERR_OK;
}

err_t sched_cohort_usage(const sched_t *s, const char *name, sched_usage_list_t *out,
                         err_msg_t *msg)
{
    const cohort_rec_t *c = util_hmap_get(&s->cohort_map, name);
    if (c == NULL)
        return err_set(msg, ERR_NOT_FOUND, "Cohort %s not found", name);
    memset(out, 0, sizeof(*out));
    out->items = calloc(c->node.nfr + 1, sizeof(sched_fr_usage_t));
    if (out->items == NULL)
        return err_set(msg, ERR_NOMEM, "Cohort %s: out of memory", name);
    for (size_t fr = 0; fr < c->node.nfr; fr++) {
        const qfr_t *q = &c->node.fr[fr];
        if (q->usage == 0 && q->subtree == 0 && !q->declared)
            continue;
        fill_usage(s, &c->node, (int)fr, &out->items[out->len++]);
    }
    return ERR_OK;
}

err_t sched_cq_status(const sched_t *s, const char *name, sched_cq_status_t *out, err_msg_t *msg)
{
    const cq_t *cq = util_hmap_get(&s->cq_map, name);
    if (cq == NULL || (!cq->exists && cq->admitted.len == 0))
        return err_set(msg, ERR_NOT_FOUND, "ClusterQueue %s not found", name);
    memset(out, 0, sizeof(*out));
    out->active = cq->active;
    out->reason = cq->reason;
    snprintf(out->message, sizeof(out->message), "%s",
             cq->active         ? "Can admit new workloads"
             : cq->inactive_msg ? cq->inactive_msg
                                : "");
    out->cohort = cq->cohort_name;
    out->pending = cq->heap.len + cq->inadm.len;
    out->reserving = cq->admitted.len;
    out->admitted = cq->admitted.len;
    for (size_t i = 0; i < cq->admitted.len; i++)
        if (cq->admitted.items[i]->awaiting_checks)
            out->admitted--;
    if (s->cfg.fair_sharing)
        out->weighted_share = sched__share_status(sched__drs(s, &cq->node, NULL, 0));
    return ERR_OK;
}

err_t sched_cohort_weighted_share(const sched_t *s, const char *name, int64_t *out, err_msg_t *msg)
{
    const cohort_rec_t *c = util_hmap_get(&s->cohort_map, name);
    if (c == NULL)
        return err_set(msg, ERR_NOT_FOUND, "Cohort %s not found", name);
    *out = s->cfg.fair_sharing ? sched__share_status(sched__drs(s, &c->node, NULL, 0)) : 0;
    return ERR_OK;
}

size_t sched_cq_names(const sched_t *s, const char **names, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < s->ncqs; i++) {
        if (!s->cqs[i]->exists)
            continue;
        if (n < max)
            names[n] = s->cqs[i]->name;
        n++;
    }
    return n;
}
