/* sched objects -- engine lifetime and create/update/delete of the non-workload objects. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- configuration and lifetime ------------------------------------------------------------ */

void sched_config_from(sched_config_t *cfg, const configuration_t *conf)
{
    memset(cfg, 0, sizeof(*cfg));
    if (conf == NULL)
        return;
    cfg->resources = &conf->resources;
    cfg->fair_sharing = conf->fair_sharing;
    cfg->nstrategies = conf->nstrategies > 2 ? 2 : conf->nstrategies;
    for (size_t i = 0; i < cfg->nstrategies; i++)
        cfg->strategies[i] = conf->strategies[i];
    cfg->afs = conf->afs;
    cfg->afs_half_life_ms = conf->afs_half_life_ms;
    cfg->afs_sampling_ms = conf->afs_sampling_ms;
    cfg->afs_weights = &conf->afs_weights;
    const char *g = kv_list_get(&conf->meta.annotations, SCHED_LOOP_GUARDS_ANNOTATION);
    if (g != NULL && sched_loop_guards_parse(g, &cfg->loop_guards, NULL) != ERR_OK)
        cfg->loop_guards = 0;
    g = kv_list_get(&conf->meta.annotations, SCHED_NODE_FIT_ANNOTATION);
    if (g != NULL && sched_node_fit_parse(g, &cfg->node_fit, NULL) != ERR_OK)
        cfg->node_fit = false;
}

err_t sched_node_fit_parse(const char *text, bool *out, err_msg_t *msg)
{
    if (strcmp(text, "true") == 0 || strcmp(text, "false") == 0) {
        *out = text[0] == 't';
        return ERR_OK;
    }
    return err_set(msg, ERR_INVALID, "%s: must be \"true\" or \"false\"", text);
}

err_t sched_loop_guards_parse(const char *text, unsigned *out, err_msg_t *msg)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {{"none", 0},
                 {"all", SCHED_GUARD_ALL},
                 {"own-queue-borrowing", SCHED_GUARD_OWN_QUEUE_BORROWING},
                 {"strict-fifo-sticky", SCHED_GUARD_STRICT_FIFO_STICKY}};
    unsigned bits = 0;
    const char *p = text;
    for (;;) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, ",");
        size_t m = n;
        while (m > 0 && p[m - 1] == ' ')
            m--;
        bool found = false;
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !found; i++) {
            if (strlen(names[i].name) == m && strncmp(p, names[i].name, m) == 0) {
                bits |= names[i].bit;
                found = true;
            }
        }
        if (!found)
            return err_set(msg, ERR_INVALID,
                           "unknown loop guard \"%.*s\": want none, all, own-queue-borrowing or "
                           "strict-fifo-sticky (comma-separated)",
                           (int)(m > 64 ? 64 : m), p);
        if (p[n] == '\0')
            break;
        p += n + 1;
    }
    *out = bits;
    return ERR_OK;
}

sched_t *sched_new(const sched_config_t *cfg)
{
    sched_t *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    /* Each map hashes under its own random key (names come from users; see util/hmap.h). */
    util_hmap_init(&s->res_map, 0);
    util_hmap_init(&s->flavor_map, 0);
    util_hmap_init(&s->cq_map, 0);
    util_hmap_init(&s->cohort_map, 0);
    util_hmap_init(&s->lq_map, 0);
    util_hmap_init(&s->ns_map, 0);
    util_hmap_init(&s->wpc_map, 0);
    util_hmap_init(&s->pc_map, 0);
    util_hmap_init(&s->check_map, 0);
    util_hmap_init_borrowed(&s->wl_map, 0);
    util_hmap_init_borrowed(&s->interned, 0);
    s->cfg.resources = &s->rules;
    s->cfg.afs_weights = &s->afs_weights;
    if (cfg != NULL && sched_set_config(s, cfg) != ERR_OK) {
        sched_free(s);
        return NULL;
    }
    s->wls_sorted = true;
    return s;
}

err_t sched_set_config(sched_t *s, const sched_config_t *cfg)
{
    resource_rules_t rules = {0};
    resource_list_t weights = {0};

    if (cfg->resources != NULL && cfg->resources != &s->rules &&
        resource_rules_copy(&rules, cfg->resources) != ERR_OK)
        return ERR_NOMEM;
    if (cfg->afs_weights != NULL && cfg->afs_weights != &s->afs_weights &&
        resource_list_copy(&weights, cfg->afs_weights) != ERR_OK) {
        resource_rules_fini(&rules);
        return ERR_NOMEM;
    }
    if (cfg->resources != &s->rules) {
        resource_rules_fini(&s->rules);
        s->rules = rules;
    }
    if (cfg->afs_weights != &s->afs_weights) {
        resource_list_fini(&s->afs_weights);
        s->afs_weights = weights;
        free(s->afs_w); /* re-read by resource id at the next cycle (afs.c) */
        s->afs_w = NULL;
        s->afs_wlen = 0;
    }
    s->cfg = *cfg;
    s->cfg.resources = &s->rules;
    s->cfg.afs_weights = &s->afs_weights;
    if (s->cfg.nstrategies > 2)
        s->cfg.nstrategies = 2;
    s->requeue_all = true;
    return ERR_OK;
}

