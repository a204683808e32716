/* jobparent -- is a Job the child of an object Kueue admits as a whole (JobSet, MPIJob, ...)? */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/jobparent.h"

#include <string.h>

typedef struct parent_kind_s {
    const char *group;
    const char *kind;
} parent_kind_t;

static const parent_kind_t parents[] = {
    {"jobset.x-k8s.io", "JobSet"},
    {"kubeflow.org", "MPIJob"},
    {"kubeflow.org", "PaddleJob"},
    {"kubeflow.org", "PyTorchJob"},
    {"kubeflow.org", "TFJob"},
    {"kubeflow.org", "XGBoostJob"},
    {"kubeflow.org", "JAXJob"},
    {"ray.io", "RayJob"},
    {"ray.io", "RayCluster"},
    {"ray.io", "RayService"},
    {"trainer.kubeflow.org", "TrainJob"},
    {"workload.codeflare.dev", "AppWrapper"},
    {"sparkoperator.k8s.io", "SparkApplication"},
    {"leaderworkerset.x-k8s.io", "LeaderWorkerSet"},
    {"batch", "Job"},
};

/* Is apiVersion `av` ("group/version") of `group`? The core group ("v1") is none of ours. */
static bool in_group(const char *av, const char *group)
{
    const char *slash = strchr(av, '/');
    size_t n = strlen(group);

    return slash != NULL && (size_t)(slash - av) == n && strncmp(av, group, n) == 0;
}

bool jobparent_kind(const char *api_version, const char *kind)
{
    if (api_version == NULL || kind == NULL)
        return false;
    for (size_t p = 0; p < sizeof(parents) / sizeof(parents[0]); p++)
        if (strcmp(parents[p].kind, kind) == 0 && in_group(api_version, parents[p].group))
            return true;
    return false;
}

bool jobparent_managed(const json_t *job, const char **kind, const char **name)
{
    const json_t *refs = json_object_get(json_object_get(job, "metadata"), "ownerReferences");
    const json_t *ref;
    size_t i;

    json_array_foreach(refs, i, ref)
    {
        const char *av = json_string_value(json_object_get(ref, "apiVersion"));
        const char *k = json_string_value(json_object_get(ref, "kind"));
        if (!json_is_true(json_object_get(ref, "controller")) || av == NULL || k == NULL)
            continue;
        /* Only one controller reference is allowed: this one decides. */
        if (!jobparent_kind(av, k))
            return false;
        if (kind != NULL)
            *kind = k;
        if (name != NULL)
            *name = json_string_value(json_object_get(ref, "name"));
        return true;
    }
    return false;
}
