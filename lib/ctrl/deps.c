/* deps -- the objects job kinds read besides their own (a TrainJob's training runtimes):
 * watched, looked up, and their changes carried to the jobs that name them. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl_int.h"

#include "kube/problem.h"

#include <stdio.h>
#include <string.h>

/*
 * A TrainJob's pod sets are in the ClusterTrainingRuntime or TrainingRuntime it names
 * (jobs_kind_t.deps / needs / resolve). Kueue reads the runtime with its client in every
 * PodSets() call; here one informer per kind of runtime keeps them cached (the server's JSON:
 * resolve() reads their whole JobSet template), the job records resolve against that cache
 * (ctrl_record_kind_t.find = ctrl__deps_find), and a change of a runtime resolves again the
 * records of the jobs that name it and reconciles them:
 *
 *   runtime added / updated / deleted --> each TrainJob naming it: ctrl_job_resolve(j->raw)
 *                                         --> marked for reconcile
 *   runtime informer synced           --> every TrainJob resolved again (listed before it)
 *   runtime kind not served (LIST 404) --> said once (a problem, /readyz) and every TrainJob
 *                                          naming one told once by an Event (ctrl__deps_report)
 *
 * Kueue needs Trainer's CRDs to set the integration up at all; sluice manages the other kinds
 * without them, keeps listing quietly, and picks the runtimes up once the CRD is installed.
 */

/* Does job `j` of kind `k` name object `name` in `ns` of kind `dk`? */
static bool names(const jobs_kind_t *k, const ctrl_job_t *j, const jobs_dep_kind_t *dk,
                  const char *ns, const char *name)
{
    jobs_ref_t ref;

    memset(&ref, 0, sizeof(ref));
    if (j->raw == NULL || k->needs(j->raw, &ref, NULL) != ERR_OK || ref.kind != dk)
        return false;
    if (name != NULL && strcmp(ref.name, name) != 0)
        return false;
    return !dk->namespaced || name == NULL ||
           strcmp(ref.namespace != NULL ? ref.namespace : "", ns != NULL ? ns : "") == 0;
}

/* Resolve again the records (cached and our own last write) of the jobs naming `name` in `ns`
 * of kind `dk` (every one of that kind when `name` is NULL), and reconcile them. */
static void changed(ctrl_t *c, const jobs_dep_kind_t *dk, const char *ns, const char *name)
{
    for (int k = CTRL_JOB; k < c->nkinds; k++) {
        const jobs_kind_t *jk = c->rkind[k].job;
        const char *key;
        ctrl_job_t *rec;
        size_t pos = 0;
        bool uses = false;

        for (size_t i = 0; jk->resolve != NULL && i < jk->ndeps; i++)
            uses = uses || &jk->deps[i] == dk;
        if (!uses)
            continue;
        CTRL_FOREACH(c, k, key, rec)
        {
            if (!names(jk, rec, dk, ns, name))
                continue;
            if (!ctrl_job_resolve(&c->rkind[k], rec, rec->raw))
                ctrl__log(c, CTRL_LOG_ERROR, "out of memory resolving %s", key);
            if (c->fed)
                ctrl__mark_job(c, (ctrl_kind_t)k, key);
        }
        while (util_hmap_next(&c->overlay[k], &pos, &key, (void **)&rec))
            if (names(jk, rec, dk, ns, name) && !ctrl_job_resolve(&c->rkind[k], rec, rec->raw))
                ctrl__log(c, CTRL_LOG_ERROR, "out of memory resolving %s", key);
    }
}

static int dep_index(const ctrl_t *c, const kube_informer_t *inf)
{
    for (int i = 0; i < c->ndeps; i++)
        if (c->dep_inf[i] == inf)
            return i;
    return -1;
}

static void on_obj(kube_informer_t *inf, json_t *obj, void *data)
{
    ctrl_t *c = data;
    const json_t *md = json_object_get(obj, "metadata");
    int i = dep_index(c, inf);

    if (i < 0 || c->closing)
        return;
    changed(c, c->dep[i], json_string_value(json_object_get(md, "namespace")),
            json_string_value(json_object_get(md, "name")));
}

static void on_update(kube_informer_t *inf, json_t *old, json_t *obj, void *data)
{
    (void)old;
    on_obj(inf, obj, data);
}

static void on_synced(kube_informer_t *inf, void *data)
{
    ctrl_t *c = data;
    int i = dep_index(c, inf);

    if (i >= 0 && !c->closing)
        changed(c, c->dep[i], NULL, NULL);
}

/* The problem key of dependency kind `i` ("crd:<resource>.<group>"). */
static void dep_key(const ctrl_t *c, int i, char *key, size_t n)
{
    const jobs_dep_kind_t *dk = c->dep[i];
    kube_resource_t res = {dk->group, dk->version, dk->resource, dk->namespaced};
    char name[160];

    kube_problem_resource_name(&res, NULL, name, sizeof(name));
    snprintf(key, n, "crd:%s", name);
}

/* Which jobs name a runtime of a kind the API server does not serve: said once as a problem
 * (it stays open, /readyz shows it; cleared when a LIST succeeds), and every job naming one is
 * reconciled so that it says so too. Other failures are the informer's own retries. */
