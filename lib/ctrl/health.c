/* health -- the operator's view of its surroundings: failed requests become problems with a
 * remedy, and readiness says what is missing. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl_int.h"

#include "kube/problem.h"

#include <stdio.h>
#include <string.h>

/* Repeat an unchanged problem at most once a minute: loud enough to be seen in any log window,
 * quiet enough that a missing CRD does not bury everything else. */
#define PROBLEM_REPEAT_MS 60000

static void problems_log(void *data, int level, const char *text)
{
    ctrl_t *c = data;

    ctrl__log(c, level, "%s", text);
}

err_t ctrl__health_init(ctrl_t *c)
{
    c->problems = problems_new(problems_log, c, PROBLEM_REPEAT_MS);
    return c->problems != NULL ? ERR_OK : ERR_NOMEM;
}

problems_t *ctrl_problems(ctrl_t *c)
{
    return c->problems;
}

/* Who grants `res_type`: the Role in sluice's namespace for what lives there (Leases, the
 * webhook Secret), the ClusterRole for the rest (manifests/rbac.yaml). */
static void rbac_hint(const ctrl_t *c, const kube_resource_t *rt, char *buf, size_t n)
{
    const char *r = rt != NULL && rt->resource ? rt->resource : "";

    if (strcmp(r, "leases") == 0 || strcmp(r, "secrets") == 0)
        snprintf(buf, n,
                 "grant it to sluice's ServiceAccount in namespace %s (the shipped Role "
                 "sluice-leader-election-role, manifests/rbac.yaml)",
                 c->cfg->namespace);
    else
        snprintf(buf, n,
                 "grant it to sluice's ServiceAccount (the shipped ClusterRole "
                 "sluice-manager-role, manifests/rbac.yaml)");
}

void ctrl_note_result(ctrl_t *c, const kube_result_t *res, const char *verb,
                      const kube_resource_t *rt, const char *sub)
{
    char key[200], hint[256], name[160];
    err_msg_t text = {{0}};
    uint64_t now = (uint64_t)ctrl__now_ms();
    kube_problem_t p;

    if (res->err == ERR_OK) {
        /* Cheap on the hot path: nothing to clear in the common case. */
        if (problems_count(c->problems) == 0)
            return;
        kube_problem_resource_name(rt, sub, name, sizeof(name));
        problems_clear(c->problems, "api", now);
        snprintf(key, sizeof(key), "rbac:%s:%s", verb, name);
        problems_clear(c->problems, key, now);
        if (strcmp(verb, "list") == 0 || strcmp(verb, "watch") == 0) {
            snprintf(key, sizeof(key), "crd:%s", name);
            problems_clear(c->problems, key, now);
            snprintf(key, sizeof(key), "server:%s", name);
            problems_clear(c->problems, key, now);
        }
        return;
    }
    p = kube_problem_explain(res, verb, rt, sub, kube_client_server(c->client), key, sizeof(key),
                             &text);
    switch (p) {
    case KUBE_PROBLEM_NONE:
    case KUBE_PROBLEM_OTHER:
        return; /* canceled, or the caller's own business (409, 422, ...) */
    case KUBE_PROBLEM_FORBIDDEN:
        rbac_hint(c, rt, hint, sizeof(hint));
        problems_set(c->problems, key, now, "%s; %s", text.text, hint);
        return;
    case KUBE_PROBLEM_NOT_INSTALLED:
        problems_set(c->problems, key, now,
                     "%s; install it (kubectl apply -k manifests/, or kubectl apply "
                     "--server-side -f crds/). Until every watched kind can be listed, sluice "
                     "admits nothing",
                     text.text);
        return;
    default:
        problems_set(c->problems, key, now, "%s", text.text);
        return;
    }
}

/* A job kind other than batch/job: its CRD may be absent, as Kueue allows (batch/v1 is always
 * served; a Job resource that is not is a broken installation, waited for). */
