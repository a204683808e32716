/* podindex -- the Pods of each pod group, by group: "ns/group" -> its members' keys. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_PODINDEX_H
#define SLUICE_CTRL_PODINDEX_H

#include "util/err.h"
#include "util/hmap.h"

#include <stddef.h>

/*
 * A pod group is every Pod of one namespace labelled kueue.x-k8s.io/pod-group-name=G; no Pod says
 * who else is in it. Reconciling a group, or asking whether a group still has a Pod, would
 * otherwise read every cached Pod: with many single Pods beside a few groups, the cost of each
 * group's reconcile grows with all Pods. The index keeps, per group key "ns/G", the keys
 * ("ns/pod") of its members as the cache has them, updated from each cache change, so a group's
 * reconcile reads its own Pods only (Kueue's PodGroupNameCacheKey field index). Pure: no loop, no
 * API; the caller feeds it the cache's changes.
 */

typedef struct podindex_s {
    util_hmap_t groups; /* "ns/group" -> podindex_group_t * (owned) */
} podindex_t;

/* An empty index. */
void podindex_init(podindex_t *x);

/* Release everything the index holds; it is empty and usable afterwards. */
void podindex_fini(podindex_t *x);

/* Pod `pod_key` ("ns/name") moved from group key `old_group` to `new_group` ("ns/group"; either
 * NULL: none -- a new Pod, a deleted one, or one not in a group). Equal keys change nothing; a
 * group left without members is dropped. ERR_NOMEM leaves the Pod out of `new_group` (it has
 * left `old_group`). */
err_t podindex_move(podindex_t *x, const char *pod_key, const char *old_group,
                    const char *new_group);

/* The members of `group` ("ns/group"): *keys gets an array of *n keys (borrowed; valid until the
 * next podindex_move() or podindex_fini()), in no particular order. *n = 0 (and *keys NULL)
 * when the group has no member. */
void podindex_members(const podindex_t *x, const char *group, const char *const **keys, size_t *n);

/* Number of groups with at least one member. */
size_t podindex_groups(const podindex_t *x);

#endif
