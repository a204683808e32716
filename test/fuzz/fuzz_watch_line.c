/* fuzz_watch_line -- libFuzzer target for the watch stream: line splitting with a bound, event
 * decoding, and applying events to an informer cache. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/client_int.h"
#include "kube/informer_int.h"
#include "kube/lines.h"

#include "fuzz_check.h"

#include <jansson.h>
#include <stdint.h>
#include <string.h>

typedef struct ctx_s {
    size_t max;
    kube__cache_t cache;
} ctx_t;

static int on_line(void *p, const char *line, size_t len, bool too_long)
{
    ctx_t *ctx = p;
    kube_event_type_t type;
    json_t *obj = NULL;
    err_msg_t msg;

    CHECK(line != NULL);
    if (too_long) {
        CHECK(len == 0);
        return 0;
    }
    CHECK(len <= ctx->max);
    CHECK(memchr(line, '\n', len) == NULL);
    CHECK(line[len] == '\0');
    if (kube__event_parse(line, len, &type, &obj, &msg) != ERR_OK) {
        CHECK(obj == NULL);
        CHECK(msg.text[0] != '\0');
        return 0;
    }
    CHECK(json_is_object(obj));
    CHECK(type >= KUBE_EVENT_ADDED && type <= KUBE_EVENT_ERROR);
    kube__cache_apply(&ctx->cache, type, obj, &msg);
    /* Whatever was applied, a cached object is an object with that key. */
    {
        const char *key;
        void *v;

        for (size_t pos = 0; util_hmap_next(&ctx->cache.items, &pos, &key, &v);) {
            const kube__entry_t *e = v;
            char k[512];

            CHECK(kube_object_key(e->value, k, sizeof(k)) == ERR_OK && strcmp(k, key) == 0);
            CHECK(key == e->key && kube__entry_rv_is(e, kube_object_rv(e->value)));
        }
    }
    json_decref(obj);
    return 0;
}

/* The cache keeps the objects themselves (a reference each), as kube_informer_new() does. */
static void *keep(json_t *obj, void *data)
{
    (void)data;
    return json_incref(obj);
}

static void drop(void *value, void *data)
{
    (void)data;
    json_decref(value);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kube_lines_t l;
    ctx_t ctx;
    size_t chunk;

    if (size < 2)
        return 0;
    /* Byte 0: the line bound; byte 1: the feed chunk size. */
    ctx.max = 1 + data[0];
    chunk = 1 + data[1];
    data += 2;
    size -= 2;
    if (kube__cache_init(&ctx.cache, &(kube_codec_t){keep, drop, NULL}, NULL, NULL, NULL) != ERR_OK)
        return 0;
    kube_lines_init(&l, ctx.max);
    for (size_t off = 0; off < size; off += chunk) {
        size_t n = size - off < chunk ? size - off : chunk;

        kube_lines_feed(&l, (const char *)data + off, n, on_line, &ctx);
        CHECK(l.len <= ctx.max);
        CHECK(l.cap <= ctx.max + 1);
    }
    kube_lines_fini(&l);
    kube__cache_fini(&ctx.cache);
    return 0;
}
