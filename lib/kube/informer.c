/* informer -- list+watch one resource type into a local cache of decoded objects and report
 * changes. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/informer.h"

#include "kube/backoff.h"
#include "kube/informer_int.h"
#include "util/hmap.h"
#include "util/str.h"
#include "util/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The informer is client-go's reflector + store, as a state machine on the loop:
 *
 *          start                          ERROR event / HTTP 410 Gone
 *            |                      +--------------------------------------+
 *            v                      v                                      |
 *   +---> LIST (pages, limit/continue) --ok--> update cache --> WATCH(rv, bookmarks)
 *   |        | error                                               |   |  stream ended normally
 *   |        v                                                     |   +--> WATCH(rv) again
 *   +---- backoff (exponential, jittered) <--- drop / HTTP error --+
 *                       \--> WATCH(rv) when the watch dropped (no relist needed)
 *
 * resourceVersion: the LIST's metadata.resourceVersion, then each event's object version and
 * each BOOKMARK's, is where the next WATCH resumes. When the server no longer has that version
 * in its window (compaction, watch cache), it answers 410 Gone and only a fresh LIST can restore
 * a consistent view; the relist turns the difference into add/update/delete calls (page by
 * page, deletions after the last page) so that handlers see every change exactly once and
 * nothing twice. The cache keeps what the owner's codec decodes, never the server's JSON
 * (kube_informer_new() keeps the JSON objects themselves).
 *
 * A watch that ends normally (timeoutSeconds elapsed) is restarted at once; one that ends within
 * a second without any event is treated as a drop, so a misbehaving server cannot make us spin.
 */

#define DEFAULT_PAGE    500u
#define DEFAULT_BASE_MS 800u
#define DEFAULT_MAX_MS  30000u
#define JITTER_PCT      100u
#define WATCH_MIN_S     300u /* per-watch timeoutSeconds in [5, 10) minutes, as client-go */
#define KEY_MAX         512u

typedef enum { NEXT_LIST, NEXT_WATCH } next_t;

struct kube_informer_s {
    kube_client_t *c; /* borrowed; must outlive the informer */
    kube_resource_t res;
    char *group, *version, *resource; /* owned copies behind `res` */
    char *ns, *label_selector, *field_selector;
    uint32_t page_size;
    kube__cache_t cache;
    char *rv; /* owned: where the next WATCH starts; "" before the first LIST */
    kube_informer_handlers_t json_handlers; /* kube_informer_new(): the owner's callbacks */
    void *json_data;
    char *continue_token;
    kube_req_t *req;  /* the LIST page or WATCH in flight */
    uv_timer_t timer; /* backoff */
    bool timer_ready;
    kube_backoff_t backoff;
    next_t next;
    bool started, synced, closing;
    bool gone;                      /* the current watch reported 410 */
    bool watch_error;               /* the current watch reported another ERROR event */
    bool list_failing;              /* the last LIST failed (on_error told) */
    bool watch_failing;             /* the last WATCH failed (on_error told) */
    bool timer_closed, waiting_req; /* close in progress: free when both are done */
    bool restart;                   /* test hook: restart the watch when the cancel lands */
    uint64_t watch_started;
    uint64_t watch_events;
    kube_informer_stats_t stats;
    void (*on_closed)(void *data);
    void *closed_data;
};

/* ---- objects -----------------------------------------------------------------------------------
 */

err_t kube_object_key(json_t *obj, char *buf, size_t n)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    int w;

    if (name == NULL || name[0] == '\0')
        return ERR_INVALID;
    if (ns != NULL && ns[0] != '\0')
        w = snprintf(buf, n, "%s/%s", ns, name);
    else
        w = snprintf(buf, n, "%s", name);
    return w < 0 || (size_t)w >= n ? ERR_OVERFLOW : ERR_OK;
}

const char *kube_object_rv(json_t *obj)
{
    const char *rv =
        json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));

    return rv ? rv : "";
}

/* ---- cache (pure)
 * --------------------------------------------------------------------------------- */

