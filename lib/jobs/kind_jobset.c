/* kind_jobset -- JobSet (jobset.x-k8s.io/v1alpha2) as a framework entry (Kueue's jobs/jobset). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/framework.h"

#include "jobs/framework_int.h"

#include <stdio.h>
#include <string.h>

/*
 * A JobSet runs spec.replicatedJobs[i].replicas copies of the Job template
 * spec.replicatedJobs[i].template. Kueue admits it as one Workload with one pod set per
 * replicated Job, named by it, of replicas x min(parallelism, completions) pods; the JobSet
 * controller copies each template into the Jobs it creates, so starting the JobSet (spec.suspend
 * false, templates merged) is enough. No partial admission.
 */

err_t jobs__jobset_pod_sets(json_t *rjobs, const char *prefix, jobs_podset_t *out, size_t *n,
                            err_msg_t *msg)
{
    size_t i, count = json_array_size(rjobs);
    json_t *rj;

    if (count == 0)
        return err_set(msg, ERR_INVALID, "%s.replicatedJobs: Required value", prefix);
    if (count > JOBS_PODSETS_MAX)
        return err_set(msg, ERR_INVALID,
                       "%s.replicatedJobs: Too many: %zu: must have at most %d items", prefix,
                       count, JOBS_PODSETS_MAX);
    json_array_foreach(rjobs, i, rj)
    {
        json_t *jspec = JOBS_AT(rj, "template", "spec");
        int32_t replicas = jobs__int32(JOBS_AT(rj, "replicas"), 1);
        int32_t par = jobs__int32(JOBS_AT(jspec, "parallelism"), 1);
        int32_t comp = jobs__int32(JOBS_AT(jspec, "completions"), par);
        int64_t pods = (int64_t)replicas * (comp < par ? comp : par);
        jobs_podset_t *ps = &out[i];
        char path[JOBS_PATH_MAX];
        err_t rc;

        memset(ps, 0, sizeof(*ps));
        snprintf(path, sizeof(path), "%s.replicatedJobs[%zu].name", prefix, i);
        rc = jobs__podset_name(ps, json_string_value(JOBS_AT(rj, "name")), path, msg);
        if (rc != ERR_OK)
            return rc;
        snprintf(ps->path, sizeof(ps->path), "%s.replicatedJobs[%zu].template.spec.template",
                 prefix, i);
        ps->tmpl = JOBS_AT(jspec, "template");
        if (!json_is_object(ps->tmpl))
            return err_set(msg, ERR_INVALID, "%s: Required value", ps->path);
        if (pods < 0 || pods > INT32_MAX)
            return err_set(msg, ERR_INVALID, "%s.replicatedJobs[%zu]: %lld pods out of range",
                           prefix, i, (long long)pods);
        ps->count = (int32_t)pods;
    }
    *n = count;
    return ERR_OK;
}

void jobs__jobset_reclaimable(const json_t *rjobs, const json_t *statuses, jobs_reclaim_t *out,
                              size_t *n)
{
    size_t i, k;
    json_t *rj, *st;

    *n = 0;
    json_array_foreach(rjobs, i, rj)
    {
        const char *name = json_string_value(JOBS_AT(rj, "name"));
        json_t *jspec = JOBS_AT(rj, "template", "spec");
        int32_t replicas = jobs__int32(JOBS_AT(rj, "replicas"), 1);
        int32_t par = jobs__int32(JOBS_AT(jspec, "parallelism"), 1);
        int32_t comp = jobs__int32(JOBS_AT(jspec, "completions"), par);
        int32_t per = comp < par ? comp : par;
        if (name == NULL || *n == JOBS_PODSETS_MAX)
            continue;
        json_array_foreach(statuses, k, st)
        {
            const char *sn = json_string_value(JOBS_AT(st, "name"));
            int32_t ok = jobs__int32(JOBS_AT(st, "succeeded"), 0);
            if (sn == NULL || strcmp(sn, name) != 0 || ok <= 0 || ok > replicas)
                continue;
            snprintf(out[*n].name, sizeof(out[*n].name), "%s", name);
            out[*n].count = (int32_t)((int64_t)ok * per > INT32_MAX ? INT32_MAX : ok * per);
            (*n)++;
            break;
        }
    }
}

/* Kueue's JobSet.ReclaimablePods: per replicated Job, its succeeded Jobs' pods. */
static void jobset_reclaimable(const json_t *obj, jobs_reclaim_t *out, size_t *n)
{
    jobs__jobset_reclaimable(JOBS_AT(obj, "spec", "replicatedJobs"),
                             JOBS_AT(obj, "status", "replicatedJobsStatus"), out, n);
}

static err_t jobset_pod_sets(json_t *obj, jobs_podset_t *out, size_t *n, err_msg_t *msg)
{
    return jobs__jobset_pod_sets(JOBS_AT(obj, "spec", "replicatedJobs"), "spec", out, n, msg);
}

static bool jobset_suspended(const json_t *obj)
{
    return json_is_true(JOBS_AT(obj, "spec", "suspend"));
}

static err_t jobset_set_suspended(json_t *obj, bool suspend, err_msg_t *msg)
{
    return JOBS_SET_BOOL(obj, suspend, msg, "spec", "suspend");
}

/* Completed=True is a success, Failed=True a failure, Completed looked at first. */
static jobs_phase_t jobset_phase(const json_t *obj, const char **message)
{
    json_t *conds = JOBS_AT(obj, "status", "conditions");

    if (jobs__condition(conds, "Completed", message))
        return JOBS_SUCCEEDED;
    if (jobs__condition(conds, "Failed", message))
        return JOBS_FAILED;
    return JOBS_RUNNING;
}

/* Some replicated Job has active pods. */
static bool jobset_active(const json_t *obj)
{
    return jobs__any_active(JOBS_AT(obj, "status", "replicatedJobsStatus"));
}

/* Kueue's JobSet.PodsReady counts Jobs, not pods: every replica Job is ready or succeeded. */
static bool jobset_pods_ready(const json_t *obj)
{
    int64_t replicas = 0, ready = 0;
    size_t i;
    json_t *v;

    json_array_foreach(JOBS_AT(obj, "spec", "replicatedJobs"), i, v)
    {
        replicas += jobs__int32(json_object_get(v, "replicas"), 1);
    }
    json_array_foreach(JOBS_AT(obj, "status", "replicatedJobsStatus"), i, v)
    {
        ready += jobs__int32(json_object_get(v, "ready"), 0);
        ready += jobs__int32(json_object_get(v, "succeeded"), 0);
    }
    return replicas == ready;
}

const jobs_kind_t jobs__kind_jobset = {
    .framework = "jobset.x-k8s.io/jobset",
    .group = "jobset.x-k8s.io",
    .version = "v1alpha2",
    .kind = "JobSet",
    .resource = "jobsets",
    .pod_sets = jobset_pod_sets,
    .suspended = jobset_suspended,
    .set_suspended = jobset_set_suspended,
    .phase = jobset_phase,
    .active = jobset_active,
    .pods_ready = jobset_pods_ready,
    .reclaimable = jobset_reclaimable,
};
