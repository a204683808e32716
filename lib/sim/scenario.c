/* scenario -- load a simulator scenario: a multi-document YAML file of Kubernetes objects with
 * timing annotations (scenario-format.md, "Input"). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/scenario.h"

#include "jobs/kindobj.h"
#include "jobs/podgroup.h"
#include "model/crosscheck.h"
#include "model/diag.h"
#include "model/validate.h"
#include "model/yaml.h"
#include "sched/sched.h"
#include "sim/annot.h"
#include "util/grow.h"
#include "util/hmap.h"
#include "util/str.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Loading is two passes over typed objects, never over text:
 *
 *   stream  yaml_load_file hands over one document's JSON tree at a time; we name generateName
 *           objects, read the timing annotations and decode the tree into a typed object, then
 *           drop the tree. Only the typed objects stay (the run needs them anyway), but the
 *           trees of training runtimes and TrainJobs: a TrainJob is decoded against the runtime
 *           it names once every document is read (decode_deferred()).
 *   check   with every object known: which document updates which (same kind/namespace/name,
 *           later `at`), Kueue's create/update validation, cross-object checks (dangling
 *           references, cohort cycles, duplicates) and the simulator's own rules.
 *
 * Every problem becomes one line "doc N (Kind name): path: message"; nothing stops at the first
 * error, so a user fixes a scenario in one round. Documents count from 1 as a person counts
 * them in the file (empty documents count too, so the number matches what an editor shows
 * between `---` lines).
 */

typedef struct load_s {
    sim_scenario_t *sc;
    diags_t *diags; /* owned: one list per document in sc->docs */
    size_t capdiags;
    bool *partial;          /* owned: per document, decode failed (only kind/name known) */
    util_hmap_t gen_counts; /* generateName -> last n */
    util_hmap_t warned;     /* "path: message" of warnings already reported */
    kindobj_deps_t deps;    /* the training runtimes read, for the TrainJobs */
    struct {
        size_t doc;   /* index in sc->docs */
        json_t *root; /* owned reference */
    } * deferred;     /* owned: TrainJobs, decoded by decode_deferred() once all are read */
    size_t ndeferred, capdeferred;
    /* The Pods of pod groups, grouped by "namespace/group name" (groups[i] is util_hmap index
     * i of group_index), assembled into one Workload each by resolve_groups(). */
    util_hmap_t group_index;
    struct {
        size_t *docs;  /* owned: indices in sc->docs, file order */
        json_t **pods; /* owned references, parallel to docs */
        size_t n, cap, capp;
    } * groups;
    size_t ngroups, capgroups;
    bool *grouped; /* owned: per document below ngrouped, a Pod of a pod group */
    size_t ngrouped, capgrouped;
} load_t;

/* ---- small helpers ------------------------------------------------------------------------- */

static bool push_str(char ***v, size_t *n, char *s)
{
    if (s == NULL)
        return false;
    char **nv = realloc(*v, (*n + 1) * sizeof(char *));
    if (nv == NULL) {
        free(s);
        return false;
    }
    nv[(*n)++] = s;
    *v = nv;
    return true;
}

