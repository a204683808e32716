/* kind_job -- batch/v1 Job as a framework entry (Kueue's pkg/controller/jobs/job). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/framework.h"

#include "jobs/framework_int.h"
#include "jobs/job_workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kueue's JobCompletionsEqualParallelismAnnotation: partial admission sets completions too. */
#define JOB_ANNOTATION_COMPLETIONS_EQUAL "kueue.x-k8s.io/job-completions-equal-parallelism"

/* One pod set "main": spec.template, count = min(parallelism, completions) (the API server
 * defaults parallelism to 1), minCount from the min-parallelism annotation. */
static err_t job_pod_sets(json_t *obj, jobs_podset_t *out, size_t *n, err_msg_t *msg)
{
    json_t *spec = JOBS_AT(obj, "spec");
    json_t *tmpl = JOBS_AT(spec, "template");
    const char *min =
        json_string_value(JOBS_AT(obj, "metadata", "annotations", JOB_ANNOTATION_MIN_PARALLELISM));
    int32_t count = jobs__int32(JOBS_AT(spec, "parallelism"), 1);
    json_t *completions = JOBS_AT(spec, "completions");

    if (!json_is_object(tmpl))
        return err_set(msg, ERR_INVALID, "spec.template: Required value");
    if (completions != NULL && !json_is_null(completions) &&
        jobs__int32(completions, count) < count)
        count = jobs__int32(completions, count);
    memset(&out[0], 0, sizeof(out[0]));
    strcpy(out[0].name, "main");
    strcpy(out[0].path, "spec.template");
    out[0].tmpl = tmpl;
    out[0].count = count < 0 ? 0 : count;
    if (!jobs__positive_int32(min, &out[0].min_count))
        out[0].min_count = 0;
    *n = 1;
    return ERR_OK;
}

static bool job_suspended(const json_t *obj)
{
    return json_is_true(JOBS_AT(obj, "spec", "suspend"));
}

static err_t job_set_suspended(json_t *obj, bool suspend, err_msg_t *msg)
{
    return JOBS_SET_BOOL(obj, suspend, msg, "spec", "suspend");
}

/* Go's strconv.ParseBool, true values only. */
static bool parse_bool_true(const char *s)
{
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True", NULL};

    for (size_t i = 0; s != NULL && yes[i] != NULL; i++)
        if (strcmp(s, yes[i]) == 0)
            return true;
    return false;
}

/* Partial admission: parallelism (and completions when the annotation says they go together). */
static err_t job_set_count(json_t *obj, size_t i, int32_t count, err_msg_t *msg)
{
    json_t *spec = JOBS_AT(obj, "spec");
    const char *sync = json_string_value(
        JOBS_AT(obj, "metadata", "annotations", JOB_ANNOTATION_COMPLETIONS_EQUAL));

    if (i != 0 || !json_is_object(spec))
        return err_set(msg, ERR_INVALID, "Job: no pod set %zu", i);
    if (json_object_set_new(spec, "parallelism", json_integer(count)) ||
        (parse_bool_true(sync) && json_object_set_new(spec, "completions", json_integer(count))))
        return err_set(msg, ERR_NOMEM, "out of memory");
    return ERR_OK;
}

/* The first condition Complete or Failed with status True decides (Kueue's Job.Finished). */
static jobs_phase_t job_phase(const json_t *obj, const char **message)
{
    return jobs__phase_first(JOBS_AT(obj, "status", "conditions"), "Complete", "Failed", message);
}

static bool job_active(const json_t *obj)
{
    return jobs__int32(JOBS_AT(obj, "status", "active"), 0) != 0;
}

/* Kueue's Job.PodsReady: succeeded + ready + uncounted succeeded pods reach the pod count. */
static bool job_pods_ready(const json_t *obj)
{
    json_t *status = JOBS_AT(obj, "status");
    jobs_podset_t ps;
    size_t n = 0;
    int64_t done =
        (int64_t)jobs__int32(JOBS_AT(status, "succeeded"), 0) +
        jobs__int32(JOBS_AT(status, "ready"), 0) +
        (int64_t)json_array_size(JOBS_AT(status, "uncountedTerminatedPods", "succeeded"));

    if (job_pod_sets((json_t *)obj, &ps, &n, NULL) != ERR_OK)
        return false;
    return done >= ps.count;
}

/* The Job controller's labels on the pod template: Kueue's managedLabels, and anything under
 * batch.kubernetes.io/ (it owns that prefix). */