static void prio_free(prio_rec_t *p)
{
    if (p == NULL)
        return;
    free(p->name);
    free(p);
}

void sched__cq_checks_fini(cq_check_t *acs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(acs[i].name);
        free(acs[i].flavors);
    }
    free(acs);
}

static void cq_free(cq_t *cq)
{
    if (cq == NULL)
        return;
    sched__cq_checks_fini(cq->acs, cq->nacs);
    sched__node_fini(&cq->node);
    free(cq->name);
    free(cq->cohort_name);
    for (size_t g = 0; g < cq->ngroups; g++) {
        free(cq->groups[g].res);
        free(cq->groups[g].flavors);
    }
    free(cq->groups);
    free(cq->quotas);
    free(cq->rg_by_res);
    label_selector_fini(&cq->ns_selector);
    free(cq->inactive_msg);
    sched__wlvec_fini(&cq->heap);
    sched__wlvec_fini(&cq->inadm);
    sched__wlvec_fini(&cq->admitted);
    free(cq);
}

static void flavor_free(flavor_rec_t *f)
{
    if (f == NULL)
        return;
    free(f->name);
    kv_list_fini(&f->node_labels);
    sched__taints_fini(f->taints, f->ntaints);
    sched__tolerations_fini(f->tolerations, f->ntolerations);
    free(f->fr_by_res);
    free(f->topology);
    free(f);
}

static void topo_free(topo_rec_t *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->nlevels; i++)
        free(t->levels[i]);
    free(t->levels);
    free(t->name);
    free(t);
}

void sched_free(sched_t *s)
{
    if (s == NULL)
        return;
    resource_rules_fini(&s->rules);
    resource_list_fini(&s->afs_weights);
    free(s->afs_w);
    for (size_t i = 0; i < s->nwls; i++)
        sched__wl_free(s->wls[i]);
    free(s->wls);
    util_hmap_fini(&s->wl_map);
    sched__intern_fini(s);
    for (size_t i = 0; i < s->ncqs; i++)
        cq_free(s->cqs[i]);
    free(s->cqs);
    util_hmap_fini(&s->cq_map);
    for (size_t i = 0; i < s->ncohorts; i++) {
        cohort_rec_t *c = s->cohorts[i];
        sched__node_fini(&c->node);
        free(c->name);
        free(c->parent_name);
        free(c->quotas);
        free(c);
    }
    free(s->cohorts);
    util_hmap_fini(&s->cohort_map);
    for (size_t i = 0; i < s->nlqs; i++) {
        free(s->lqs[i]->key);
        free(s->lqs[i]->cq);
        sched__afs_fini(&s->lqs[i]->afs);
        free(s->lqs[i]);
    }
    free(s->lqs);
    util_hmap_fini(&s->lq_map);
    for (size_t i = 0; i < s->nnss; i++) {
        free(s->nss[i]->name);
        kv_list_fini(&s->nss[i]->labels);
        free(s->nss[i]);
    }
    free(s->nss);
    util_hmap_fini(&s->ns_map);
    for (size_t i = 0; i < s->nwpcs; i++)
        prio_free(s->wpcs[i]);
    free(s->wpcs);
    util_hmap_fini(&s->wpc_map);
    for (size_t i = 0; i < s->npcs; i++)
        prio_free(s->pcs[i]);
    free(s->pcs);
    util_hmap_fini(&s->pc_map);
    for (size_t i = 0; i < s->nchecks; i++) {
        free(s->checks[i]->name);
        free(s->checks[i]);
    }
    free(s->checks);
    util_hmap_fini(&s->check_map);
    for (size_t i = 0; i < s->ntopos; i++)
        topo_free(s->topos[i]);
    free(s->topos);
    for (size_t i = 0; i < s->nflavors; i++)
        flavor_free(s->flavors[i]);
    free(s->flavors);
    util_hmap_fini(&s->flavor_map);
    for (size_t i = 0; i < s->nres; i++)
        free(s->res_names[i]);
    free(s->res_names);
    util_hmap_fini(&s->res_map);
    free(s->frs);
    free(s->roots);
    free(s->requeue_roots);
    free(s->memo.items);
    free(s->pscr.sort_tmp);
    for (size_t i = 0; i < 4; i++)
        free(s->pscr.lists[i]);
    free(s->cyc_es);
    sched__wlvec_fini(&s->expiring);
    sched__nodes_free(s);
    sched__repl_free(s);
    free(s);
}

/* After an object change: rebuild structure and quotas now (so queries are exact at once) and
 * let the next cycle requeue every pending workload. */
static err_t objects_changed(sched_t *s, bool queues)
{
    if (queues)
        s->queues_dirty = true;
    s->requeue_all = true;
    return sched__tree_rebuild(s);
}

/* ---- ResourceFlavor ----------------------------------------------------------------------------
 */

