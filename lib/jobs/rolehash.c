/* rolehash -- a Pod's role in its group: Kueue's hash of the admission-relevant part of its spec.
 */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/podgroup.h"

#include "jobs/framework_int.h"
#include "jobs/objpath.h"
#include "model/quantity.h"

#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Kueue names the pod sets of a pod group after a hash of each Pod's "shape": a Go map
 *
 *   {"spec": {"affinity", "containers", "initContainers", "nodeSelector", "overhead", "priority",
 *             "resourceClaims", ["resources",] "runtimeClassName", "tolerations",
 *             "topologySpreadConstraints"}}
 *
 * where each container is {"ports", "resources": {"requests"}} and "resources" (pod-level
 * requests) is present only when the Pod sets spec.resources. It is marshalled with Go's
 * encoding/json and hashed with sha256; the role is the first 8 hex digits. To name pod sets as
 * Kueue does, the bytes must be Go's:
 *
 *  - map keys sorted bytewise (the shape maps, nodeSelector, and every ResourceList);
 *  - struct fields in their Go declaration order, zero fields with omitempty left out: the API
 *    server writes objects exactly so, and a Pod sluice reads comes from it (informer, webhook
 *    request), so a struct-valued field (affinity, tolerations, ports, ...) is written in the
 *    order it was received. A hand-written manifest with its fields in another order hashes
 *    differently from Kueue, but consistently within sluice;
 *  - an absent field is null (a nil pointer, slice or map), an empty list or map stays empty;
 *  - quantities in canonical form ("1000m" is "1");
 *  - strings escaped as Go does: <, >, & as \u003c \u003e \u0026, U+2028/9 escaped, control
 *    characters as \b \f \n \r \t or \u00XX.
 */

typedef struct gobuf_s {
    char *p;
    size_t len, cap;
    bool oom;
} gobuf_t;

static void put(gobuf_t *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (p == NULL) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void puts_(gobuf_t *b, const char *s)
{
    put(b, s, strlen(s));
}

/* Does Go's encoder escape byte `c` (outside the U+2028/9 case)? */
static bool go_escapes(unsigned char c)
{
    return c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&';
}

static void put_string(gobuf_t *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    put(b, "\"", 1);
    for (size_t i = 0; u[i] != '\0';) {
        size_t run = i; /* bytes written as they are, in one piece */
        while (
            u[run] != '\0' && !go_escapes(u[run]) &&
            !(u[run] == 0xe2 && u[run + 1] == 0x80 && (u[run + 2] == 0xa8 || u[run + 2] == 0xa9)))
            run++;
        if (run > i) {
            put(b, (const char *)&u[i], run - i);
            i = run;
            continue;
        }
        unsigned char c = u[i];
        char esc[7];
        if (c == 0xe2) { /* U+2028 / U+2029, which JavaScript reads as line ends */
            puts_(b, u[i + 2] == 0xa8 ? "\\u2028" : "\\u2029");
            i += 3;
            continue;
        }
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            put(b, esc, 2);
        } else if (c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f') {
            esc[0] = '\\';
            esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : c == '\b' ? 'b' : 'f';
            put(b, esc, 2);
        } else { /* other control characters, <, >, & */
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            put(b, esc, 6);
        }
        i++;
    }
    put(b, "\"", 1);
}

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void put_value(gobuf_t *b, const json_t *v);

/* A JSON object written with its keys sorted (a Go map); `quantities` writes string values as
 * canonical quantities (a ResourceList). */
static void put_map(gobuf_t *b, const json_t *o, bool quantities)
{
    if (!json_is_object(o)) {
        put_value(b, o);
        return;
    }
    size_t n = json_object_size(o), k = 0;
    const char **keys = n ? malloc(n * sizeof(*keys)) : NULL;
    if (n && keys == NULL) {
        b->oom = true;
        return;
    }
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)o, key, val) keys[k++] = key;
    if (n > 1)
        qsort(keys, n, sizeof(*keys), cmp_keys);
    put(b, "{", 1);
    for (k = 0; k < n; k++) {
        if (k)
            put(b, ",", 1);
        put_string(b, keys[k]);
        put(b, ":", 1);
        val = json_object_get(o, keys[k]);
        quantity_t q;
        const char *s = json_string_value(val);
        char buf[QUANTITY_STR_MAX];
        if (quantities && s != NULL && quantity_parse(s, strlen(s), &q, NULL) == ERR_OK)
            put_string(b, quantity_format(q, buf));
        else
            put_value(b, val);
    }
    put(b, "}", 1);
    free(keys);
}

