/* informer -- list+watch one resource type into a local cache of decoded objects and report
 * changes. */
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
    void (*on_error)(kube_informer_t *inf, const kube_result_t *res, const char *verb, void *data);
} kube_informer_handlers_t;

/*
 * Typed informers. A codec turns each object the server sends (JSON, borrowed) into the value
 * the cache keeps -- a compact struct with only the fields its owner uses -- so the cache never
 * holds the server's JSON (managedFields, pod templates, ...). Objects whose resourceVersion
 * did not change are not decoded again.
 */
typedef struct kube_codec_s {
    /* A value for the cache made from `obj`, or NULL on out-of-memory (the object is skipped
     * and the informer's LIST retried later). */
    void *(*decode)(json_t *obj, void *data);
    void (*free)(void *value, void *data); /* release a value decode() made */
    void *data;
} kube_codec_t;

/* Change callbacks of a typed informer. Values belong to the cache (`old` is freed right after
 * the call); `raw` is the object as the server sent it, borrowed for the call (NULL for a
 * delete found by a relist, which has no last state). Each change is reported exactly once, as
 * for kube_informer_handlers_t. */
typedef struct kube_informer_typed_handlers_s {
    void (*on_add)(kube_informer_t *inf, const char *key, void *value, json_t *raw, void *data);
    void (*on_update)(kube_informer_t *inf, const char *key, void *old, void *value, json_t *raw,
                      void *data);
    void (*on_delete)(kube_informer_t *inf, const char *key, void *old, json_t *raw, void *data);
    void (*on_synced)(kube_informer_t *inf, void *data);
    void (*on_error)(kube_informer_t *inf, const kube_result_t *res, const char *verb, void *data);
} kube_informer_typed_handlers_t;

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

/* A typed informer: the cache keeps what `codec` (copied) decodes; `handlers` are copied. NULL
 * only on out-of-memory. */
kube_informer_t *kube_informer_new_typed(kube_client_t *c, const kube_resource_t *res,
                                         const kube_informer_opts_t *opts,
                                         const kube_codec_t *codec,
                                         const kube_informer_typed_handlers_t *handlers,
                                         void *data);

/* LIST then WATCH, forever, until closed. ERR_INVALID when already started or closing. */
err_t kube_informer_start(kube_informer_t *inf, err_msg_t *msg);

/* Stop all requests and timers and free the informer once its loop handles are closed; then
 * `on_closed` (may be NULL) fires. No handler fires after this call. NULL-safe. */
void kube_informer_close(kube_informer_t *inf, void (*on_closed)(void *data), void *data);

/* The cached object "ns/name" (cluster-scoped: `ns` NULL), borrowed, or NULL: the JSON object
 * for kube_informer_new(), the codec's value for kube_informer_new_typed(). */
void *kube_informer_get(const kube_informer_t *inf, const char *ns, const char *name);

/* The cached object of cache key `key` ("ns/name" or "name"), borrowed, or NULL. */
void *kube_informer_value(const kube_informer_t *inf, const char *key);

/* Number of cached objects. */
size_t kube_informer_len(const kube_informer_t *inf);

/* Iterate the cache: start with *pos = 0; each call gives the next key and value (borrowed,
 * either out-parameter may be NULL) and returns true, or false at the end. The cache must not
 * change meanwhile (no loop callback in between). */
bool kube_informer_next(const kube_informer_t *inf, size_t *pos, const char **key, void **value);

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