static const char *json_str(const json_t *o, const char *key)
{
    const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static kind_t kind_from_name(const char *name)
{
    if (name == NULL)
        return KIND_UNKNOWN;
    for (int k = KIND_NAMESPACE; k <= KIND_CONFIGURATION; k++) {
        if (strcmp(kind_name((kind_t)k), name) == 0)
            return (kind_t)k;
    }
    return KIND_UNKNOWN;
}

void sim_replica_name(const char *name, int32_t i, char *buf)
{
    snprintf(buf, SIM_REPLICA_NAME_MAX, "%s-%d", name, (int)i);
}

/* ---- lifetime ------------------------------------------------------------------------------ */

void sim_scenario_init(sim_scenario_t *sc)
{
    memset(sc, 0, sizeof(*sc));
}

void sim_scenario_fini(sim_scenario_t *sc)
{
    if (sc == NULL)
        return;
    for (size_t i = 0; i < sc->ndocs; i++) {
        object_fini(&sc->docs[i].obj);
        node_fini(sc->docs[i].node);
        free(sc->docs[i].node);
        free(sc->docs[i].label);
        free(sc->docs[i].group);
    }
    free(sc->docs);
    for (size_t i = 0; i < sc->nerrors; i++)
        free(sc->errors[i]);
    free(sc->errors);
    for (size_t i = 0; i < sc->nwarnings; i++)
        free(sc->warnings[i]);
    free(sc->warnings);
    memset(sc, 0, sizeof(*sc));
}

/* ---- pass 1: one document at a time -------------------------------------------------------- */

/* Read one timing annotation of `doc` into *out; a malformed one is reported at its path. */
static void read_duration(diags_t *d, const json_t *annotations, const char *key, bool *has,
                          sim_ms_t *out)
{
    const json_t *v = json_object_get(annotations, key);
    char path[128];
    err_msg_t msg;

    if (v == NULL)
        return;
    snprintf(path, sizeof(path), "metadata.annotations[%s]", key);
    if (!json_is_string(v)) {
        diags_error(d, path, "must be a duration string such as \"1h30m\"");
        return;
    }
    const char *s = json_string_value(v);
    if (duration_parse_ms(s, strlen(s), SIM_MS_MAX, out, &msg) != ERR_OK) {
        diags_error(d, path, "%s", msg.text);
        return;
    }
    if (has != NULL)
        *has = true;
}

/* A pods-* annotation (waitForPodsReady): a duration, or "never" (SIM_NEVER). */
static void read_pods_timing(diags_t *d, const json_t *annotations, const char *key, bool *has,
                             sim_ms_t *out)
{
    const json_t *v = json_object_get(annotations, key);

    if (json_is_string(v) && strcmp(json_string_value(v), "never") == 0) {
        *out = SIM_NEVER;
        *has = true;
        return;
    }
    read_duration(d, annotations, key, has, out);
}

/* Does a Pod's metadata put it in a pod group (kueue.x-k8s.io/pod-group-name)? */
static bool in_pod_group(const json_t *meta)
{
    const json_t *labels = json_is_object(meta) ? json_object_get(meta, "labels") : NULL;
    return json_is_object(labels) && json_object_get(labels, JOBS_POD_GROUP_NAME) != NULL;
}

/* Give a Job or Workload with generateName and no name its name `<generateName><n>`. */
static err_t apply_generate_name(load_t *ld, json_t *meta)
{
    const char *name = json_str(meta, "name");
    const char *gen = json_str(meta, "generateName");
    size_t n = 0;
    char *full;
    err_t rc = ERR_OK;

    if ((name != NULL && name[0] != '\0') || gen == NULL || gen[0] == '\0')
        return ERR_OK;
    util_hmap_get_index(&ld->gen_counts, gen, &n);
    n++;
    full = util_asprintf("%s%zu", gen, n);
    if (full == NULL || util_hmap_put_index(&ld->gen_counts, gen, n) != ERR_OK ||
        json_object_set_new(meta, "name", json_string(full)) != 0)
        rc = ERR_NOMEM;
    free(full);
    return rc;
}

static err_t grow_docs(load_t *ld)
{
    sim_scenario_t *sc = ld->sc;
    /* Three arrays, one capacity: sc->cap moves only once all three have grown. */
    size_t dcap = sc->cap, gcap = sc->cap, pcap = sc->cap;

    if (util_grow((void **)&sc->docs, &dcap, sc->ndocs + 1, sizeof(*sc->docs)) != ERR_OK ||
        util_grow((void **)&ld->diags, &gcap, sc->ndocs + 1, sizeof(*ld->diags)) != ERR_OK ||
        util_grow((void **)&ld->partial, &pcap, sc->ndocs + 1, sizeof(*ld->partial)) != ERR_OK)
        return ERR_NOMEM;
    sc->cap = dcap;
    return ERR_OK;
}

static err_t decode_doc(load_t *ld, size_t i, json_t *root, const jobs_kind_t *jk);

static err_t on_doc(void *ctx, size_t index, int line, json_t *root)
{
    load_t *ld = ctx;
    sim_scenario_t *sc = ld->sc;
    sim_doc_t *doc;
    diags_t *d;
    json_t *meta;
    const char *kind, *ns, *name;
    const jobs_kind_t *jk;

    if (grow_docs(ld) != ERR_OK)
        return ERR_NOMEM;
    doc = &sc->docs[sc->ndocs];
    d = &ld->diags[sc->ndocs];
    memset(doc, 0, sizeof(*doc));
    diags_init(d);
    ld->partial[sc->ndocs] = false;
    doc->number = index + 1;
    doc->line = line;
    doc->prev = SIM_DOC_NONE;

    meta = json_is_object(root) ? json_object_get(root, "metadata") : NULL;
    kind = json_str(root, "kind");
    jk = kindobj_kind(root);
    if (json_is_object(meta) && kind != NULL &&
        (strcmp(kind, "Job") == 0 || strcmp(kind, "Workload") == 0 || jk != NULL) &&
        apply_generate_name(ld, meta) != ERR_OK)
        return ERR_NOMEM;
    ns = json_str(meta, "namespace");
    name = json_str(meta, "name");
    if (kind == NULL)
        doc->label = util_asprintf("doc %zu", doc->number);
    else if (ns != NULL && name != NULL)
        doc->label = util_asprintf("doc %zu (%s %s/%s)", doc->number, kind, ns, name);
    else if (name != NULL)
        doc->label = util_asprintf("doc %zu (%s %s)", doc->number, kind, name);
    else
        doc->label = util_asprintf("doc %zu (%s)", doc->number, kind);
    if (doc->label == NULL)
        return ERR_NOMEM;
    sc->ndocs++;

    if (!json_is_object(root)) {
        diags_error(d, "", "a document must be a Kubernetes object (a mapping), got %s",
                    json_is_array(root) ? "a list" : "a scalar");
        return ERR_OK;
    }
    const json_t *ann = json_is_object(meta) ? json_object_get(meta, "annotations") : NULL;
    if (json_is_object(ann)) {
        read_duration(d, ann, SIM_ANN_AT, NULL, &doc->at);
        read_duration(d, ann, SIM_ANN_DELETE_AT, &doc->has_delete_at, &doc->delete_at);
        read_duration(d, ann, SIM_ANN_RUNTIME, &doc->has_runtime, &doc->runtime);
        read_pods_timing(d, ann, SIM_ANN_PODS_READY_AFTER, &doc->has_pods_ready,
                         &doc->pods_ready_after);
        read_pods_timing(d, ann, SIM_ANN_PODS_UNREADY_AFTER, &doc->has_pods_unready,
                         &doc->pods_unready_after);
        read_pods_timing(d, ann, SIM_ANN_PODS_RECOVER_AFTER, &doc->has_pods_recover,
                         &doc->pods_recover_after);
        if (sim_annot_check(ann, d, NULL) != ERR_OK)
            return ERR_NOMEM;
    }
    /* A Node: capacity the engine places admitted pods on (docs/simulator.md, "Nodes"). */
    if (node_is(root)) {
        err_t rc;
        if ((doc->node = calloc(1, sizeof(*doc->node))) == NULL)
            return ERR_NOMEM;
        rc = node_decode(root, doc->node, d);
        if (rc == ERR_NOMEM || d->oom)
            return ERR_NOMEM;
        if (rc == ERR_OK && doc->has_runtime)
            diags_error(d, "metadata.annotations[" SIM_ANN_RUNTIME "]",
                        "only a Job or a Workload runs; a Node has no runtime");
        return ERR_OK;
    }
    /* A training runtime is no object of the run: kept for the TrainJobs that name it. */
    if (kindobj_dep_kind(root) != NULL)
        return kindobj_deps_add(&ld->deps, root);
    /* A TrainJob's pod sets are in the runtime it names, which may come later. */
    if (jk != NULL && jk->resolve != NULL) {
        if (util_grow((void **)&ld->deferred, &ld->capdeferred, ld->ndeferred + 1,
                      sizeof(*ld->deferred)) != ERR_OK)
            return ERR_NOMEM;
        ld->deferred[ld->ndeferred].doc = sc->ndocs - 1;
        ld->deferred[ld->ndeferred++].root = json_incref(root);
        return ERR_OK;
    }
    return decode_doc(ld, sc->ndocs - 1, root, jk);
}

/* Note document `i` (`root`, a Pod in namespace `ns` of pod group `group`) as a member of its
 * group. ERR_NOMEM only. */
static err_t group_add(load_t *ld, size_t i, json_t *root, const char *ns, const char *group)
{
    char *key = util_asprintf("%s/%s", ns != NULL ? ns : "default", group != NULL ? group : "");
    size_t gi;
    err_t rc = ERR_NOMEM;

    if (key == NULL)
        return ERR_NOMEM;
    if (util_grow((void **)&ld->grouped, &ld->capgrouped, i + 1, sizeof(*ld->grouped)) != ERR_OK)
        goto out;
    while (ld->ngrouped <= i)
        ld->grouped[ld->ngrouped++] = false;
    ld->grouped[i] = true;
    if (!util_hmap_get_index(&ld->group_index, key, &gi)) {
        if (util_grow((void **)&ld->groups, &ld->capgroups, ld->ngroups + 1, sizeof(*ld->groups)) !=
            ERR_OK)
            goto out;
        gi = ld->ngroups;
        memset(&ld->groups[gi], 0, sizeof(ld->groups[gi]));
        if (util_hmap_put_index(&ld->group_index, key, gi) != ERR_OK)
            goto out;
        ld->ngroups++;
    }
    if (util_grow((void **)&ld->groups[gi].docs, &ld->groups[gi].cap, ld->groups[gi].n + 1,
                  sizeof(size_t)) != ERR_OK ||
        util_grow((void **)&ld->groups[gi].pods, &ld->groups[gi].capp, ld->groups[gi].n + 1,
                  sizeof(json_t *)) != ERR_OK)
        goto out;
    ld->groups[gi].docs[ld->groups[gi].n] = i;
    ld->groups[gi].pods[ld->groups[gi].n++] = json_incref(root);
    rc = ERR_OK;
out:
    free(key);
    return rc;
}

/* Decode document `i` (`root`, of integration kind `jk` or NULL) into its typed object. */
static err_t decode_doc(load_t *ld, size_t i, json_t *root, const jobs_kind_t *jk)
{
    sim_scenario_t *sc = ld->sc;
    sim_doc_t *doc = &sc->docs[i];
    diags_t *d = &ld->diags[i];
    json_t *meta = json_object_get(root, "metadata");
    const char *kind = json_str(root, "kind"), *ns = json_str(meta, "namespace");
    const char *name = json_str(meta, "name");
    err_t rc;

    if (jk != NULL) {
        rc = kindobj_decode_with(jk, root, kindobj_deps_find, &ld->deps, true, &doc->obj, d);
        if (rc == ERR_OK && jk->admit == JOBS_ADMIT_POD && in_pod_group(meta)) {
            /* Not a workload of its own: its group is (resolve_groups()). */
            if (doc->obj.u.integ.built)
                workload_fini(&doc->obj.u.integ.wl);
            memset(&doc->obj.u.integ.wl, 0, sizeof(doc->obj.u.integ.wl));
            doc->obj.u.integ.built = false;
            if (group_add(ld, i, root, ns,
                          json_str(json_object_get(meta, "labels"), JOBS_POD_GROUP_NAME)) != ERR_OK)
                return ERR_NOMEM;
        }
    } else {
        rc = object_decode(root, &doc->obj, d);
    }
    if (rc == ERR_NOMEM || d->oom)
        return ERR_NOMEM;
    if (rc != ERR_OK) {
        /* Keep what references need: the kind and the name. */
        kind_t k = jk != NULL ? KIND_INTEGRATION : kind_from_name(kind);
        ld->partial[i] = true;
        if (k == KIND_INTEGRATION) {
            doc->obj.kind = k;
            doc->obj.u.integ.kind = strdup(jk->kind);
            doc->obj.u.integ.group = strdup(jk->group);
            if (doc->obj.u.integ.kind == NULL || doc->obj.u.integ.group == NULL)
                return ERR_NOMEM;
        }
        if (k != KIND_UNKNOWN) {
            doc->obj.kind = k;
            object_meta_t *m = object_meta(&doc->obj);
            m->name = name != NULL ? strdup(name) : NULL;
            m->namespace = ns != NULL ? strdup(ns) : NULL;
            if ((name != NULL && m->name == NULL) || (ns != NULL && m->namespace == NULL))
                return ERR_NOMEM;
        }
    }
    return ERR_OK;
}

/* The TrainJobs, once every document is read: resolved against the runtimes among them. */
static err_t decode_deferred(load_t *ld)
{
    err_t rc = ERR_OK;

    for (size_t i = 0; i < ld->ndeferred && rc == ERR_OK; i++)
        rc = decode_doc(ld, ld->deferred[i].doc, ld->deferred[i].root,
                        kindobj_kind(ld->deferred[i].root));
    return rc;
}

/* Arrival order of a group's members: `at`, then file order. */
static const sim_doc_t *cmp_docs;
static int cmp_arrival(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (cmp_docs[x].at != cmp_docs[y].at)
        return cmp_docs[x].at < cmp_docs[y].at ? -1 : 1;
    return x < y ? -1 : x > y;
}

/*
 * Each pod group becomes one Workload, as Kueue's pod integration builds it (lib/jobs,
 * jobs_pod_group_read() and jobs_pod_group_workload(): one pod set per role). Kueue creates it
 * once the group is complete: the document whose Pod arrives (`at`, then file order) as the
 * total-count-th distinct Pod (the first with fast admission) carries it, named after the group,
 * with the group's runtime (its own, else the first arrived Pod's that has one). A later
 * document of a Pod name already met updates that Pod and adds no member. A group that never
 * completes gets no Workload and a warning saying why (Kueue's words); one whose Pods disagree
 * (total count, queue name, too many roles) an error on its completing (else last) document;
 * nothing more when a member has an error already (Kueue's rules for one Pod, check_all()).
 */
static err_t resolve_group(load_t *ld, size_t gi)
{
    sim_scenario_t *sc = ld->sc;
    size_t n = ld->groups[gi].n, m = 0, *order = malloc((n + 1) * sizeof(size_t));
    json_t **pods = malloc((n + 1) * sizeof(json_t *));
    jobs_pod_group_t g;
    err_msg_t msg = {{0}};
    err_t rc = ERR_NOMEM;
    size_t k;

    memset(&g, 0, sizeof(g));
    if (order == NULL || pods == NULL)
        goto out;
    for (size_t j = 0; j < n; j++)
        order[j] = ld->groups[gi].docs[j];
    cmp_docs = sc->docs;
    qsort(order, n, sizeof(size_t), cmp_arrival);
    /* A member with an error (Kueue's pod rules: validate_object()) is said already. */
    for (size_t j = 0; j < n; j++) {
        const diags_t *d = &ld->diags[order[j]];
        for (size_t q = 0; q < d->len; q++) {
            if (!d->items[q].warning) {
                rc = ERR_OK;
                goto out;
            }
        }
    }
    /* Distinct Pods, in arrival order; a partial document (decode failed) is said already. */
    for (size_t j = 0; j < n; j++) {
        const object_meta_t *om = object_meta_const(&sc->docs[order[j]].obj);
        bool seen = ld->partial[order[j]];
        for (size_t q = 0; q < m && !seen && om->name != NULL; q++) {
            const object_meta_t *qm = object_meta_const(&sc->docs[order[q]].obj);
            seen = qm->name != NULL && strcmp(qm->name, om->name) == 0;
        }
        if (!seen)
            order[m++] = order[j];
    }
    if (m == 0) {
        rc = ERR_OK;
        goto out;
    }
    for (size_t j = 0; j < n; j++)
        for (size_t q = 0; q < m; q++)
            if (ld->groups[gi].docs[j] == order[q])
                pods[q] = ld->groups[gi].pods[j];
    /* All of them first: complete at all, and with fast admission? */
    rc = jobs_pod_group_read(pods, m, &g, &msg);
    k = m;
    if (rc == ERR_OK && g.complete)
        k = g.fast_admission ? 1 : (size_t)g.total_count;
    if (rc == ERR_OK && !g.complete) {
        diags_warn(&ld->diags[order[m - 1]], "metadata.labels[" JOBS_POD_GROUP_NAME "]",
                   "%s (%zu of %d pods in the scenario): Kueue creates no Workload for an "
                   "incomplete group, so it never runs",
                   g.why, m, (int)g.total_count);
        goto out;
    }
    if (rc == ERR_OK && k < m) {
        /* The group as it stood when it became complete. */
        jobs_pod_group_fini(&g);
        memset(&g, 0, sizeof(g));
        rc = jobs_pod_group_read(pods, k, &g, &msg);
    }
    sim_doc_t *doc = &sc->docs[order[k - 1]];
    integration_t *it = &doc->obj.u.integ;
    workload_t wl;
    memset(&wl, 0, sizeof(wl));
    if (rc == ERR_OK)
        rc = jobs_pod_group_workload(&g, NULL, &wl, &msg);
    if (rc == ERR_NOMEM)
        goto out;
    if (rc != ERR_OK) {
        diags_error(&ld->diags[order[k - 1]], "metadata.labels[" JOBS_POD_GROUP_NAME "]",
                    "pod group '%s': %s", g.name != NULL ? g.name : "", msg.text);
        rc = ERR_OK;
        goto out;
    }
    doc->group = strdup(g.name);
    if (doc->group == NULL) {
        workload_fini(&wl);
        rc = ERR_NOMEM;
        goto out;
    }
    it->wl = wl;
    it->built = true;
    for (size_t q = 0; q < k && !doc->has_runtime; q++) {
        if (sc->docs[order[q]].has_runtime) {
            doc->has_runtime = true;
            doc->runtime = sc->docs[order[q]].runtime;
        }
    }
out:
    jobs_pod_group_fini(&g);
    free(order);
    free(pods);
    return rc;
}

static err_t resolve_groups(load_t *ld)
{
    err_t rc = ERR_OK;

    for (size_t gi = 0; gi < ld->ngroups && rc == ERR_OK; gi++)
        rc = resolve_group(ld, gi);
    return rc;
}

/* ---- pass 2: checks over the whole set ------------------------------------------------------ */

/* Workload `name` in `ns` is document i's: an error on i when another document's workload has
 * that name already (a later version of the same object is not another one). */
static err_t claim_name(load_t *ld, util_hmap_t *wl_names, size_t i, const char *ns,
                        const char *name)
{
    sim_scenario_t *sc = ld->sc;
    sim_doc_t *doc = &sc->docs[i];
    char *key = util_asprintf("%s/%s", ns != NULL ? ns : "", name);
    size_t other;
    err_t rc = ERR_OK;

    if (key == NULL)
        return ERR_NOMEM;
    if (util_hmap_get_index(wl_names, key, &other)) {
        const object_t *o = &sc->docs[other].obj;
        kind_t k = doc->obj.kind;
        const char *named = o->kind == KIND_INTEGRATION ? object_kind_name(o)
                            : k == KIND_INTEGRATION     ? object_kind_name(&doc->obj)
                                                        : "Job";
        if (sc->docs[other].group != NULL || doc->group != NULL)
            diags_error(&ld->diags[i], "metadata.name",
                        "workload %s is already the workload of %s (a pod group's workload is "
                        "named after the group)",
                        key, sc->docs[other].label);
        else if (o->kind != k || strcmp(object_kind_name(o), object_kind_name(&doc->obj)) != 0)
            diags_error(&ld->diags[i], "metadata.name",
                        "workload %s is already the workload of %s (a %s's workload is "
                        "named after the %s)",
                        key, sc->docs[other].label, named, named);
    } else if (util_hmap_put_index(wl_names, key, i) != ERR_OK) {
        rc = ERR_NOMEM;
    }
    free(key);
    return rc;
}

/* The simulator's own rules (scenario-format.md): runtime only on what runs, delete-at after at,
 * one Configuration at 0s, one workload per namespace/name across Jobs and Workloads. */
static err_t check_sim_rules(load_t *ld)
{
    sim_scenario_t *sc = ld->sc;
    util_hmap_t wl_names;
    size_t config_doc = SIM_DOC_NONE;
    char tbuf[DURATION_STR_MAX];

    util_hmap_init(&wl_names, 0);
    for (size_t i = 0; i < sc->ndocs; i++) {
        sim_doc_t *doc = &sc->docs[i];
        diags_t *d = &ld->diags[i];
        kind_t k = doc->obj.kind;

        if (doc->has_runtime && k != KIND_JOB && k != KIND_WORKLOAD && k != KIND_INTEGRATION &&
            k != KIND_UNKNOWN)
            diags_error(d, "metadata.annotations[" SIM_ANN_RUNTIME "]",
                        "only a Job or a Workload runs; a %s has no runtime", kind_name(k));
        const object_meta_t *vm = object_meta_const(&doc->obj);
        const char *verdict = vm != NULL ? kv_list_get(&vm->annotations, SIM_ANN_VERDICT) : NULL;
        const char *verdicts = vm != NULL ? kv_list_get(&vm->annotations, SIM_ANN_VERDICTS) : NULL;
        err_msg_t vmsg;
        check_state_t vst;
        int64_t vdl;
        const char *vseq;
        size_t vlen;
        if (verdict != NULL && k != KIND_ADMISSION_CHECK)
            diags_error(d, "metadata.annotations[" SIM_ANN_VERDICT "]",
                        "only an AdmissionCheck has a verdict; a %s names its checks' verdicts "
                        "in " SIM_ANN_VERDICTS,
                        kind_name(k));
        else if (verdict != NULL &&
                 sim_verdict_step(verdict, strlen(verdict), 0, &vst, &vdl, NULL, &vmsg) != ERR_OK)
            diags_error(d, "metadata.annotations[" SIM_ANN_VERDICT "]", "%s", vmsg.text);
        /* The ProvisioningRequest check has no autoscaler here: its verdict is the scenario's
         * (its ProvisioningRequestConfig is not read); without one it is Ready at once, which a
         * scenario author expecting the nodes' delay must hear about. */
        if (k == KIND_ADMISSION_CHECK && verdict == NULL && doc->obj.u.ac.controller_name != NULL &&
            strcmp(doc->obj.u.ac.controller_name, "kueue.x-k8s.io/provisioning-request") == 0)
            diags_warn(d, "spec.controllerName",
                       "the simulator plays the ProvisioningRequest check from "
                       "sim.sluice.dev/verdict (its ProvisioningRequestConfig is not read); "
                       "without it the check is Ready as soon as quota is reserved");
        if (verdicts != NULL && k != KIND_JOB && k != KIND_WORKLOAD && k != KIND_INTEGRATION)
            diags_error(d, "metadata.annotations[" SIM_ANN_VERDICTS "]",
                        "only a Job or a Workload waits for admission checks; a %s has no "
                        "verdicts",
                        kind_name(k));
        else if (verdicts != NULL &&
                 sim_verdicts_find(verdicts, NULL, &vseq, &vlen, &vmsg) != ERR_OK)
            diags_error(d, "metadata.annotations[" SIM_ANN_VERDICTS "]", "%s", vmsg.text);
        if ((doc->has_pods_ready || doc->has_pods_unready || doc->has_pods_recover) &&
            k != KIND_JOB && k != KIND_WORKLOAD && k != KIND_INTEGRATION && k != KIND_UNKNOWN)
            diags_error(d, "metadata.annotations",
                        "sim.sluice.dev/pods-* annotations go on what runs (a Job, a Workload, "
                        "...); a %s has no pods",
                        kind_name(k));
        if (doc->has_delete_at && doc->delete_at <= doc->at)
            diags_error(d, "metadata.annotations[" SIM_ANN_DELETE_AT "]",
                        "must be later than " SIM_ANN_AT " (%s)", duration_format(doc->at, tbuf));
        if (k == KIND_CONFIGURATION) {
            if (config_doc != SIM_DOC_NONE)
                diags_error(d, "",
                            "a scenario has at most one Configuration (the first is doc %zu)",
                            sc->docs[config_doc].number);
            else
                config_doc = i;
            if (doc->at != 0)
                diags_error(d, "metadata.annotations[" SIM_ANN_AT "]",
                            "a Configuration applies from the start: must be 0s");
            if (doc->has_delete_at)
                diags_error(d, "metadata.annotations[" SIM_ANN_DELETE_AT "]",
                            "a Configuration cannot be deleted during a run");
            const char *g =
                kv_list_get(&doc->obj.u.config.meta.annotations, SCHED_LOOP_GUARDS_ANNOTATION);
            unsigned guards;
            err_msg_t gm;
            if (g != NULL && sched_loop_guards_parse(g, &guards, &gm) != ERR_OK)
                diags_error(d, "metadata.annotations[" SCHED_LOOP_GUARDS_ANNOTATION "]", "%s",
                            gm.text);
            bool fit;
            g = kv_list_get(&doc->obj.u.config.meta.annotations, SCHED_NODE_FIT_ANNOTATION);
            if (g != NULL && sched_node_fit_parse(g, &fit, &gm) != ERR_OK)
                diags_error(d, "metadata.annotations[" SCHED_NODE_FIT_ANNOTATION "]", "%s",
                            gm.text);
        }
        if (k == KIND_INTEGRATION && doc->obj.u.integ.per_replica &&
            doc->obj.u.integ.replicas > SIM_REPLICAS_MAX)
            diags_error(d, "spec.replicas",
                        "the simulator runs at most %d workloads per object (one per replica), "
                        "got %d",
                        SIM_REPLICAS_MAX, (int)doc->obj.u.integ.replicas);
        if ((k == KIND_JOB || k == KIND_WORKLOAD || k == KIND_INTEGRATION) &&
            doc->prev == SIM_DOC_NONE) {
            const object_meta_t *m = object_meta_const(&doc->obj);
            if (m->name == NULL)
                continue;
            if (i < ld->ngrouped && ld->grouped[i] && doc->group == NULL)
                continue; /* a Pod of a group without the group's workload: none of its own */
            if (k == KIND_INTEGRATION && doc->obj.u.integ.per_replica &&
                doc->obj.u.integ.replicas > SIM_REPLICAS_MAX) {
                continue; /* said below */
            } else if (k == KIND_INTEGRATION && doc->obj.u.integ.per_replica) {
                /* One workload per replica, <name>-<i> (sim_replica_name()). */
                for (int32_t ri = 0; ri < doc->obj.u.integ.replicas; ri++) {
                    char rname[SIM_REPLICA_NAME_MAX];
                    sim_replica_name(m->name, ri, rname);
                    if (claim_name(ld, &wl_names, i, m->namespace, rname) != ERR_OK) {
                        util_hmap_fini(&wl_names);
                        return ERR_NOMEM;
                    }
                }
            } else if (claim_name(ld, &wl_names, i, m->namespace,
                                  doc->group != NULL ? doc->group : m->name) != ERR_OK) {
                util_hmap_fini(&wl_names);
                return ERR_NOMEM;
            }
        }
    }
    if (config_doc != SIM_DOC_NONE && !ld->partial[config_doc])
        sc->config = &sc->docs[config_doc].obj.u.config;
    util_hmap_fini(&wl_names);
    return ERR_OK;
}

/* Turn the per-document diagnostics into the scenario's error and warning lines. ERR_NOMEM also
 * when a list was incomplete. */
static err_t collect(load_t *ld)
{
    sim_scenario_t *sc = ld->sc;

    for (size_t i = 0; i < sc->ndocs; i++) {
        const diags_t *d = &ld->diags[i];
        if (d->oom)
            return ERR_NOMEM;
        for (size_t k = 0; k < d->len; k++) {
            const diag_t *g = &d->items[k];
            bool haspath = g->path != NULL && g->path[0] != '\0';
            char *line = haspath
                             ? util_asprintf("%s: %s: %s", sc->docs[i].label, g->path, g->message)
                             : util_asprintf("%s: %s", sc->docs[i].label, g->message);
            if (line == NULL)
                return ERR_NOMEM;
            if (!g->warning) {
                if (!push_str(&sc->errors, &sc->nerrors, line))
                    return ERR_NOMEM;
                continue;
            }
            /* One warning per distinct field and message, not per document. */
            const char *what = line + strlen(sc->docs[i].label) + 2;
            size_t dummy;
            if (util_hmap_get_index(&ld->warned, what, &dummy)) {
                free(line);
                continue;
            }
            if (util_hmap_put_index(&ld->warned, what, 0) != ERR_OK) {
                free(line);
                return ERR_NOMEM;
            }
            if (!push_str(&sc->warnings, &sc->nwarnings, line))
                return ERR_NOMEM;
        }
    }
    return ERR_OK;
}

static err_t check_all(load_t *ld)
{
    sim_scenario_t *sc = ld->sc;
    size_t n = sc->ndocs;
    const object_t **objs = calloc(n + 1, sizeof(*objs));
    const char **origins = calloc(n + 1, sizeof(*origins));
    size_t *prev = calloc(n + 1, sizeof(*prev));
    crosscheck_opts_t opts = {.timed_updates = true, .origins = origins, .partial = ld->partial};
    err_t rc = ERR_NOMEM;

    if (objs == NULL || origins == NULL || prev == NULL)
        goto out;
    for (size_t i = 0; i < n; i++) {
        objs[i] = sc->docs[i].obj.kind == KIND_UNKNOWN ? NULL : &sc->docs[i].obj;
        origins[i] = sc->docs[i].label;
    }
    if (crosscheck_updates(objs, n, &opts, prev) != ERR_OK)
        goto out;
    for (size_t i = 0; i < n; i++) {
        sc->docs[i].prev = prev[i] == CROSSCHECK_NONE ? SIM_DOC_NONE : prev[i];
        if (objs[i] == NULL || ld->partial[i])
            continue;
        if (sc->docs[i].prev != SIM_DOC_NONE && !ld->partial[sc->docs[i].prev])
            rc = validate_update(objs[sc->docs[i].prev], objs[i], &ld->diags[i]);
        else
            rc = validate_object(objs[i], &ld->diags[i]);
        if (rc != ERR_OK)
            goto out;
    }
    rc = crosscheck_run(objs, n, &opts, ld->diags);
    if (rc == ERR_OK)
        rc = resolve_groups(ld);
    if (rc == ERR_OK)
        rc = check_sim_rules(ld);
out:
    free(objs);
    free(origins);
    free(prev);
    return rc;
}

/* ---- entry points -------------------------------------------------------------------------- */

typedef err_t (*load_fn)(void *src, size_t len, yaml_doc_cb cb, void *ctx, err_msg_t *msg);

static err_t load_file_fn(void *src, size_t len, yaml_doc_cb cb, void *ctx, err_msg_t *msg)
{
    (void)len;
    return yaml_load_file(src, cb, ctx, msg);
}

static err_t load_string_fn(void *src, size_t len, yaml_doc_cb cb, void *ctx, err_msg_t *msg)
{
    return yaml_load_string(src, len, cb, ctx, msg);
}

static err_t load(load_fn fn, void *src, size_t len, sim_scenario_t *sc, err_msg_t *msg)
{
    load_t ld;
    err_msg_t ymsg = {{0}};
    err_t rc;

    memset(&ld, 0, sizeof(ld));
    ld.sc = sc;
    util_hmap_init(&ld.gen_counts, 0);
    util_hmap_init(&ld.warned, 0);
    util_hmap_init(&ld.group_index, 0);
    rc = fn(src, len, on_doc, &ld, &ymsg);
    if (rc == ERR_PARSE) {
        /* A syntax error ends the stream: report it against the document it is in. */
        char *line = util_asprintf("doc %zu: %s", sc->ndocs + 1, ymsg.text);
        if (!push_str(&sc->errors, &sc->nerrors, line))
            rc = ERR_NOMEM;
    } else if (rc != ERR_OK && rc != ERR_NOMEM) {
        err_set(msg, rc, "%s", ymsg.text);
        goto out;
    }
    if (rc == ERR_OK || rc == ERR_PARSE) {
        err_t e = decode_deferred(&ld);
        rc = e != ERR_OK ? e : rc;
    }
    if (rc == ERR_OK)
        rc = check_all(&ld);
    if (rc != ERR_NOMEM && collect(&ld) != ERR_OK)
        rc = ERR_NOMEM;
    if (rc == ERR_PARSE && sc->nerrors > 0) {
        /* The syntax error was pushed before the per-document ones: move it last, so the lines
         * stay in document order. */
        char *syn = sc->errors[0];
        memmove(sc->errors, sc->errors + 1, (sc->nerrors - 1) * sizeof(char *));
        sc->errors[sc->nerrors - 1] = syn;
    }
    if (rc == ERR_NOMEM)
        rc = err_set(msg, ERR_NOMEM, "out of memory loading the scenario");
    else if (sc->nerrors > 0)
        rc = err_set(msg, ERR_INVALID, "%zu error%s in the scenario", sc->nerrors,
                     sc->nerrors == 1 ? "" : "s");
    else
        rc = ERR_OK;
out:
    for (size_t i = 0; i < sc->ndocs; i++)
        diags_fini(&ld.diags[i]);
    free(ld.diags);
    free(ld.partial);
    util_hmap_fini(&ld.gen_counts);
    util_hmap_fini(&ld.warned);
    kindobj_deps_fini(&ld.deps);
    for (size_t i = 0; i < ld.ndeferred; i++)
        json_decref(ld.deferred[i].root);
    free(ld.deferred);
    for (size_t i = 0; i < ld.ngroups; i++) {
        for (size_t j = 0; j < ld.groups[i].n; j++)
            json_decref(ld.groups[i].pods[j]);
        free(ld.groups[i].pods);
        free(ld.groups[i].docs);
    }
    free(ld.groups);
    free(ld.grouped);
    util_hmap_fini(&ld.group_index);
    return rc;
}

err_t sim_scenario_load(FILE *f, sim_scenario_t *sc, err_msg_t *msg)
{
    return load(load_file_fn, f, 0, sc, msg);
}

err_t sim_scenario_load_string(const char *s, size_t len, sim_scenario_t *sc, err_msg_t *msg)
{
    return load(load_string_fn, (void *)(uintptr_t)s, len, sc, msg);
}
