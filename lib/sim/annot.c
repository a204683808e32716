/* annot -- the simulator's annotations (sim.sluice.dev/...): which exist, and typos in them. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/annot.h"

#include "sim/scenario.h"
#include "util/suggest.h"

#include <stdio.h>
#include <string.h>

/* Every annotation a scenario may carry (design/scenario-format.md): a new one is added here and
 * to scenario.h, or `sluice check` and `sluice sim` refuse it. */
static const char *const known[] = {SIM_ANN_AT, SIM_ANN_DELETE_AT, SIM_ANN_RUNTIME, NULL};

bool sim_annot_is_sim(const char *key)
{
    return strncmp(key, SIM_ANN_PREFIX, strlen(SIM_ANN_PREFIX)) == 0;
}

bool sim_annot_known(const char *key)
{
    for (size_t i = 0; known[i] != NULL; i++)
        if (strcmp(key, known[i]) == 0)
            return true;
    return false;
}

err_t sim_annot_check(const json_t *annotations, diags_t *d, size_t *nsim)
{
    const char *key;
    const json_t *v;
    size_t n = 0;

    json_object_foreach((json_t *)annotations, key, v)
    {
        const char *near;
        char path[300];

        (void)v;
        if (!sim_annot_is_sim(key))
            continue;
        n++;
        if (sim_annot_known(key))
            continue;
        near = suggest_pick(key, known);
        snprintf(path, sizeof(path), "metadata.annotations[%.250s]", key);
        if (near != NULL) {
            diags_error(d, path, "unknown simulator annotation; did you mean \"%s\"?", near);
        } else {
            char list[512];
            size_t used = 0;
            for (size_t i = 0; known[i] != NULL && used < sizeof(list); i++) {
                int w = snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "", known[i]);
                used += w > 0 ? (size_t)w : 0;
            }
            diags_error(d, path, "unknown simulator annotation (the simulator reads %s)", list);
        }
    }
    if (nsim != NULL)
        *nsim = n;
    return d->oom ? ERR_NOMEM : ERR_OK;
}
