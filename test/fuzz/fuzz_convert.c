/* fuzz_convert -- convert_object() on any JSON: never crash, metadata never changes, and
 * v1beta1 -> v1beta2 -> v1beta1 is stable after one round; the YAML writer reads back the same. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/convert.h"
#include "model/yaml.h"
#include "model/yamlw.h"

#include "fuzz_check.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t depth(const json_t *v)
{
    const char *k;
    json_t *item;
    size_t i, d = 0;

    if (json_is_object(v))
        json_object_foreach((json_t *)v, k, item)
        {
            size_t c = depth(item);
            d = c > d ? c : d;
        }
    else if (json_is_array(v))
        json_array_foreach(v, i, item)
        {
            size_t c = depth(item);
            d = c > d ? c : d;
        }
    return d + 1;
}

static json_t *converted(const json_t *in, const char *to)
{
    json_t *out = NULL;
    err_msg_t msg = {{0}};
    err_t rc = convert_object(in, to, NULL, &out, &msg);

    if (rc != ERR_OK) {
        CHECK(out == NULL && msg.text[0] != '\0');
        CHECK(rc == ERR_INVALID || rc == ERR_UNSUPPORTED);
        return NULL;
    }
    CHECK(out != NULL && strcmp(json_string_value(json_object_get(out, "apiVersion")), to) == 0);
    CHECK(json_equal(json_object_get(in, "metadata"), json_object_get(out, "metadata")) ||
          (json_object_get(in, "metadata") == NULL && json_object_get(out, "metadata") == NULL));
    CHECK(json_equal(json_object_get(in, "kind"), json_object_get(out, "kind")));
    return out;
}

static err_t on_doc(void *ctx, size_t index, int line, json_t *doc)
{
    (void)index;
    (void)line;
    CHECK(*(json_t **)ctx == NULL);
    *(json_t **)ctx = json_incref(doc);
    return ERR_OK;
}

/* What yamlw writes reads back as the same JSON (within the loader's depth limit). */
static void yaml_round_trip(const json_t *v)
{
    const json_t *docs[1] = {v};
    json_t *back = NULL;
    char *text = NULL;
    size_t len = 0;
    err_msg_t msg;

    if (!json_is_object(v) || depth(v) > YAML_MAX_DEPTH - 2)
        return;
    CHECK(yamlw_string(docs, 1, &text, &len, &msg) == ERR_OK);
    CHECK(yaml_load_string(text, len, on_doc, &back, &msg) == ERR_OK);
    CHECK(back != NULL && json_equal(back, v));
    json_decref(back);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *in = json_loadb((const char *)data, size, JSON_ALLOW_NUL, NULL);
    json_t *a, *r1, *r2, *r3;
    const char *api;

    if (in == NULL)
        return 0;
    api = json_string_value(json_object_get(in, "apiVersion"));
    a = converted(in, CONVERT_V1BETA2);
    r1 = converted(in, CONVERT_V1BETA1);
    if (a != NULL && api != NULL && strcmp(api, CONVERT_V1BETA1) == 0) {
        /* One round drops what v1beta2 cannot hold; after that nothing changes. */
        json_decref(r1);
        r1 = converted(a, CONVERT_V1BETA1);
        CHECK(r1 != NULL);
        r2 = converted(r1, CONVERT_V1BETA2);
        CHECK(r2 != NULL && json_equal(r2, a));
        r3 = converted(r2, CONVERT_V1BETA1);
        CHECK(r3 != NULL && json_equal(r3, r1));
        json_decref(r2);
        json_decref(r3);
    }
    if (a != NULL)
        yaml_round_trip(a);
    yaml_round_trip(in);
    json_decref(a);
    json_decref(r1);
    json_decref(in);
    return 0;
}
