/* podindex -- the Pods of each pod group, by group: "ns/group" -> its members' keys. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/podindex.h"

#include <stdlib.h>
#include <string.h>

/* One group's members: an unordered array of owned keys. Groups are small (their total count),
 * so a removal is a linear search and a swap with the last member. */
typedef struct podindex_group_s {
    char **keys; /* owned, each owned */
    size_t n, cap;
} podindex_group_t;

static void group_free(podindex_group_t *g)
{
    if (g == NULL)
        return;
    for (size_t i = 0; i < g->n; i++)
        free(g->keys[i]);
    free(g->keys);
    free(g);
}

void podindex_init(podindex_t *x)
{
    util_hmap_init(&x->groups, 0);
}

void podindex_fini(podindex_t *x)
{
    void *g;

    for (size_t pos = 0; util_hmap_next(&x->groups, &pos, NULL, &g);)
        group_free(g);
    util_hmap_fini(&x->groups);
}

static void remove_member(podindex_t *x, const char *group, const char *pod_key)
{
    podindex_group_t *g = util_hmap_get(&x->groups, group);

    if (g == NULL)
        return;
    for (size_t i = 0; i < g->n; i++) {
        if (strcmp(g->keys[i], pod_key) != 0)
            continue;
        free(g->keys[i]);
        g->keys[i] = g->keys[--g->n];
        break;
    }
    if (g->n == 0)
        group_free(util_hmap_del(&x->groups, group));
}

static err_t add_member(podindex_t *x, const char *group, const char *pod_key)
{
    podindex_group_t *g = util_hmap_get(&x->groups, group);
    bool fresh = g == NULL;
    char *dup;

    if (fresh) {
        g = calloc(1, sizeof(*g));
        if (g == NULL)
            return ERR_NOMEM;
    }
    for (size_t i = 0; i < g->n; i++)
        if (strcmp(g->keys[i], pod_key) == 0)
            return ERR_OK; /* already a member (a replayed add) */
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 4;
        char **k = realloc(g->keys, cap * sizeof(*k));
        if (k == NULL)
            goto fail;
        g->keys = k;
        g->cap = cap;
    }
    dup = strdup(pod_key);
    if (dup == NULL)
        goto fail;
    g->keys[g->n++] = dup;
    if (fresh && util_hmap_put(&x->groups, group, g, NULL) != ERR_OK) {
        group_free(g);
        return ERR_NOMEM;
    }
    return ERR_OK;
fail:
    if (fresh)
        group_free(g);
    return ERR_NOMEM;
}

err_t podindex_move(podindex_t *x, const char *pod_key, const char *old_group,
                    const char *new_group)
{
    if (old_group != NULL && new_group != NULL && strcmp(old_group, new_group) == 0)
        return ERR_OK;
    if (old_group != NULL)
        remove_member(x, old_group, pod_key);
    return new_group != NULL ? add_member(x, new_group, pod_key) : ERR_OK;
}

void podindex_members(const podindex_t *x, const char *group, const char *const **keys, size_t *n)
{
    const podindex_group_t *g = util_hmap_get(&x->groups, group);

    *keys = g != NULL ? (const char *const *)g->keys : NULL;
    *n = g != NULL ? g->n : 0;
}

size_t podindex_groups(const podindex_t *x)
{
    return util_hmap_len(&x->groups);
}