static void on_error(kube_informer_t *inf, const kube_result_t *res, const char *verb, void *data)
{
    ctrl_t *c = data;
    int i = dep_index(c, inf);
    const jobs_dep_kind_t *dk;
    char key[200];

    if (i < 0 || c->closing)
        return;
    dk = c->dep[i];
    dep_key(c, i, key, sizeof(key));
    if (res == NULL || res->err == ERR_OK) {
        if (c->dep_absent[i]) {
            c->dep_absent[i] = false;
            problems_clear(c->problems, key, (uint64_t)ctrl__now_ms());
        }
        return;
    }
    if (strcmp(verb, "list") != 0 || res->err != ERR_NOT_FOUND || c->dep_absent[i])
        return;
    c->dep_absent[i] = true;
    problems_set(c->problems, key, (uint64_t)ctrl__now_ms(),
                 "the API server does not serve %s/%s %s (its CustomResourceDefinition is not "
                 "installed): the jobs naming a %s get no Workload until it is",
                 dk->group, dk->version, dk->resource, dk->kind);
    changed(c, dk, NULL, NULL);
}

void ctrl__deps_report(ctrl_t *c, ctrl_kind_t kind, const char *key, bool resolved, const char *why)
{
    const ctrl_job_t *j = ctrl__job(c, kind, key);
    const jobs_kind_t *jk = ctrl__jobs_kind(c, kind);
    const jobs_dep_kind_t *absent = NULL;
    char k[CTRL_KEY_MAX + 16];
    size_t said = 0, say;
    jobs_ref_t ref;

    snprintf(k, sizeof(k), "%d:%s", (int)kind, key);
    if (resolved) {
        util_hmap_del(&c->dep_missing, k);
        return;
    }
    if (j == NULL || jk == NULL || jk->needs == NULL || j->raw == NULL)
        return;
    memset(&ref, 0, sizeof(ref));
    if (jk->needs(j->raw, &ref, NULL) != ERR_OK)
        return; /* an unusable reference: the record's own error, not a missing object */
    for (int i = 0; i < c->ndeps; i++) {
        if (c->dep[i] != ref.kind)
            continue;
        if (c->dep_absent[i])
            absent = ref.kind;
        else if (!kube_informer_synced(c->dep_inf[i]))
            return; /* not known yet: its informer's first answer reconciles the job again */
    }
    /* Said once per job and cause: "not found" (1), then, once the LIST of its kind answered
     * 404, "not found: the CRD is not installed" (2). */
    say = absent != NULL ? 2 : 1;
    if (util_hmap_get_index(&c->dep_missing, k, &said) && said >= say)
        return;
    if (util_hmap_put_index(&c->dep_missing, k, say) != ERR_OK)
        return; /* out of memory: said again next time */
    ctrl__log(c, CTRL_LOG_INFO, "%s %s: no Workload: %s%s%s%s", c->noun[kind], key, why ? why : "",
              absent ? ": the API server does not serve " : "", absent ? absent->resource : "",
              absent ? " (its CRD is not installed)" : "");
    if (absent != NULL)
        ctrl__event(c, kind, &j->meta, "Warning", "RuntimeNotFound",
                    "%s: the API server does not serve %s.%s (its CRD is not installed)",
                    why ? why : "", absent->resource, absent->group);
    else
        ctrl__event(c, kind, &j->meta, "Warning", "RuntimeNotFound", "%s", why ? why : "");
}

err_t ctrl__deps_new(ctrl_t *c)
{
    kube_informer_handlers_t h = {on_obj, on_update, on_obj, on_synced, on_error};

    for (int k = CTRL_JOB; k < c->nkinds; k++) {
        const jobs_kind_t *jk = c->rkind[k].job;
        if (jk->resolve == NULL)
            continue;
        c->rkind[k].find = ctrl__deps_find;
        c->rkind[k].find_data = c;
        for (size_t d = 0; d < jk->ndeps && c->ndeps < CTRL_DEPS_MAX; d++) {
            const jobs_dep_kind_t *dk = &jk->deps[d];
            kube_resource_t res = {dk->group, dk->version, dk->resource, dk->namespaced};
            bool have = false;
            for (int i = 0; i < c->ndeps; i++)
                have = have || c->dep[i] == dk;
            if (have)
                continue;
            c->dep_inf[c->ndeps] = kube_informer_new(c->client, &res, NULL, &h, c);
            if (c->dep_inf[c->ndeps] == NULL)
                return ERR_NOMEM;
            c->dep[c->ndeps++] = dk;
        }
    }
    return ERR_OK;
}

err_t ctrl__deps_start(ctrl_t *c, err_msg_t *msg)
{
    for (int i = 0; i < c->ndeps; i++) {
        err_t rc = kube_informer_start(c->dep_inf[i], msg);
        if (rc != ERR_OK)
            return err_prefix(msg, rc, "informer %s: ", c->dep[i]->resource);
    }
    return ERR_OK;
}

size_t ctrl__deps_close(ctrl_t *c, void (*on_closed)(void *data), void *data)
{
    size_t n = (size_t)c->ndeps;

    for (int i = 0; i < c->ndeps; i++)
        kube_informer_close(c->dep_inf[i], on_closed, data);
    c->ndeps = 0;
    return n;
}

const json_t *ctrl__deps_find(void *data, const jobs_ref_t *ref)
{
    const ctrl_t *c = data;

    for (int i = 0; i < c->ndeps; i++)
        if (c->dep[i] == ref->kind)
            return kube_informer_get(c->dep_inf[i], ref->kind->namespaced ? ref->namespace : NULL,
                                     ref->name);
    return NULL;
}