err_t sched_flavor_upsert(sched_t *s, const flavor_t *f, err_msg_t *msg)
{
    if (f->meta.name == NULL || f->meta.name[0] == '\0')
        return err_set(msg, ERR_INVALID, "ResourceFlavor: metadata.name: required");
    flavor_rec_t *rec;
    if (sched__intern_flavor(s, f->meta.name, &rec) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "ResourceFlavor %s: out of memory", f->meta.name);
    kv_list_t labels;
    taint_t *taints = NULL;
    toleration_t *tols = NULL;
    char *topology = NULL;
    if (s->cfg.tas && util_strdup(f->topology_name, &topology) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "ResourceFlavor %s: out of memory", f->meta.name);
    if (sched__kv_copy(&labels, &f->node_labels) != ERR_OK) {
        free(topology);
        return err_set(msg, ERR_NOMEM, "ResourceFlavor %s: out of memory", f->meta.name);
    }
    if (sched__taints_copy(&taints, f->taints, f->ntaints) != ERR_OK ||
        sched__tolerations_copy(&tols, f->tolerations, f->ntolerations) != ERR_OK) {
        kv_list_fini(&labels);
        sched__taints_fini(taints, f->ntaints);
        free(topology);
        return err_set(msg, ERR_NOMEM, "ResourceFlavor %s: out of memory", f->meta.name);
    }
    free(rec->topology);
    rec->topology = topology;
    kv_list_fini(&rec->node_labels);
    sched__taints_fini(rec->taints, rec->ntaints);
    sched__tolerations_fini(rec->tolerations, rec->ntolerations);
    rec->node_labels = labels;
    rec->taints = taints;
    rec->ntaints = f->ntaints;
    rec->tolerations = tols;
    rec->ntolerations = f->ntolerations;
    rec->exists = true;
    if (objects_changed(s, false) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "ResourceFlavor %s: out of memory", f->meta.name);
    return ERR_OK;
}

err_t sched_flavor_delete(sched_t *s, const char *name, err_msg_t *msg)
{
    flavor_rec_t *rec = util_hmap_get(&s->flavor_map, name);
    if (rec == NULL || !rec->exists)
        return err_set(msg, ERR_NOT_FOUND, "ResourceFlavor %s not found", name);
    rec->exists = false;
    kv_list_fini(&rec->node_labels);
    sched__taints_fini(rec->taints, rec->ntaints);
    sched__tolerations_fini(rec->tolerations, rec->ntolerations);
    rec->taints = NULL;
    rec->tolerations = NULL;
    rec->ntaints = rec->ntolerations = 0;
    free(rec->topology);
    rec->topology = NULL;
    if (objects_changed(s, false) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "ResourceFlavor %s: out of memory", name);
    return ERR_OK;
}

/* ---- resource groups (ClusterQueue and Cohort) --------------------------------------------------
 */

static err_t parse_groups(sched_t *s, const char *kind, const char *name,
                          const resource_group_t *groups, size_t ngroups, rgroup_t **out_groups,
                          quota_decl_t **out_quotas, size_t *out_nquotas, err_msg_t *msg)
{
    rgroup_t *rg = NULL;
    quota_decl_t *q = NULL;
    size_t nq = 0, cq_ = 0;
    err_t rc = ERR_INVALID;
    if (out_groups != NULL && ngroups > 0) {
        rg = calloc(ngroups, sizeof(*rg));
        if (rg == NULL)
            goto nomem;
    }
    for (size_t g = 0; g < ngroups; g++) {
        const resource_group_t *src = &groups[g];
        int *res_ids = calloc(src->ncovered ? src->ncovered : 1, sizeof(int));
        if (res_ids == NULL)
            goto nomem;
        for (size_t r = 0; r < src->ncovered; r++) {
            if (sched__intern_res(s, src->covered[r], &res_ids[r]) != ERR_OK) {
                free(res_ids);
                goto nomem;
            }
        }
        if (rg != NULL) {
            rg[g].res = res_ids;
            rg[g].nres = src->ncovered;
            rg[g].flavors = calloc(src->nflavors ? src->nflavors : 1, sizeof(int));
            if (rg[g].flavors == NULL)
                goto nomem;
            rg[g].nflavors = src->nflavors;
        }
        for (size_t f = 0; f < src->nflavors; f++) {
            const flavor_quotas_t *fq = &src->flavors[f];
            flavor_rec_t *frec;
            if (fq->name == NULL) {
                if (rg == NULL)
                    free(res_ids);
                err_set(msg, ERR_INVALID,
                        "%s %s: spec.resourceGroups[%zu].flavors[%zu].name: required", kind, name,
                        g, f);
                goto fail;
            }
            if (sched__intern_flavor(s, fq->name, &frec) != ERR_OK) {
                if (rg == NULL)
                    free(res_ids);
                goto nomem;
            }
            if (rg != NULL)
                rg[g].flavors[f] = frec->id;
            if (fq->nresources != src->ncovered) {
                if (rg == NULL)
                    free(res_ids);
                err_set(msg, ERR_INVALID,
                        "%s %s: spec.resourceGroups[%zu].flavors[%zu].resources: flavors must have "
                        "the same number of resources as the coveredResources",
                        kind, name, g, f);
                goto fail;
            }
            for (size_t r = 0; r < fq->nresources; r++) {
                const resource_quota_t *rq = &fq->resources[r];
                int res;
                if (sched__intern_res(s, rq->name ? rq->name : src->covered[r], &res) != ERR_OK) {
                    if (rg == NULL)
                        free(res_ids);
                    goto nomem;
                }
                int fr;
                if (sched__intern_fr(s, frec->id, res, &fr) != ERR_OK) {
                    if (rg == NULL)
                        free(res_ids);
                    goto nomem;
                }
                if (util_grow((void **)&q, &cq_, nq + 1, sizeof(*q)) != ERR_OK) {
                    if (rg == NULL)
                        free(res_ids);
                    goto nomem;
                }
                q[nq].fr = fr;
                q[nq].nominal = rq->nominal.nano;
                q[nq].has_bl = rq->has_borrowing_limit;
                q[nq].borrowing_limit = rq->borrowing_limit.nano;
                q[nq].has_ll = rq->has_lending_limit;
                q[nq].lending_limit = rq->lending_limit.nano;
                nq++;
            }
        }
        if (rg == NULL)
            free(res_ids);
    }
    if (out_groups != NULL)
        *out_groups = rg;
    *out_quotas = q;
    *out_nquotas = nq;
    return ERR_OK;
nomem:
    rc = err_set(msg, ERR_NOMEM, "%s %s: out of memory", kind, name);
fail:
    if (rg != NULL) {
        for (size_t g = 0; g < ngroups; g++) {
            free(rg[g].res);
            free(rg[g].flavors);
        }
        free(rg);
    }
    free(q);
    return rc;
}

