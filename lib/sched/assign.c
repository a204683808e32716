/* sched assign -- flavor assignment with fungibility, taints, affinity and scan resume. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Reference §4.3 / Kueue flavorassigner.go. For every podset, for every requested resource (in
 * resource-name order), the resource group covering it gets ONE flavor for all of its resources:
 * flavors are tried in the ClusterQueue's order starting after the one tried last time (scan
 * progress survives until the ClusterQueue's allocatable generation changes), each flavor is
 * checked for taints and node affinity, then every resource of the group is checked against
 * Available / PotentialAvailable including what earlier podsets of the same workload already
 * took. flavorFungibility decides when to stop.
 */

typedef struct gmode_s {
    pmode_t pm;
    int borrow;
} gmode_t;

/* Kueue isPreferred: is a better than b under the CQ's preference? */
static bool is_preferred(gmode_t a, gmode_t b, fungibility_pref_t pref)
{
    if (a.pm == PM_NOFIT)
        return false;
    if (b.pm == PM_NOFIT)
        return true;
    bool anc = a.pm == PM_NO_CANDIDATES, bnc = b.pm == PM_NO_CANDIDATES;
    if (anc != bnc)
        return !anc;
    if (pref == FUNGIBILITY_PREF_PREEMPTION_OVER_BORROWING) {
        if (a.borrow != b.borrow)
            return a.borrow < b.borrow;
        return a.pm > b.pm;
    }
    if (a.pm != b.pm)
        return a.pm > b.pm;
    return a.borrow < b.borrow;
}

static bool should_try_next(gmode_t m, const cq_t *cq)
{
    if (m.pm == PM_NOFIT || m.pm == PM_NO_CANDIDATES)
        return true;
    if ((m.pm == PM_PREEMPT || m.pm == PM_RECLAIM) &&
        cq->when_can_preempt == FUNGIBILITY_TRY_NEXT_FLAVOR)
        return true;
    if (m.borrow != 0 && cq->when_can_borrow == FUNGIBILITY_TRY_NEXT_FLAVOR)
        return true;
    return false;
}

err_t sched__use_add(use_t **use, size_t *n, int fr, qnano_t v)
{
    for (size_t i = 0; i < *n; i++) {
        if ((*use)[i].fr == fr) {
            (*use)[i].v += v;
            return ERR_OK;
        }
    }
    use_t *p = realloc(*use, (*n + 1) * sizeof(use_t));
    if (p == NULL)
        return ERR_NOMEM;
    /* keep sorted by fr id: deterministic iteration everywhere */
    size_t j = *n;
    while (j > 0 && p[j - 1].fr > fr) {
        p[j] = p[j - 1];
        j--;
    }
    p[j].fr = fr;
    p[j].v = v;
    *use = p;
    (*n)++;
    return ERR_OK;
}

static qnano_t use_get(const use_t *use, size_t n, int fr)
{
    for (size_t i = 0; i < n; i++)
        if (use[i].fr == fr)
            return use[i].v;
    return 0;
}

/* ---- reasons -----------------------------------------------------------------------------------
 */

typedef struct reasons_s {
    char **items;
    size_t len, cap;
    bool oom;
} reasons_t;

static void reasons_add(reasons_t *r, char *text)
{
    if (text == NULL ||
        util_grow((void **)&r->items, &r->cap, r->len + 1, sizeof(char *)) != ERR_OK) {
        free(text);
        r->oom = true;
        return;
    }
    r->items[r->len++] = text;
}