/* Any value, objects in the order received (a Go struct as the API server wrote it). */
static void put_value(gobuf_t *b, const json_t *v)
{
    char num[64];
    size_t i;
    json_t *item;
    const char *key;

    switch (json_typeof(v)) {
    case JSON_OBJECT:
        put(b, "{", 1);
        i = 0;
        json_object_foreach((json_t *)v, key, item)
        {
            if (i++)
                put(b, ",", 1);
            put_string(b, key);
            put(b, ":", 1);
            put_value(b, item);
        }
        put(b, "}", 1);
        break;
    case JSON_ARRAY:
        put(b, "[", 1);
        json_array_foreach(v, i, item)
        {
            if (i)
                put(b, ",", 1);
            put_value(b, item);
        }
        put(b, "]", 1);
        break;
    case JSON_STRING:
        put_string(b, json_string_value(v));
        break;
    case JSON_INTEGER:
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        puts_(b, num);
        break;
    case JSON_REAL: {
        /* Pod specs hold integers; a whole real (YAML "4.0") is one. */
        double d = json_real_value(v);
        if (d == floor(d) && fabs(d) < 1e15)
            snprintf(num, sizeof(num), "%.0f", d);
        else
            snprintf(num, sizeof(num), "%.17g", d);
        puts_(b, num);
        break;
    }
    case JSON_TRUE:
        puts_(b, "true");
        break;
    case JSON_FALSE:
        puts_(b, "false");
        break;
    default:
        puts_(b, "null");
        break;
    }
}

/* A field of the shape: `"key":` then the value, or null when absent. */
static void field(gobuf_t *b, bool first, const char *key, const json_t *v, int how)
{
    if (!first)
        put(b, ",", 1);
    put_string(b, key);
    put(b, ":", 1);
    if (v == NULL)
        puts_(b, "null");
    else if (how == 0)
        put_value(b, v);
    else
        put_map(b, v, how == 2);
}

enum { AS_STRUCT = 0, AS_MAP = 1, AS_RESOURCES = 2 };

/* ContainersShape: null for no containers, else [{"ports":..,"resources":{"requests":..}}]. */
static void containers(gobuf_t *b, const char *key, const json_t *list)
{
    put(b, ",", 1);
    put_string(b, key);
    put(b, ":", 1);
    if (json_array_size(list) == 0) {
        puts_(b, "null");
        return;
    }
    put(b, "[", 1);
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c)
    {
        if (i)
            put(b, ",", 1);
        put(b, "{", 1);
        field(b, true, "ports", json_object_get(c, "ports"), AS_STRUCT);
        puts_(b, ",\"resources\":{");
        field(b, true, "requests", JOBS_AT(c, "resources", "requests"), AS_RESOURCES);
        puts_(b, "}}");
    }
    put(b, "]", 1);
}

static err_t shape_hash(const json_t *spec, char *out)
{
    gobuf_t b = {0};
    puts_(&b, "{\"spec\":{");
    field(&b, true, "affinity", json_object_get(spec, "affinity"), AS_STRUCT);
    containers(&b, "containers", json_object_get(spec, "containers"));
    containers(&b, "initContainers", json_object_get(spec, "initContainers"));
    field(&b, false, "nodeSelector", json_object_get(spec, "nodeSelector"), AS_MAP);
    field(&b, false, "overhead", json_object_get(spec, "overhead"), AS_RESOURCES);
    field(&b, false, "priority", json_object_get(spec, "priority"), AS_STRUCT);
    field(&b, false, "resourceClaims", json_object_get(spec, "resourceClaims"), AS_STRUCT);
    json_t *pod_resources = json_object_get(spec, "resources");
    if (json_is_object(pod_resources)) /* only when set: old hashes stay stable */
        field(&b, false, "resources", json_object_get(pod_resources, "requests"), AS_RESOURCES);
    field(&b, false, "runtimeClassName", json_object_get(spec, "runtimeClassName"), AS_STRUCT);
    field(&b, false, "tolerations", json_object_get(spec, "tolerations"), AS_STRUCT);
    field(&b, false, "topologySpreadConstraints",
          json_object_get(spec, "topologySpreadConstraints"), AS_STRUCT);
    puts_(&b, "}}");
    if (b.oom) {
        free(b.p);
        return ERR_NOMEM;
    }

    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    int ok = EVP_Digest(b.p, b.len, md, &mdlen, EVP_sha256(), NULL);
    free(b.p);
    if (!ok || mdlen < 4)
        return ERR_NOMEM;
    for (int i = 0; i < 4; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    return ERR_OK;
}

err_t jobs_pod_role_hash(const json_t *pod, char *out, err_msg_t *msg)
{
    const char *ann = objpath_annotation(pod, JOBS_POD_ROLE_HASH);
    if (ann != NULL) {
        if (strlen(ann) > JOBS_POD_ROLE_MAX)
            return err_set(msg, ERR_INVALID,
                           "metadata.annotations[%s]: must be no more than %d characters",
                           JOBS_POD_ROLE_HASH, JOBS_POD_ROLE_MAX);
        snprintf(out, JOBS_POD_ROLE_MAX + 1, "%s", ann);
        return ERR_OK;
    }
    if (shape_hash(JOBS_AT(pod, "spec"), out) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "failed to calculate pod role hash: out of memory");
    return ERR_OK;
}