err_t kube__cache_init(kube__cache_t *cache, const kube_codec_t *codec,
                       const kube_informer_typed_handlers_t *handlers, kube_informer_t *owner,
                       void *data)
{
    memset(cache, 0, sizeof(*cache));
    util_hmap_init_borrowed(&cache->items, 0);
    cache->codec = *codec;
    if (handlers != NULL)
        cache->handlers = *handlers;
    cache->owner = owner;
    cache->data = data;
    return ERR_OK;
}

static void entry_free(kube__cache_t *cache, kube__entry_t *e)
{
    if (e == NULL)
        return;
    if (e->value != NULL)
        cache->codec.free(e->value, cache->codec.data);
    free(e->rv_text);
    free(e);
}

/* `rv` as etcd writes it -- a decimal number without leading zeros that fits 64 bits -- into
 * *out; false for anything else (kept as text). */
static bool rv_number(const char *rv, uint64_t *out)
{
    uint64_t v = 0;
    size_t i;

    if (rv[0] == '\0' || (rv[0] == '0' && rv[1] != '\0'))
        return false;
    for (i = 0; rv[i] != '\0'; i++) {
        if (rv[i] < '0' || rv[i] > '9' || v > (UINT64_MAX - (uint64_t)(rv[i] - '0')) / 10)
            return false;
        v = v * 10 + (uint64_t)(rv[i] - '0');
    }
    *out = v;
    return true;
}

bool kube__entry_rv_is(const kube__entry_t *e, const char *rv)
{
    uint64_t v;

    if (e->rv_text != NULL)
        return strcmp(e->rv_text, rv) == 0;
    return rv_number(rv, &v) && v == e->rv;
}

/* Set entry `e`'s resourceVersion to `rv`: ERR_NOMEM leaves it unchanged. */
static err_t rv_set(kube__entry_t *e, const char *rv)
{
    uint64_t v;
    char *text = NULL;

    if (!rv_number(rv, &v) && (text = strdup(rv)) == NULL)
        return ERR_NOMEM;
    free(e->rv_text);
    e->rv_text = text;
    e->rv = text == NULL ? v : 0;
    return ERR_OK;
}

void kube__cache_fini(kube__cache_t *cache)
{
    size_t pos = 0;
    void *e;

    while (util_hmap_next(&cache->items, &pos, NULL, &e))
        entry_free(cache, e);
    util_hmap_fini(&cache->items);
}

/* Insert or replace `obj` at `key`, firing on_add/on_update unless the version is unchanged. */
static err_t cache_upsert(kube__cache_t *cache, const char *key, json_t *obj, err_msg_t *msg)
{
    kube__entry_t *e = util_hmap_get(&cache->items, key);
    const char *rv = kube_object_rv(obj);
    void *value, *old;
    size_t klen;

    if (e != NULL) {
        e->gen = cache->gen;
        if (kube__entry_rv_is(e, rv))
            return ERR_OK; /* a relist or a replayed event: nothing changed, nothing decoded */
        value = cache->codec.decode(obj, cache->codec.data);
        if (value == NULL || rv_set(e, rv) != ERR_OK) {
            if (value != NULL)
                cache->codec.free(value, cache->codec.data);
            return err_set(msg, ERR_NOMEM, "cache %s: out of memory", key);
        }
        old = e->value;
        e->value = value;
        if (cache->handlers.on_update)
            cache->handlers.on_update(cache->owner, key, old, value, obj, cache->data);
        cache->codec.free(old, cache->codec.data);
        return ERR_OK;
    }
    klen = strlen(key);
    e = calloc(1, sizeof(*e) + klen + 1);
    if (e == NULL)
        return err_set(msg, ERR_NOMEM, "cache %s: out of memory", key);
    memcpy(e->key, key, klen + 1);
    e->gen = cache->gen;
    if (rv_set(e, rv) != ERR_OK ||
        (e->value = cache->codec.decode(obj, cache->codec.data)) == NULL ||
        util_hmap_put(&cache->items, e->key, e, NULL) != ERR_OK) {
        entry_free(cache, e);
        return err_set(msg, ERR_NOMEM, "cache %s: out of memory", key);
    }
    if (cache->handlers.on_add)
        cache->handlers.on_add(cache->owner, e->key, e->value, obj, cache->data);
    return ERR_OK;
}

