/* job_workload -- the Workload Kueue builds for a batch/v1 Job, and its priority. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/job_workload.h"

#include "jobs/framework_int.h"
#include "model/requests.h"

#include <stdlib.h>
#include <string.h>

/* ---- name and build ---------------------------------------------------------------------------
 */

/* The Job kind's entry names the Workload and fills its metadata: the same code as every kind's
 * (framework.c), so a Job's Workload is the same whichever way it is built. */
err_t job_workload_name(const char *job_name, const char *uid, size_t max, char *buf, size_t size,
                        err_msg_t *msg)
{
    return jobs_workload_name(&jobs__kind_job, job_name, uid, max, buf, size, msg);
}

static err_t build_pod_set(const job_t *job, pod_set_t *ps, err_msg_t *msg)
{
    const char *min = kv_list_get(&job->meta.annotations, JOB_ANNOTATION_MIN_PARALLELISM);
    err_t rc;

    ps->name = strdup("main");
    if (ps->name == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    ps->count = requests_job_count(job);
    ps->has_min_count = jobs__positive_int32(min, &ps->min_count);
    for (size_t i = 0; i < job->template_labels.len; i++) {
        const kv_t *kv = &job->template_labels.items[i];
        if (jobs__job_dropped_label(kv->key))
            continue;
        if (kv_list_set(&ps->template_labels, kv->key, kv->value) != ERR_OK)
            return err_set(msg, ERR_NOMEM, "out of memory");
    }
    if (kv_list_copy(&ps->template_annotations, &job->template_annotations) != ERR_OK ||
        pod_spec_copy(&ps->spec, &job->spec) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "out of memory");
    rc = requests_pod(&ps->spec, &ps->pod_requests, msg);
    if (rc != ERR_OK)
        return err_prefix(msg, rc, "job %s: ", job->meta.name ? job->meta.name : "");
    return ERR_OK;
}

err_t job_workload_build(const job_t *job, workload_t *out, err_msg_t *msg)
{
    workload_t wl;
    err_t rc;

    memset(out, 0, sizeof(*out));
    memset(&wl, 0, sizeof(wl));
    if (job->meta.name == NULL || job->meta.name[0] == '\0')
        return err_set(msg, ERR_INVALID, "job without metadata.name");
    rc = jobs__workload_meta(&jobs__kind_job, &job->meta, NULL, &wl, msg);
    if (rc != ERR_OK)
        goto fail;
    wl.pod_sets = calloc(1, sizeof(*wl.pod_sets));
    if (wl.pod_sets == NULL) {
        rc = err_set(msg, ERR_NOMEM, "out of memory");
        goto fail;
    }
    wl.npod_sets = 1;
    rc = build_pod_set(job, &wl.pod_sets[0], msg);
    if (rc != ERR_OK)
        goto fail;
    *out = wl;
    return ERR_OK;
fail:
    workload_fini(&wl);
    return rc;
}

/* ---- priority ----------------------------------------------------------------------------------
 */

static err_t set_priority(workload_t *wl, priority_source_t src, const char *name, int32_t value,
                          err_msg_t *msg)
{
    char *copy = NULL;

    if (name != NULL) {
        copy = strdup(name);
        if (copy == NULL)
            return err_set(msg, ERR_NOMEM, "out of memory");
    }
    free(wl->priority_class);
    wl->priority_class = copy;
    wl->priority_source = src;
    wl->priority_kind = src;
    wl->has_priority = true;
    wl->priority = value;
    return ERR_OK;
}

err_t job_workload_priority(const job_t *job, const job_priority_lookup_t *lookup, workload_t *wl,
                            err_msg_t *msg)
{
    const char *wpc_name = kv_list_get(&job->meta.labels, JOB_LABEL_PRIORITY_CLASS);
    const char *pc_name = job->spec.priority_class_name;
    const priority_class_t *best = NULL;

    if (wpc_name != NULL && wpc_name[0] != '\0') {
        const workload_priority_class_t *w =
            lookup && lookup->wpc ? lookup->wpc(lookup->ctx, wpc_name) : NULL;
        if (w == NULL)
            return err_set(msg, ERR_NOT_FOUND,
                           "WorkloadPriorityClass.kueue.x-k8s.io \"%s\" not found", wpc_name);
        return set_priority(wl, PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS, wpc_name, w->value, msg);
    }
    if (pc_name != NULL && pc_name[0] != '\0') {
        const priority_class_t *p = lookup && lookup->pc ? lookup->pc(lookup->ctx, pc_name) : NULL;
        if (p == NULL)
            return err_set(msg, ERR_NOT_FOUND, "priorityclasses.scheduling.k8s.io \"%s\" not found",
                           pc_name);
        return set_priority(wl, PRIORITY_SOURCE_PRIORITY_CLASS, pc_name, p->value, msg);
    }
    for (size_t i = 0; lookup && lookup->pc_at; i++) {
        const priority_class_t *p = lookup->pc_at(lookup->ctx, i);
        if (p == NULL)
            break;
        if (p->global_default && (best == NULL || p->value < best->value))
            best = p;
    }
    if (best != NULL)
        return set_priority(wl, PRIORITY_SOURCE_PRIORITY_CLASS, best->meta.name, best->value, msg);
    return set_priority(wl, PRIORITY_SOURCE_NONE, NULL, 0, msg);
}
