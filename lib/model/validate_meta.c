/* validate_meta -- helpers of the validation rules, and the rules on metadata (labels,
 * annotations, selectors, tolerations, admission gates) that several kinds share. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/validate_int.h"

#include "model/names.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers ------------------------------------------------------------------------- */

/* Format a field path into `buf` (VPATH bytes), truncating absurdly long ones. */
void validate__pathf(char *buf, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, VPATH, fmt, ap);
    va_end(ap);
}

/* Append an error unless the same path and message is already in `d` (see the file comment). */
void validate__err(diags_t *d, const char *path, const char *fmt, ...)
{
    char text[2048];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < d->len; i++) {
        if (!d->items[i].warning && strcmp(d->items[i].path, path) == 0 &&
            strcmp(d->items[i].message, text) == 0)
            return;
    }
    diags_error(d, path, "%s", text);
}

/* Go's %q for the plain strings that appear in messages: quotes, backslashes and control bytes
 * escaped. Output is truncated to fit `cap`. */

bool validate__is_alnum_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool validate__str_eq(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return strcmp(a, b) == 0;
}

/* Kubernetes treats an absent and an empty optional string alike in these comparisons. */
bool validate__str_eq_empty(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Value of `key` in a string map (borrowed), NULL when absent. */
static const char *kv_find(const kv_list_t *l, const char *key)
{
    for (size_t i = 0; i < l->len; i++)
        if (validate__str_eq(l->items[i].key, key))
            return l->items[i].value ? l->items[i].value : "";
    return NULL;
}

const char *validate__meta_annotation(const object_meta_t *m, const char *key)
{
    return kv_find(&m->annotations, key);
}

const char *validate__meta_label(const object_meta_t *m, const char *key)
{
    return kv_find(&m->labels, key);
}

/* Go's encoding/json form of a string (what Kubernetes prints for a Duplicate value of a
 * list-map key): quotes, backslashes and control bytes escaped, '<', '>' and '&' as \u00XX (Go's
 * HTML-safe default), U+2028/U+2029 escaped, invalid UTF-8 as \ufffd. Truncated to fit `cap`. */
static const char *json_quote(const char *s, char *buf, size_t cap)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t n = 0;

    if (cap < 3) {
        if (cap)
            buf[0] = '\0';
        return buf;
    }
    buf[n++] = '"';
    while (*p != '\0' && n + 8 < cap) {
        unsigned char c = *p;
        size_t len = 0;
        uint32_t cp = 0;

        if (c < 0x80) {
            const char *esc = NULL;
            switch (c) {
            case '"':
                esc = "\\\"";
                break;
            case '\\':
                esc = "\\\\";
                break;
            case '\b':
                esc = "\\b";
                break;
            case '\f':
                esc = "\\f";
                break;
            case '\n':
                esc = "\\n";
                break;
            case '\r':
                esc = "\\r";
                break;
            case '\t':
                esc = "\\t";
                break;
            default:
                break;
            }
            if (esc != NULL)
                n += (size_t)snprintf(buf + n, cap - n, "%s", esc);
            else if (c < 0x20 || c == '<' || c == '>' || c == '&')
                n += (size_t)snprintf(buf + n, cap - n, "\\u%04x", c);
            else
                buf[n++] = (char)c;
            p++;
            continue;
        }
        /* Decode one UTF-8 sequence; anything malformed is one byte of U+FFFD. */
        if (c >= 0xc2 && c <= 0xdf) {
            len = 2;
            cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            len = 3;
            cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            len = 4;
            cp = c & 0x07;
        }
        for (size_t i = 1; i < len; i++) {
            if ((p[i] & 0xc0) != 0x80) {
                len = 0;
                break;
            }
            cp = (cp << 6) | (p[i] & 0x3f);
        }
        if (len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)))
            len = 0;
        if (len == 4 && (cp < 0x10000 || cp > 0x10ffff))
            len = 0;
        if (len == 0) {
            n += (size_t)snprintf(buf + n, cap - n, "\\ufffd");
            p++;
        } else if (cp == 0x2028 || cp == 0x2029) {
            n += (size_t)snprintf(buf + n, cap - n, "\\u%04x", (unsigned)cp);
            p += len;
        } else {
            memcpy(buf + n, p, len);
            n += len;
            p += len;
        }
    }
    buf[n++] = '"';
    buf[n] = '\0';
    return buf;
}

