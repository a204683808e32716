/* crosscheck -- checks across a set of objects: dangling references, cohort cycles, duplicates. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/crosscheck.h"

#include "model/selector.h"
#include "util/duration.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Every object is entered once in a table sorted by (kind, namespace, name, position), so that
 * duplicates are neighbours and each reference is a binary search: a scenario with tens of
 * thousands of Jobs stays O(n log n).
 */

#define CPATH      1024
#define CYCLE_TEXT 512

#define QUEUE_NAME_LABEL     "kueue.x-k8s.io/queue-name"
#define PRIORITY_CLASS_LABEL "kueue.x-k8s.io/priority-class"

typedef struct entry_s {
    kind_t kind;
    const char *sub;  /* KIND_INTEGRATION: the object's kind ("JobSet"); "" otherwise */
    const char *ns;   /* "" for cluster-scoped kinds */
    const char *name; /* never NULL: unnamed objects are not entered */
    size_t idx;
} entry_t;

typedef struct cc_s {
    const object_t *const *objs;
    size_t n;
    const crosscheck_opts_t *opts;
    diags_t *diags;
    entry_t *tab; /* owned */
    size_t ntab;
    size_t ncohorts;
    int manage_unlabelled; /* -1 unknown, else manages_unlabelled_jobs() */
    int fair_off;          /* -1 unknown, else fair_sharing_off() */
    int afs_off;           /* -1 unknown, else afs_off() */
} cc_t;

static bool namespaced(kind_t k)
{
    return k == KIND_LOCAL_QUEUE || k == KIND_WORKLOAD || k == KIND_JOB || k == KIND_INTEGRATION;
}

static const char *sub_of(const object_t *o)
{
    return o->kind == KIND_INTEGRATION && o->u.integ.kind != NULL ? o->u.integ.kind : "";
}

/* The namespace an object lives in: kubectl puts an unqualified namespaced object in
 * "default" (the usual context namespace). */
static const char *ns_of(const object_t *o)
{
    const object_meta_t *m = object_meta_const(o);

    if (!namespaced(o->kind))
        return "";
    return m != NULL && m->namespace != NULL && m->namespace[0] != '\0' ? m->namespace : "default";
}

/* Value of `key` in a string map (borrowed), NULL when absent. */
static const char *kv_find(const kv_list_t *l, const char *key)
{
    for (size_t i = 0; i < l->len; i++)
        if (l->items[i].key != NULL && strcmp(l->items[i].key, key) == 0)
            return l->items[i].value ? l->items[i].value : "";
    return NULL;
}

static bool is_partial(const cc_t *c, size_t i)
{
    return c->opts != NULL && c->opts->partial != NULL && c->opts->partial[i];
}

static void origin_of(const cc_t *c, size_t i, char *buf, size_t cap)
{
    if (c->opts != NULL && c->opts->origins != NULL && c->opts->origins[i] != NULL)
        snprintf(buf, cap, "%s", c->opts->origins[i]);
    else
        snprintf(buf, cap, "object #%zu", i + 1);
}

static void cpathf(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void cpathf(char *buf, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, CPATH, fmt, ap);
    va_end(ap);
}

/* ---- the table ------------------------------------------------------------------------- */

static int entry_cmp(const void *a, const void *b)
{
    const entry_t *x = a, *y = b;
    int r;

    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    r = strcmp(x->sub, y->sub);
    if (r == 0)
        r = strcmp(x->ns, y->ns);
    if (r == 0)
        r = strcmp(x->name, y->name);
    if (r == 0 && x->idx != y->idx)
        r = x->idx < y->idx ? -1 : 1;
    return r;
}

static err_t build_table(cc_t *c)
{
    c->tab = calloc(c->n ? c->n : 1, sizeof(*c->tab));
    if (c->tab == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < c->n; i++) {
        const object_t *o = c->objs[i];
        const object_meta_t *m = o ? object_meta_const(o) : NULL;
        if (m == NULL || m->name == NULL || m->name[0] == '\0')
            continue;
        c->tab[c->ntab++] = (entry_t){o->kind, sub_of(o), ns_of(o), m->name, i};
        if (o->kind == KIND_COHORT)
            c->ncohorts++;
    }
    qsort(c->tab, c->ntab, sizeof(*c->tab), entry_cmp);
    return ERR_OK;
}