/* ---- ClusterQueue
 * -------------------------------------------------------------------------------- */

static cq_t *cq_get(sched_t *s, const char *name, bool create)
{
    cq_t *cq = util_hmap_get(&s->cq_map, name);
    if (cq != NULL || !create)
        return cq;
    if (util_grow((void **)&s->cqs, &s->ccqs, s->ncqs + 1, sizeof(void *)) != ERR_OK)
        return NULL;
    cq = calloc(1, sizeof(*cq));
    if (cq == NULL)
        return NULL;
    cq->name = strdup(name);
    if (cq->name == NULL || util_hmap_put(&s->cq_map, cq->name, cq, NULL) != ERR_OK) {
        free(cq->name);
        free(cq);
        return NULL;
    }
    cq->node.is_cq = true;
    cq->node.name = cq->name;
    cq->node.weight = 1000000000;
    cq->when_can_preempt = FUNGIBILITY_TRY_NEXT_FLAVOR;
    size_t i = s->ncqs;
    while (i > 0 && strcmp(s->cqs[i - 1]->name, name) > 0) {
        s->cqs[i] = s->cqs[i - 1];
        i--;
    }
    s->cqs[i] = cq;
    s->ncqs++;
    return cq;
}

cq_t *sched__cq_record(sched_t *s, const char *name);
cq_t *sched__cq_record(sched_t *s, const char *name)
{
    return cq_get(s, name, true);
}

/* The admissionChecksStrategy rules of `in` (v1beta1 spec.admissionChecks: names only), sorted
 * by name, onFlavors interned. */
static err_t cq_checks_parse(sched_t *s, const cluster_queue_t *in, cq_check_t **out, size_t *n)
{
    size_t cnt = in->ncheck_rules > 0 ? in->ncheck_rules : in->nadmission_checks;
    cq_check_t *acs = NULL;
    size_t k = 0;

    *out = NULL;
    *n = 0;
    if (cnt == 0)
        return ERR_OK;
    acs = calloc(cnt, sizeof(*acs));
    if (acs == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < cnt; i++) {
        const char *name = in->ncheck_rules > 0 ? in->check_rules[i].name : in->admission_checks[i];
        if (name == NULL)
            continue;
        cq_check_t c = {0};
        if (util_strdup(name, &c.name) != ERR_OK)
            goto nomem;
        if (in->ncheck_rules > 0 && in->check_rules[i].non_flavors > 0) {
            const admission_check_rule_t *r = &in->check_rules[i];
            c.flavors = calloc(r->non_flavors, sizeof(int));
            if (c.flavors == NULL) {
                free(c.name);
                goto nomem;
            }
            for (size_t f = 0; f < r->non_flavors; f++) {
                flavor_rec_t *rec;
                if (sched__intern_flavor(s, r->on_flavors[f], &rec) != ERR_OK) {
                    free(c.name);
                    free(c.flavors);
                    goto nomem;
                }
                c.flavors[c.nflavors++] = rec->id;
            }
        }
        size_t j = k++;
        while (j > 0 && strcmp(acs[j - 1].name, c.name) > 0) {
            acs[j] = acs[j - 1];
            j--;
        }
        acs[j] = c;
    }
    *out = acs;
    *n = k;
    return ERR_OK;
nomem:
    sched__cq_checks_fini(acs, k);
    return ERR_NOMEM;
}