/*
 * x-kubernetes-list-type: map with one key field (every list-map of Kueue's CRDs): the API
 * server's structural validation reports the second occurrence of a key, once however often it
 * repeats, as `<list>[i]: Duplicate value: {"<field>":<key>}`. `key_at(ctx, i)` gives item i's
 * key (after defaulting, as the API server defaults before it validates).
 */
void validate__list_map(diags_t *d, const char *list_path, const char *field, size_t n,
                        const char *(*key_at)(const void *items, size_t i), const void *items)
{
    char p[VPATH], v[1024];

    for (size_t i = 1; i < n; i++) {
        const char *k = key_at(items, i);
        size_t seen = 0;
        for (size_t j = 0; j < i; j++)
            if (validate__str_eq(key_at(items, j), k))
                seen++;
        if (seen != 1)
            continue; /* first occurrence, or a third one (already reported) */
        validate__pathf(p, "%s[%zu]", list_path, i);
        if (k == NULL)
            validate__err(d, p, "Duplicate value: {}");
        else
            validate__err(d, p, "Duplicate value: {\"%s\":%s}", field, json_quote(k, v, sizeof(v)));
    }
}

/* listType=set of strings: `<list>[i]: Duplicate value: "<value>"`, second occurrences only. */
void validate__list_set(diags_t *d, const char *list_path, char *const *items, size_t n)
{
    char p[VPATH], v[1024];

    for (size_t i = 1; i < n; i++) {
        size_t seen = 0;
        for (size_t j = 0; j < i; j++)
            if (validate__str_eq(items[j], items[i]))
                seen++;
        if (seen != 1)
            continue;
        validate__pathf(p, "%s[%zu]", list_path, i);
        validate__err(d, p, "Duplicate value: %s", diag_quote(items[i], v, sizeof(v)));
    }
}

/* field.NotSupported detail: `Unsupported value: "x": supported values: "a", "b"`; without
 * values, just `Unsupported value: "x"`. `values` is printed in the order given. */
void validate__err_not_supported(diags_t *d, const char *path, const char *value,
                                 const char *const *values, size_t n)
{
    char text[4096], q[512];
    size_t len;

    len = (size_t)snprintf(text, sizeof(text), "Unsupported value: %s",
                           diag_quote(value ? value : "", q, sizeof(q)));
    for (size_t i = 0; i < n && len < sizeof(text); i++)
        len += (size_t)snprintf(
            text + len, sizeof(text) - len, "%s%s",
            i ? ", " : ": supported values: ", diag_quote(values[i], q, sizeof(q)));
    validate__err(d, path, "%s", text);
}

static int cmp_strp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sort `v` (borrowed strings) and drop duplicates, as Go's sets.List does; returns the count. */
size_t validate__sorted_set(const char **v, size_t n)
{
    size_t out = 0;

    if (n == 0)
        return 0;
    qsort(v, n, sizeof(*v), cmp_strp);
    for (size_t i = 0; i < n; i++)
        if (out == 0 || strcmp(v[out - 1], v[i]) != 0)
            v[out++] = v[i];
    return out;
}

void validate__quantity_nonneg(diags_t *d, const char *path, quantity_t q)
{
    if (quantity_sign(q) < 0)
        validate__err(d, path, MSG_NEGATIVE);
}

bool validate__strv_has(const char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (validate__str_eq(v[i], s))
            return true;
    return false;
}