static bool optional_kind(const ctrl_t *c, int k)
{
    const jobs_kind_t *jk = ctrl__jobs_kind(c, (ctrl_kind_t)k);

    if (k == CTRL_TOPOLOGY) /* without it topology-aware scheduling is off (ctrl.c) */
        return true;
    return jk != NULL && strcmp(jk->framework, "batch/job") != 0;
}

/* Kueue skips the integration of a kind whose API is not served ("No matching API in the server
 * for job framework, skipped setup of controller and webhook") and says so once. sluice does
 * the same -- the rest is ready without it -- and the problem stays open (/readyz shows it); its
 * informer keeps retrying quietly with backoff, so a CRD installed later is picked up then
 * (Kueue needs a restart). `res` NULL: the first LIST succeeded after all. */
static void kind_not_served(ctrl_t *c, int k, const kube_result_t *res)
{
    const jobs_kind_t *jk = ctrl__jobs_kind(c, (ctrl_kind_t)k);
    char key[200], name[160];
    uint64_t now = (uint64_t)ctrl__now_ms();

    kube_problem_resource_name(&c->res[k], NULL, name, sizeof(name));
    snprintf(key, sizeof(key), "crd:%s", name);
    if (res == NULL || res->err == ERR_OK) {
        problems_clear(c->problems, key, now);
        return;
    }
    if (c->skipped[k])
        return;       /* said once */
    if (jk == NULL) { /* CTRL_TOPOLOGY */
        problems_set(c->problems, key, now,
                     "topology-aware scheduling off: the API server does not serve %s/%s %s (its "
                     "CustomResourceDefinition is not installed); ResourceFlavors' topologyName "
                     "and the podset topology annotations have no effect until it is installed "
                     "and sluice restarted",
                     c->res[k].group, c->res[k].version, c->res[k].resource);
        ctrl__kind_skipped(c, (ctrl_kind_t)k, res);
        return;
    }
    problems_set(c->problems, key, now,
                 "integration %s skipped: the API server does not serve %s/%s %s (its "
                 "CustomResourceDefinition is not installed); the other kinds are managed, and "
                 "%s objects are once it is installed",
                 jk->framework, c->res[k].group, c->res[k].version, c->res[k].resource, jk->kind);
    ctrl__kind_skipped(c, (ctrl_kind_t)k, res);
}

void ctrl__on_informer_error(kube_informer_t *inf, const kube_result_t *res, const char *verb,
                             void *data)
{
    ctrl_t *c = data;
    kube_result_t ok;

    if (c->closing)
        return;
    for (int k = 0; k < c->nkinds; k++) {
        if (c->inf[k] != inf)
            continue;
        if (optional_kind(c, k) &&
            (c->skipped[k] || (res != NULL && !c->synced[k] && strcmp(verb, "list") == 0 &&
                               res->err == ERR_NOT_FOUND))) {
            kind_not_served(c, k, res);
            return;
        }
        if (res == NULL) {
            memset(&ok, 0, sizeof(ok));
            ok.err = ERR_OK;
            res = &ok;
        }
        ctrl_note_result(c, res, verb, &c->res[k], NULL);
        return;
    }
}

bool ctrl_readiness(const ctrl_t *c, char *buf, size_t n)
{
    size_t used;
    bool first = true;

    if (n == 0)
        return c->fed;
    buf[0] = '\0';
    if (c->fed)
        return true;
    snprintf(buf, n, "caches not synced:");
    for (int k = 0; k < c->nkinds; k++) {
        char name[160];
        if (kube_informer_synced(c->inf[k]) || c->skipped[k])
            continue;
        kube_problem_resource_name(&c->res[k], NULL, name, sizeof(name));
        used = strlen(buf);
        snprintf(buf + used, n - used, "%s %s", first ? "" : ",", name);
        first = false;
    }
    used = strlen(buf);
    snprintf(buf + used, n - used, "\n");
    return false;
}