err_t sched_cq_upsert(sched_t *s, const cluster_queue_t *in, err_msg_t *msg)
{
    const char *name = in->meta.name;
    if (name == NULL || name[0] == '\0')
        return err_set(msg, ERR_INVALID, "ClusterQueue: metadata.name: required");
    rgroup_t *groups = NULL;
    quota_decl_t *quotas = NULL;
    size_t nquotas = 0;
    err_t rc = parse_groups(s, "ClusterQueue", name, in->groups, in->ngroups, &groups, &quotas,
                            &nquotas, msg);
    if (rc != ERR_OK)
        return rc;
    label_selector_t sel;
    char *cohort = NULL;
    int *rg_by_res = NULL;
    if (sched__selector_copy(&sel, &in->namespace_selector) != ERR_OK)
        goto nomem_groups;
    cohort = in->cohort && in->cohort[0] ? strdup(in->cohort) : NULL;
    rg_by_res = malloc((s->nres ? s->nres : 1) * sizeof(int));
    if ((in->cohort && in->cohort[0] && cohort == NULL) || rg_by_res == NULL)
        goto nomem_sel;
    for (size_t r = 0; r < s->nres; r++)
        rg_by_res[r] = SCHED__NONE;
    for (size_t g = 0; g < in->ngroups; g++)
        for (size_t r = 0; r < groups[g].nres; r++)
            rg_by_res[groups[g].res[r]] = (int)g;
    cq_check_t *acs = NULL;
    size_t nacs = 0;
    if (cq_checks_parse(s, in, &acs, &nacs) != ERR_OK)
        goto nomem_sel;
    cq_t *cq = cq_get(s, name, true);
    if (cq == NULL) {
        sched__cq_checks_fini(acs, nacs);
        goto nomem_sel;
    }
    sched__cq_checks_fini(cq->acs, cq->nacs);
    cq->acs = acs;
    cq->nacs = nacs;
    for (size_t g = 0; g < cq->ngroups; g++) {
        free(cq->groups[g].res);
        free(cq->groups[g].flavors);
    }
    free(cq->groups);
    free(cq->quotas);
    free(cq->rg_by_res);
    free(cq->cohort_name);
    label_selector_fini(&cq->ns_selector);
    cq->groups = groups;
    cq->ngroups = in->ngroups;
    cq->quotas = quotas;
    cq->nquotas = nquotas;
    cq->rg_by_res = rg_by_res;
    cq->nrg_by_res = s->nres;
    cq->cohort_name = cohort;
    cq->ns_selector = sel;
    cq->queueing = in->queueing;
    cq->when_can_borrow = in->when_can_borrow;
    cq->when_can_preempt = in->when_can_preempt;
    cq->preference = in->preference;
    cq->reclaim_within_cohort = in->reclaim_within_cohort;
    cq->within_cluster_queue = in->within_cluster_queue;
    cq->borrow_within_cohort = in->borrow_within_cohort;
    cq->has_max_prio_threshold = in->has_max_priority_threshold;
    cq->max_prio_threshold = in->max_priority_threshold;
    cq->stop_policy = in->stop_policy;
    cq->deleting = in->meta.deleting;
    cq->node.weight = in->has_fair_weight ? in->fair_weight.nano : 1000000000;
    cq->afs_mode = in->has_admission_scope && in->afs_usage_based;
    cq->exists = true;
    if (objects_changed(s, true) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "ClusterQueue %s: out of memory", name);
    return ERR_OK;
nomem_sel:
    label_selector_fini(&sel);
    free(cohort);
    free(rg_by_res);
nomem_groups:
    for (size_t g = 0; g < in->ngroups; g++) {
        free(groups[g].res);
        free(groups[g].flavors);
    }
    free(groups);
    free(quotas);
    return err_set(msg, ERR_NOMEM, "ClusterQueue %s: out of memory", name);
}

err_t sched_cq_delete(sched_t *s, const char *name, err_msg_t *msg)
{
    cq_t *cq = cq_get(s, name, false);
    if (cq == NULL || !cq->exists)
        return err_set(msg, ERR_NOT_FOUND, "ClusterQueue %s not found", name);
    cq->exists = false;
    if (objects_changed(s, true) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "ClusterQueue %s: out of memory", name);
    return ERR_OK;
}

/* ---- AdmissionCheck ------------------------------------------------------------------------ */

err_t sched_check_upsert(sched_t *s, const char *name, bool active, err_msg_t *msg)
{
    if (name == NULL || name[0] == '\0')
        return err_set(msg, ERR_INVALID, "AdmissionCheck: metadata.name: required");
    check_rec_t *c = util_hmap_get(&s->check_map, name);
    if (c == NULL) {
        if (util_grow((void **)&s->checks, &s->cchecks, s->nchecks + 1, sizeof(void *)) != ERR_OK)
            return err_set(msg, ERR_NOMEM, "AdmissionCheck %s: out of memory", name);
        c = calloc(1, sizeof(*c));
        if (c == NULL || util_strdup(name, &c->name) != ERR_OK ||
            util_hmap_put(&s->check_map, c->name, c, NULL) != ERR_OK) {
            if (c != NULL)
                free(c->name);
            free(c);
            return err_set(msg, ERR_NOMEM, "AdmissionCheck %s: out of memory", name);
        }
        size_t i = s->nchecks++;
        while (i > 0 && strcmp(s->checks[i - 1]->name, name) > 0) {
            s->checks[i] = s->checks[i - 1];
            i--;
        }
        s->checks[i] = c;
    } else if (c->active == active) {
        return ERR_OK;
    }
    c->active = active;
    if (objects_changed(s, false) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "AdmissionCheck %s: out of memory", name);
    return ERR_OK;
}