/* Drop `key`, reporting its value and `final` (the deleted object's last state, or NULL). */
static void cache_remove(kube__cache_t *cache, const char *key, json_t *final)
{
    char copy[KEY_MAX];
    kube__entry_t *e;

    /* `key` may be the entry's own, which entry_free() frees. */
    snprintf(copy, sizeof(copy), "%s", key);
    e = util_hmap_del(&cache->items, copy);
    if (e == NULL)
        return;
    if (cache->handlers.on_delete)
        cache->handlers.on_delete(cache->owner, copy, e->value, final, cache->data);
    entry_free(cache, e);
}

err_t kube__cache_apply(kube__cache_t *cache, kube_event_type_t type, json_t *obj, err_msg_t *msg)
{
    char key[KEY_MAX];

    if (type != KUBE_EVENT_ADDED && type != KUBE_EVENT_MODIFIED && type != KUBE_EVENT_DELETED)
        return ERR_OK;
    if (kube_object_key(obj, key, sizeof(key)) != ERR_OK)
        return err_set(msg, ERR_INVALID, "watch event: object has no usable metadata.name");
    if (type == KUBE_EVENT_DELETED) {
        cache_remove(cache, key, obj);
        return ERR_OK;
    }
    return cache_upsert(cache, key, obj, msg);
}

void kube__cache_list_begin(kube__cache_t *cache)
{
    cache->gen++;
}

err_t kube__cache_list_page(kube__cache_t *cache, json_t *items, err_msg_t *msg)
{
    char key[KEY_MAX];
    json_t *obj;
    size_t i;
    err_t rc = ERR_OK;

    json_array_foreach(items, i, obj)
    {
        err_t r;
        if (kube_object_key(obj, key, sizeof(key)) != ERR_OK)
            continue;
        r = cache_upsert(cache, key, obj, msg);
        if (r != ERR_OK)
            rc = r;
    }
    return rc;
}

void kube__cache_list_end(kube__cache_t *cache)
{
    size_t pos = 0;
    const char *key;
    void *e;

    /* Deleting the current entry while iterating is allowed (util/hmap.h). */
    while (util_hmap_next(&cache->items, &pos, &key, &e)) {
        if (((kube__entry_t *)e)->gen != cache->gen)
            cache_remove(cache, key, NULL);
    }
}

/* ---- JSON informers: the cache keeps the server's objects ------------------------------------ */

static void *json_keep(json_t *obj, void *data)
{
    (void)data;
    return json_incref(obj);
}

static void json_drop(void *value, void *data)
{
    (void)data;
    json_decref(value);
}

static const kube_codec_t json_codec = {json_keep, json_drop, NULL};

/* ---- informer
 * ---------------------------------------------------------------------------------------- */

static void list_start(kube_informer_t *inf);
static void watch_start(kube_informer_t *inf);

static void informer_free(kube_informer_t *inf)
{
    kube__cache_fini(&inf->cache);
    free(inf->group);
    free(inf->version);
    free(inf->resource);
    free(inf->ns);
    free(inf->label_selector);
    free(inf->field_selector);
    free(inf->rv);
    free(inf->continue_token);
    free(inf);
}

kube_informer_t *kube_informer_new_typed(kube_client_t *c, const kube_resource_t *res,
                                         const kube_informer_opts_t *opts,
                                         const kube_codec_t *codec,
                                         const kube_informer_typed_handlers_t *handlers, void *data)
{
    kube_informer_opts_t o;
    kube_informer_t *inf;
    bool failed = false;
    uint64_t seed;

    memset(&o, 0, sizeof(o));
    if (opts != NULL)
        o = *opts;
    inf = calloc(1, sizeof(*inf));
    if (inf == NULL)
        return NULL;
    inf->c = c;
    failed = util_strdup(res->group ? res->group : "", &inf->group) != ERR_OK ||
             util_strdup(res->version, &inf->version) != ERR_OK ||
             util_strdup(res->resource, &inf->resource) != ERR_OK ||
             util_strdup(o.ns, &inf->ns) != ERR_OK ||
             util_strdup(o.label_selector, &inf->label_selector) != ERR_OK ||
             util_strdup(o.field_selector, &inf->field_selector) != ERR_OK ||
             util_strdup("", &inf->rv) != ERR_OK;
    if (failed || kube__cache_init(&inf->cache, codec, handlers, inf, data) != ERR_OK) {
        informer_free(inf);
        return NULL;
    }
    inf->res = (kube_resource_t){inf->group, inf->version, inf->resource, res->namespaced};
    inf->page_size = o.page_size ? o.page_size : DEFAULT_PAGE;
    seed = o.seed ? o.seed : uv_hrtime() ^ (uint64_t)(uintptr_t)inf;
    kube_backoff_init(&inf->backoff, o.backoff_base_ms ? o.backoff_base_ms : DEFAULT_BASE_MS,
                      o.backoff_max_ms ? o.backoff_max_ms : DEFAULT_MAX_MS, JITTER_PCT, seed);
    return inf;
}

