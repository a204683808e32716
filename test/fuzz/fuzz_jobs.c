/* fuzz_jobs -- libFuzzer target for the job integrations: any JSON object through every kind's
 * entry (pod sets, Workload, start, stop, digest, status readers), as the webhooks and the
 * informers hand them objects nobody checked. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/framework.h"

#include "fuzz_check.h"

#include <jansson.h>
#include <stdint.h>
#include <string.h>

/* The Workload's spec.podSets for `obj` as Kueue would write them (NULL on OOM). */
static json_t *workload_pod_sets(const jobs_podset_t *ps, size_t n)
{
    json_t *arr = json_array();

    for (size_t i = 0; arr != NULL && i < n; i++)
        if (json_array_append_new(arr,
                                  json_pack("{s:s, s:i, s:o}", "name", ps[i].name, "count",
                                            ps[i].count, "template", json_deep_copy(ps[i].tmpl)))) {
            json_decref(arr);
            arr = NULL;
        }
    return arr;
}

static void one_kind(const jobs_kind_t *k, const json_t *orig, json_t *nodes, json_t *tols)
{
    jobs_podset_t ps[JOBS_PODSETS_MAX];
    jobs_start_info_t info[JOBS_PODSETS_MAX];
    json_t *obj = json_deep_copy(orig), *pod_sets = NULL;
    const char *m = NULL;
    workload_t wl;
    size_t n = 0;
    bool changed;
    err_t rc;

    if (obj == NULL)
        return;
    /* Status readers never fail. */
    (void)k->suspended(obj);
    (void)k->active(obj);
    (void)k->pods_ready(obj);
    (void)k->phase(obj, &m);
    if (k->skip != NULL)
        (void)k->skip(obj);
    (void)jobs_priority_class(k, obj);

    memset(ps, 0, sizeof(ps));
    rc = k->pod_sets(obj, ps, &n, NULL);
    if (rc == ERR_OK) {
        CHECK(n >= 1 && n <= JOBS_PODSETS_MAX);
        for (size_t i = 0; i < n; i++) {
            CHECK(ps[i].name[0] != '\0' && strlen(ps[i].name) <= JOBS_PODSET_NAME_MAX);
            CHECK(ps[i].tmpl != NULL && ps[i].count >= 0 && ps[i].min_count >= 0);
        }
    }
    CHECK(jobs_digest(k, obj) == jobs_digest(k, obj));

    /* The Workload: all or nothing. */
    rc = jobs_workload_build(k, obj, NULL, &wl, NULL);
    if (rc == ERR_OK) {
        CHECK(wl.meta.name != NULL && wl.npod_sets == n);
        workload_fini(&wl);
    } else {
        CHECK(wl.meta.name == NULL && wl.pod_sets == NULL);
    }
    CHECK(json_equal(obj, orig)); /* reading never writes */
    if (n == 0)
        goto out;

    /* Start every pod set; a failure leaves the object as it was. */
    pod_sets = workload_pod_sets(ps, n);
    for (size_t i = 0; i < n; i++) {
        jobs_start_info_t in = {ps[i].name, "lq", "cq", "wl", nodes, tols, false, 0};
        info[i] = in;
    }
    /* ps[] points into obj: a start replaces obj's members, so copy the names first. */
    {
        char names[JOBS_PODSETS_MAX][JOBS_PODSET_NAME_MAX + 1];
        for (size_t i = 0; i < n; i++) {
            memcpy(names[i], ps[i].name, sizeof(names[i]));
            info[i].name = names[i];
        }
        rc = jobs_start(k, obj, info, n, NULL);
        /* A kind with its own start may hold the object at the first call (TrainJob: the
         * admission is written while suspended); the operator writes that and starts it again,
         * which releases it. */
        if (rc == ERR_OK && k->start != NULL && k->suspended != NULL && k->suspended(obj))
            rc = jobs_start(k, obj, info, n, NULL);
    }
    if (rc != ERR_OK) {
        /* ERR_UNSUPPORTED: a kind that is never released as a whole (the serving owners). */
        CHECK(rc == ERR_CONFLICT || rc == ERR_INVALID || rc == ERR_NOMEM || rc == ERR_UNSUPPORTED);
        if (rc != ERR_NOMEM)
            CHECK(json_equal(obj, orig));
        goto out;
    }
    if (k->admit != JOBS_ADMIT_OBJECT || pod_sets == NULL)
        goto out;
    CHECK(!k->suspended(obj));
    /* Stop restores what the Workload says: held, and digests agree. */
    rc = jobs_stop(k, obj, pod_sets, &changed, NULL);
    if (rc == ERR_OK) {
        CHECK(k->suspended(obj));
        CHECK(jobs_digest(k, obj) == jobs_podsets_digest(pod_sets));
        rc = jobs_stop(k, obj, pod_sets, &changed, NULL);
        CHECK(rc != ERR_OK || !changed);
    }
out:
    json_decref(pod_sets);
    json_decref(obj);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *obj = json_loadb((const char *)data, size, 0, NULL);
    json_t *nodes = json_pack("{s:s}", "pool", "gpu");
    json_t *tols = json_pack("[{s:s, s:s}]", "key", "gpu", "operator", "Exists");
    const jobs_kind_t *k;

    if (json_is_object(obj) && nodes != NULL && tols != NULL) {
        k = jobs_kind_find(json_string_value(json_object_get(obj, "apiVersion")),
                           json_string_value(json_object_get(obj, "kind")));
        /* Its own kind first, then every kind (an object is not always what it says). */
        if (k != NULL)
            one_kind(k, obj, nodes, tols);
        for (size_t i = 0; (k = jobs_kind_at(i)) != NULL; i++)
            one_kind(k, obj, nodes, tols);
    }
    json_decref(obj);
    json_decref(nodes);
    json_decref(tols);
    return 0;
}