/* ---- names: label keys and values, DNS-1123 ----------------------------------------------- */

/*
 * model/names.h gives Kubernetes' messages for a value (k8s.io/apimachinery
 * pkg/api/validate/content); callers either emit one error per message (ValidateLabelName) or
 * join them (the taint value uses ";", the Job's queue-name label ",").
 */

/* One error per message at `path` (field.Invalid per message, as ValidateLabelName does). */
void validate__emit_each(diags_t *d, const char *path, const names_msgs_t *m)
{
    for (int i = 0; i < m->n; i++)
        validate__err(d, path, "%s", m->text[i]);
}

/* One error with the messages joined by `sep`. */
void validate__emit_joined(diags_t *d, const char *path, const names_msgs_t *m, const char *sep)
{
    char text[sizeof(m->text)];
    size_t n = 0;

    if (m->n == 0)
        return;
    text[0] = '\0';
    for (int i = 0; i < m->n; i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%s", i ? sep : "", m->text[i]);
    validate__err(d, path, "%s", text);
}

void validate__label_name(diags_t *d, const char *path, const char *key)
{
    names_msgs_t m = {.n = 0};

    names_label_key(key ? key : "", &m);
    validate__emit_each(d, path, &m);
}

/* metav1validation.ValidateLabels: every problem is reported at the map's path. */
void validate__labels(diags_t *d, const char *path, const kv_list_t *labels)
{
    for (size_t i = 0; i < labels->len; i++) {
        names_msgs_t m = {.n = 0};
        validate__label_name(d, path, labels->items[i].key);
        names_label_value(labels->items[i].value ? labels->items[i].value : "", &m);
        validate__emit_each(d, path, &m);
    }
}

/* apivalidation.ValidateAnnotations: keys are case-insensitive qualified names, and the whole
 * map is at most 256 KiB. */
void validate__annotations(diags_t *d, const char *path, const kv_list_t *ann)
{
    size_t total = 0;

    for (size_t i = 0; i < ann->len; i++) {
        const char *k = ann->items[i].key ? ann->items[i].key : "";
        size_t len = strlen(k);
        char *lower = malloc(len + 1);
        names_msgs_t m = {.n = 0};

        if (lower == NULL) {
            d->oom = true;
            return;
        }
        for (size_t j = 0; j <= len; j++)
            lower[j] = (k[j] >= 'A' && k[j] <= 'Z') ? (char)(k[j] - 'A' + 'a') : k[j];
        names_label_key(lower, &m);
        free(lower);
        validate__emit_each(d, path, &m);
        total += len + strlen(ann->items[i].value ? ann->items[i].value : "");
    }
    if (total > ANNOTATIONS_MAX_BYTES)
        validate__err(d, path, "Too long: may not be more than %d bytes", ANNOTATIONS_MAX_BYTES);
}

/* metav1validation.ValidateLabelSelector. */
void validate__label_selector(diags_t *d, const char *path, const label_selector_t *s)
{
    char p[VPATH], q[VPATH];

    if (!s->present)
        return;
    validate__pathf(p, "%s.matchLabels", path);
    validate__labels(d, p, &s->match_labels);
    for (size_t i = 0; i < s->nexprs; i++) {
        const selector_req_t *r = &s->exprs[i];
        validate__pathf(p, "%s.matchExpressions[%zu]", path, i);
        switch (r->op) {
        case SELECTOR_OP_IN:
        case SELECTOR_OP_NOT_IN:
            if (r->nvalues == 0) {
                validate__pathf(q, "%s.values", p);
                validate__err(
                    d, q, "Required value: must be specified when `operator` is 'In' or 'NotIn'");
            }
            break;
        case SELECTOR_OP_EXISTS:
        case SELECTOR_OP_DOES_NOT_EXIST:
            if (r->nvalues > 0) {
                validate__pathf(q, "%s.values", p);
                validate__err(d, q,
                              "Forbidden: may not be specified when `operator` is 'Exists' or "
                              "'DoesNotExist'");
            }
            break;
        default:
            validate__pathf(q, "%s.operator", p);
            validate__err(d, q, "not a valid selector operator");
            break;
        }
        validate__pathf(q, "%s.key", p);
        validate__label_name(d, q, r->key);
        for (size_t j = 0; j < r->nvalues; j++) {
            names_msgs_t m = {.n = 0};
            validate__pathf(q, "%s.values[%zu]", p, j);
            names_label_value(r->values[j] ? r->values[j] : "", &m);
            validate__emit_each(d, q, &m);
        }
    }
}

/* ---- taints and tolerations --------------------------------------------------------------- */

const char *validate__effect_name(taint_effect_t e)
{
    switch (e) {
    case TAINT_EFFECT_NO_SCHEDULE:
        return "NoSchedule";
    case TAINT_EFFECT_PREFER_NO_SCHEDULE:
        return "PreferNoSchedule";
    case TAINT_EFFECT_NO_EXECUTE:
        return "NoExecute";
    default:
        return "";
    }
}

/*
 * CRD rules on a toleration list (ResourceFlavor spec.tolerations, Workload podSetUpdates), each
 * stated once for the whole list, so each is reported once at the list's path. The typed
 * toleration keeps presence where the rules need it: key and value are NULL when absent. The
 * operator and effect enums are checked by the decoder; an unset operator reads as Equal, which
 * is what the first rule (has(operator) false) also rejects.
 */
void validate__tolerations_cel(diags_t *d, const char *path, const toleration_t *t, size_t n)
{
    bool need_exists = false, seconds_effect = false, value_with_exists = false;

    for (size_t i = 0; i < n; i++) {
        if (t[i].key == NULL && t[i].op != TOLERATION_OP_EXISTS)
            need_exists = true;
        if (t[i].has_seconds && t[i].effect != TAINT_EFFECT_NO_EXECUTE)
            seconds_effect = true;
        if (t[i].op == TOLERATION_OP_EXISTS && t[i].value != NULL)
            value_with_exists = true;
    }
    if (need_exists)
        validate__err(
            d, path,
            "operator must be Exists when 'key' is empty, which means 'match all values and all "
            "keys'");
    if (seconds_effect)
        validate__err(d, path, "effect must be 'NoExecute' when 'tolerationSeconds' is set");
    if (value_with_exists)
        validate__err(d, path, "a value must be empty when 'operator' is 'Exists'");
}

/* Webhook (validateTolerations): a non-empty key is a label name. */
void validate__toleration_keys(diags_t *d, const char *path, const toleration_t *t, size_t n)
{
    char p[VPATH];

    for (size_t i = 0; i < n; i++) {
        if (t[i].key != NULL && t[i].key[0] != '\0') {
            validate__pathf(p, "%s[%zu].key", path, i);
            validate__label_name(d, p, t[i].key);
        }
    }
}

/* ---- kueue.x-k8s.io/admission-gated-by (Workload and Job) ------------------------------- */

/*
 * The annotation holds comma-separated gate names (spaces around names trimmed); each is a
 * domain-prefixed path ("example.com/provisioner") of at most 63 bytes, like a Job's
 * spec.managedBy. Gates can only be removed after creation. Messages are Kueue's and, for the
 * path syntax, Kubernetes' IsDomainPrefixedPath.
 */
#define GATED_BY_PATH   "metadata.annotations[" GATED_BY_ANN "]"
#define GATES_MAX       64
#define GATE_NAME_MAX   63
#define HTTP_PATH_CHARS "/-._~%!$&'()*+,;=:"

typedef struct gates_s {
    char buf[4096];
    const char *name[GATES_MAX];
    size_t n;
} gates_t;

/* Kueue's csv.Parse: blank -> no names; otherwise split on ',' and trim each part. */
static void gates_parse(const char *v, gates_t *g)
{
    char *p, *end;

    g->n = 0;
    snprintf(g->buf, sizeof(g->buf), "%s", v ? v : "");
    p = g->buf;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    if (*p == '\0')
        return;
    for (p = g->buf; g->n < GATES_MAX; p = end + 1) {
        char *start = p, *stop;
        end = strchr(p, ',');
        if (end != NULL)
            *end = '\0';
        while (*start == ' ' || *start == '\t' || *start == '\n' || *start == '\r')
            start++;
        stop = start + strlen(start);
        while (stop > start &&
               (stop[-1] == ' ' || stop[-1] == '\t' || stop[-1] == '\n' || stop[-1] == '\r'))
            *--stop = '\0';
        g->name[g->n++] = start;
        if (end == NULL)
            break;
    }
}

static bool gates_has(const gates_t *g, const char *name)
{
    for (size_t i = 0; i < g->n; i++)
        if (strcmp(g->name[i], name) == 0)
            return true;
    return false;
}

void validate__gated_by_format(diags_t *d, const char *value)
{
    gates_t g;

    if (value == NULL || value[0] == '\0')
        return;
    gates_parse(value, &g);
    for (size_t i = 0; i < g.n; i++) {
        const char *gate = g.name[i], *slash = strchr(gate, '/');
        bool dup = false;
        names_msgs_t m;

        if (gate[0] == '\0') {
            validate__err(d, GATED_BY_PATH, "cannot contain empty gate names");
            continue;
        }
        for (size_t j = 0; j < i && !dup; j++)
            dup = strcmp(g.name[j], gate) == 0;
        if (dup) {
            validate__err(d, GATED_BY_PATH, "duplicate gate name: %s", gate);
            continue;
        }
        if (slash == NULL || slash == gate || slash[1] == '\0') {
            validate__err(d, GATED_BY_PATH,
                          "must be a domain-prefixed path (such as \"acme.io/foo\")");
        } else {
            char host[512];
            snprintf(host, sizeof(host), "%.*s", (int)(slash - gate), gate);
            names_dns1123_subdomain(host, &m);
            validate__emit_each(d, GATED_BY_PATH, &m);
            for (const char *c = slash + 1; *c != '\0'; c++) {
                if (!validate__is_alnum_byte((unsigned char)*c) &&
                    strchr(HTTP_PATH_CHARS, *c) == NULL) {
                    validate__err(d, GATED_BY_PATH,
                                  "Invalid path (regex used for validation is "
                                  "'[A-Za-z0-9/\\-._~%%!$&'()*+,;=:]+')");
                    break;
                }
            }
        }
        if (strlen(gate) > GATE_NAME_MAX)
            validate__err(d, GATED_BY_PATH, "Too long: may not be more than %d bytes",
                          GATE_NAME_MAX);
    }
}

void validate__gated_by_update(diags_t *d, const object_meta_t *old, const object_meta_t *m)
{
    const char *ov = validate__meta_annotation(old, GATED_BY_ANN),
               *nv = validate__meta_annotation(m, GATED_BY_ANN);
    gates_t og, ng;

    if ((ov == NULL || ov[0] == '\0') && nv != NULL && nv[0] != '\0')
        validate__err(d, GATED_BY_PATH, "Forbidden: cannot add admission gate after creation");
    if (ov != NULL && ov[0] != '\0' && nv != NULL && nv[0] != '\0') {
        gates_parse(ov, &og);
        gates_parse(nv, &ng);
        for (size_t i = 0; i < ng.n; i++) {
            if (!gates_has(&og, ng.name[i])) {
                validate__err(d, GATED_BY_PATH,
                              "Forbidden: can only remove gates, not add new ones");
                break;
            }
        }
    }
    validate__gated_by_format(d, nv);
}

bool validate__elastic_enabled(const object_meta_t *m)
{
    return validate__str_eq(validate__meta_annotation(m, ELASTIC_JOB_ANN), "true");
}