/* A JSON informer is a typed one whose values are the objects; these pass them on. */
static void json_on_add(kube_informer_t *inf, const char *key, void *value, json_t *raw, void *data)
{
    (void)key, (void)raw, (void)data;
    if (inf->json_handlers.on_add)
        inf->json_handlers.on_add(inf, value, inf->json_data);
}

static void json_on_update(kube_informer_t *inf, const char *key, void *old, void *value,
                           json_t *raw, void *data)
{
    (void)key, (void)raw, (void)data;
    if (inf->json_handlers.on_update)
        inf->json_handlers.on_update(inf, old, value, inf->json_data);
}

static void json_on_delete(kube_informer_t *inf, const char *key, void *old, json_t *raw,
                           void *data)
{
    (void)key, (void)data;
    if (inf->json_handlers.on_delete)
        inf->json_handlers.on_delete(inf, raw != NULL ? raw : old, inf->json_data);
}

static void json_on_synced(kube_informer_t *inf, void *data)
{
    (void)data;
    if (inf->json_handlers.on_synced)
        inf->json_handlers.on_synced(inf, inf->json_data);
}

static void json_on_error(kube_informer_t *inf, const kube_result_t *res, const char *verb,
                          void *data)
{
    (void)data;
    if (inf->json_handlers.on_error)
        inf->json_handlers.on_error(inf, res, verb, inf->json_data);
}

kube_informer_t *kube_informer_new(kube_client_t *c, const kube_resource_t *res,
                                   const kube_informer_opts_t *opts,
                                   const kube_informer_handlers_t *handlers, void *data)
{
    static const kube_informer_typed_handlers_t adapters = {
        json_on_add, json_on_update, json_on_delete, json_on_synced, json_on_error};
    kube_informer_t *inf = kube_informer_new_typed(c, res, opts, &json_codec, &adapters, NULL);

    if (inf != NULL) {
        if (handlers != NULL)
            inf->json_handlers = *handlers;
        inf->json_data = data;
    }
    return inf;
}

void *kube_informer_value(const kube_informer_t *inf, const char *key)
{
    kube__entry_t *e = util_hmap_get(&inf->cache.items, key);

    return e != NULL ? e->value : NULL;
}

void *kube_informer_get(const kube_informer_t *inf, const char *ns, const char *name)
{
    char key[KEY_MAX];
    int w;

    if (ns != NULL && ns[0] != '\0')
        w = snprintf(key, sizeof(key), "%s/%s", ns, name);
    else
        w = snprintf(key, sizeof(key), "%s", name);
    if (w < 0 || (size_t)w >= sizeof(key))
        return NULL;
    return kube_informer_value(inf, key);
}

size_t kube_informer_len(const kube_informer_t *inf)
{
    return util_hmap_len(&inf->cache.items);
}

bool kube_informer_next(const kube_informer_t *inf, size_t *pos, const char **key, void **value)
{
    void *e;

    if (!util_hmap_next(&inf->cache.items, pos, key, &e))
        return false;
    if (value != NULL)
        *value = ((kube__entry_t *)e)->value;
    return true;
}

bool kube_informer_synced(const kube_informer_t *inf)
{
    return inf->synced;
}

