/* estimate_means -- expected runtimes for the start-time estimate: the mean observed per
 * LocalQueue and priority class, then LocalQueue, then ClusterQueue. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "obs/estimate.h"

#include <stdio.h>
#include <stdlib.h>

/*
 * Three keys per finished workload. The first is the one the issue asks for (a team's queue
 * runs short jobs at one priority and long ones at another); the other two answer for a class
 * or a queue nobody has seen finish yet. Keys are "p:<lq key>\n<class>" (a newline cannot be
 * in a name), "l:<lq key>" and "c:<cq>"; the table stops learning new keys at max_keys, so a
 * flood of queues cannot grow it without bound.
 */

#define DEFAULT_MAX_KEYS 100000

typedef struct mean_s {
    int64_t sum_ms;
    int64_t n;
} mean_t;

void estimate_means_init(estimate_means_t *m, size_t max_keys)
{
    util_hmap_init(&m->m, 0);
    m->max_keys = max_keys ? max_keys : DEFAULT_MAX_KEYS;
}

void estimate_means_fini(estimate_means_t *m)
{
    size_t pos = 0;
    void *v;

    if (m == NULL)
        return;
    while (util_hmap_next(&m->m, &pos, NULL, &v))
        free(v);
    util_hmap_fini(&m->m);
}

/* The key of level `lvl` (0 class, 1 LocalQueue, 2 ClusterQueue) into buf; false when the
 * workload has none at that level. */
static bool key_of(const sched_wl_info_t *info, int lvl, char *buf, size_t cap)
{
    int n;

    if (lvl < 2 && info->local_queue_key == NULL)
        return false;
    if (lvl == 2 && info->cluster_queue == NULL)
        return false;
    if (lvl == 0)
        n = snprintf(buf, cap, "p:%s\n%s", info->local_queue_key,
                     info->priority_class ? info->priority_class : "");
    else if (lvl == 1)
        n = snprintf(buf, cap, "l:%s", info->local_queue_key);
    else
        n = snprintf(buf, cap, "c:%s", info->cluster_queue);
    return n > 0 && (size_t)n < cap;
}

err_t estimate_means_add(estimate_means_t *m, const sched_wl_info_t *info, int64_t ran_ms)
{
    char k[1024];

    if (ran_ms < 0)
        return ERR_OK;
    for (int lvl = 0; lvl < 3; lvl++) {
        mean_t *v;
        if (!key_of(info, lvl, k, sizeof(k)))
            continue;
        v = util_hmap_get(&m->m, k);
        if (v == NULL) {
            if (util_hmap_len(&m->m) >= m->max_keys)
                continue;
            v = calloc(1, sizeof(*v));
            if (v == NULL)
                return ERR_NOMEM;
            if (util_hmap_put(&m->m, k, v, NULL) != ERR_OK) {
                free(v);
                return ERR_NOMEM;
            }
        }
        v->sum_ms += ran_ms;
        v->n++;
    }
    return ERR_OK;
}

int64_t estimate_means_runtime(void *ud, const sched_wl_info_t *info)
{
    const estimate_means_t *m = ud;
    char k[1024];

    if (info->max_exec_ms > 0)
        return info->max_exec_ms;
    for (int lvl = 0; m != NULL && lvl < 3; lvl++) {
        const mean_t *v;
        if (!key_of(info, lvl, k, sizeof(k)))
            continue;
        v = util_hmap_get(&m->m, k);
        if (v != NULL && v->n > 0)
            return v->sum_ms / v->n;
    }
    return -1;
}
