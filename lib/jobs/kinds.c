/* kinds -- the table of the kinds sluice admits, in a stable order. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/framework.h"

#include "jobs/framework_int.h"
#include "jobs/kind_ray.h"
#include "jobs/kind_serving.h"
#include "jobs/podgroup.h"

#include <string.h>

/* Adding a kind: its entry in a kind_<name>.c, its declaration in framework_int.h, one line
 * here. Order is Kueue's order of value for a GPU platform; lookups do not depend on it. */
static const jobs_kind_t *const kinds[] = {
    &jobs__kind_job,
    &jobs__kind_jobset,
    &jobs__kind_pytorchjob,
    &jobs__kind_tfjob,
    &jobs__kind_xgboostjob,
    &jobs__kind_paddlejob,
    &jobs__kind_jaxjob,
    &jobs__kind_mpijob,
    &jobs__kind_trainjob,
    /* Ray, plain Pods, serving (kind_ray.h, podgroup.h, kind_serving.h). */
    &jobs_kind_rayjob,
    &jobs_kind_raycluster,
    &jobs_kind_pod,
    &jobs_kind_deployment,
    &jobs_kind_statefulset,
    &jobs_kind_leaderworkerset,
};

const jobs_kind_t *jobs_kind_at(size_t i)
{
    return i < sizeof(kinds) / sizeof(kinds[0]) ? kinds[i] : NULL;
}

const jobs_kind_t *jobs_kind_find(const char *api_version, const char *kind)
{
    const char *slash;
    size_t glen;

    if (api_version == NULL || kind == NULL)
        return NULL;
    /* "group/version", or "v1" for the core group. */
    slash = strchr(api_version, '/');
    glen = slash != NULL ? (size_t)(slash - api_version) : 0;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        const jobs_kind_t *k = kinds[i];
        if (strcmp(k->kind, kind) == 0 && strlen(k->group) == glen &&
            strncmp(k->group, api_version, glen) == 0)
            return k;
    }
    return NULL;
}

const jobs_kind_t *jobs_kind_named(const char *framework)
{
    for (size_t i = 0; framework != NULL && i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strcmp(kinds[i]->framework, framework) == 0)
            return kinds[i];
    return NULL;
}