const char *kube_informer_resource_version(const kube_informer_t *inf)
{
    return inf->rv;
}

kube_informer_stats_t kube_informer_stats(const kube_informer_t *inf)
{
    return inf->stats;
}

static void set_rv(kube_informer_t *inf, const char *rv)
{
    char *d;

    if (rv == NULL || rv[0] == '\0' || strcmp(rv, inf->rv) == 0)
        return;
    d = strdup(rv);
    if (d == NULL) {
        kube_client_log(inf->c, "informer %s: out of memory keeping resourceVersion",
                        inf->resource);
        return; /* keep the older version: a later watch replays a few events, deduplicated */
    }
    free(inf->rv);
    inf->rv = d;
}

/* Tell the owner about a failure (`res` set) or the first success after failures. */
static void report(kube_informer_t *inf, const kube_result_t *res, const char *verb)
{
    bool *failing = verb[0] == 'l' ? &inf->list_failing : &inf->watch_failing;

    if (res == NULL && !*failing)
        return;
    *failing = res != NULL;
    if (inf->cache.handlers.on_error != NULL)
        inf->cache.handlers.on_error(inf, res, verb, inf->cache.data);
}

static void on_backoff(uv_timer_t *t)
{
    kube_informer_t *inf = container_of(t, kube_informer_t, timer);

    if (inf->next == NEXT_LIST)
        list_start(inf);
    else
        watch_start(inf);
}

static void schedule(kube_informer_t *inf, next_t next)
{
    uint64_t delay = kube_backoff_next(&inf->backoff);

    inf->next = next;
    inf->stats.backoffs++;
    kube_client_log(inf->c, "informer %s: %s again in %llu ms", inf->resource,
                    next == NEXT_LIST ? "list" : "watch", (unsigned long long)delay);
    uv_timer_start(&inf->timer, on_backoff, delay, 0);
}

/* Free a closing informer once its timer is closed and no request callback is outstanding. */
static void maybe_free(kube_informer_t *inf)
{
    void (*cb)(void *) = inf->on_closed;
    void *data = inf->closed_data;

    if ((inf->timer_ready && !inf->timer_closed) || inf->waiting_req)
        return;
    informer_free(inf);
    if (cb != NULL)
        cb(data);
}

static void on_list(const kube_result_t *res, void *data)
{
    kube_informer_t *inf = data;
    json_t *items, *meta;
    const char *cont;
    err_msg_t msg;

    inf->req = NULL;
    if (inf->closing) {
        inf->waiting_req = false;
        maybe_free(inf);
        return;
    }
    if (res->canceled) {
        /* The client is closing under us: nothing to retry with. */
        kube_client_log(inf->c, "informer %s: stopped (client closed)", inf->resource);
        return;
    }
    if (res->err != ERR_OK) {
        if (res->err == ERR_GONE && inf->continue_token != NULL) {
            /* The continue token outlived the server's window: start the LIST over. */
            kube_client_log(inf->c, "informer %s: continue token expired, listing again",
                            inf->resource);
            inf->stats.gone++;
            free(inf->continue_token);
            inf->continue_token = NULL; /* from the first page, not the expired token again */
            list_start(inf);
            return;
        }
        kube_client_log(inf->c, "informer %s: list: %s", inf->resource, res->msg.text);
        report(inf, res, "list");
        schedule(inf, NEXT_LIST);
        return;
    }
    report(inf, NULL, "list");
    items = json_object_get(res->body, "items");
    meta = json_object_get(res->body, "metadata");
    if (inf->continue_token == NULL)
        kube__cache_list_begin(&inf->cache);
    /* Each page goes into the cache as it comes (adds and updates); only the deletions wait for
     * the last page. So only one page of the server's JSON is ever alive. */
    if (json_is_array(items) && kube__cache_list_page(&inf->cache, items, &msg) != ERR_OK) {
        kube_client_log(inf->c, "informer %s: list: %s", inf->resource, msg.text);
        free(inf->continue_token);
        inf->continue_token = NULL;
        schedule(inf, NEXT_LIST);
        return;
    }
    if (inf->closing)
        return; /* a handler may not close us, but be safe */
    cont = json_string_value(json_object_get(meta, "continue"));
    free(inf->continue_token);
    inf->continue_token = NULL;
    if (cont != NULL && cont[0] != '\0') {
        inf->continue_token = strdup(cont);
        if (inf->continue_token == NULL) {
            schedule(inf, NEXT_LIST);
            return;
        }
        list_start(inf);
        return;
    }
    /* The complete list: what no page had is gone; watch from the list's version. */
    kube__cache_list_end(&inf->cache);
    set_rv(inf, json_string_value(json_object_get(meta, "resourceVersion")));
    inf->stats.lists++;
    if (inf->closing)
        return;
    if (!inf->synced) {
        inf->synced = true;
        if (inf->cache.handlers.on_synced)
            inf->cache.handlers.on_synced(inf, inf->cache.data);
    }
    watch_start(inf);
}

