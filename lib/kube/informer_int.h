/* informer_int -- the informer's cache (pure, loop-free) and test hooks; used by informer.c and
 * its tests only. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_KUBE_INFORMER_INT_H
#define SLUICE_KUBE_INFORMER_INT_H

#include "kube/informer.h"

#define KUBE_INDEX_MAX 8

typedef struct kube__index_s {
    char *name; /* owned */
    kube_index_fn fn;
    void *fn_data;
    json_t *by_value; /* owned: value -> {key -> object} */
} kube__index_t;

/* The local cache: objects by key plus secondary indexes, and who to tell about changes. */
typedef struct kube__cache_s {
    json_t *items; /* owned: key -> object (one reference each) */
    kube__index_t indexes[KUBE_INDEX_MAX];
    size_t n_indexes;
    kube_informer_handlers_t handlers;
    kube_informer_t *owner; /* passed to handlers (may be NULL in tests) */
    void *data;
} kube__cache_t;

/* Empty cache. ERR_NOMEM on allocation failure. */
err_t kube__cache_init(kube__cache_t *cache, const kube_informer_handlers_t *handlers,
                       kube_informer_t *owner, void *data);

/* Free everything; NULL-safe on a zeroed cache. */
void kube__cache_fini(kube__cache_t *cache);

/* Add an index (ERR_EXISTS, ERR_OVERFLOW past KUBE_INDEX_MAX, ERR_NOMEM). */
err_t kube__cache_add_index(kube__cache_t *cache, const char *name, kube_index_fn fn, void *fn_data,
                            err_msg_t *msg);

/* Apply one watch event (ADDED/MODIFIED/DELETED; others are ignored) and fire the handler,
 * skipping an add or update whose resourceVersion equals the cached one and a delete of an
 * unknown object. `obj` is borrowed. ERR_INVALID for an object without a name. */
err_t kube__cache_apply(kube__cache_t *cache, kube_event_type_t type, json_t *obj, err_msg_t *msg);

/* Replace the contents with `items` (a JSON array, borrowed) from a complete LIST: adds for new
 * keys, updates for changed resourceVersions, then deletes for keys that vanished. Items without
 * a name are skipped. */
err_t kube__cache_replace(kube__cache_t *cache, json_t *items, err_msg_t *msg);

/* Test hook: set the resourceVersion to watch from and restart the watch now (as if the stream
 * had ended), e.g. with a version too old for the server to force a 410. */
void kube__informer_restart_watch(kube_informer_t *inf, const char *rv);

#endif