static void reasons_fini(reasons_t *r)
{
    for (size_t i = 0; i < r->len; i++)
        free(r->items[i]);
    free(r->items);
    memset(r, 0, sizeof(*r));
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* severity of a no-fit reason: lower = more hopeful (Kueue mostSevereReason ordering) */
static int severity(sched_reason_t r)
{
    switch (r) {
    case SCHED_REASON_WAITING_FOR_QUOTA:
        return 1;
    case SCHED_REASON_EXCEEDS_MAX_QUOTA:
        return 2;
    case SCHED_REASON_NO_MATCHING_FLAVOR:
        return 3;
    default:
        return 0;
    }
}

static const char *limit_str(const node_t *n, const qfr_t *q, quantity_format_t f, char *buf)
{
    if (n->parent == NULL)
        return "0";
    if (!q->has_borrowing_limit)
        return "none";
    return sched__fmt_q(q->borrowing_limit, f, buf);
}

/* ---- per-resource check (Kueue fitsResourceQuota)
 * ------------------------------------------------ */

static gmode_t fits_resource_quota(sched_t *s, cq_t *cq, wl_t *w, int fr, qnano_t assumed,
                                   qnano_t request, reasons_t *why, sched_reason_t *nofit)
{
    const node_t *n = &cq->node;
    const qfr_t *q = sched__qfr(n, fr);
    qnano_t avail = sched__available(n, fr);
    qnano_t maxcap = sched__potential_available(n, fr);
    qnano_t val = assumed + request;
    const char *res = s->res_names[s->frs[fr].res];
    const char *flv = s->flavors[s->frs[fr].flavor]->name;
    quantity_format_t f = sched__res_format(res);
    char b1[QUANTITY_STR_MAX], b2[QUANTITY_STR_MAX], b3[QUANTITY_STR_MAX], b4[QUANTITY_STR_MAX],
        b5[QUANTITY_STR_MAX];
    if (val > maxcap) {
        reasons_add(why,
                    util_asprintf("insufficient quota for %s in flavor %s: requested %s, maximum "
                                  "capacity %s (nominal %s, borrowing limit %s)",
                                  res, flv, sched__fmt_q(val, f, b1), sched__fmt_q(maxcap, f, b2),
                                  sched__fmt_q(q->nominal, f, b3), limit_str(n, q, f, b4)));
        if (severity(SCHED_REASON_EXCEEDS_MAX_QUOTA) > severity(*nofit))
            *nofit = SCHED_REASON_EXCEEDS_MAX_QUOTA;
        return (gmode_t){PM_NOFIT, 0};
    }
    bool may_reclaim;
    int borrow = sched__lowest_fit_height(n, fr, val, &may_reclaim);
    if (val <= avail)
        return (gmode_t){PM_FIT, borrow};
    reasons_add(why, util_asprintf("insufficient quota for %s in flavor %s: requested %s, "
                                   "available %s (nominal %s, used %s, borrowing limit %s)",
                                   res, flv, sched__fmt_q(val, f, b1), sched__fmt_q(avail, f, b2),
                                   sched__fmt_q(q->nominal, f, b3), sched__fmt_q(q->usage, f, b5),
                                   limit_str(n, q, f, b4)));
    bool can_preempt_borrowing =
        cq->borrow_within_cohort != PREEMPT_NEVER ||
        (s->cfg.fair_sharing && cq->reclaim_within_cohort != PREEMPT_NEVER);
    if (q->nominal >= val || may_reclaim || can_preempt_borrowing) {
        int after = 0;
        pmode_t pm = sched__simulate_preemption(s, cq, w, fr, val, &after);
        if (pm == PM_NO_CANDIDATES && severity(SCHED_REASON_WAITING_FOR_QUOTA) > severity(*nofit))
            *nofit = SCHED_REASON_WAITING_FOR_QUOTA;
        return (gmode_t){pm, after};
    }
    if (severity(SCHED_REASON_WAITING_FOR_QUOTA) > severity(*nofit))
        *nofit = SCHED_REASON_WAITING_FOR_QUOTA;
    return (gmode_t){PM_NOFIT, borrow};
}

/* ---- assignment ---------------------------------------------------------------------------------
 */

static void ps_assign_fini(ps_assign_t *p)
{
    free(p->total); /* one block with res, flavor, fr, mode and tried (ps_prepare) */
    topology_assignment_fini(p->topo);
    free(p->topo);
}

void sched__assignment_fini(assignment_t *a)
{
    for (size_t i = 0; i < a->nps; i++)
        ps_assign_fini(&a->ps[i]);
    free(a->ps);
    free(a->use);
    free(a->message);
    memset(a, 0, sizeof(*a));
}

static int rg_of(const cq_t *cq, int res)
{
    if (res < 0 || (size_t)res >= cq->nrg_by_res)
        return SCHED__NONE;
    return cq->rg_by_res[res];
}

static err_t ps_prepare(sched_t *s, const cq_t *cq, const wps_t *src, int32_t count, ps_assign_t *p)
{
    int pods = sched__find_res(s, "pods");
    bool add_pods = pods != SCHED__NONE && rg_of(cq, pods) != SCHED__NONE;
    size_t n = src->nreqs + (add_pods ? 1 : 0);
    size_t ng = cq->ngroups ? cq->ngroups : 1;
    size_t m = n ? n : 1;
    p->count = count;
    /* one zeroed block (the assigner prepares every pod set of every head, every cycle):
     * total first for its 8-byte alignment, then the int-sized arrays */
    _Static_assert(sizeof(pmode_t) == sizeof(int), "pmode_t packs with the int arrays");
    char *b = calloc(1, m * sizeof(qnano_t) + (4 * m + ng) * sizeof(int));
    if (b == NULL)
        return ERR_NOMEM;
    p->total = (qnano_t *)(void *)b;
    p->res = (int *)(void *)(b + m * sizeof(qnano_t));
    p->flavor = p->res + m;
    p->fr = p->flavor + m;
    p->mode = (pmode_t *)(void *)(p->fr + m);
    p->tried = (int *)(void *)(p->fr + 2 * m);
    size_t k = 0;
    bool pods_done = !add_pods;
    for (size_t r = 0; r < src->nreqs; r++) {
        if (!pods_done && strcmp(s->res_names[src->reqs[r].res], "pods") >= 0) {
            if (src->reqs[r].res == pods) {
                /* an explicit "pods" request is replaced by the count (Kueue) */
                n--;
                continue;
            }
            p->res[k] = pods;
            p->total[k++] = (qnano_t)count * 1000000000;
            pods_done = true;
        }
        p->res[k] = src->reqs[r].res;
        p->total[k++] = src->reqs[r].per_pod * count;
    }
    if (!pods_done) {
        p->res[k] = pods;
        p->total[k++] = (qnano_t)count * 1000000000;
    }
    p->nreqs = k;
    for (size_t i = 0; i < k; i++) {
        p->flavor[i] = SCHED__NONE;
        p->fr[i] = SCHED__NONE;
        p->mode[i] = PM_FIT;
    }
    for (size_t g = 0; g < ng; g++)
        p->tried[g] = SCHED__NONE;
    return ERR_OK;
}

static int next_flavor(const wl_t *w, const cq_t *cq, size_t ps, size_t g)
{
    if (w->last_tried == NULL || w->last_gen != cq->alloc_gen + 1 ||
        w->nlast_tried != w->nps * cq->ngroups)
        return 0;
    int t = w->last_tried[ps * cq->ngroups + g];
    return t < 0 ? 0 : t + 1;
}

/* ---- topology-aware scheduling (Kueue's tas_flavorassigner.go) ------------------------------- */

/* Every flavor of cq is a TAS flavor (Kueue's IsTASOnly). */
static bool cq_tas_only(const sched_t *s, const cq_t *cq)
{
    bool any = false;
    for (size_t g = 0; g < cq->ngroups; g++)
        for (size_t k = 0; k < cq->groups[g].nflavors; k++) {
            if (s->flavors[cq->groups[g].flavors[k]]->topology == NULL)
                return false;
            any = true;
        }
    return any;
}

bool sched__tas_requested(const sched_t *s, const cq_t *cq, const wps_t *ps)
{
    return ps->tas_mode != TASREQ_MODE_NONE || cq_tas_only(s, cq);
}

int sched__tas_flavor(const sched_t *s, const ps_assign_t *p)
{
    for (size_t k = 0; k < p->nreqs; k++)
        if (p->flavor[k] != SCHED__NONE && s->flavors[p->flavor[k]]->topology != NULL)
            return p->flavor[k];
    return SCHED__NONE;
}

/* Does the level the pod set asks for exist in the flavor's Topology (Kueue's HasLevel; a
 * request without a level, unconstrained or slices only, always matches)? */
static bool topo_has_level(const topo_rec_t *t, const wps_t *ps)
{
    const char *want = ps->tas_mode == TASREQ_MODE_REQUIRED || ps->tas_mode == TASREQ_MODE_PREFERRED
                           ? ps->tas_level
                           : NULL;
    if (want == NULL)
        return true;
    for (size_t l = 0; l < t->nlevels; l++)
        if (strcmp(t->levels[l], want) == 0)
            return true;
    return false;
}

/* Kueue's checkPodSetAndFlavorMatchForTAS: a pod set asking for TAS takes only TAS flavors
 * whose Topology exists and has its level (a TAS-only ClusterQueue implies the request); one not
 * asking never takes a TAS flavor. A non-TAS flavor serving none of the pod's resources (quota
 * for a transformed resource only) still matches. */
static bool tas_flavor_matches(const sched_t *s, const cq_t *cq, const wps_t *ps,
                               const flavor_rec_t *f, const rgroup_t *rg, reasons_t *why)
{
    if (!sched__tas_requested(s, cq, ps)) {
        if (f->topology == NULL)
            return true;
        reasons_add(why,
                    util_asprintf("Flavor \"%s\" supports only TopologyAwareScheduling", f->name));
        return false;
    }
    if (ps->tas_mode == TASREQ_MODE_NONE)
        return true; /* implied: every flavor of the queue is a TAS flavor */
    if (f->topology == NULL) {
        for (size_t r = 0; r < ps->nreqs; r++)
            for (size_t k = 0; k < rg->nres; k++)
                if (rg->res[k] == ps->reqs[r].res) {
                    reasons_add(why, util_asprintf("Flavor \"%s\" does not support "
                                                   "TopologyAwareScheduling",
                                                   f->name));
                    return false;
                }
        return true;
    }
    const topo_rec_t *t = sched__topo_find(s, f->topology);
    if (t == NULL) {
        reasons_add(why, util_asprintf("Flavor \"%s\" information missing in TAS cache", f->name));
        return false;
    }
    if (!topo_has_level(t, ps)) {
        reasons_add(why,
                    util_asprintf("Flavor \"%s\" does not contain the requested level", f->name));
        return false;
    }
    return true;
}

static bool wl_asks_tas(const wl_t *w)
{
    for (size_t i = 0; i < w->nps; i++)
        if (w->ps[i].tas_mode != TASREQ_MODE_NONE)
            return true;
    return false;
}

/* Kueue's updateModeForTASRequests(Preempt): every resource of every TAS pod set needs
 * preemption, so its flavor-resources are the contested ones of the targets search. */
static void tas_modes_preempt(const sched_t *s, const cq_t *cq, const wl_t *w, assignment_t *out)
{
    for (size_t i = 0; i < out->nps; i++) {
        ps_assign_t *p = &out->ps[i];
        if (p->count == 0 || !sched__tas_requested(s, cq, &w->ps[i]))
            continue;
        for (size_t k = 0; k < p->nreqs; k++)
            if (p->fr[k] != SCHED__NONE)
                p->mode[k] = PM_PREEMPT;
    }
}

/*
 * Kueue's FindTopologyAssignmentsForWorkload after the quota part of the assignment
 * (flavorassigner.go, TAS): each pod set asking for TAS is placed on its TAS flavor's nodes.
 *
 *   fits by quota --(placed on free capacity)--> fits
 *        |  a pod set does not fit on the nodes: its reason, and the workload needs preemption
 *        v
 *   preempts by quota --(placed on the nodes as if empty)--> preempts (topology-aware)
 *        |  does not fit even on empty nodes: preempting cannot help
 *        v
 *   NoFit, TopologyPlacementFailed
 *
 * A preempting assignment marks every TAS pod set's resources as needing preemption and sets
 * out->tas: its targets search then also places the pod sets on the nodes its candidates free
 * (nodes.c sched__tas_fits_after), so a workload that fits the quota but not the nodes preempts
 * lower-priority workloads on them, as Kueue does. The simulate-empty placement it keeps in
 * p->topo is only the proof that one exists: the real one is made at admission.
 */
static err_t assign_topology(sched_t *s, cq_t *cq, wl_t *w, assignment_t *out, reasons_t *per_ps,
                             sched_reason_t *overall)
{
    bool empty = out->mode == AM_PREEMPT, any = false;
    size_t free_failed = SIZE_MAX; /* the pod set that did not fit on free capacity */

    for (size_t i = 0; i < out->nps && !any; i++)
        any = out->ps[i].count > 0 && sched__tas_requested(s, cq, &w->ps[i]);
    if (!any)
        return ERR_OK;
    for (;;) {
        size_t failed;
        char *why = NULL;
        err_t rc = sched__tas_place_all(s, cq, w, out, empty, out, &failed, &why);
        if (rc == ERR_NOMEM)
            return ERR_NOMEM;
        if (rc == ERR_OK)
            break;
        if (rc == ERR_CONFLICT && !empty) {
            /* Kueue: this pod set's reason, mode Preempt, then the simulate-empty pass */
            reasons_add(&per_ps[failed], why);
            if (per_ps[failed].oom)
                return ERR_NOMEM;
            free_failed = failed;
            empty = true;
            continue;
        }
        if (failed == free_failed)
            free(why); /* its reason is in already (the free-capacity one, as Kueue) */
        else
            reasons_add(&per_ps[failed], why);
        if (per_ps[failed].oom)
            return ERR_NOMEM;
        out->mode = AM_NOFIT;
        out->tas = false;
        if (*overall == SCHED_REASON_NONE)
            *overall = SCHED_REASON_TOPOLOGY_PLACEMENT_FAILED;
        return ERR_OK;
    }
    if (empty) {
        out->mode = AM_PREEMPT;
        out->tas = true;
        tas_modes_preempt(s, cq, w, out);
    }
    return ERR_OK;
}

/* Assign one group of podset `pi`. Returns false when the podset cannot be assigned. */
static bool assign_group(sched_t *s, cq_t *cq, wl_t *w, size_t pi, ps_assign_t *p, size_t g,
                         int force, const use_t *assigned, size_t nassigned, reasons_t *why,
                         sched_reason_t *ps_reason, int *borrow_out, err_t *rc)
{
    const rgroup_t *rg = &cq->groups[g];
    const wps_t *src = &w->ps[pi];
    int best = SCHED__NONE;
    gmode_t best_mode = {PM_NOFIT, 1 << 30};
    pmode_t best_modes[64];
    int attempted = SCHED__NONE;
    sched_reason_t group_reason = SCHED_REASON_NONE; /* min severity over flavors */
    size_t nres_in_group = 0;
    for (size_t k = 0; k < p->nreqs; k++)
        if (rg_of(cq, p->res[k]) == (int)g)
            nres_in_group++;
    if (nres_in_group > 64) {
        reasons_add(why, util_asprintf("too many resources in one resource group"));
        *ps_reason = SCHED_REASON_MISCONFIGURED;
        return false;
    }
    size_t first = (size_t)next_flavor(w, cq, pi, g), end = rg->nflavors;
    if (force != SCHED__NONE) {
        /* a pinned flavor (the one a preemptor's preemptions were issued for) is the only try */
        first = end;
        for (size_t idx = 0; idx < rg->nflavors; idx++)
            if (rg->flavors[idx] == force)
                first = idx;
        end = first < rg->nflavors ? first + 1 : first;
    }
    for (size_t idx = first; idx < end; idx++) {
        attempted = (int)idx;
        const flavor_rec_t *f = s->flavors[rg->flavors[idx]];
        sched_reason_t fr_reason = SCHED_REASON_NONE;
        if (!f->exists) {
            reasons_add(why, util_asprintf("flavor %s not found", f->name));
            fr_reason = SCHED_REASON_NO_MATCHING_FLAVOR;
        } else {
            const taint_t *t = sched__untolerated_taint(f, src);
            if (t != NULL) {
                static const char *eff[] = {"", "NoSchedule", "PreferNoSchedule", "NoExecute"};
                reasons_add(why, util_asprintf("untolerated taint %s%s%s:%s in flavor %s", t->key,
                                               t->value && t->value[0] ? "=" : "",
                                               t->value ? t->value : "", eff[t->effect], f->name));
                fr_reason = SCHED_REASON_NO_MATCHING_FLAVOR;
            } else if (!sched__affinity_matches(f, src)) {
                reasons_add(why, util_asprintf("flavor %s doesn't match node affinity", f->name));
                fr_reason = SCHED_REASON_NO_MATCHING_FLAVOR;
            } else if ((f->topology != NULL || src->tas_mode != TASREQ_MODE_NONE) &&
                       !tas_flavor_matches(s, cq, src, f, rg, why)) {
                fr_reason = SCHED_REASON_NO_MATCHING_FLAVOR;
            }
        }
        if (fr_reason != SCHED_REASON_NONE) {
            if (group_reason == SCHED_REASON_NONE || severity(fr_reason) < severity(group_reason))
                group_reason = fr_reason;
            continue;
        }
        gmode_t rep = {PM_FIT, 0};
        pmode_t modes[64];
        size_t m = 0;
        sched_reason_t nofit = SCHED_REASON_NONE;
        for (size_t k = 0; k < p->nreqs; k++) {
            if (rg_of(cq, p->res[k]) != (int)g)
                continue;
            int fr = sched__find_fr(s, f->id, p->res[k]);
            gmode_t mode;
            if (fr == SCHED__NONE) {
                reasons_add(why, util_asprintf("resource %s unavailable in flavor %s",
                                               s->res_names[p->res[k]], f->name));
                nofit = SCHED_REASON_NO_MATCHING_FLAVOR;
                mode = (gmode_t){PM_NOFIT, 0};
            } else {
                mode = fits_resource_quota(s, cq, w, fr, use_get(assigned, nassigned, fr),
                                           p->total[k], why, &nofit);
            }
            modes[m++] = mode.pm;
            if (is_preferred(rep, mode, cq->preference))
                rep = mode;
            if (rep.pm == PM_NOFIT)
                break;
        }
        if (rep.pm == PM_NOFIT) {
            if (nofit == SCHED_REASON_NONE)
                nofit = SCHED_REASON_WAITING_FOR_QUOTA;
            if (group_reason == SCHED_REASON_NONE || severity(nofit) < severity(group_reason))
                group_reason = nofit;
        }
        if (!should_try_next(rep, cq)) {
            best = (int)idx;
            best_mode = rep;
            memcpy(best_modes, modes, m * sizeof(pmode_t));
            break;
        }
        if (is_preferred(rep, best_mode, cq->preference)) {
            best = (int)idx;
            best_mode = rep;
            memcpy(best_modes, modes, m * sizeof(pmode_t));
        }
    }
    if (why->oom)
        *rc = ERR_NOMEM;
    p->tried[g] = attempted == (int)rg->nflavors - 1 ? SCHED__NONE : attempted;
    if (best == SCHED__NONE) {
        if (group_reason == SCHED_REASON_NONE)
            group_reason = SCHED_REASON_NO_MATCHING_FLAVOR;
        if (severity(group_reason) > severity(*ps_reason))
            *ps_reason = group_reason;
        return false;
    }
    const flavor_rec_t *f = s->flavors[rg->flavors[best]];
    size_t m = 0;
    for (size_t k = 0; k < p->nreqs; k++) {
        if (rg_of(cq, p->res[k]) != (int)g)
            continue;
        p->flavor[k] = f->id;
        p->fr[k] = sched__find_fr(s, f->id, p->res[k]);
        p->mode[k] = best_modes[m++];
    }
    if (best_mode.borrow > *borrow_out)
        *borrow_out = best_mode.borrow;
    return true;
}

static err_t join_message(const wl_t *w, const assignment_t *a, reasons_t *per_ps, char **out)
{
    size_t cap = 256, len = 0;
    char *buf = malloc(cap);
    if (buf == NULL)
        return ERR_NOMEM;
    buf[0] = '\0';
    for (size_t i = 0; i < a->nps; i++) {
        reasons_t *r = &per_ps[i];
        if (r->len == 0)
            continue;
        qsort(r->items, r->len, sizeof(char *), str_cmp);
        for (int pass = 0; pass < 2; pass++) {
            size_t need = len + 64 + strlen(w->ps[i].name);
            for (size_t k = 0; k < r->len; k++)
                need += strlen(r->items[k]) + 2;
            if (need >= cap) {
                char *nb = realloc(buf, need + 1);
                if (nb == NULL) {
                    free(buf);
                    return ERR_NOMEM;
                }
                buf = nb;
                cap = need + 1;
            }
            (void)pass;
        }
        len += (size_t)snprintf(buf + len, cap - len,
                                "%scouldn't assign flavors to pod set %s: ", len ? "; " : "",
                                w->ps[i].name);
        for (size_t k = 0; k < r->len; k++) {
            if (k > 0 && strcmp(r->items[k], r->items[k - 1]) == 0)
                continue; /* same reason from two attempts */
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", k ? ", " : "", r->items[k]);
        }
    }
    *out = buf;
    return ERR_OK;
}

err_t sched__assign(sched_t *s, cq_t *cq, wl_t *w, const int32_t *counts, const int *force,
                    assignment_t *out)
{
    memset(out, 0, sizeof(*out));
    err_t rc = ERR_OK;
    reasons_t *per_ps = calloc(w->nps ? w->nps : 1, sizeof(reasons_t));
    out->ps = calloc(w->nps ? w->nps : 1, sizeof(ps_assign_t));
    if (per_ps == NULL || out->ps == NULL) {
        free(per_ps);
        return ERR_NOMEM;
    }
    out->nps = w->nps;
    out->mode = AM_FIT;
    sched_reason_t overall = SCHED_REASON_NONE;
    for (size_t i = 0; i < w->nps && rc == ERR_OK; i++) {
        ps_assign_t *p = &out->ps[i];
        if (ps_prepare(s, cq, &w->ps[i], counts ? counts[i] : w->ps[i].count, p) != ERR_OK) {
            rc = ERR_NOMEM;
            break;
        }
        bool ok = true;
        sched_reason_t ps_reason = SCHED_REASON_NONE;
        bool done_small[16] = {false};
        bool *done =
            cq->ngroups <= 16 ? done_small : calloc(cq->ngroups ? cq->ngroups : 1, sizeof(bool));
        if (done == NULL) {
            rc = ERR_NOMEM;
            break;
        }
        for (size_t k = 0; k < p->nreqs && ok; k++) {
            int g = rg_of(cq, p->res[k]);
            if (g == SCHED__NONE) {
                /* a zero request, or quotaCheckStrategy IgnoreUndeclared: not quota-managed */
                if (p->total[k] == 0 || s->rules.ignore_undeclared)
                    continue;
                reasons_add(&per_ps[i], util_asprintf("resource %s unavailable in ClusterQueue",
                                                      s->res_names[p->res[k]]));
                ps_reason = SCHED_REASON_NO_MATCHING_FLAVOR;
                ok = false;
                break;
            }
            if (done[g])
                continue;
            done[g] = true;
            int forced = force ? force[i * cq->ngroups + (size_t)g] : SCHED__NONE;
            ok = assign_group(s, cq, w, i, p, (size_t)g, forced, out->use, out->nuse, &per_ps[i],
                              &ps_reason, &out->borrow, &rc);
        }
        if (done != done_small)
            free(done);
        if (!ok) {
            out->mode = AM_NOFIT;
            if (severity(ps_reason) > severity(overall))
                overall = ps_reason;
            /* Kueue stops at the first podset that cannot be assigned */
            out->nps = i + 1;
            break;
        }
        for (size_t k = 0; k < p->nreqs; k++) {
            if (p->fr[k] == SCHED__NONE)
                continue;
            if (sched__use_add(&out->use, &out->nuse, p->fr[k], p->total[k]) != ERR_OK) {
                rc = ERR_NOMEM;
                break;
            }
            if (p->mode[k] != PM_FIT && out->mode == AM_FIT)
                out->mode = AM_PREEMPT;
        }
    }
    /* TAS: only when a Topology exists or a pod set asks for one (no cost otherwise) */
    if (rc == ERR_OK && out->mode != AM_NOFIT && (s->ntopos > 0 || wl_asks_tas(w)))
        rc = assign_topology(s, cq, w, out, per_ps, &overall);
    if (rc == ERR_OK) {
        for (size_t i = 0; i < out->nps; i++)
            for (size_t g = 0; g < cq->ngroups; g++)
                if (out->ps[i].tried[g] != SCHED__NONE)
                    out->pending_flavors = true;
        if (out->mode != AM_FIT) {
            out->reason =
                out->mode == AM_NOFIT
                    ? (overall == SCHED_REASON_NONE ? SCHED_REASON_WAITING_FOR_QUOTA : overall)
                    : SCHED_REASON_WAITING_FOR_QUOTA;
            if (join_message(w, out, per_ps, &out->message) != ERR_OK)
                rc = ERR_NOMEM;
        }
    }
    for (size_t i = 0; i < w->nps; i++)
        reasons_fini(&per_ps[i]);
    free(per_ps);
    if (rc != ERR_OK)
        sched__assignment_fini(out);
    return rc;
}