/* One LIST page (the first when continue_token is NULL). */
static void list_start(kube_informer_t *inf)
{
    kube_list_opts_t lo;
    err_msg_t msg;

    memset(&lo, 0, sizeof(lo));
    lo.label_selector = inf->label_selector;
    lo.field_selector = inf->field_selector;
    lo.continue_token = inf->continue_token;
    lo.limit = inf->page_size;
    if (kube_list(inf->c, &inf->res, inf->ns, &lo, on_list, inf, &inf->req, &msg) != ERR_OK) {
        inf->req = NULL;
        kube_client_log(inf->c, "informer %s: list: %s", inf->resource, msg.text);
        free(inf->continue_token);
        inf->continue_token = NULL;
        schedule(inf, NEXT_LIST);
    }
}

static void on_event(kube_event_type_t type, json_t *obj, void *data)
{
    kube_informer_t *inf = data;
    err_msg_t msg;
    err_t rc;

    if (inf->closing || inf->gone || inf->watch_error)
        return;
    inf->watch_events++;
    inf->stats.events++;
    switch (type) {
    case KUBE_EVENT_ERROR: {
        json_int_t code = json_integer_value(json_object_get(obj, "code"));
        const char *m = json_string_value(json_object_get(obj, "message"));

        kube_client_log(inf->c, "informer %s: watch error %lld: %s", inf->resource, (long long)code,
                        m ? m : "");
        if (code == 410) {
            inf->gone = true; /* relist when the stream is down */
        } else {
            kube_result_t r;
            memset(&r, 0, sizeof(r));
            r.status = (long)code;
            r.err = kube_status_err(r.status, json_string_value(json_object_get(obj, "reason")));
            r.body = obj;
            r.reason = "";
            err_set(&r.msg, r.err, "watch %s: %s", inf->resource, m ? m : "");
            report(inf, &r, "watch");
            inf->watch_error = true; /* reconnect after backoff */
        }
        kube_req_cancel(inf->req); /* the server ends the stream after an ERROR anyway */
        return;
    }
    case KUBE_EVENT_BOOKMARK:
        break;
    default:
        rc = kube__cache_apply(&inf->cache, type, obj, &msg);
        if (rc != ERR_OK)
            kube_client_log(inf->c, "informer %s: %s", inf->resource, msg.text);
        if (rc == ERR_NOMEM) {
            /* Not applied: keep the resourceVersion of the last event applied and watch again
             * from there after backoff, so this event comes again instead of being lost. */
            inf->watch_error = true;
            kube_req_cancel(inf->req);
            return;
        }
        break;
    }
    set_rv(inf, kube_object_rv(obj));
    kube_backoff_reset(&inf->backoff); /* the connection works */
    report(inf, NULL, "watch");
}