/* Position of the first table entry for (kind, ns, name), or CROSSCHECK_NONE. */
static size_t find_pos(const cc_t *c, kind_t kind, const char *ns, const char *name)
{
    size_t lo = 0, hi = c->ntab;
    entry_t key = {kind, "", ns ? ns : "", name ? name : "", 0};

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (entry_cmp(&c->tab[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < c->ntab && c->tab[lo].kind == kind && strcmp(c->tab[lo].ns, key.ns) == 0 &&
        strcmp(c->tab[lo].name, key.name) == 0)
        return lo;
    return CROSSCHECK_NONE;
}

/* Index (into objs) of the first object (kind, ns, name), or CROSSCHECK_NONE. */
static size_t find(const cc_t *c, kind_t kind, const char *ns, const char *name)
{
    size_t pos = find_pos(c, kind, ns, name);

    return pos == CROSSCHECK_NONE ? CROSSCHECK_NONE : c->tab[pos].idx;
}

/* ---- durations (sim.sluice.dev/at) ------------------------------------------------------ */

bool crosscheck_parse_duration(const char *s, int64_t *out_ns)
{
    return s != NULL && duration_parse_ns(s, strlen(s), INT64_MAX, out_ns, NULL) == ERR_OK;
}

/* ---- duplicates and updates -------------------------------------------------------------- */

static const char *at_of(const object_t *o)
{
    const object_meta_t *m = object_meta_const(o);

    return m ? kv_find(&m->annotations, CROSSCHECK_AT_ANNOTATION) : NULL;
}

/* Walk each run of equal identities; with `report`, add the duplicate and bad-duration errors. */
static void scan_identities(cc_t *c, size_t *prev, bool report)
{
    bool timed = c->opts != NULL && c->opts->timed_updates;

    for (size_t i = 0; i < c->ntab;) {
        size_t j = i + 1;
        size_t latest = c->tab[i].idx;
        int64_t latest_at = 0;
        const char *a;

        while (j < c->ntab && c->tab[j].kind == c->tab[i].kind &&
               strcmp(c->tab[j].sub, c->tab[i].sub) == 0 &&
               strcmp(c->tab[j].ns, c->tab[i].ns) == 0 &&
               strcmp(c->tab[j].name, c->tab[i].name) == 0)
            j++;
        if (timed) {
            a = at_of(c->objs[latest]);
            if (a != NULL && !crosscheck_parse_duration(a, &latest_at))
                latest_at = 0;
        }
        for (size_t k = i + 1; k < j; k++) {
            size_t idx = c->tab[k].idx;
            int64_t at = 0;
            bool at_ok = true;

            if (timed) {
                a = at_of(c->objs[idx]);
                at_ok = a == NULL || crosscheck_parse_duration(a, &at);
                if (at_ok && at > latest_at) {
                    if (prev != NULL)
                        prev[idx] = latest;
                    latest = idx;
                    latest_at = at;
                    continue;
                }
            }
            if (report && at_ok) {
                char where[256], q[512];
                snprintf(q, sizeof(q), "\"%s\"", c->tab[k].name);
                origin_of(c, latest, where, sizeof(where));
                diags_error(&c->diags[idx], "metadata.name",
                            "Duplicate value: %s: also defined by %s%s", q, where,
                            timed ? " with an earlier or equal " CROSSCHECK_AT_ANNOTATION : "");
            }
        }
        i = j;
    }
    /* The creation time of every object must parse, named or not. */
    for (size_t i = 0; report && timed && i < c->n; i++) {
        const char *a = c->objs[i] ? at_of(c->objs[i]) : NULL;
        int64_t ns;
        if (a != NULL && !crosscheck_parse_duration(a, &ns))
            diags_error(&c->diags[i], "metadata.annotations[" CROSSCHECK_AT_ANNOTATION "]",
                        "invalid duration \"%s\" (want a Go duration such as 0s, 1.5s, 250ms, "
                        "2m, 1h30m)",
                        a);
    }
}

err_t crosscheck_updates(const object_t *const *objs, size_t n, const crosscheck_opts_t *opts,
                         size_t *prev)
{
    cc_t c = {.objs = objs, .n = n, .opts = opts};

    for (size_t i = 0; i < n; i++)
        prev[i] = CROSSCHECK_NONE;
    if (opts == NULL || !opts->timed_updates)
        return ERR_OK;
    if (build_table(&c) != ERR_OK)
        return ERR_NOMEM;
    scan_identities(&c, prev, false);
    free(c.tab);
    return ERR_OK;
}

/* ---- cohort cycles ------------------------------------------------------------------------ */

static const char *cohort_parent(const cc_t *c, const char *name)
{
    size_t i = find(c, KIND_COHORT, "", name);
    const char *p;

    if (i == CROSSCHECK_NONE)
        return NULL;
    p = c->objs[i]->u.cohort.parent;
    return p != NULL && p[0] != '\0' ? p : NULL;
}

/* Is cohort `name` (a Cohort object) on a parentName loop? Following its parents for at most
 * as many steps as there are Cohort objects must lead back to it. */
static bool cohort_on_loop(const cc_t *c, const char *name)
{
    const char *cur = cohort_parent(c, name);

    for (size_t steps = 0; cur != NULL && steps <= c->ncohorts; steps++) {
        if (strcmp(cur, name) == 0)
            return true;
        cur = cohort_parent(c, cur);
    }
    return false;
}

/*
 * Follow parentName links from cohort `start`. If the chain runs into a loop, return true,
 * write the loop into `text` starting where the chain enters it ("a -> b -> a") and set
 * *on_cycle when `start` itself is on the loop. `loop` flags, per object index, the Cohorts
 * that are on a loop (computed once by check_cycles).
 */
static bool cohort_cycle(const cc_t *c, const bool *loop, const char *start, bool *on_cycle,
                         char *text, size_t cap)
{
    const char *cur = start, *entry = NULL;
    size_t len;

    for (size_t steps = 0; cur != NULL && steps <= c->ncohorts; steps++) {
        size_t i = find(c, KIND_COHORT, "", cur);
        if (i == CROSSCHECK_NONE)
            return false; /* an implicit cohort ends the chain */
        if (loop[i]) {
            entry = cur;
            break;
        }
        cur = cohort_parent(c, cur);
    }
    if (entry == NULL)
        return false;
    *on_cycle = strcmp(entry, start) == 0;
    len = (size_t)snprintf(text, cap, "%s", entry);
    cur = cohort_parent(c, entry);
    for (size_t k = 0; cur != NULL && k <= c->ncohorts && len < cap; k++) {
        len += (size_t)snprintf(text + len, cap - len, " -> %s", cur);
        if (strcmp(cur, entry) == 0)
            break;
        cur = cohort_parent(c, cur);
    }
    if (len >= cap && cap > 4)
        memcpy(text + cap - 4, "...", 4); /* a loop too long to print whole */
    return true;
}

static void check_cycles(cc_t *c)
{
    char text[CYCLE_TEXT];
    bool on, *loop;

    if (c->ncohorts == 0)
        return;
    loop = calloc(c->n, sizeof(*loop));
    if (loop == NULL) {
        for (size_t i = 0; i < c->n; i++)
            c->diags[i].oom = true;
        return;
    }
    for (size_t i = 0; i < c->n; i++) {
        const object_t *o = c->objs[i];
        if (o != NULL && o->kind == KIND_COHORT && o->u.cohort.meta.name != NULL)
            loop[i] = cohort_on_loop(c, o->u.cohort.meta.name);
    }
    for (size_t i = 0; i < c->n; i++) {
        const object_t *o = c->objs[i];
        if (o == NULL || is_partial(c, i))
            continue;
        if (o->kind == KIND_COHORT && o->u.cohort.meta.name != NULL &&
            cohort_cycle(c, loop, o->u.cohort.meta.name, &on, text, sizeof(text))) {
            if (on)
                diags_error(&c->diags[i], "spec.parentName",
                            "cohort cycle %s: Kueue admits no workloads in a cohort cycle", text);
            else
                diags_error(&c->diags[i], "spec.parentName",
                            "leads into the cohort cycle %s: Kueue admits no workloads in a "
                            "cohort cycle",
                            text);
        } else if (o->kind == KIND_CLUSTER_QUEUE && o->u.cq.cohort != NULL &&
                   o->u.cq.cohort[0] != '\0' &&
                   cohort_cycle(c, loop, o->u.cq.cohort, &on, text, sizeof(text))) {
            diags_error(&c->diags[i], "spec.cohortName",
                        "cohort \"%s\" %s the cohort cycle %s: Kueue admits no workloads in a "
                        "cohort cycle",
                        o->u.cq.cohort, on ? "is in" : "leads into", text);
        }
    }
    free(loop);
}

/* ---- references --------------------------------------------------------------------------- */

/* Is fair sharing known to be off? A Configuration in the set decides; in a scenario
 * (timed_updates), having none means Kueue's default: off. Computed once per run. */
static bool fair_sharing_off(cc_t *c)
{
    if (c->fair_off < 0) {
        bool have = false, on = false;
        for (size_t i = 0; i < c->n; i++)
            if (c->objs[i] != NULL && c->objs[i]->kind == KIND_CONFIGURATION) {
                have = true;
                on = on || c->objs[i]->u.config.fair_sharing;
            }
        c->fair_off = (have || (c->opts != NULL && c->opts->timed_updates)) && !on;
    }
    return c->fair_off == 1;
}

/* Is admission fair sharing known to be off? As fair_sharing_off(), for the Configuration's
 * admissionFairSharing (Kueue's feature gate AdmissionFairSharing is on by default). */
static bool afs_off(cc_t *c)
{
    if (c->afs_off < 0) {
        bool have = false, on = false;
        for (size_t i = 0; i < c->n; i++)
            if (c->objs[i] != NULL && c->objs[i]->kind == KIND_CONFIGURATION) {
                have = true;
                on = on || c->objs[i]->u.config.afs;
            }
        c->afs_off = (have || (c->opts != NULL && c->opts->timed_updates)) && !on;
    }
    return c->afs_off == 1;
}

#define AFS_OFF_MSG                                                           \
    "has no effect: admission fair sharing is off (the Configuration has no " \
    "admissionFairSharing)"

/* spec.fairSharing.weight only weighs shares under fair sharing. */
static void check_fair_weight(cc_t *c, size_t i, bool has_weight)
{
    if (has_weight && fair_sharing_off(c))
        diags_warn(&c->diags[i], "spec.fairSharing",
                   "has no effect: fair sharing is off (the Configuration has no fairSharing)");
}

/* In a scenario, the Configuration's sections only `sluice run` reads (pod readiness, webhooks,
 * leader election, ...) cannot change the run. */
static void check_configuration(cc_t *c, size_t i, const configuration_t *conf)
{
    if (c->opts == NULL || !c->opts->timed_updates)
        return;
    for (size_t f = 0; f < conf->nrun_only; f++)
        diags_warn(&c->diags[i], conf->run_only[f],
                   "has no effect in the simulator: only sluice run reads it");
}

static void check_cluster_queue(cc_t *c, size_t i, const cluster_queue_t *cq)
{
    char p[CPATH];

    check_fair_weight(c, i, cq->has_fair_weight);
    if (cq->has_admission_scope && cq->afs_usage_based && afs_off(c))
        diags_warn(&c->diags[i], "spec.admissionScope", AFS_OFF_MSG);
    for (size_t g = 0; g < cq->ngroups; g++) {
        for (size_t f = 0; f < cq->groups[g].nflavors; f++) {
            const char *name = cq->groups[g].flavors[f].name;
            if (name == NULL || find(c, KIND_RESOURCE_FLAVOR, "", name) != CROSSCHECK_NONE)
                continue;
            cpathf(p, "spec.resourceGroups[%zu].flavors[%zu].name", g, f);
            diags_error(&c->diags[i], p, "references missing ResourceFlavor \"%s\"", name);
        }
    }
    /* A check may exist in the cluster without being among the files: a warning. */
    for (size_t k = 0; k < cq->ncheck_rules; k++) {
        const char *name = cq->check_rules[k].name;
        if (name == NULL || find(c, KIND_ADMISSION_CHECK, "", name) != CROSSCHECK_NONE)
            continue;
        cpathf(p, "spec.admissionChecksStrategy.admissionChecks[%zu].name", k);
        diags_warn(&c->diags[i], p,
                   "references missing AdmissionCheck \"%s\" (the ClusterQueue stays inactive, "
                   "AdmissionCheckNotFound, until it exists)",
                   name);
    }
}

/* Kueue keeps a ClusterQueue that uses a flavor whose Topology does not exist inactive
 * (TopologyNotFound): nothing is admitted in that flavor. */
static void check_flavor(cc_t *c, size_t i, const flavor_t *rf)
{
    if (rf->topology_name == NULL ||
        find(c, KIND_TOPOLOGY, "", rf->topology_name) != CROSSCHECK_NONE)
        return;
    diags_error(&c->diags[i], "spec.topologyName",
                "references missing Topology \"%s\" (a ClusterQueue using this flavor is "
                "inactive: TopologyNotFound)",
                rf->topology_name);
}

static void check_cohort(cc_t *c, size_t i, const cohort_t *co)
{
    char p[CPATH];

    check_fair_weight(c, i, co->has_fair_weight);
    for (size_t g = 0; g < co->ngroups; g++) {
        for (size_t f = 0; f < co->groups[g].nflavors; f++) {
            const char *name = co->groups[g].flavors[f].name;
            if (name == NULL || find(c, KIND_RESOURCE_FLAVOR, "", name) != CROSSCHECK_NONE)
                continue;
            cpathf(p, "spec.resourceGroups[%zu].flavors[%zu].name", g, f);
            diags_warn(&c->diags[i], p,
                       "references missing ResourceFlavor \"%s\" (this quota cannot be used)",
                       name);
        }
    }
}

/* Does the ClusterQueue's namespaceSelector select namespace `ns`? (into *match) Kubernetes
 * gives every namespace the label kubernetes.io/metadata.name=<name>, which selectors often
 * use. */
static err_t selects_namespace(const cluster_queue_t *cq, const namespace_t *ns, bool *match)
{
    kv_list_t labels = {NULL, 0};

    if (kv_list_copy(&labels, &ns->meta.labels) != ERR_OK ||
        kv_list_set(&labels, "kubernetes.io/metadata.name", ns->meta.name) != ERR_OK) {
        kv_list_fini(&labels);
        return ERR_NOMEM;
    }
    *match = selector_matches(&cq->namespace_selector, &labels);
    kv_list_fini(&labels);
    return ERR_OK;
}

static void check_local_queue(cc_t *c, size_t i, const object_t *o)
{
    const local_queue_t *lq = &o->u.lq;
    const cluster_queue_t *cq;
    size_t cqi, nsi;
    bool match = true;

    if (lq->cluster_queue == NULL || lq->cluster_queue[0] == '\0')
        return;
    cqi = find(c, KIND_CLUSTER_QUEUE, "", lq->cluster_queue);
    if (cqi == CROSSCHECK_NONE) {
        diags_error(&c->diags[i], "spec.clusterQueue", "references missing ClusterQueue \"%s\"",
                    lq->cluster_queue);
        return;
    }
    if (is_partial(c, cqi))
        return;
    cq = &c->objs[cqi]->u.cq;
    /* the weight orders this LocalQueue's workloads by usage only in a UsageBased queue */
    if (lq->has_fair_weight && afs_off(c))
        diags_warn(&c->diags[i], "spec.fairSharing", AFS_OFF_MSG);
    else if (lq->has_fair_weight && !(cq->has_admission_scope && cq->afs_usage_based))
        diags_warn(&c->diags[i], "spec.fairSharing",
                   "has no effect: ClusterQueue \"%s\" has no admissionScope "
                   "UsageBasedAdmissionFairSharing",
                   lq->cluster_queue);
    if (!cq->namespace_selector.present) {
        diags_warn(&c->diags[i], "spec.clusterQueue",
                   "ClusterQueue \"%s\" has no namespaceSelector, so it admits no workloads "
                   "(use namespaceSelector: {} for every namespace)",
                   lq->cluster_queue);
        return;
    }
    nsi = find(c, KIND_NAMESPACE, "", ns_of(o));
    if (nsi == CROSSCHECK_NONE || is_partial(c, nsi))
        return;
    if (selects_namespace(cq, &c->objs[nsi]->u.ns, &match) != ERR_OK)
        c->diags[i].oom = true; /* the list is incomplete; crosscheck_run() says ERR_NOMEM */
    else if (!match)
        diags_warn(&c->diags[i], "spec.clusterQueue",
                   "the namespaceSelector of ClusterQueue \"%s\" does not select namespace "
                   "\"%s\", so it admits no workloads from this LocalQueue",
                   lq->cluster_queue, ns_of(o));
}

/* Priority classes every cluster has. */
static bool builtin_priority_class(const char *name)
{
    return strcmp(name, "system-cluster-critical") == 0 ||
           strcmp(name, "system-node-critical") == 0;
}

/* Is there a Configuration with manageJobsWithoutQueueName? Computed once per run. */
static bool manages_unlabelled_jobs(cc_t *c)
{
    if (c->manage_unlabelled < 0) {
        c->manage_unlabelled = 0;
        for (size_t i = 0; i < c->n; i++)
            if (c->objs[i] != NULL && c->objs[i]->kind == KIND_CONFIGURATION &&
                c->objs[i]->u.config.manage_jobs_without_queue_name)
                c->manage_unlabelled = 1;
    }
    return c->manage_unlabelled == 1;
}

static void check_priority_class_name(cc_t *c, size_t i, const char *path, const char *name)
{
    if (name == NULL || name[0] == '\0' || builtin_priority_class(name) ||
        find(c, KIND_PRIORITY_CLASS, "", name) != CROSSCHECK_NONE)
        return;
    diags_warn(&c->diags[i], path, "references missing PriorityClass \"%s\"", name);
}

/* A Job's or an integration object's queue-name and priority-class labels, and the pod template's
 * priorityClassName (at `pc_path`) when no WorkloadPriorityClass is named. */
static void check_job_labels(cc_t *c, size_t i, const object_t *o, const object_meta_t *meta,
                             const char *pc_path, const char *pc_name)
{
    const char *ns = ns_of(o);
    const char *q = kv_find(&meta->labels, QUEUE_NAME_LABEL);
    const char *pc = kv_find(&meta->labels, PRIORITY_CLASS_LABEL);

    if (q == NULL || q[0] == '\0') {
        /* Most Deployments and StatefulSets are not meant for Kueue: no warning for them. */
        bool serving = o->kind == KIND_INTEGRATION && o->u.integ.serving;
        if (!serving && find(c, KIND_LOCAL_QUEUE, ns, "default") == CROSSCHECK_NONE &&
            !manages_unlabelled_jobs(c))
            diags_warn(&c->diags[i], "metadata.labels",
                       "no " QUEUE_NAME_LABEL " label and no LocalQueue \"default\" in namespace "
                       "\"%s\": Kueue does not manage this %s",
                       ns, object_kind_name(o));
    } else if (find(c, KIND_LOCAL_QUEUE, ns, q) == CROSSCHECK_NONE) {
        diags_warn(&c->diags[i], "metadata.labels[" QUEUE_NAME_LABEL "]",
                   "references missing LocalQueue \"%s\" in namespace \"%s\"", q, ns);
    }
    if (pc != NULL && pc[0] != '\0' &&
        find(c, KIND_WORKLOAD_PRIORITY_CLASS, "", pc) == CROSSCHECK_NONE)
        diags_warn(&c->diags[i], "metadata.labels[" PRIORITY_CLASS_LABEL "]",
                   "references missing WorkloadPriorityClass \"%s\" (Kueue will not create "
                   "the Workload)",
                   pc);
    else if ((pc == NULL || pc[0] == '\0') && pc_path != NULL)
        check_priority_class_name(c, i, pc_path, pc_name);
}

static void check_job(cc_t *c, size_t i, const object_t *o)
{
    check_job_labels(c, i, o, &o->u.job.meta, "spec.template.spec.priorityClassName",
                     o->u.job.spec.priority_class_name);
}

/* The PriorityClass the kind names (lib/jobs' jobs_priority_class(): a Kubeflow job's
 * schedulingPolicy, else the first pod set's priorityClassName); its path depends on the kind,
 * "spec" stands for it. */
static void check_integration(cc_t *c, size_t i, const object_t *o)
{
    const integration_t *it = &o->u.integ;
    const char *pc = it->priority_class_name;

    check_job_labels(c, i, o, &it->meta, pc != NULL ? "spec" : NULL, pc);
    /* The kind's webhook rules Kueue applies to an object without a queue name only when it
     * manages such objects (kindobj_decode() kept them aside). */
    if (it->unlabelled_rules != NULL && manages_unlabelled_jobs(c))
        for (size_t k = 0; k < it->unlabelled_rules->len; k++) {
            const diag_t *g = &it->unlabelled_rules->items[k];
            if (g->warning)
                diags_warn(&c->diags[i], g->path, "%s", g->message);
            else
                diags_error(&c->diags[i], g->path, "%s", g->message);
        }
}

static void check_workload(cc_t *c, size_t i, const object_t *o)
{
    const workload_t *wl = &o->u.wl;
    const char *ns = ns_of(o);

    if (wl->queue_name != NULL && wl->queue_name[0] != '\0' &&
        find(c, KIND_LOCAL_QUEUE, ns, wl->queue_name) == CROSSCHECK_NONE)
        diags_warn(&c->diags[i], "spec.queueName",
                   "references missing LocalQueue \"%s\" in namespace \"%s\"", wl->queue_name, ns);
    if (wl->priority_class == NULL || wl->priority_class[0] == '\0')
        return;
    if (wl->priority_source == PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS &&
        find(c, KIND_WORKLOAD_PRIORITY_CLASS, "", wl->priority_class) == CROSSCHECK_NONE)
        diags_warn(&c->diags[i], "spec.priorityClassRef.name",
                   "references missing WorkloadPriorityClass \"%s\"", wl->priority_class);
    else if (wl->priority_source == PRIORITY_SOURCE_PRIORITY_CLASS)
        check_priority_class_name(c, i, "spec.priorityClassRef.name", wl->priority_class);
}

err_t crosscheck_run(const object_t *const *objs, size_t n, const crosscheck_opts_t *opts,
                     diags_t *diags)
{
    cc_t c = {.objs = objs,
              .n = n,
              .opts = opts,
              .diags = diags,
              .manage_unlabelled = -1,
              .fair_off = -1,
              .afs_off = -1};

    if (build_table(&c) != ERR_OK) {
        for (size_t i = 0; i < n; i++)
            diags[i].oom = true;
        return ERR_NOMEM;
    }
    scan_identities(&c, NULL, true);
    check_cycles(&c);
    for (size_t i = 0; i < n; i++) {
        const object_t *o = objs[i];
        if (o == NULL || is_partial(&c, i))
            continue;
        switch (o->kind) {
        case KIND_CLUSTER_QUEUE:
            check_cluster_queue(&c, i, &o->u.cq);
            break;
        case KIND_COHORT:
            check_cohort(&c, i, &o->u.cohort);
            break;
        case KIND_RESOURCE_FLAVOR:
            check_flavor(&c, i, &o->u.flavor);
            break;
        case KIND_CONFIGURATION:
            check_configuration(&c, i, &o->u.config);
            break;
        case KIND_LOCAL_QUEUE:
            check_local_queue(&c, i, o);
            break;
        case KIND_JOB:
            check_job(&c, i, o);
            break;
        case KIND_INTEGRATION:
            check_integration(&c, i, o);
            break;
        case KIND_WORKLOAD:
            check_workload(&c, i, o);
            break;
        default:
            break;
        }
    }
    free(c.tab);
    /* The checks append to the lists and a failed append leaves that list's oom set. */
    for (size_t i = 0; i < n; i++)
        if (diags[i].oom)
            return ERR_NOMEM;
    return ERR_OK;
}
