/* informer -- list+watch one resource type into an indexed local cache and report changes. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_KUBE_INFORMER_H
#define SLUICE_KUBE_INFORMER_H

#include "kube/client.h"

typedef struct kube_informer_s kube_informer_t;

/* Change callbacks. Objects are borrowed (json_incref to keep one); `old_obj` is the cached
 * version being replaced. Each change is reported exactly once: a relist reports adds for new
 * objects, updates for changed resourceVersions and deletes for vanished ones, nothing for the
 * unchanged. Handlers may read the cache but must not close the informer. */
typedef struct kube_informer_handlers_s {
    void (*on_add)(kube_informer_t *inf, json_t *obj, void *data);
    void (*on_update)(kube_informer_t *inf, json_t *old_obj, json_t *new_obj, void *data);
    void (*on_delete)(kube_informer_t *inf, json_t *obj, void *data);
    void (*on_synced)(kube_informer_t *inf, void *data); /* after the first complete LIST */
    /* A LIST or WATCH failed (`verb` "list" or "watch"; `res` borrowed, see kube/problem.h), or,
     * with `res` NULL, the first LIST or WATCH event that succeeded after failures. Routine ends
     * (410 Gone, a watch closed by the server) are not failures. May be NULL. */
    void (*on_error)(kube_informer_t *inf, const kube_result_t *res, const char *verb,
                     void *data);
} kube_informer_handlers_t;

/* The index value of `obj` (borrowed from obj, e.g. a label value), or NULL to leave it out. */
typedef const char *(*kube_index_fn)(json_t *obj, void *data);

typedef struct kube_informer_opts_s {
    const char *ns; /* NULL: all namespaces (copied) */
    const char *label_selector;
    const char *field_selector;
    uint32_t page_size;       /* LIST limit; 0: 500 */
    uint64_t backoff_base_ms; /* first reconnect delay; 0: 800 */
    uint64_t backoff_max_ms;  /* 0: 30000 */
    uint64_t seed;            /* jitter PRNG seed; 0: from the clock and the address */
} kube_informer_opts_t;

/* Create an informer for `res` (copied) on client `c` (borrowed: close the informer before the
 * client); nothing runs until kube_informer_start().
 * `handlers` is copied; `data` is passed to every handler. NULL only on out-of-memory. */
kube_informer_t *kube_informer_new(kube_client_t *c, const kube_resource_t *res,
                                   const kube_informer_opts_t *opts,
                                   const kube_informer_handlers_t *handlers, void *data);

/* Add a secondary index named `name` (copied) before start. ERR_EXISTS for a duplicate name. */
err_t kube_informer_add_index(kube_informer_t *inf, const char *name, kube_index_fn fn,
                              void *fn_data, err_msg_t *msg);

/* LIST then WATCH, forever, until closed. ERR_INVALID when already started or closing. */
err_t kube_informer_start(kube_informer_t *inf, err_msg_t *msg);

/* Stop all requests and timers and free the informer once its loop handles are closed; then
 * `on_closed` (may be NULL) fires. No handler fires after this call. NULL-safe. */
void kube_informer_close(kube_informer_t *inf, void (*on_closed)(void *data), void *data);

/* The cached object "ns/name" (cluster-scoped: `ns` NULL), borrowed, or NULL. */
json_t *kube_informer_get(const kube_informer_t *inf, const char *ns, const char *name);

/* The whole cache: a JSON object mapping "ns/name" keys to objects (borrowed; iterate with
 * json_object_foreach; valid until the next loop callback). */
json_t *kube_informer_items(const kube_informer_t *inf);

/* Objects whose index `name` has `value`: a JSON object key -> object (borrowed, as above), or
 * NULL when none. */
json_t *kube_informer_index(const kube_informer_t *inf, const char *name, const char *value);

/* True once the first LIST has been applied. */
bool kube_informer_synced(const kube_informer_t *inf);

/* The last resourceVersion seen (list, event or bookmark), "" before the first LIST. */
const char *kube_informer_resource_version(const kube_informer_t *inf);

/* Counters for metrics and tests. */
typedef struct kube_informer_stats_s {
    uint64_t lists;    /* complete LISTs applied */
    uint64_t watches;  /* WATCH requests started */
    uint64_t gone;     /* 410 Gone answers that forced a relist */
    uint64_t backoffs; /* reconnects that waited for backoff */
    uint64_t events;   /* watch events applied (bookmarks included) */
} kube_informer_stats_t;

/* Current counters. */
kube_informer_stats_t kube_informer_stats(const kube_informer_t *inf);

/* The cache key of `obj`: "namespace/name", or "name" without a namespace. Writes at most `n`
 * bytes; ERR_INVALID when metadata.name is missing, ERR_OVERFLOW when it does not fit. */
err_t kube_object_key(json_t *obj, char *buf, size_t n);

/* metadata.resourceVersion of `obj` (borrowed), or "" when absent. */
const char *kube_object_rv(json_t *obj);

#endif