static void on_watch_done(const kube_result_t *res, void *data)
{
    kube_informer_t *inf = data;
    bool quick;

    inf->req = NULL;
    if (inf->closing) {
        inf->waiting_req = false;
        maybe_free(inf);
        return;
    }
    if (inf->restart) {
        inf->restart = false;
        inf->gone = false;
        watch_start(inf);
        return;
    }
    if (inf->gone || res->err == ERR_GONE) {
        /* Our resourceVersion is too old: only a fresh LIST gives a consistent view. */
        inf->gone = false;
        inf->stats.gone++;
        kube_client_log(inf->c, "informer %s: resourceVersion too old (410 Gone): listing again",
                        inf->resource);
        free(inf->continue_token);
        inf->continue_token = NULL;
        list_start(inf);
        return;
    }
    if (inf->watch_error) {
        inf->watch_error = false;
        schedule(inf, NEXT_WATCH);
        return;
    }
    if (res->canceled) {
        kube_client_log(inf->c, "informer %s: stopped (client closed)", inf->resource);
        return;
    }
    quick = uv_now(kube_client_loop(inf->c)) - inf->watch_started < 1000 && inf->watch_events == 0;
    if (res->err == ERR_OK && !quick) {
        report(inf, NULL, "watch"); /* a quiet watch that lasted works too */
        watch_start(inf);
        return;
    }
    if (res->err != ERR_OK) {
        kube_client_log(inf->c, "informer %s: watch: %s", inf->resource, res->msg.text);
        /* A stream cut after its 200 is a routine drop (a proxy, a restart), not a failure of
         * the watch request: only report what the server refused or could not be reached. */
        if (res->status != 200)
            report(inf, res, "watch");
    }
    schedule(inf, NEXT_WATCH);
}

static void watch_start(kube_informer_t *inf)
{
    kube_watch_opts_t wo;
    err_msg_t msg;

    memset(&wo, 0, sizeof(wo));
    wo.label_selector = inf->label_selector;
    wo.field_selector = inf->field_selector;
    wo.resource_version = inf->rv;
    wo.bookmarks = true;
    /* Spread reconnects of many informers over [5, 10) minutes. */
    wo.timeout_seconds = WATCH_MIN_S + (uint32_t)(kube_rand_next(&inf->backoff.rng) % WATCH_MIN_S);
    inf->watch_started = uv_now(kube_client_loop(inf->c));
    inf->watch_events = 0;
    inf->gone = false;
    inf->watch_error = false;
    inf->stats.watches++;
    if (kube_watch(inf->c, &inf->res, inf->ns, &wo, on_event, on_watch_done, inf, &inf->req,
                   &msg) != ERR_OK) {
        inf->req = NULL;
        kube_client_log(inf->c, "informer %s: watch: %s", inf->resource, msg.text);
        schedule(inf, NEXT_WATCH);
    }
}

err_t kube_informer_start(kube_informer_t *inf, err_msg_t *msg)
{
    int rc;

    if (inf->started || inf->closing)
        return err_set(msg, ERR_INVALID, "informer %s: already started", inf->resource);
    rc = uv_timer_init(kube_client_loop(inf->c), &inf->timer);
    if (rc != 0)
        return err_set(msg, ERR_IO, "informer %s: uv_timer_init: %s", inf->resource,
                       uv_strerror(rc));
    inf->timer_ready = true;
    inf->started = true;
    list_start(inf);
    return ERR_OK;
}

void kube__informer_restart_watch(kube_informer_t *inf, const char *rv)
{
    char *d = strdup(rv);

    if (d != NULL) {
        free(inf->rv);
        inf->rv = d;
    }
    if (inf->req != NULL && inf->synced) {
        inf->restart = true;
        kube_req_cancel(inf->req);
    }
}

static void on_timer_closed(uv_handle_t *h)
{
    kube_informer_t *inf = container_of((uv_timer_t *)h, kube_informer_t, timer);

    inf->timer_closed = true;
    maybe_free(inf);
}

void kube_informer_close(kube_informer_t *inf, void (*on_closed)(void *data), void *data)
{
    if (inf == NULL || inf->closing)
        return;
    inf->closing = true;
    inf->on_closed = on_closed;
    inf->closed_data = data;
    /* The cancel normally completes at once; from inside a curl callback it is deferred, and
     * the request still points at us until its callback has run. */
    inf->waiting_req = inf->req != NULL;
    if (inf->req != NULL)
        kube_req_cancel(inf->req);
    if (!inf->timer_ready) {
        maybe_free(inf);
        return;
    }
    uv_timer_stop(&inf->timer);
    uv_close((uv_handle_t *)&inf->timer, on_timer_closed);
}