static bool job_owned_label(const char *key)
{
    return strcmp(key, "job-name") == 0 || strcmp(key, "controller-uid") == 0 ||
           strncmp(key, "batch.kubernetes.io/", 20) == 0;
}

bool jobs__job_dropped_label(const char *key)
{
    return strcmp(key, "job-name") == 0 || strcmp(key, "controller-uid") == 0 ||
           strcmp(key, "batch.kubernetes.io/controller-uid") == 0;
}

static err_t job_podset_template(const json_t *obj, size_t i, json_t *tmpl, err_msg_t *msg)
{
    json_t *labels = JOBS_AT(tmpl, "metadata", "labels"), *v;
    const char *key;
    void *tmp;

    (void)obj;
    (void)i;
    (void)msg;
    json_object_foreach_safe(labels, tmp, key, v)
    {
        if (jobs__job_dropped_label(key))
            json_object_del(labels, key);
    }
    return ERR_OK;
}

/* How many of indexes [0, completions) the Indexed Job's interval lists `a` and `b` ("1,3-5")
 * name, each counted once (Kueue's terminalIndexesCount: completed and failed indexes, which
 * older servers let overlap; indexes at or past completions ignored; the rest of a list after a
 * malformed interval ignored). One bit per index (the API server caps an Indexed Job's
 * completions at 100,000: 12.5 KB); 0 when that cannot be allocated (nothing reclaimed). */
static int32_t indexes_count(const char *a, const char *b, int32_t completions)
{
    const char *lists[2] = {a, b};
    unsigned char *seen;
    int32_t n = 0;

    if (completions <= 0)
        return 0;
    seen = calloc((size_t)completions / 8 + 1, 1);
    if (seen == NULL)
        return 0;
    for (int l = 0; l < 2; l++) {
        const char *p = lists[l];
        while (p != NULL && *p != '\0') {
            char *end;
            long first = strtol(p, &end, 10), last = first;
            if (end == p || first < 0)
                break;
            if (*end == '-') {
                const char *q = end + 1;
                last = strtol(q, &end, 10);
                if (end == q || last < first)
                    break;
            }
            if (last >= completions)
                last = completions - 1;
            for (long i = first; i <= last; i++) {
                if (!(seen[i / 8] & (1u << (i % 8)))) {
                    seen[i / 8] |= (unsigned char)(1u << (i % 8));
                    n++;
                }
            }
            p = *end == ',' ? end + 1 : NULL;
        }
    }
    free(seen);
    return n;
}

/* Kueue's Job.ReclaimablePods: with parallelism above 1 and some pods done (succeeded; for an
 * Indexed Job, completed or failed-for-good indexes), the parallel slots the remaining work can
 * no longer fill. */
static void job_reclaimable(const json_t *obj, jobs_reclaim_t *out, size_t *n)
{
    json_t *spec = JOBS_AT(obj, "spec"), *status = JOBS_AT(obj, "status");
    int32_t par = jobs__int32(JOBS_AT(spec, "parallelism"), 1);
    int32_t comp = jobs__int32(JOBS_AT(spec, "completions"), par);
    const char *mode = json_string_value(JOBS_AT(spec, "completionMode"));
    int32_t done = jobs__int32(JOBS_AT(status, "succeeded"), 0), remaining;

    *n = 0;
    if (mode != NULL && strcmp(mode, "Indexed") == 0)
        done = indexes_count(json_string_value(JOBS_AT(status, "completedIndexes")),
                             json_string_value(JOBS_AT(status, "failedIndexes")), comp);
    if (par <= 1 || done <= 0)
        return;
    remaining = comp - done > 0 ? comp - done : 0;
    if (remaining >= par)
        return;
    snprintf(out[0].name, sizeof(out[0].name), "main");
    out[0].count = par - remaining;
    *n = 1;
}

const jobs_kind_t jobs__kind_job = {
    .framework = "batch/job",
    .group = "batch",
    .version = "v1",
    .kind = "Job",
    .resource = "jobs",
    .pod_sets = job_pod_sets,
    .suspended = job_suspended,
    .set_suspended = job_set_suspended,
    .set_count = job_set_count,
    .phase = job_phase,
    .active = job_active,
    .pods_ready = job_pods_ready,
    .podset_template = job_podset_template,
    .owned_label = job_owned_label,
    .start_time_locks_template = true,
    .reclaimable = job_reclaimable,
};