err_t sched_check_delete(sched_t *s, const char *name, err_msg_t *msg)
{
    check_rec_t *c = util_hmap_get(&s->check_map, name);
    if (c == NULL)
        return err_set(msg, ERR_NOT_FOUND, "AdmissionCheck %s not found", name);
    util_hmap_del(&s->check_map, name);
    size_t i = 0;
    while (s->checks[i] != c)
        i++;
    memmove(&s->checks[i], &s->checks[i + 1], (s->nchecks - i - 1) * sizeof(void *));
    s->nchecks--;
    free(c->name);
    free(c);
    if (objects_changed(s, false) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "AdmissionCheck %s: out of memory", name);
    return ERR_OK;
}

/* ---- Topology ------------------------------------------------------------------------------ */

const topo_rec_t *sched__topo_find(const sched_t *s, const char *name)
{
    size_t lo = 0, hi = s->ntopos;
    while (name != NULL && lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = strcmp(s->topos[mid]->name, name);
        if (r == 0)
            return s->topos[mid];
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

err_t sched_topology_upsert(sched_t *s, const topology_t *t, err_msg_t *msg)
{
    const char *name = t->meta.name;
    if (name == NULL || name[0] == '\0')
        return err_set(msg, ERR_INVALID, "Topology: metadata.name: required");
    if (t->nlevels == 0 || t->nlevels > 16)
        return err_set(msg, ERR_INVALID, "Topology %s: spec.levels: 1 to 16 levels", name);
    topo_rec_t *n = calloc(1, sizeof(*n));
    if (n == NULL || util_strdup(name, &n->name) != ERR_OK ||
        (n->levels = calloc(t->nlevels, sizeof(char *))) == NULL)
        goto nomem;
    for (; n->nlevels < t->nlevels; n->nlevels++)
        if (util_strdup(t->levels[n->nlevels], &n->levels[n->nlevels]) != ERR_OK)
            goto nomem;
    size_t at = 0;
    while (at < s->ntopos && strcmp(s->topos[at]->name, name) < 0)
        at++;
    if (at < s->ntopos && strcmp(s->topos[at]->name, name) == 0) {
        topo_free(s->topos[at]);
        s->topos[at] = n;
    } else {
        if (util_grow((void **)&s->topos, &s->ctopos, s->ntopos + 1, sizeof(void *)) != ERR_OK)
            goto nomem;
        memmove(&s->topos[at + 1], &s->topos[at], (s->ntopos - at) * sizeof(void *));
        s->topos[at] = n;
        s->ntopos++;
    }
    if (objects_changed(s, false) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "Topology %s: out of memory", name);
    return ERR_OK;
nomem:
    topo_free(n);
    return err_set(msg, ERR_NOMEM, "Topology %s: out of memory", name);
}

err_t sched_topology_delete(sched_t *s, const char *name, err_msg_t *msg)
{
    size_t at = 0;
    while (at < s->ntopos && strcmp(s->topos[at]->name, name) != 0)
        at++;
    if (at == s->ntopos)
        return err_set(msg, ERR_NOT_FOUND, "Topology %s not found", name);
    topo_free(s->topos[at]);
    memmove(&s->topos[at], &s->topos[at + 1], (s->ntopos - at - 1) * sizeof(void *));
    s->ntopos--;
    if (objects_changed(s, false) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "Topology %s: out of memory", name);
    return ERR_OK;
}

/* ---- Cohort
 * --------------------------------------------------------------------------------------- */

err_t sched_cohort_upsert(sched_t *s, const cohort_t *in, err_msg_t *msg)
{
    const char *name = in->meta.name;
    if (name == NULL || name[0] == '\0')
        return err_set(msg, ERR_INVALID, "Cohort: metadata.name: required");
    quota_decl_t *quotas = NULL;
    size_t nquotas = 0;
    err_t rc =
        parse_groups(s, "Cohort", name, in->groups, in->ngroups, NULL, &quotas, &nquotas, msg);
    if (rc != ERR_OK)
        return rc;
    char *parent = in->parent && in->parent[0] ? strdup(in->parent) : NULL;
    cohort_rec_t *c = sched__cohort_get(s, name, true);
    if (c == NULL || (in->parent && in->parent[0] && parent == NULL)) {
        free(parent);
        free(quotas);
        return err_set(msg, ERR_NOMEM, "Cohort %s: out of memory", name);
    }
    free(c->parent_name);
    free(c->quotas);
    c->parent_name = parent;
    c->quotas = quotas;
    c->nquotas = nquotas;
    c->exists = true;
    c->node.weight = in->has_fair_weight ? in->fair_weight.nano : 1000000000;
    if (objects_changed(s, false) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "Cohort %s: out of memory", name);
    return ERR_OK;
}

err_t sched_cohort_delete(sched_t *s, const char *name, err_msg_t *msg)
{
    cohort_rec_t *c = sched__cohort_get(s, name, false);
    if (c == NULL || !c->exists)
        return err_set(msg, ERR_NOT_FOUND, "Cohort %s not found", name);
    c->exists = false;
    free(c->parent_name);
    free(c->quotas);
    c->parent_name = NULL;
    c->quotas = NULL;
    c->nquotas = 0;
    c->node.weight = 1000000000;
    if (objects_changed(s, false) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "Cohort %s: out of memory", name);
    return ERR_OK;
}

/* ---- LocalQueue, Namespace, priority classes
 * ------------------------------------------------------ */

static char *join_key(const char *ns, const char *name)
{
    return util_asprintf("%s/%s", ns ? ns : "default", name);
}

err_t sched_lq_upsert(sched_t *s, const local_queue_t *in, err_msg_t *msg)
{
    if (in->meta.name == NULL || in->cluster_queue == NULL)
        return err_set(msg, ERR_INVALID, "LocalQueue %s: %s: required",
                       in->meta.name ? in->meta.name : "",
                       in->meta.name ? "spec.clusterQueue" : "metadata.name");
    char *key = join_key(in->meta.namespace, in->meta.name);
    char *cqn = strdup(in->cluster_queue);
    if (key == NULL || cqn == NULL)
        goto nomem;
    lq_t *lq = util_hmap_get(&s->lq_map, key);
    if (lq == NULL) {
        if (util_grow((void **)&s->lqs, &s->clqs, s->nlqs + 1, sizeof(void *)) != ERR_OK)
            goto nomem;
        lq = calloc(1, sizeof(*lq));
        if (lq == NULL)
            goto nomem;
        lq->key = key;
        lq->afs.score.den = 1;
        key = NULL;
        if (util_hmap_put(&s->lq_map, lq->key, lq, NULL) != ERR_OK) {
            free(lq->key);
            free(lq);
            goto nomem;
        }
        s->lqs[s->nlqs++] = lq;
    }
    free(key);
    free(lq->cq);
    lq->cq = cqn;
    lq->stop_policy = in->stop_policy;
    lq->weight = in->has_fair_weight ? in->fair_weight.nano : 1000000000;
    s->queues_dirty = true;
    return ERR_OK;
nomem:
    free(key);
    free(cqn);
    return err_set(msg, ERR_NOMEM, "LocalQueue %s: out of memory", in->meta.name);
}

err_t sched_lq_delete(sched_t *s, const char *ns, const char *name, err_msg_t *msg)
{
    char *key = join_key(ns, name);
    if (key == NULL)
        return err_set(msg, ERR_NOMEM, "LocalQueue %s: out of memory", name);
    lq_t *lq = util_hmap_get(&s->lq_map, key);
    free(key);
    if (lq == NULL)
        return err_set(msg, ERR_NOT_FOUND, "LocalQueue %s/%s not found", ns ? ns : "default", name);
    util_hmap_del(&s->lq_map, lq->key);
    for (size_t i = 0; i < s->nlqs; i++) {
        if (s->lqs[i] == lq) {
            memmove(&s->lqs[i], &s->lqs[i + 1], (s->nlqs - i - 1) * sizeof(void *));
            s->nlqs--;
            break;
        }
    }
    free(lq->key);
    free(lq->cq);
    sched__afs_fini(&lq->afs);
    free(lq);
    s->queues_dirty = true;
    return ERR_OK;
}

err_t sched_namespace_upsert(sched_t *s, const namespace_t *in, err_msg_t *msg)
{
    if (in->meta.name == NULL)
        return err_set(msg, ERR_INVALID, "Namespace: metadata.name: required");
    ns_rec_t *ns = util_hmap_get(&s->ns_map, in->meta.name);
    kv_list_t labels;
    if (sched__kv_copy(&labels, &in->meta.labels) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "Namespace %s: out of memory", in->meta.name);
    if (ns == NULL) {
        if (util_grow((void **)&s->nss, &s->cnss, s->nnss + 1, sizeof(void *)) != ERR_OK)
            goto nomem;
        ns = calloc(1, sizeof(*ns));
        if (ns == NULL)
            goto nomem;
        ns->name = strdup(in->meta.name);
        if (ns->name == NULL || util_hmap_put(&s->ns_map, ns->name, ns, NULL) != ERR_OK) {
            free(ns->name);
            free(ns);
            goto nomem;
        }
        s->nss[s->nnss++] = ns;
    }
    kv_list_fini(&ns->labels);
    ns->labels = labels;
    s->queues_dirty = true;
    s->requeue_all = true;
    return ERR_OK;
nomem:
    kv_list_fini(&labels);
    return err_set(msg, ERR_NOMEM, "Namespace %s: out of memory", in->meta.name);
}

err_t sched_namespace_delete(sched_t *s, const char *name, err_msg_t *msg)
{
    ns_rec_t *ns = util_hmap_get(&s->ns_map, name);
    if (ns == NULL)
        return err_set(msg, ERR_NOT_FOUND, "Namespace %s not found", name);
    util_hmap_del(&s->ns_map, name);
    for (size_t i = 0; i < s->nnss; i++) {
        if (s->nss[i] == ns) {
            s->nss[i] = s->nss[--s->nnss];
            break;
        }
    }
    free(ns->name);
    kv_list_fini(&ns->labels);
    free(ns);
    s->queues_dirty = true;
    return ERR_OK;
}

static err_t prio_upsert(sched_t *s, prio_rec_t ***arr, size_t *n, size_t *cap, util_hmap_t *map,
                         const char *kind, const char *name, int32_t value, bool global_default,
                         err_msg_t *msg)
{
    if (name == NULL)
        return err_set(msg, ERR_INVALID, "%s: metadata.name: required", kind);
    prio_rec_t *p = util_hmap_get(map, name);
    if (p == NULL) {
        if (util_grow((void **)arr, cap, *n + 1, sizeof(void *)) != ERR_OK)
            return err_set(msg, ERR_NOMEM, "%s %s: out of memory", kind, name);
        p = calloc(1, sizeof(*p));
        if (p == NULL)
            return err_set(msg, ERR_NOMEM, "%s %s: out of memory", kind, name);
        p->name = strdup(name);
        if (p->name == NULL || util_hmap_put(map, p->name, p, NULL) != ERR_OK) {
            free(p->name);
            free(p);
            return err_set(msg, ERR_NOMEM, "%s %s: out of memory", kind, name);
        }
        (*arr)[(*n)++] = p;
    }
    p->value = value;
    p->global_default = global_default;
    (void)s;
    return ERR_OK;
}

static void prio_delete(prio_rec_t **arr, size_t *n, util_hmap_t *map, prio_rec_t *p)
{
    util_hmap_del(map, p->name);
    for (size_t i = 0; i < *n; i++) {
        if (arr[i] == p) {
            memmove(&arr[i], &arr[i + 1], (*n - i - 1) * sizeof(void *));
            (*n)--;
            break;
        }
    }
    prio_free(p);
}

/* Priorities changed: recompute every workload's effective priority and re-order the heaps. */
static void priorities_changed(sched_t *s)
{
    for (size_t i = 0; i < s->nwls; i++) {
        wl_t *w = s->wls[i];
        w->priority = sched__resolve_priority(s, w);
    }
    for (size_t i = 0; i < s->ncqs; i++)
        sched__queue_rebuild_heap(s->cqs[i]);
    s->requeue_all = true;
}

/* Workloads keep the value a deleted class gave them: freeze it as their explicit priority. */
static void freeze_priorities(sched_t *s, priority_source_t source, const char *name)
{
    for (size_t i = 0; i < s->nwls; i++) {
        wl_t *w = s->wls[i];
        if (w->prio_source == source && w->prio_class && strcmp(w->prio_class, name) == 0) {
            w->has_explicit_prio = true;
            w->explicit_prio = w->priority;
        }
    }
}

err_t sched_wpc_upsert(sched_t *s, const workload_priority_class_t *in, err_msg_t *msg)
{
    err_t rc = prio_upsert(s, &s->wpcs, &s->nwpcs, &s->cwpcs, &s->wpc_map, "WorkloadPriorityClass",
                           in->meta.name, in->value, false, msg);
    if (rc == ERR_OK)
        priorities_changed(s);
    return rc;
}

err_t sched_wpc_delete(sched_t *s, const char *name, err_msg_t *msg)
{
    prio_rec_t *p = util_hmap_get(&s->wpc_map, name);
    if (p == NULL)
        return err_set(msg, ERR_NOT_FOUND, "WorkloadPriorityClass %s not found", name);
    freeze_priorities(s, PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS, name);
    prio_delete(s->wpcs, &s->nwpcs, &s->wpc_map, p);
    return ERR_OK;
}

err_t sched_pc_upsert(sched_t *s, const priority_class_t *in, err_msg_t *msg)
{
    err_t rc = prio_upsert(s, &s->pcs, &s->npcs, &s->cpcs, &s->pc_map, "PriorityClass",
                           in->meta.name, in->value, in->global_default, msg);
    if (rc == ERR_OK)
        priorities_changed(s);
    return rc;
}

err_t sched_pc_delete(sched_t *s, const char *name, err_msg_t *msg)
{
    prio_rec_t *p = util_hmap_get(&s->pc_map, name);
    if (p == NULL)
        return err_set(msg, ERR_NOT_FOUND, "PriorityClass %s not found", name);
    freeze_priorities(s, PRIORITY_SOURCE_PRIORITY_CLASS, name);
    prio_delete(s->pcs, &s->npcs, &s->pc_map, p);
    priorities_changed(s);
    return ERR_OK;
}
