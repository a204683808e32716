/* tasreq -- a pod set's topology request, from Kueue's pod-template annotations. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/tasreq.h"

#include "model/names.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Go's strconv.ParseBool. */
static bool parse_bool(const char *s, bool *out)
{
    static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True", NULL};
    static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False", NULL};

    for (size_t i = 0; t[i] != NULL; i++) {
        if (strcmp(s, t[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcmp(s, f[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

/* Go's strconv.ParseInt(s, 10, 32): optional sign, decimal digits, int32 range. */
static bool parse_int32(const char *s, int32_t *out)
{
    const char *p = s;
    long long v = 0;
    bool neg = false;

    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (*p == '\0')
        return false;
    for (; *p != '\0'; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (*p - '0');
        if (v > (long long)INT32_MAX + 1)
            return false;
    }
    v = neg ? -v : v;
    if (v > INT32_MAX || v < INT32_MIN)
        return false;
    *out = (int32_t)v;
    return true;
}

/* ---- the constraints annotation ------------------------------------------------------------ */

/*
 * kueue.x-k8s.io/podset-slice-required-topology-constraints holds JSON that Kueue decodes with
 * Go's encoding/json into []PodsetSliceRequiredTopologyConstraint{Topology string; Size int32}:
 * null is an empty list, each entry an object (or null: zero values), keys matched without case,
 * unknown keys ignored, a value of the wrong type fails the whole decode. Its errors are quoted
 * in Kueue's validation message, so the type errors keep Go's wording.
 */

#define LAYER_GO_STRUCT "PodsetSliceRequiredTopologyConstraint"
#define LAYERS_GO_TYPE  "[]v1beta2." LAYER_GO_STRUCT

typedef struct layers_s {
    json_t *root;                        /* owned */
    size_t n;                            /* entries in the array */
    const char *topo[TASREQ_MAX_LAYERS]; /* borrowed from root ("" when absent); the first 3 */
    int32_t size[TASREQ_MAX_LAYERS];
} layers_t;

/* How Go's UnmarshalTypeError names a JSON value that does not fit (`exact`: a number with its
 * literal, as for an integer out of range). */
static void go_kind(const json_t *v, bool exact, char *buf, size_t cap)
{
    const char *k = "null";

    switch (json_typeof(v)) {
    case JSON_OBJECT:
        k = "object";
        break;
    case JSON_ARRAY:
        k = "array";
        break;
    case JSON_STRING:
        k = "string";
        break;
    case JSON_INTEGER:
        if (exact) {
            snprintf(buf, cap, "number %lld", (long long)json_integer_value(v));
            return;
        }
        k = "number";
        break;
    case JSON_REAL:
        if (exact) {
            snprintf(buf, cap, "number %g", json_real_value(v));
            return;
        }
        k = "number";
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        k = "bool";
        break;
    case JSON_NULL:
        break;
    }
    snprintf(buf, cap, "%s", k);
}

/* Decode `s` into *l (release l->root with json_decref). ERR_OK; ERR_PARSE with Go's or
 * jansson's reason in `why`; ERR_NOMEM. */
static err_t layers_parse(const char *s, layers_t *l, char *why, size_t cap)
{
    json_error_t e;
    char kind[64];
    size_t i;
    json_t *el;

    memset(l, 0, sizeof(*l));
    l->root = json_loads(s, JSON_DECODE_ANY, &e);
    if (l->root == NULL) {
        snprintf(why, cap, "%s", e.text);
        return json_error_code(&e) == json_error_out_of_memory ? ERR_NOMEM : ERR_PARSE;
    }
    if (json_is_null(l->root))
        return ERR_OK;
    if (!json_is_array(l->root)) {
        go_kind(l->root, false, kind, sizeof(kind));
        snprintf(why, cap, "json: cannot unmarshal %s into Go value of type " LAYERS_GO_TYPE, kind);
        return ERR_PARSE;
    }
    l->n = json_array_size(l->root);
    json_array_foreach(l->root, i, el)
    {
        const char *key, *topo = "";
        json_t *v;
        int32_t size = 0;

        if (!json_is_null(el) && !json_is_object(el)) {
            go_kind(el, false, kind, sizeof(kind));
            snprintf(why, cap,
                     "json: cannot unmarshal %s into Go value of type v1beta2." LAYER_GO_STRUCT,
                     kind);
            return ERR_PARSE;
        }
        json_object_foreach(el, key, v)
        {
            if (strcasecmp(key, "topology") == 0) {
                if (json_is_string(v)) {
                    topo = json_string_value(v);
                } else if (!json_is_null(v)) {
                    go_kind(v, false, kind, sizeof(kind));
                    snprintf(why, cap,
                             "json: cannot unmarshal %s into Go struct field " LAYER_GO_STRUCT
                             ".topology of type string",
                             kind);
                    return ERR_PARSE;
                }
            } else if (strcasecmp(key, "size") == 0 && !json_is_null(v)) {
                json_int_t n = json_is_integer(v) ? json_integer_value(v) : 0;
                if (!json_is_integer(v) || n < INT32_MIN || n > INT32_MAX) {
                    go_kind(v, json_is_number(v), kind, sizeof(kind));
                    snprintf(why, cap,
                             "json: cannot unmarshal %s into Go struct field " LAYER_GO_STRUCT
                             ".size of type int32",
                             kind);
                    return ERR_PARSE;
                }
                size = (int32_t)n;
            }
        }
        if (i < TASREQ_MAX_LAYERS) {
            l->topo[i] = topo;
            l->size[i] = size;
        }
    }
    return ERR_OK;
}

/* The layers of the constraints annotation `s` into out (Kueue's builder: 1 to 3 entries). */
static err_t layers_read(const char *s, tasreq_t *out)
{
    layers_t l;
    char why[8];
    err_t rc = layers_parse(s, &l, why, sizeof(why));

    if (rc == ERR_OK && l.n >= 1 && l.n <= TASREQ_MAX_LAYERS) {
        for (size_t i = 0; i < l.n && rc == ERR_OK; i++)
            if (strlen(l.topo[i]) > TASREQ_LEVEL_MAX)
                rc = ERR_PARSE; /* no label name: validation says so */
        for (size_t i = 0; i < l.n && rc == ERR_OK; i++) {
            snprintf(out->layers[i].level, sizeof(out->layers[i].level), "%s", l.topo[i]);
            out->layers[i].size = l.size[i];
        }
        if (rc == ERR_OK)
            out->nlayers = l.n;
    }
    json_decref(l.root);
    return rc == ERR_NOMEM ? ERR_NOMEM : ERR_OK;
}

err_t tasreq_from_annotations(const kv_list_t *ann, tasreq_t *out)
{
    const char *req = kv_list_get(ann, TASREQ_REQUIRED), *pref = kv_list_get(ann, TASREQ_PREFERRED);
    const char *unc = kv_list_get(ann, TASREQ_UNCONSTRAINED);
    const char *sl = kv_list_get(ann, TASREQ_SLICE_LEVEL),
               *ss = kv_list_get(ann, TASREQ_SLICE_SIZE);
    const char *cons = kv_list_get(ann, TASREQ_CONSTRAINTS);
    int32_t size = 0;
    bool b = false;
    err_t rc = ERR_OK;

    memset(out, 0, sizeof(*out));
    if (cons != NULL) {
        /* Kueue's builder reads the constraints first and never falls back to the pair */
        rc = layers_read(cons, out);
    } else if (sl != NULL && ss != NULL && parse_int32(ss, &size) && size >= 1 &&
               strlen(sl) <= TASREQ_LEVEL_MAX) {
        snprintf(out->layers[0].level, sizeof(out->layers[0].level), "%s", sl);
        out->layers[0].size = size;
        out->nlayers = 1;
    }
    if (req != NULL) {
        out->mode = TASREQ_MODE_REQUIRED;
        out->level = req;
    } else if (pref != NULL) {
        out->mode = TASREQ_MODE_PREFERRED;
        out->level = pref;
    } else if ((unc != NULL && parse_bool(unc, &b) && b) || out->nlayers > 0) {
        out->mode = TASREQ_MODE_UNCONSTRAINED;
    }
    if (out->mode == TASREQ_MODE_NONE)
        out->nlayers = 0;
    if (out->mode == TASREQ_MODE_REQUIRED || out->mode == TASREQ_MODE_PREFERRED)
        out->group = kv_list_get(ann, TASREQ_GROUP_NAME);
    return rc;
}

/* `annotations[key]` under `path`. */
static void key_path(char *buf, size_t cap, const char *path, const char *key)
{
    snprintf(buf, cap, "%s[%s]", path, key);
}

static void label_name(diags_t *d, const char *path, const char *key, const char *value)
{
    names_msgs_t m = {.n = 0};
    char p[512];

    names_label_key(value, &m);
    key_path(p, sizeof(p), path, key);
    for (int i = 0; i < m.n; i++)
        diags_error(d, p, "%s", m.text[i]);
}

void tasreq_validate(const kv_list_t *ann, const char *path, int64_t count, diags_t *d)
{
    const char *req = kv_list_get(ann, TASREQ_REQUIRED), *pref = kv_list_get(ann, TASREQ_PREFERRED);
    const char *unc = kv_list_get(ann, TASREQ_UNCONSTRAINED);
    const char *sl = kv_list_get(ann, TASREQ_SLICE_LEVEL),
               *ss = kv_list_get(ann, TASREQ_SLICE_SIZE);
    const char *group = kv_list_get(ann, TASREQ_GROUP_NAME);
    char p[512];
    int32_t size;
    bool b;

    if ((req != NULL) + (pref != NULL) + (unc != NULL) > 1)
        diags_error(d, path,
                    "Invalid value: must not contain more than one topology annotation: "
                    "[\"" TASREQ_REQUIRED "\", \"" TASREQ_PREFERRED "\", \"" TASREQ_UNCONSTRAINED
                    "\"]");
    if (req != NULL)
        label_name(d, path, TASREQ_REQUIRED, req);
    if (pref != NULL)
        label_name(d, path, TASREQ_PREFERRED, pref);
    if (sl != NULL)
        label_name(d, path, TASREQ_SLICE_LEVEL, sl);
    key_path(p, sizeof(p), path, TASREQ_GROUP_NAME);
    if (group != NULL) {
        const char *q = group;
        while (*q >= '0' && *q <= '9')
            q++;
        if (group[0] != '\0' && *q == '\0' && strlen(group) <= 20) /* strconv.ParseUint, roughly */
            diags_error(d, p, "Invalid value: \"%s\": must not be a number", group);
        if (ss != NULL)
            diags_error(d, p,
                        "Forbidden: may not be set when '" TASREQ_SLICE_SIZE "' is specified");
        if (sl != NULL)
            diags_error(d, p,
                        "Forbidden: may not be set when '" TASREQ_SLICE_LEVEL "' is specified");
        if (req == NULL && pref == NULL)
            diags_error(d, p,
                        "Forbidden: may not be set when neither '" TASREQ_PREFERRED
                        "' nor '" TASREQ_REQUIRED "' is specified");
    }
    key_path(p, sizeof(p), path, TASREQ_UNCONSTRAINED);
    if (unc != NULL && !parse_bool(unc, &b))
        diags_error(d, p, "Invalid value: \"%s\": must be a boolean value", unc);
    key_path(p, sizeof(p), path, TASREQ_SLICE_SIZE);
    if (ss != NULL) {
        if (!parse_int32(ss, &size))
            diags_error(d, p, "Invalid value: \"%s\": must be a numeric value", ss);
        else if (size < 1)
            diags_error(d, p, "Invalid value: \"%s\": must be greater than or equal to 1", ss);
        else if (count >= 0 && size > count)
            diags_error(d, p, "Invalid value: \"%s\": must not be greater than pod set count %lld",
                        ss, (long long)count);
    }
    if (sl != NULL && ss == NULL)
        diags_error(d, p, "Required value: must be set when '" TASREQ_SLICE_LEVEL "' is specified");
    if (sl == NULL && ss != NULL)
        diags_error(d, p,
                    "Forbidden: may not be set when '" TASREQ_SLICE_LEVEL "' is not specified");
    tasreq_validate_layers(ann, path, count, false, d);
}

/* An error, or with `warn` a warning ending with `suffix`, at `at`. */
static void layer_report(diags_t *d, bool warn, const char *suffix, const char *at, const char *fmt,
                         ...) __attribute__((format(printf, 5, 6)));
static void layer_report(diags_t *d, bool warn, const char *suffix, const char *at, const char *fmt,
                         ...)
{
    char text[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (warn)
        diags_warn(d, at, "%s%s", text, suffix);
    else
        diags_error(d, at, "%s", text);
}

void tasreq_validate_layers(const kv_list_t *ann, const char *path, int64_t count, bool warn,
                            diags_t *d)
{
    const char *cons = kv_list_get(ann, TASREQ_CONSTRAINTS);
    const char *suffix = "";
    char p[512], e[640], why[256], *q = NULL;
    names_msgs_t m;
    layers_t l;
    tasreq_t tr;
    err_t rc;

    if (cons == NULL)
        return;
    if (tasreq_from_annotations(ann, &tr) != ERR_OK)
        d->oom = true;
    if (warn && tr.nlayers == 0)
        suffix = "; the annotation has no effect";
    key_path(p, sizeof(p), path, TASREQ_CONSTRAINTS);
    if (kv_list_get(ann, TASREQ_SLICE_LEVEL) != NULL)
        layer_report(d, warn, "", p,
                     "Forbidden: may not be set when '" TASREQ_SLICE_LEVEL "' is specified");
    if (kv_list_get(ann, TASREQ_SLICE_SIZE) != NULL)
        layer_report(d, warn, "", p,
                     "Forbidden: may not be set when '" TASREQ_SLICE_SIZE "' is specified");
    if (kv_list_get(ann, TASREQ_GROUP_NAME) != NULL) {
        key_path(e, sizeof(e), path, TASREQ_GROUP_NAME);
        layer_report(d, warn, "", e,
                     "Forbidden: may not be set when '" TASREQ_CONSTRAINTS "' is specified");
    }
    rc = layers_parse(cons, &l, why, sizeof(why));
    if (rc == ERR_NOMEM) {
        d->oom = true;
        goto out;
    }
    q = malloc(strlen(cons) * 4 + 3);
    if (q == NULL) {
        d->oom = true;
        goto out;
    }
    diag_quote(cons, q, strlen(cons) * 4 + 3);
    if (rc != ERR_OK) {
        layer_report(d, warn, suffix, p, "Invalid value: %s: must be a valid JSON array: %s", q,
                     why);
        goto out;
    }
    if (l.n == 0 || l.n > TASREQ_MAX_LAYERS) {
        layer_report(d, warn, suffix, p,
                     "Invalid value: %s: topology constraints must contain between 1 and 3 "
                     "entries",
                     q);
        goto out;
    }
    for (size_t i = 0; i < l.n; i++) {
        snprintf(e, sizeof(e), "%s[%zu].topology", p, i);
        names_label_key(l.topo[i], &m);
        for (int k = 0; k < m.n; k++)
            layer_report(d, warn, suffix, e, "%s", m.text[k]);
        snprintf(e, sizeof(e), "%s[%zu].size", p, i);
        if (l.size[i] < 1)
            layer_report(d, warn, "", e, "Invalid value: %d: must be greater than or equal to 1",
                         (int)l.size[i]);
    }
    for (size_t i = 1; i < l.n; i++) {
        for (size_t j = 0; j < i; j++) {
            if (strcmp(l.topo[i], l.topo[j]) != 0)
                continue;
            snprintf(e, sizeof(e), "%s[%zu].topology", p, i);
            diag_quote(l.topo[i], why, sizeof(why) - 40);
            why[strlen(why) - 1] = '\0'; /* the index goes inside the quotes */
            layer_report(d, warn, "", e, "Duplicate value: %s (also at index %zu)\"", why, j);
            break;
        }
    }
    for (size_t i = 0; i + 1 < l.n; i++) {
        if (l.size[i + 1] > 0 && l.size[i] % l.size[i + 1] != 0) {
            snprintf(e, sizeof(e), "%s[%zu].size", p, i + 1);
            layer_report(d, warn, "", e,
                         "Invalid value: %d: must evenly divide the parent layer "
                         "size %d",
                         (int)l.size[i + 1], (int)l.size[i]);
        }
    }
    if (count >= 0 && l.size[0] > count)
        layer_report(d, warn, "", p,
                     "Invalid value: %d: must not be greater than pod set count %lld",
                     (int)l.size[0], (long long)count);
out:
    free(q);
    json_decref(l.root);
}

/* Report `text` about pod set ps: at its annotation `key` (NULL: at its annotations), or at
 * "spec" naming it when it has no path; a warning with `effect` appended when `warn`. */
static void group_report(diags_t *d, const tasreq_podset_t *ps, const char *key, bool warn,
                         const char *effect, const char *text)
{
    char p[512];
    const char *at = p;

    if (ps->path == NULL)
        at = "spec";
    else if (key != NULL)
        key_path(p, sizeof(p), ps->path, key);
    else
        snprintf(p, sizeof(p), "%s", ps->path);
    if (ps->path == NULL && warn)
        diags_warn(d, at, "pod set %s: annotation %s: %s; %s", ps->name, TASREQ_GROUP_NAME, text,
                   effect);
    else if (ps->path == NULL)
        diags_error(d, at, "pod set %s: annotation %s: %s", ps->name, TASREQ_GROUP_NAME, text);
    else if (warn)
        diags_warn(d, at, "%s; %s", text, effect);
    else
        diags_error(d, at, "%s", text);
}

#define GROUP_ALONE   "the group has no effect: its pod sets are placed one by one"
#define GROUP_WORKERS "the group is placed by its workers' topology request"

void tasreq_validate_groups(const tasreq_podset_t *ps, size_t n, bool warn, diags_t *d)
{
    char text[768];

    for (size_t i = 0; i < n; i++) {
        tasreq_t ti, tj;
        size_t members = 0, other = SIZE_MAX;
        bool first = true;
        if (tasreq_from_annotations(ps[i].ann, &ti) != ERR_OK)
            d->oom = true;
        if (ti.group == NULL)
            continue;
        /* a group once, at its first pod set */
        for (size_t j = 0; j < n; j++) {
            if (tasreq_from_annotations(ps[j].ann, &tj) != ERR_OK)
                d->oom = true;
            if (tj.group == NULL || strcmp(tj.group, ti.group) != 0)
                continue;
            if (j < i)
                first = false;
            if (j != i)
                other = j;
            members++;
        }
        if (!first)
            continue;
        if (members != 2) {
            snprintf(text, sizeof(text),
                     "Invalid value: \"%s\": can only define groups of exactly 2 pod sets, got: "
                     "%zu pod set(s)",
                     ti.group, members);
            for (size_t j = 0; j < n; j++) {
                if (tasreq_from_annotations(ps[j].ann, &tj) != ERR_OK)
                    d->oom = true;
                if (tj.group != NULL && strcmp(tj.group, ti.group) == 0)
                    group_report(d, &ps[j], TASREQ_GROUP_NAME, warn, GROUP_ALONE, text);
            }
            continue;
        }
        if (tasreq_from_annotations(ps[other].ann, &tj) != ERR_OK)
            d->oom = true;
        if (ps[i].count != 1 && ps[other].count != 1) {
            snprintf(text, sizeof(text),
                     "Invalid value: \"%s\": can only define groups where at least one pod set "
                     "has only 1 replica, got: %lld replica(s) and %lld replica(s) in the group",
                     ti.group, (long long)ps[i].count, (long long)ps[other].count);
            group_report(d, &ps[i], TASREQ_GROUP_NAME, warn, GROUP_ALONE, text);
            group_report(d, &ps[other], TASREQ_GROUP_NAME, warn, GROUP_ALONE, text);
        }
        if (ti.mode != tj.mode || strcmp(ti.level, tj.level) != 0) {
            const tasreq_podset_t *pair[2] = {&ps[i], &ps[other]};
            for (int k = 0; k < 2; k++) {
                const tasreq_podset_t *o = pair[1 - k];
                char op[512];
                if (o->path != NULL)
                    snprintf(op, sizeof(op), "%s", o->path);
                else
                    snprintf(op, sizeof(op), "pod set %s", o->name);
                snprintf(text, sizeof(text),
                         "Invalid value: must specify '" TASREQ_REQUIRED "' or '" TASREQ_PREFERRED
                         "' topology consistent with '%s' in group '%s'",
                         op, ti.group);
                group_report(d, pair[k], NULL, warn, GROUP_WORKERS, text);
            }
        }
    }
}
