/* jobparent -- is a job the child of an object Kueue admits as a whole (JobSet, MPIJob, ...)? */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/jobparent.h"

#include "jobs/framework.h"

#include <string.h>

/* Does external framework `ext` ("Kind.version.group") name `api_version` ("group/version")
 * and `kind`? */
static bool external_is(const char *ext, const char *api_version, const char *kind)
{
    const char *d1 = strchr(ext, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
    const char *slash = strchr(api_version, '/');
    size_t klen, vlen;

    if (d1 == NULL || d2 == NULL || slash == NULL)
        return false;
    klen = (size_t)(d1 - ext);
    vlen = (size_t)(d2 - d1 - 1);
    return strlen(kind) == klen && strncmp(ext, kind, klen) == 0 && strlen(slash + 1) == vlen &&
           strncmp(d1 + 1, slash + 1, vlen) == 0 &&
           strlen(d2 + 1) == (size_t)(slash - api_version) &&
           strncmp(d2 + 1, api_version, (size_t)(slash - api_version)) == 0;
}

bool jobparent_external(const ctrl_config_t *cfg, const char *api_version, const char *kind)
{
    if (api_version == NULL || kind == NULL)
        return false;
    for (size_t i = 0; i < cfg->integrations.nexternal; i++)
        if (external_is(cfg->integrations.external[i], api_version, kind))
            return true;
    return false;
}

bool jobparent_kind(const ctrl_config_t *cfg, const char *api_version, const char *kind)
{
    const jobs_kind_t *k;

    if (api_version == NULL || kind == NULL)
        return false;
    k = jobs_kind_find(api_version, kind);
    if (k != NULL && ctrl_framework_enabled(cfg, k->framework))
        return true;
    return jobparent_external(cfg, api_version, kind);
}

bool jobparent_managed(const ctrl_config_t *cfg, const json_t *obj, const char **kind,
                       const char **name)
{
    const json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
    const json_t *ref;
    size_t i;

    json_array_foreach(refs, i, ref)
    {
        const char *av = json_string_value(json_object_get(ref, "apiVersion"));
        const char *k = json_string_value(json_object_get(ref, "kind"));
        if (!json_is_true(json_object_get(ref, "controller")) || av == NULL || k == NULL)
            continue;
        /* Only one controller reference is allowed: this one decides. */
        if (!jobparent_kind(cfg, av, k))
            return false;
        if (kind != NULL)
            *kind = k;
        if (name != NULL)
            *name = json_string_value(json_object_get(ref, "name"));
        return true;
    }
    return false;
}
