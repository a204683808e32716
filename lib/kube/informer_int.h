/* informer_int -- the informer's cache (pure, loop-free); used by informer.c and its tests. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_KUBE_INFORMER_INT_H
#define SLUICE_KUBE_INFORMER_INT_H

#include "kube/informer.h"
#include "util/hmap.h"

/* One cached object, its key and resourceVersion in one allocation: the map borrows `key`. A
 * resourceVersion in etcd's form (a decimal revision) is kept as its number, any other as text. */
typedef struct kube__entry_s {
    void *value;   /* owned through the codec */
    uint64_t gen;  /* the LIST that saw it last */
    uint64_t rv;   /* the resourceVersion when rv_text is NULL */
    char *rv_text; /* owned: a resourceVersion that is not a canonical decimal number, or NULL */
    char key[];    /* "namespace/name" or "name" */
} kube__entry_t;

/* Does entry `e` hold resourceVersion `rv` (compared as the server wrote it)? */
bool kube__entry_rv_is(const kube__entry_t *e, const char *rv);

/* The local cache: decoded objects by key, and who to tell about changes. */
typedef struct kube__cache_s {
    util_hmap_t items; /* key (borrowed from the entry) -> kube__entry_t * (owned) */
    kube_codec_t codec;
    kube_informer_typed_handlers_t handlers;
    kube_informer_t *owner; /* passed to handlers (may be NULL in tests) */
    void *data;
    uint64_t gen; /* of the LIST in progress */
} kube__cache_t;

/* Empty cache keeping what `codec` decodes (copied). ERR_NOMEM on allocation failure. */
err_t kube__cache_init(kube__cache_t *cache, const kube_codec_t *codec,
                       const kube_informer_typed_handlers_t *handlers, kube_informer_t *owner,
                       void *data);

/* Free everything. */
void kube__cache_fini(kube__cache_t *cache);

/* Apply one watch event (ADDED/MODIFIED/DELETED; others are ignored) and fire the handler,
 * skipping an add or update whose resourceVersion equals the cached one and a delete of an
 * unknown object. `obj` is borrowed. ERR_INVALID for an object without a name. */
err_t kube__cache_apply(kube__cache_t *cache, kube_event_type_t type, json_t *obj, err_msg_t *msg);

/*
 * A complete LIST, page by page: begin, then each page's items (a JSON array, borrowed) are
 * applied as adds and updates at once (unchanged versions skipped, items without a name too),
 * then end() deletes every cached object no page had. Only one page of JSON is alive at a time.
 */
void kube__cache_list_begin(kube__cache_t *cache);
err_t kube__cache_list_page(kube__cache_t *cache, json_t *items, err_msg_t *msg);
void kube__cache_list_end(kube__cache_t *cache);

/* Test hook: set the resourceVersion to watch from and restart the watch now (as if the stream
 * had ended), e.g. with a version too old for the server to force a 410. */
void kube__informer_restart_watch(kube_informer_t *inf, const char *rv);

#endif
