/* crd_schema -- test-only checker for CustomResourceDefinitions and the objects they describe. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "crd_schema.h"

#include "model/yaml.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/*
 * The rules below follow k8s.io/apiextensions-apiserver as of Kubernetes 1.2x:
 * pkg/apiserver/schema/validation.go (structural invariants), pkg/apis/apiextensions/validation
 * (CRD object validation) and kube-openapi's validator (instances). Where this checker is
 * stricter than the API server, the comment at the check says so and why.
 *
 * Paths are built in fixed buffers of CRD_PATH_LEN bytes; a longer path is truncated, which only
 * shortens a message. Recursion depth is bounded by the YAML loader (YAML_MAX_DEPTH).
 */

#define CRD_PATH_LEN 1024
#define KUEUE_GROUP  "kueue.x-k8s.io"

/* ------------------------------------------------------------------------------------------ */
/* Small helpers                                                                              */
/* ------------------------------------------------------------------------------------------ */

static void path_field(char *out, const char *path, const char *name)
{
    if (path[0] == '\0')
        snprintf(out, CRD_PATH_LEN, "%s", name);
    else
        snprintf(out, CRD_PATH_LEN, "%s.%s", path, name);
}

static void path_index(char *out, const char *path, size_t i)
{
    snprintf(out, CRD_PATH_LEN, "%s[%zu]", path, i);
}

/* "path[key]": an entry of a map (labels[tier], requests[cpu]). */
static void path_mapkey(char *out, const char *path, const char *key)
{
    if (snprintf(out, CRD_PATH_LEN, "%s[%s]", path, key) >= CRD_PATH_LEN)
        out[CRD_PATH_LEN - 2] = ']'; /* truncated: keep the bracket closed */
}

/* "path.child[key]" as Kubernetes prints schema paths (properties[spec]). */
static void path_key(char *out, const char *path, const char *child, const char *key)
{
    if (path[0] == '\0')
        snprintf(out, CRD_PATH_LEN, "%s[%s]", child, key);
    else
        snprintf(out, CRD_PATH_LEN, "%s.%s[%s]", path, child, key);
}

static const char *jstr(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static bool jtrue(const json_t *obj, const char *key)
{
    return json_is_true(json_object_get(obj, key));
}

/* Compact JSON text of `v` for messages, truncated into `buf`. */
static const char *jtext(const json_t *v, char *buf, size_t len)
{
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);

    snprintf(buf, len, "%s", s ? s : "?");
    free(s);
    return buf;
}

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
        return "integer";
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "boolean";
    case JSON_NULL:
        return "null";
    }
    return "unknown";
}

/* An integer, or a real with no fractional part that fits int64 (JSON does not distinguish). */
static bool json_integral(const json_t *v, long long *out)
{
    if (json_is_integer(v)) {
        *out = (long long)json_integer_value(v);
        return true;
    }
    if (json_is_real(v)) {
        double x = json_real_value(v);
        if (x >= -9.2e18 && x <= 9.2e18 && (double)(long long)x == x) {
            *out = (long long)x;
            return true;
        }
    }
    return false;
}

/* JSON number as a double; only used to compare against schema bounds, never for quantities. */
static double json_num(const json_t *v)
{
    return json_is_integer(v) ? (double)json_integer_value(v) : json_real_value(v);
}

/* Number of UTF-8 code points: Kubernetes' maxLength/minLength count runes, not bytes. */
static size_t utf8_len(const char *s, size_t n)
{
    size_t runes = 0;

    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            runes++;
    return runes;
}

static bool type_matches(const char *type, const json_t *v)
{
    long long ignored;

    if (strcmp(type, "object") == 0)
        return json_is_object(v);
    if (strcmp(type, "array") == 0)
        return json_is_array(v);
    if (strcmp(type, "string") == 0)
        return json_is_string(v);
    if (strcmp(type, "boolean") == 0)
        return json_is_boolean(v);
    if (strcmp(type, "integer") == 0)
        return json_integral(v, &ignored);
    if (strcmp(type, "number") == 0)
        return json_is_number(v);
    return false;
}

static bool is_scalar_type(const char *type)
{
    return type != NULL && (strcmp(type, "string") == 0 || strcmp(type, "integer") == 0 ||
                            strcmp(type, "number") == 0 || strcmp(type, "boolean") == 0);
}

/* DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most `max` characters. */
static bool dns_label(const char *s, size_t len, size_t max)
{
    if (len == 0 || len > max)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && !(c == '-' && i > 0 && i + 1 < len))
            return false;
    }
    return true;
}

/* DNS-1123 subdomain: dot-separated labels, at most 253 characters. */
static bool dns_subdomain(const char *s)
{
    size_t len = strlen(s);
    const char *p = s;

    if (len == 0 || len > 253)
        return false;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (!dns_label(p, n, 63))
            return false;
        if (dot == NULL)
            return true;
        p = dot + 1;
    }
}

/* DNS-1035 label (CRD plural, singular, short names, version names): starts with a letter. */
static bool dns1035_label(const char *s)
{
    return dns_label(s, strlen(s), 63) && s[0] >= 'a' && s[0] <= 'z';
}

/* Name part of a qualified name (label keys, annotation keys) or a label value (may be empty
 * only when `allow_empty`): ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], at most 63 characters. */
static bool qualified_part(const char *s, size_t len, bool allow_empty)
{
    if (len == 0)
        return allow_empty;
    if (len > 63)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        bool inner = c == '-' || c == '_' || c == '.';
        if (!alnum && (!inner || i == 0 || i + 1 == len))
            return false;
    }
    return true;
}

static bool qualified_name(const char *key)
{
    const char *slash = strchr(key, '/');

    if (slash == NULL)
        return qualified_part(key, strlen(key), false);
    if (strchr(slash + 1, '/') != NULL)
        return false;
    {
        char prefix[256];
        size_t n = (size_t)(slash - key);
        if (n == 0 || n >= sizeof(prefix))
            return false;
        memcpy(prefix, key, n);
        prefix[n] = '\0';
        if (!dns_subdomain(prefix))
            return false;
    }
    return qualified_part(slash + 1, strlen(slash + 1), false);
}

static bool digits(const char *s, int n)
{
    for (int i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/* RFC 3339 date-time, as format "date-time" requires: 2024-01-02T03:04:05(.123)?(Z|+01:00). */
static bool rfc3339(const char *s)
{
    size_t n = strlen(s), i = 19;

    if (n < 20 || !digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' ||
        !digits(s + 8, 2) || (s[10] != 'T' && s[10] != 't') || !digits(s + 11, 2) ||
        s[13] != ':' || !digits(s + 14, 2) || s[16] != ':' || !digits(s + 17, 2))
        return false;
    if (s[i] == '.') {
        i++;
        if (!digits(s + i, 1))
            return false;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if ((s[i] == 'Z' || s[i] == 'z') && i + 1 == n)
        return true;
    return (s[i] == '+' || s[i] == '-') && i + 6 == n && digits(s + i + 1, 2) &&
           s[i + 3] == ':' && digits(s + i + 4, 2);
}

/* ------------------------------------------------------------------------------------------ */
/* Patterns: Go RE2 -> POSIX ERE                                                              */
/* ------------------------------------------------------------------------------------------ */

/*
 * Kubernetes matches `pattern` with Go's regexp (RE2), unanchored, like regexec(). ERE covers what
 * CRD patterns use (anchors, classes, groups, alternation, ? * + {n,m}); what differs is
 * escaping: ERE leaves "\." and friends undefined, so every escaped punctuation character
 * becomes a one-character bracket expression, and \d \w \s become their classes. Lazy
 * quantifiers only change which match is found, never whether one exists, so they are dropped;
 * "(?:" becomes "(". Flags, named groups, \b, \p{..} and backslashes inside brackets are refused.
 */
err_t crd_pattern_compile(const char *pattern, regex_t *out, err_msg_t *msg)
{
    size_t n = strlen(pattern), o = 0;
    char *ere = malloc(n * 12 + 1);
    bool in_bracket = false;
    int rc;

    if (ere == NULL)
        return err_set(msg, ERR_NOMEM, "pattern %s: out of memory", pattern);
#define EMIT(str)                                                                                  \
    do {                                                                                           \
        size_t l_ = strlen(str);                                                                   \
        memcpy(ere + o, (str), l_);                                                                \
        o += l_;                                                                                   \
    } while (0)
    for (size_t i = 0; i < n; i++) {
        char c = pattern[i];
        if (in_bracket) {
            if (c == '\\') {
                free(ere);
                return err_set(msg, ERR_UNSUPPORTED,
                               "pattern %s: escape inside a bracket expression at offset %zu",
                               pattern, i);
            }
            if (c == '[' && pattern[i + 1] == ':') {
                const char *end = strstr(pattern + i, ":]");
                if (end == NULL)
                    break;
                memcpy(ere + o, pattern + i, (size_t)(end + 2 - (pattern + i)));
                o += (size_t)(end + 2 - (pattern + i));
                i = (size_t)(end + 1 - pattern);
                continue;
            }
            ere[o++] = c;
            if (c == ']')
                in_bracket = false;
            continue;
        }
        if (c == '[') {
            in_bracket = true;
            ere[o++] = c;
            if (pattern[i + 1] == '^')
                ere[o++] = pattern[++i];
            if (pattern[i + 1] == ']') /* a leading ']' is literal in both dialects */
                ere[o++] = pattern[++i];
            continue;
        }
        if (c == '\\') {
            char e = pattern[++i];
            if (e == 'd')
                EMIT("[0-9]");
            else if (e == 'w')
                EMIT("[0-9A-Za-z_]");
            else if (e == 's')
                EMIT("[[:space:]]");
            else if (e == '\\')
                EMIT("[\\]");
            else if (e == '^')
                EMIT("\\^");
            else if (e != '\0' && strchr(".+*?()[]{}|$/-_:=!@#%&~,'\"<> ", e) != NULL) {
                ere[o++] = '[';
                ere[o++] = e;
                ere[o++] = ']';
            } else {
                free(ere);
                return err_set(msg, ERR_UNSUPPORTED, "pattern %s: escape \\%c has no POSIX form",
                               pattern, e ? e : '0');
            }
            continue;
        }
        if (c == '(' && pattern[i + 1] == '?') {
            if (pattern[i + 2] != ':') {
                free(ere);
                return err_set(msg, ERR_UNSUPPORTED, "pattern %s: (? group has no POSIX form",
                               pattern);
            }
            ere[o++] = '(';
            i += 2;
            continue;
        }
        if (c == '?' && i > 0 && strchr("*+?}", pattern[i - 1]) != NULL &&
            !(i > 1 && pattern[i - 2] == '\\'))
            continue; /* lazy quantifier: same language */
        ere[o++] = c;
    }
#undef EMIT
    if (in_bracket) {
        free(ere);
        return err_set(msg, ERR_PARSE, "pattern %s: unterminated bracket expression", pattern);
    }
    ere[o] = '\0';
    rc = regcomp(out, ere, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char why[128];
        regerror(rc, NULL, why, sizeof(why));
        err_set(msg, ERR_PARSE, "pattern %s: %s", pattern, why);
        free(ere);
        return ERR_PARSE;
    }
    free(ere);
    return ERR_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Instances                                                                                  */
/* ------------------------------------------------------------------------------------------ */

static void validate_node(const json_t *s, const json_t *v, const char *path, bool nested,
                          diags_t *d);

/* Value of `v`'s list-map key `key`, or the key's schema default (which the API server would fill
 * in before comparing), or NULL. */
static const json_t *map_key_value(const json_t *items, const json_t *v, const char *key)
{
    const json_t *got = json_object_get(v, key);

    if (got != NULL)
        return got;
    return json_object_get(json_object_get(json_object_get(items, "properties"), key), "default");
}

static void validate_list_uniqueness(const json_t *s, const json_t *v, const char *path,
                                     diags_t *d)
{
    const char *lt = jstr(s, "x-kubernetes-list-type");
    const json_t *items = json_object_get(s, "items");
    const json_t *keys = json_object_get(s, "x-kubernetes-list-map-keys");
    char p[CRD_PATH_LEN], buf[256];
    size_t n = json_array_size(v);

    if (lt == NULL || strcmp(lt, "atomic") == 0)
        return;
    for (size_t i = 1; i < n; i++) {
        const json_t *a = json_array_get(v, i);
        for (size_t j = 0; j < i; j++) {
            const json_t *b = json_array_get(v, j);
            bool same = true;
            if (strcmp(lt, "set") == 0) {
                same = json_equal(a, b);
            } else if (strcmp(lt, "map") == 0 && json_is_object(a) && json_is_object(b)) {
                for (size_t k = 0; k < json_array_size(keys) && same; k++) {
                    const char *key = json_string_value(json_array_get(keys, k));
                    if (key != NULL)
                        same = json_equal(map_key_value(items, a, key),
                                          map_key_value(items, b, key));
                }
            } else {
                same = false;
            }
            if (same) {
                path_index(p, path, i);
                if (strcmp(lt, "set") == 0) {
                    diags_error(d, p, "Duplicate value: %s", jtext(a, buf, sizeof(buf)));
                } else {
                    json_t *tuple = json_object();
                    for (size_t k = 0; tuple && k < json_array_size(keys); k++) {
                        const char *key = json_string_value(json_array_get(keys, k));
                        const json_t *kv = key ? map_key_value(items, a, key) : NULL;
                        if (kv != NULL)
                            json_object_set(tuple, key, (json_t *)kv);
                    }
                    diags_error(d, p, "Duplicate value: %s", jtext(tuple, buf, sizeof(buf)));
                    json_decref(tuple);
                }
                break;
            }
        }
    }
}

static void validate_string(const json_t *s, const json_t *v, const char *path, diags_t *d)
{
    const char *str = json_string_value(v);
    size_t runes = utf8_len(str, json_string_length(v));
    const char *pattern = jstr(s, "pattern"), *format = jstr(s, "format");
    long long bound;
    char buf[160];

    if (json_integral(json_object_get(s, "maxLength"), &bound) && (long long)runes > bound)
        diags_error(d, path, "Too long: may not be more than %lld characters", bound);
    if (json_integral(json_object_get(s, "minLength"), &bound) && (long long)runes < bound)
        diags_error(d, path, "Invalid value: %s: should be at least %lld chars long",
                    jtext(v, buf, sizeof(buf)), bound);
    if (pattern != NULL) {
        regex_t re;
        err_msg_t msg;
        if (crd_pattern_compile(pattern, &re, &msg) != ERR_OK) {
            diags_error(d, path, "cannot check: %s", msg.text);
        } else {
            if (regexec(&re, str, 0, NULL, 0) != 0)
                diags_error(d, path, "Invalid value: %s: should match '%s'",
                            jtext(v, buf, sizeof(buf)), pattern);
            regfree(&re);
        }
    }
    if (format != NULL && strcmp(format, "date-time") == 0 && !rfc3339(str))
        diags_error(d, path, "Invalid value: %s: must be of type date-time",
                    jtext(v, buf, sizeof(buf)));
}

static void validate_number(const json_t *s, const json_t *v, const char *path, diags_t *d)
{
    const json_t *max = json_object_get(s, "maximum"), *min = json_object_get(s, "minimum");
    const char *format = jstr(s, "format");
    double x = json_num(v);
    long long ix;
    char buf[64];

    jtext(v, buf, sizeof(buf));
    if (json_is_number(max)) {
        bool excl = jtrue(s, "exclusiveMaximum");
        if (excl ? x >= json_num(max) : x > json_num(max))
            diags_error(d, path, "Invalid value: %s: should be less than %s%g", buf,
                        excl ? "" : "or equal to ", json_num(max));
    }
    if (json_is_number(min)) {
        bool excl = jtrue(s, "exclusiveMinimum");
        if (excl ? x <= json_num(min) : x < json_num(min))
            diags_error(d, path, "Invalid value: %s: should be greater than %s%g", buf,
                        excl ? "" : "or equal to ", json_num(min));
    }
    /* Stricter than the API server, which does not range-check formats: Kueue's controllers
     * decode these fields into Go int32 and would fail on a larger value. */
    if (format != NULL && strcmp(format, "int32") == 0 && json_integral(v, &ix) &&
        (ix < INT32_MIN || ix > INT32_MAX))
        diags_error(d, path, "Invalid value: %s: must fit in a 32-bit integer (format int32)",
                    buf);
}

static void validate_array(const json_t *s, const json_t *v, const char *path, bool nested,
                           diags_t *d)
{
    const json_t *items = json_object_get(s, "items");
    size_t n = json_array_size(v);
    long long bound;
    char p[CRD_PATH_LEN];

    if (json_integral(json_object_get(s, "maxItems"), &bound) && (long long)n > bound)
        diags_error(d, path, "Too many: %zu: must have at most %lld items", n, bound);
    if (json_integral(json_object_get(s, "minItems"), &bound) && (long long)n < bound)
        diags_error(d, path, "Invalid value: %zu items: should have at least %lld items", n,
                    bound);
    if (json_is_object(items)) {
        for (size_t i = 0; i < n; i++) {
            path_index(p, path, i);
            validate_node(items, json_array_get(v, i), p, nested, d);
        }
    }
    validate_list_uniqueness(s, v, path, d);
}

static void validate_object_meta(const json_t *meta, const char *path, diags_t *d);

static void validate_object(const json_t *s, const json_t *v, const char *path, bool nested,
                            bool root, diags_t *d)
{
    const json_t *props = json_object_get(s, "properties");
    const json_t *addl = json_object_get(s, "additionalProperties");
    const json_t *required = json_object_get(s, "required");
    bool preserve = jtrue(s, "x-kubernetes-preserve-unknown-fields");
    size_t n = json_object_size(v), i;
    const json_t *item;
    const char *key;
    long long bound;
    char p[CRD_PATH_LEN];

    if (json_integral(json_object_get(s, "maxProperties"), &bound) && (long long)n > bound)
        diags_error(d, path, "Too many: %zu: must have at most %lld items", n, bound);
    if (json_integral(json_object_get(s, "minProperties"), &bound) && (long long)n < bound)
        diags_error(d, path, "Invalid value: %zu properties: should have at least %lld properties",
                    n, bound);
    json_array_foreach(required, i, item) {
        const char *name = json_string_value(item);
        if (name == NULL || json_object_get(v, name) != NULL)
            continue;
        /* Defaulting runs before validation: a defaulted field is never missing. */
        if (json_object_get(json_object_get(props, name), "default") != NULL)
            continue;
        path_field(p, path, name);
        diags_error(d, p, "Required value");
    }
    json_object_foreach((json_t *)v, key, item) {
        const json_t *ps = json_object_get(props, key);
        path_field(p, path, key);
        if (root && strcmp(key, "metadata") == 0) {
            validate_object_meta(item, p, d);
        } else if (ps != NULL) {
            validate_node(ps, item, p, nested, d);
        } else if (json_is_object(addl)) {
            path_mapkey(p, path, key);
            validate_node(addl, item, p, nested, d);
        } else if (!preserve && !nested && !json_is_true(addl)) {
            diags_error(d, p, "unknown field \"%s\" (not declared in the schema)", key);
        }
    }
}

static bool node_matches(const json_t *s, const json_t *v)
{
    diags_t scratch;
    bool ok;

    diags_init(&scratch);
    validate_node(s, v, "", true, &scratch);
    ok = scratch.nerrors == 0 && !scratch.oom;
    diags_fini(&scratch);
    return ok;
}

static void validate_junctors(const json_t *s, const json_t *v, const char *path, diags_t *d)
{
    const json_t *all = json_object_get(s, "allOf"), *any = json_object_get(s, "anyOf");
    const json_t *one = json_object_get(s, "oneOf"), *not = json_object_get(s, "not");
    const json_t *sub;
    size_t i, hits;

    json_array_foreach(all, i, sub) validate_node(sub, v, path, true, d);
    if (json_array_size(any) > 0) {
        hits = 0;
        json_array_foreach(any, i, sub) hits += node_matches(sub, v);
        if (hits == 0)
            diags_error(d, path, "Invalid value: must match at least one schema (anyOf)");
    }
    if (json_array_size(one) > 0) {
        hits = 0;
        json_array_foreach(one, i, sub) hits += node_matches(sub, v);
        if (hits != 1)
            diags_error(d, path, "Invalid value: must match exactly one schema (oneOf), matched %zu",
                        hits);
    }
    if (json_is_object(not) && node_matches(not, v))
        diags_error(d, path, "Invalid value: must not match the schema in \"not\"");
}

/* `nested`: inside anyOf/allOf/oneOf/not, where schemas only restrict values (so undeclared
 * fields are not errors there). */
static void validate_node(const json_t *s, const json_t *v, const char *path, bool nested,
                          diags_t *d)
{
    const char *type = jstr(s, "type");
    const json_t *en = json_object_get(s, "enum");
    bool int_or_string = jtrue(s, "x-kubernetes-int-or-string");
    bool root = !nested && path[0] == '\0';
    char buf[160];

    if (!json_is_object(s))
        return;
    if (json_is_null(v)) {
        if (!jtrue(s, "nullable") && (type != NULL || int_or_string))
            diags_error(d, path, "Invalid value: null: must be of type %s",
                        int_or_string ? "integer or string" : type);
        return;
    }
    if (int_or_string) {
        long long ignored;
        if (!json_is_string(v) && !json_integral(v, &ignored)) {
            diags_error(d, path, "Invalid value: %s: must be of type integer or string",
                        jtext(v, buf, sizeof(buf)));
            return;
        }
    } else if (type != NULL && !type_matches(type, v)) {
        diags_error(d, path, "Invalid value: \"%s\": must be of type %s", json_kind(v), type);
        return;
    }
    if (json_is_array(en) && json_array_size(en) > 0) {
        bool found = false;
        size_t i;
        const json_t *e;
        json_array_foreach(en, i, e) found = found || json_equal(e, v);
        if (!found) {
            char allowed[400] = "";
            size_t used = 0;
            json_array_foreach(en, i, e) {
                char one[96];
                int w = snprintf(allowed + used, sizeof(allowed) - used, "%s%s", i ? ", " : "",
                                 jtext(e, one, sizeof(one)));
                if (w < 0 || (size_t)w >= sizeof(allowed) - used)
                    break;
                used += (size_t)w;
            }
            diags_error(d, path, "Unsupported value: %s: supported values: %s",
                        jtext(v, buf, sizeof(buf)), allowed);
        }
    }
    if (json_is_string(v))
        validate_string(s, v, path, d);
    else if (json_is_number(v))
        validate_number(s, v, path, d);
    else if (json_is_array(v))
        validate_array(s, v, path, nested, d);
    else if (json_is_object(v))
        validate_object(s, v, path, nested, root, d);
    validate_junctors(s, v, path, d);
}

/* The API server validates metadata as ObjectMeta whatever the schema says (the root schema may
 * only say "type: object"); these are the ObjectMeta rules a manifest can break. */
static void validate_object_meta(const json_t *meta, const char *path, diags_t *d)
{
    static const char *const known[] = {
        "name",       "generateName",    "namespace",         "labels",
        "annotations", "finalizers",     "ownerReferences",   "uid",
        "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
        "deletionGracePeriodSeconds", "managedFields", "selfLink"};
    const char *key, *name = jstr(meta, "name");
    const json_t *v;
    char p[CRD_PATH_LEN], q[CRD_PATH_LEN];

    if (!json_is_object(meta)) {
        diags_error(d, path, "Invalid value: \"%s\": must be of type object", json_kind(meta));
        return;
    }
    if (name == NULL && jstr(meta, "generateName") == NULL) {
        path_field(p, path, "name");
        diags_error(d, p, "Required value: name or generateName is required");
    } else if (name != NULL && !dns_subdomain(name)) {
        path_field(p, path, "name");
        diags_error(d, p,
                    "Invalid value: \"%s\": a lowercase RFC 1123 subdomain must consist of lower "
                    "case alphanumeric characters, '-' or '.', and must start and end with an "
                    "alphanumeric character",
                    name);
    }
    json_object_foreach((json_t *)meta, key, v) {
        bool is_known = false;
        for (size_t i = 0; i < ARRAY_SIZE(known); i++)
            is_known = is_known || strcmp(key, known[i]) == 0;
        path_field(p, path, key);
        if (!is_known) {
            diags_error(d, p, "unknown field \"%s\" in ObjectMeta", key);
            continue;
        }
        if (strcmp(key, "namespace") == 0 &&
            (!json_is_string(v) || !dns_label(json_string_value(v), json_string_length(v), 63)))
            diags_error(d, p, "Invalid value: must be a DNS-1123 label");
        if (strcmp(key, "labels") == 0 || strcmp(key, "annotations") == 0) {
            const char *k;
            const json_t *lv;
            if (!json_is_object(v)) {
                diags_error(d, p, "Invalid value: \"%s\": must be of type object", json_kind(v));
                continue;
            }
            json_object_foreach((json_t *)v, k, lv) {
                path_mapkey(q, p, k);
                if (!qualified_name(k))
                    diags_error(d, q, "Invalid value: \"%s\": name part must consist of "
                                      "alphanumeric characters, '-', '_' or '.' (prefix: a DNS "
                                      "subdomain), at most 63 characters",
                                k);
                if (!json_is_string(lv))
                    diags_error(d, q, "Invalid value: \"%s\": must be of type string (quote it)",
                                json_kind(lv));
                else if (strcmp(key, "labels") == 0 &&
                         !qualified_part(json_string_value(lv), json_string_length(lv), true))
                    diags_error(d, q, "Invalid value: \"%s\": a valid label value must be 63 "
                                      "characters or less, alphanumeric, '-', '_' or '.'",
                                json_string_value(lv));
            }
        }
    }
}

void crd_schema_validate(const json_t *schema, const json_t *instance, const char *path,
                         diags_t *d)
{
    validate_node(schema, instance, path ? path : "", false, d);
}

/* ------------------------------------------------------------------------------------------ */
/* Structural schemas                                                                         */
/* ------------------------------------------------------------------------------------------ */

typedef enum { LVL_ROOT, LVL_ITEM, LVL_FIELD } level_t;

/* JSONSchemaProps fields of apiextensions.k8s.io/v1 (1.2x) and the JSON kind each must have
 * ('s' string, 'n' number, 'u' non-negative integer, 'b' boolean, 'a' array, 'o' object,
 * '*' anything, 'x' schema or boolean). */
static const struct {
    const char *name;
    char kind;
} schema_fields[] = {
    {"description", 's'}, {"type", 's'}, {"format", 's'}, {"title", 's'}, {"default", '*'},
    {"maximum", 'n'}, {"exclusiveMaximum", 'b'}, {"minimum", 'n'}, {"exclusiveMinimum", 'b'},
    {"maxLength", 'u'}, {"minLength", 'u'}, {"pattern", 's'}, {"maxItems", 'u'},
    {"minItems", 'u'}, {"uniqueItems", 'b'}, {"multipleOf", 'n'}, {"enum", 'a'},
    {"maxProperties", 'u'}, {"minProperties", 'u'}, {"required", 'a'}, {"items", 'o'},
    {"allOf", 'a'}, {"oneOf", 'a'}, {"anyOf", 'a'}, {"not", 'o'}, {"properties", 'o'},
    {"additionalProperties", 'x'}, {"nullable", 'b'}, {"example", '*'}, {"externalDocs", 'o'},
    {"x-kubernetes-preserve-unknown-fields", 'b'}, {"x-kubernetes-embedded-resource", 'b'},
    {"x-kubernetes-int-or-string", 'b'}, {"x-kubernetes-list-map-keys", 'a'},
    {"x-kubernetes-list-type", 's'}, {"x-kubernetes-map-type", 's'},
    {"x-kubernetes-validations", 'a'},
};

/* Fields of JSONSchemaProps that CRDs refuse outright. */
static const char *const forbidden_fields[] = {"$ref",          "$schema",      "id",
                                               "definitions",   "dependencies", "additionalItems",
                                               "patternProperties"};

static void check_field_kinds(const json_t *s, const char *path, diags_t *d)
{
    const char *key;
    const json_t *v;
    char p[CRD_PATH_LEN];

    json_object_foreach((json_t *)s, key, v) {
        char kind = 0;
        long long u;
        path_field(p, path, key);
        for (size_t i = 0; i < ARRAY_SIZE(schema_fields); i++)
            if (strcmp(key, schema_fields[i].name) == 0)
                kind = schema_fields[i].kind;
        for (size_t i = 0; i < ARRAY_SIZE(forbidden_fields); i++)
            if (strcmp(key, forbidden_fields[i]) == 0)
                kind = '!';
        switch (kind) {
        case 0:
            /* Stricter than the API server, which drops unknown fields of a CRD silently: a
             * misspelt keyword would otherwise disable a check without anyone noticing. */
            diags_error(d, p, "unknown field: not a JSONSchemaProps field of apiextensions/v1");
            break;
        case '!':
            diags_error(d, p, "Forbidden: %s is not supported in CustomResourceDefinitions", key);
            break;
        case 's':
            if (!json_is_string(v))
                diags_error(d, p, "Invalid value: \"%s\": must be a string", json_kind(v));
            break;
        case 'n':
            if (!json_is_number(v))
                diags_error(d, p, "Invalid value: \"%s\": must be a number", json_kind(v));
            break;
        case 'u':
            if (!json_integral(v, &u) || u < 0)
                diags_error(d, p, "Invalid value: must be a non-negative integer");
            break;
        case 'b':
            if (!json_is_boolean(v))
                diags_error(d, p, "Invalid value: \"%s\": must be a boolean", json_kind(v));
            break;
        case 'a':
            if (!json_is_array(v))
                diags_error(d, p, "Invalid value: \"%s\": must be an array", json_kind(v));
            break;
        case 'o':
            if (!json_is_object(v))
                diags_error(d, p, "Invalid value: \"%s\": must be an object (a single schema)",
                            json_kind(v));
            break;
        case 'x':
            if (!json_is_object(v) && !json_is_boolean(v))
                diags_error(d, p, "Invalid value: \"%s\": must be a schema or a boolean",
                            json_kind(v));
            break;
        default:
            break;
        }
    }
}

static void check_bounds(const json_t *s, const char *path, const char *min_name,
                         const char *max_name, diags_t *d)
{
    const json_t *lo = json_object_get(s, min_name), *hi = json_object_get(s, max_name);
    char p[CRD_PATH_LEN];

    if (json_is_number(lo) && json_is_number(hi) && json_num(lo) > json_num(hi)) {
        path_field(p, path, min_name);
        diags_error(d, p, "Invalid value: %g: must not be greater than %s (%g)", json_num(lo),
                    max_name, json_num(hi));
    }
}

static void check_validations(const json_t *rules, const char *path, diags_t *d)
{
    static const char *const reasons[] = {"FieldValueInvalid", "FieldValueForbidden",
                                          "FieldValueRequired", "FieldValueDuplicate"};
    const json_t *rule;
    size_t i;
    char p[CRD_PATH_LEN], q[CRD_PATH_LEN];

    json_array_foreach(rules, i, rule) {
        const char *key, *text;
        const json_t *v;
        path_index(p, path, i);
        if (!json_is_object(rule)) {
            diags_error(d, p, "Invalid value: must be an object with a rule");
            continue;
        }
        text = jstr(rule, "rule");
        if (text == NULL || text[0] == '\0') {
            path_field(q, p, "rule");
            diags_error(d, q, "Required value: rule must be a non-empty string");
        }
        json_object_foreach((json_t *)rule, key, v) {
            path_field(q, p, key);
            if (strcmp(key, "rule") == 0)
                continue;
            if (strcmp(key, "message") == 0 || strcmp(key, "messageExpression") == 0 ||
                strcmp(key, "fieldPath") == 0) {
                const char *m = json_string_value(v);
                if (m == NULL || m[0] == '\0')
                    diags_error(d, q, "Invalid value: must be a non-empty string");
                else if (strcmp(key, "message") == 0 && strchr(m, '\n') != NULL)
                    diags_error(d, q, "Invalid value: message must not contain line breaks");
            } else if (strcmp(key, "reason") == 0) {
                bool ok = false;
                for (size_t r = 0; r < ARRAY_SIZE(reasons); r++)
                    ok = ok || (json_is_string(v) && strcmp(json_string_value(v), reasons[r]) == 0);
                if (!ok)
                    diags_error(d, q, "Unsupported value: supported values: FieldValueInvalid, "
                                      "FieldValueForbidden, FieldValueRequired, "
                                      "FieldValueDuplicate");
            } else if (strcmp(key, "optionalOldSelf") == 0) {
                if (!json_is_boolean(v))
                    diags_error(d, q, "Invalid value: must be a boolean");
            } else {
                diags_error(d, q, "unknown field of a ValidationRule");
            }
        }
    }
}

static bool is_int_or_string_anyof(const json_t *any)
{
    const json_t *a = json_array_get(any, 0), *b = json_array_get(any, 1);

    return json_array_size(any) == 2 && json_object_size(a) == 1 && json_object_size(b) == 1 &&
           json_is_string(json_object_get(a, "type")) &&
           strcmp(jstr(a, "type"), "integer") == 0 && json_is_string(json_object_get(b, "type")) &&
           strcmp(jstr(b, "type"), "string") == 0;
}

/* Inside anyOf/allOf/oneOf/not only value validations may appear, and every field they name must
 * also be specified outside (`outer`, possibly NULL): "structural completeness". */
static void check_nested(const json_t *n, const json_t *outer, const char *path, diags_t *d)
{
    static const char *const generic[] = {"type", "additionalProperties", "default", "title",
                                          "description", "nullable"};
    const json_t *props = json_object_get(n, "properties"), *v;
    const char *key;
    char p[CRD_PATH_LEN];
    size_t i;

    if (!json_is_object(n)) {
        diags_error(d, path, "Invalid value: must be a schema object");
        return;
    }
    check_field_kinds(n, path, d);
    for (i = 0; i < ARRAY_SIZE(generic); i++) {
        if (json_object_get(n, generic[i]) != NULL &&
            !(strcmp(generic[i], "nullable") == 0 && !jtrue(n, "nullable"))) {
            path_field(p, path, generic[i]);
            diags_error(d, p, "Forbidden: must be empty to be structural");
        }
    }
    json_object_foreach((json_t *)n, key, v) {
        if (strncmp(key, "x-kubernetes-", 13) == 0 && !json_is_false(v)) {
            path_field(p, path, key);
            diags_error(d, p, "Forbidden: must be undefined to be structural");
        }
    }
    json_object_foreach((json_t *)props, key, v) {
        const json_t *o = json_object_get(json_object_get(outer, "properties"), key);
        path_key(p, path, "properties", key);
        if (strcmp(key, "metadata") == 0)
            diags_error(d, p, "Forbidden: must not be specified in a nested context");
        if (o == NULL && !jtrue(outer, "x-kubernetes-preserve-unknown-fields"))
            diags_error(d, p, "Required value: must be specified outside of anyOf/allOf/oneOf/not "
                              "(structural completeness)");
        check_nested(v, o, p, d);
    }
    if (json_object_get(n, "items") != NULL) {
        path_field(p, path, "items");
        check_nested(json_object_get(n, "items"), json_object_get(outer, "items"), p, d);
    }
    if (jstr(n, "pattern") != NULL) {
        regex_t re;
        err_msg_t msg;
        if (crd_pattern_compile(jstr(n, "pattern"), &re, &msg) == ERR_OK)
            regfree(&re);
        else
            diags_error(d, path, "Invalid value: must be a valid regular expression: %s",
                        msg.text);
    }
}

static void check_junctors(const json_t *s, const char *path, diags_t *d)
{
    static const char *const arrays[] = {"allOf", "anyOf", "oneOf"};
    char p[CRD_PATH_LEN], q[CRD_PATH_LEN];
    const json_t *sub;
    size_t i;

    for (size_t a = 0; a < ARRAY_SIZE(arrays); a++) {
        const json_t *list = json_object_get(s, arrays[a]);
        /* The two int-or-string shapes are the only place where types may appear nested. */
        if (strcmp(arrays[a], "anyOf") == 0 && jtrue(s, "x-kubernetes-int-or-string") &&
            is_int_or_string_anyof(list))
            continue;
        path_field(p, path, arrays[a]);
        json_array_foreach(list, i, sub) {
            path_index(q, p, i);
            if (strcmp(arrays[a], "allOf") == 0 && i == 0 &&
                jtrue(s, "x-kubernetes-int-or-string") &&
                is_int_or_string_anyof(json_object_get(sub, "anyOf")) &&
                json_object_size(sub) == 1)
                continue;
            check_nested(sub, s, q, d);
        }
    }
    if (json_object_get(s, "not") != NULL) {
        path_field(p, path, "not");
        check_nested(json_object_get(s, "not"), s, p, d);
    }
}

static void check_list_extensions(const json_t *s, const char *path, diags_t *d)
{
    const char *type = jstr(s, "type"), *lt = jstr(s, "x-kubernetes-list-type");
    const char *mt = jstr(s, "x-kubernetes-map-type");
    const json_t *keys = json_object_get(s, "x-kubernetes-list-map-keys");
    const json_t *items = json_object_get(s, "items");
    const char *itype = jstr(items, "type");
    char p[CRD_PATH_LEN];

    if (mt != NULL) {
        path_field(p, path, "x-kubernetes-map-type");
        if (strcmp(mt, "granular") != 0 && strcmp(mt, "atomic") != 0)
            diags_error(d, p, "Unsupported value: \"%s\": supported values: \"granular\", \"atomic\"",
                        mt);
        if (type == NULL || strcmp(type, "object") != 0)
            diags_error(d, p, "Invalid value: must only be used if type is object");
    }
    if (keys != NULL && (lt == NULL || strcmp(lt, "map") != 0)) {
        path_field(p, path, "x-kubernetes-list-map-keys");
        diags_error(d, p, "Forbidden: must not be set if x-kubernetes-list-type is not map");
    }
    if (lt == NULL)
        return;
    path_field(p, path, "x-kubernetes-list-type");
    if (type == NULL || strcmp(type, "array") != 0) {
        diags_error(d, p, "Invalid value: must only be used if type is array");
        return;
    }
    if (strcmp(lt, "atomic") == 0)
        return;
    if (strcmp(lt, "set") == 0) {
        if (!is_scalar_type(itype) && !(itype != NULL && strcmp(itype, "object") == 0 &&
                                         jstr(items, "x-kubernetes-map-type") != NULL &&
                                         strcmp(jstr(items, "x-kubernetes-map-type"), "atomic") == 0) &&
            !(itype != NULL && strcmp(itype, "array") == 0 &&
              jstr(items, "x-kubernetes-list-type") != NULL &&
              strcmp(jstr(items, "x-kubernetes-list-type"), "atomic") == 0))
            diags_error(d, p, "Invalid value: \"set\": items of a set must be scalars or atomic");
        return;
    }
    if (strcmp(lt, "map") != 0) {
        diags_error(d, p, "Unsupported value: \"%s\": supported values: \"atomic\", \"set\", \"map\"",
                    lt);
        return;
    }
    if (itype == NULL || strcmp(itype, "object") != 0)
        diags_error(d, p, "Invalid value: \"map\": items must be of type object");
    if (json_array_size(keys) == 0) {
        path_field(p, path, "x-kubernetes-list-map-keys");
        diags_error(d, p, "Required value: must not be empty if x-kubernetes-list-type is map");
        return;
    }
    for (size_t i = 0; i < json_array_size(keys); i++) {
        const char *key = json_string_value(json_array_get(keys, i));
        const json_t *ks = json_object_get(json_object_get(items, "properties"), key ? key : "");
        bool required = false;
        size_t j;
        const json_t *r;
        char q[CRD_PATH_LEN];
        path_field(p, path, "x-kubernetes-list-map-keys");
        path_index(q, p, i);
        if (key == NULL || ks == NULL) {
            diags_error(d, q, "Invalid value: entries must all be names of item properties");
            continue;
        }
        if (!is_scalar_type(jstr(ks, "type")))
            diags_error(d, q, "Invalid value: \"%s\": must be a scalar property", key);
        json_array_foreach(json_object_get(items, "required"), j, r)
            required = required || (json_is_string(r) && strcmp(json_string_value(r), key) == 0);
        if (!required && json_object_get(ks, "default") == NULL)
            diags_error(d, q, "Invalid value: \"%s\": map keys must be required or have a default",
                        key);
    }
}

static void check_node(const json_t *s, const char *path, level_t lvl, bool in_metadata,
                       diags_t *d);

static void check_root_metadata(const json_t *meta, const char *path, diags_t *d)
{
    const char *key;
    const json_t *v;
    bool ok = json_is_object(meta);

    json_object_foreach((json_t *)meta, key, v) {
        if (strcmp(key, "type") == 0)
            continue;
        if (strcmp(key, "properties") == 0) {
            const char *pk;
            const json_t *pv;
            json_object_foreach((json_t *)v, pk, pv) {
                (void)pv;
                ok = ok && (strcmp(pk, "name") == 0 || strcmp(pk, "generateName") == 0);
            }
            continue;
        }
        ok = false;
    }
    if (!ok)
        diags_error(d, path, "Forbidden: must not specify anything other than name and "
                             "generateName, but metadata is implicitly specified");
}

static void check_node(const json_t *s, const char *path, level_t lvl, bool in_metadata,
                       diags_t *d)
{
    static const char *const types[] = {"object", "array", "string", "integer", "number",
                                        "boolean"};
    const char *type = jstr(s, "type");
    bool ios = jtrue(s, "x-kubernetes-int-or-string");
    bool preserve = jtrue(s, "x-kubernetes-preserve-unknown-fields");
    bool embedded = jtrue(s, "x-kubernetes-embedded-resource");
    const json_t *props = json_object_get(s, "properties");
    const json_t *addl = json_object_get(s, "additionalProperties");
    const json_t *items = json_object_get(s, "items");
    const json_t *required = json_object_get(s, "required");
    const json_t *v;
    const char *key;
    char p[CRD_PATH_LEN], q[CRD_PATH_LEN];
    size_t i;

    if (!json_is_object(s)) {
        diags_error(d, path, "Invalid value: \"%s\": must be a schema object", json_kind(s));
        return;
    }
    check_field_kinds(s, path, d);

    /* type */
    path_field(p, path, "type");
    if (type != NULL) {
        bool known = false;
        for (i = 0; i < ARRAY_SIZE(types); i++)
            known = known || strcmp(type, types[i]) == 0;
        if (!known)
            diags_error(d, p, "Unsupported value: \"%s\": supported values: \"array\", "
                              "\"boolean\", \"integer\", \"number\", \"object\", \"string\"",
                        type);
    }
    if (embedded && (type == NULL || strcmp(type, "object") != 0)) {
        diags_error(d, p, "Required value: must be object if x-kubernetes-embedded-resource is true");
    } else if (type == NULL && !ios && !preserve) {
        diags_error(d, p, "Required value: must not be empty %s",
                    lvl == LVL_ROOT   ? "at the root"
                    : lvl == LVL_ITEM ? "for specified array items"
                                      : "for specified object fields");
    }
    if (ios && type != NULL)
        diags_error(d, p, "Invalid value: \"%s\": must be empty if x-kubernetes-int-or-string is "
                          "true (the value may be either)",
                    type);
    if (lvl == LVL_ROOT && type != NULL && strcmp(type, "object") != 0)
        diags_error(d, p, "Invalid value: \"%s\": must be object at the root", type);

    /* extensions */
    if (json_is_false(json_object_get(s, "x-kubernetes-preserve-unknown-fields"))) {
        path_field(p, path, "x-kubernetes-preserve-unknown-fields");
        diags_error(d, p, "Invalid value: false: must be true or undefined");
    }
    if (ios && preserve) {
        path_field(p, path, "x-kubernetes-preserve-unknown-fields");
        diags_error(d, p, "Invalid value: true: must be false if x-kubernetes-int-or-string is true");
    }
    if (ios && embedded) {
        path_field(p, path, "x-kubernetes-embedded-resource");
        diags_error(d, p, "Invalid value: true: must be false if x-kubernetes-int-or-string is true");
    }
    if (embedded && !preserve && json_object_size(props) == 0) {
        path_field(p, path, "properties");
        diags_error(d, p, "Required value: must not be empty if x-kubernetes-embedded-resource is "
                          "true without x-kubernetes-preserve-unknown-fields");
    }
    if (lvl == LVL_ROOT && (ios || embedded))
        diags_error(d, path, "Forbidden: x-kubernetes-int-or-string and "
                             "x-kubernetes-embedded-resource must not be used at the root");

    /* arrays */
    if (type != NULL && strcmp(type, "array") == 0 && items == NULL) {
        path_field(p, path, "items");
        diags_error(d, p, "Required value: must be specified");
    }
    if (items != NULL) {
        path_field(p, path, "items");
        if (type != NULL && strcmp(type, "array") != 0)
            diags_error(d, p, "Forbidden: only allowed for type array");
        if (json_is_object(items))
            check_node(items, p, LVL_ITEM, in_metadata, d);
    }

    /* objects */
    if (props != NULL && type != NULL && strcmp(type, "object") != 0) {
        path_field(p, path, "properties");
        diags_error(d, p, "Forbidden: only allowed for type object");
    }
    json_object_foreach((json_t *)props, key, v) {
        path_key(p, path, "properties", key);
        if (lvl == LVL_ROOT && strcmp(key, "metadata") == 0) {
            if (!json_is_string(json_object_get(v, "type")) || strcmp(jstr(v, "type"), "object"))
                diags_error(d, p, "Invalid value: type must be object");
            check_root_metadata(v, p, d);
            check_node(v, p, LVL_FIELD, true, d);
            continue;
        }
        if ((lvl == LVL_ROOT || embedded) &&
            (strcmp(key, "kind") == 0 || strcmp(key, "apiVersion") == 0) &&
            (jstr(v, "type") == NULL || strcmp(jstr(v, "type"), "string") != 0))
            diags_error(d, p, "Invalid value: type must be string");
        check_node(v, p, LVL_FIELD, in_metadata, d);
    }
    if (addl != NULL) {
        path_field(p, path, "additionalProperties");
        if (lvl == LVL_ROOT)
            diags_error(d, p, "Forbidden: must not be used at the root");
        if (json_object_size(props) > 0)
            diags_error(d, p, "Forbidden: additionalProperties and properties are mutual exclusive");
        if (json_is_false(addl))
            diags_error(d, p, "Forbidden: additionalProperties: false is not structural (unknown "
                              "fields are pruned instead)");
        if (json_is_object(addl))
            check_node(addl, p, LVL_FIELD, in_metadata, d);
    }
    json_array_foreach(required, i, v) {
        path_field(p, path, "required");
        path_index(q, p, i);
        if (!json_is_string(v)) {
            diags_error(d, q, "Invalid value: must be a string");
        } else if (json_object_get(props, json_string_value(v)) == NULL && !preserve &&
                   addl == NULL) {
            /* Stricter than the API server: such a field would be pruned before it is checked,
             * so every object would be refused. */
            diags_error(d, q, "Invalid value: \"%s\": required field is not declared in properties",
                        json_string_value(v));
        }
    }

    /* value validations */
    if (jtrue(s, "uniqueItems")) {
        path_field(p, path, "uniqueItems");
        diags_error(d, p, "Forbidden: uniqueItems cannot be set to true since the runtime "
                          "complexity becomes quadratic");
    }
    if (jstr(s, "pattern") != NULL) {
        regex_t re;
        err_msg_t msg;
        path_field(p, path, "pattern");
        if (crd_pattern_compile(jstr(s, "pattern"), &re, &msg) == ERR_OK)
            regfree(&re);
        else
            diags_error(d, p, "Invalid value: must be a valid regular expression: %s", msg.text);
    }
    check_bounds(s, path, "minimum", "maximum", d);
    check_bounds(s, path, "minLength", "maxLength", d);
    check_bounds(s, path, "minItems", "maxItems", d);
    check_bounds(s, path, "minProperties", "maxProperties", d);
    check_list_extensions(s, path, d);
    check_junctors(s, path, d);
    if (json_object_get(s, "x-kubernetes-validations") != NULL) {
        path_field(p, path, "x-kubernetes-validations");
        check_validations(json_object_get(s, "x-kubernetes-validations"), p, d);
    }

    /* enum values and the default must be valid against this very schema */
    json_array_foreach(json_object_get(s, "enum"), i, v) {
        path_field(p, path, "enum");
        path_index(q, p, i);
        crd_schema_validate(s, v, q, d);
    }
    if (json_object_get(s, "default") != NULL) {
        path_field(p, path, "default");
        if (in_metadata)
            diags_error(d, p, "Forbidden: must not be set inside metadata");
        else
            validate_node(s, json_object_get(s, "default"), p, false, d);
    }
}

void crd_schema_check(const json_t *schema, const char *path, diags_t *d)
{
    check_node(schema, path ? path : "", LVL_ROOT, false, d);
}

/* ------------------------------------------------------------------------------------------ */
/* CustomResourceDefinition objects                                                           */
/* ------------------------------------------------------------------------------------------ */

const json_t *crd_version_schema(const json_t *crd, const char *version)
{
    const json_t *versions = json_object_get(json_object_get(crd, "spec"), "versions"), *v;
    size_t i;

    json_array_foreach(versions, i, v) {
        const char *name = jstr(v, "name");
        if (name != NULL && strcmp(name, version) == 0 && jtrue(v, "served"))
            return json_object_get(json_object_get(v, "schema"), "openAPIV3Schema");
    }
    return NULL;
}

/* The schema node a printer-column / selectable-field JSONPath designates, NULL when the path
 * leaves the schema. Supports ".a.b", ".a[0]", ".a[*]" and ".a[?(@.x=='y')].b". Paths under
 * .metadata resolve to `meta_marker` (ObjectMeta is not in the schema). */
static const json_t *resolve_json_path(const json_t *schema, const char *jp, const json_t *marker)
{
    const json_t *node = schema;
    const char *p = jp;

    if (strncmp(jp, ".metadata.", 10) == 0)
        return marker;
    if (p[0] != '.')
        return NULL;
    while (*p != '\0') {
        char name[256];
        size_t n = 0;
        if (*p == '.') {
            p++;
            while (*p != '\0' && *p != '.' && *p != '[' && n + 1 < sizeof(name))
                name[n++] = *p++;
            name[n] = '\0';
            if (n == 0)
                return NULL;
            if (json_object_get(json_object_get(node, "properties"), name) != NULL)
                node = json_object_get(json_object_get(node, "properties"), name);
            else if (json_is_object(json_object_get(node, "additionalProperties")))
                node = json_object_get(node, "additionalProperties");
            else if (jtrue(node, "x-kubernetes-preserve-unknown-fields"))
                return marker;
            else
                return NULL;
        } else if (*p == '[') {
            int depth = 0;
            for (; *p != '\0'; p++) {
                depth += (*p == '[') - (*p == ']');
                if (depth == 0)
                    break;
            }
            if (*p != ']' || jstr(node, "type") == NULL || strcmp(jstr(node, "type"), "array"))
                return NULL;
            p++;
            node = json_object_get(node, "items");
        } else {
            return NULL;
        }
    }
    return node;
}

static void check_names(const json_t *crd, const json_t *spec, diags_t *d)
{
    static const char *const name_fields[] = {"plural", "singular", "kind", "listKind",
                                              "shortNames", "categories"};
    const json_t *names = json_object_get(spec, "names"), *v;
    const char *group = jstr(spec, "group"), *plural = jstr(names, "plural");
    const char *kind = jstr(names, "kind"), *list_kind = jstr(names, "listKind");
    const char *singular = jstr(names, "singular"), *name, *key;
    char p[CRD_PATH_LEN], want[512];
    size_t i;

    if (group == NULL || strchr(group, '.') == NULL || !dns_subdomain(group))
        diags_error(d, "spec.group", "Invalid value: should be a domain with at least one dot");
    if (plural == NULL || !dns1035_label(plural))
        diags_error(d, "spec.names.plural", "Invalid value: must be a lowercase DNS-1035 label");
    if (singular == NULL || !dns1035_label(singular))
        diags_error(d, "spec.names.singular", "Invalid value: must be a lowercase DNS-1035 label");
    if (kind == NULL || kind[0] < 'A' || kind[0] > 'Z')
        diags_error(d, "spec.names.kind", "Invalid value: must be a CamelCase kind");
    snprintf(want, sizeof(want), "%sList", kind ? kind : "");
    if (list_kind == NULL || strcmp(list_kind, want) != 0)
        diags_error(d, "spec.names.listKind", "Invalid value: should be %s", want);
    json_array_foreach(json_object_get(names, "shortNames"), i, v) {
        path_index(p, "spec.names.shortNames", i);
        if (!json_is_string(v) || !dns1035_label(json_string_value(v)))
            diags_error(d, p, "Invalid value: must be a lowercase DNS-1035 label");
    }
    json_object_foreach((json_t *)names, key, v) {
        bool known = false;
        for (i = 0; i < ARRAY_SIZE(name_fields); i++)
            known = known || strcmp(key, name_fields[i]) == 0;
        if (!known) {
            path_field(p, "spec.names", key);
            diags_error(d, p, "unknown field of CustomResourceDefinitionNames");
        }
    }
    name = jstr(json_object_get(crd, "metadata"), "name");
    snprintf(want, sizeof(want), "%s.%s", plural ? plural : "", group ? group : "");
    if (name == NULL || strcmp(name, want) != 0)
        diags_error(d, "metadata.name", "Invalid value: must be spec.names.plural+\".\"+spec.group "
                                        "(%s)",
                    want);
}

static void check_columns(const json_t *ver, const json_t *schema, const char *path, diags_t *d)
{
    static const char *const types[] = {"integer", "number", "string", "boolean", "date"};
    const json_t *cols = json_object_get(ver, "additionalPrinterColumns"), *col;
    json_t *meta_marker = json_object();
    char p[CRD_PATH_LEN], q[CRD_PATH_LEN];
    size_t i;

    json_array_foreach(cols, i, col) {
        const char *name = jstr(col, "name"), *type = jstr(col, "type");
        const char *jp = jstr(col, "jsonPath");
        long long prio;
        bool known = false;
        path_field(p, path, "additionalPrinterColumns");
        path_index(q, p, i);
        if (name == NULL || name[0] == '\0')
            diags_error(d, q, "name: Required value");
        for (size_t t = 0; type != NULL && t < ARRAY_SIZE(types); t++)
            known = known || strcmp(type, types[t]) == 0;
        if (!known)
            diags_error(d, q, "type: Unsupported value: supported values: integer, number, string, "
                              "boolean, date");
        if (json_object_get(col, "priority") != NULL &&
            (!json_integral(json_object_get(col, "priority"), &prio) || prio < 0))
            diags_error(d, q, "priority: Invalid value: must be a non-negative integer");
        if (jp == NULL || resolve_json_path(schema, jp, meta_marker) == NULL)
            diags_error(d, q, "jsonPath: Invalid value: \"%s\": does not resolve in the schema",
                        jp ? jp : "");
        for (size_t j = 0; j < i && name != NULL; j++) {
            const char *other = jstr(json_array_get(cols, j), "name");
            if (other != NULL && strcmp(other, name) == 0)
                diags_error(d, q, "name: Duplicate value: \"%s\"", name);
        }
    }
    json_array_foreach(json_object_get(ver, "selectableFields"), i, col) {
        const char *jp = jstr(col, "jsonPath");
        const json_t *node = jp ? resolve_json_path(schema, jp, meta_marker) : NULL;
        path_field(p, path, "selectableFields");
        path_index(q, p, i);
        if (node == NULL || node == meta_marker)
            diags_error(d, q, "jsonPath: Invalid value: \"%s\": must resolve to a field of the "
                              "schema",
                        jp ? jp : "");
        else if (jstr(node, "type") == NULL ||
                 (strcmp(jstr(node, "type"), "string") && strcmp(jstr(node, "type"), "integer") &&
                  strcmp(jstr(node, "type"), "boolean")))
            diags_error(d, q, "jsonPath: Invalid value: must point to a string, integer or "
                              "boolean field");
    }
    if (json_array_size(json_object_get(ver, "selectableFields")) > 8) {
        path_field(p, path, "selectableFields");
        diags_error(d, p, "Too many: must have at most 8 items");
    }
    json_decref(meta_marker);
}

/* Remove the "description" of every schema node under `n` (documentation may differ between
 * versions). `props` is true when `n` is a properties map, whose keys are field names (WPC has a
 * field called "description"). */
static void strip_descriptions_in(json_t *n, bool props)
{
    const char *key;
    json_t *v;
    size_t i;

    if (json_is_object(n)) {
        if (!props && json_is_string(json_object_get(n, "description")))
            json_object_del(n, "description");
        json_object_foreach(n, key, v) strip_descriptions_in(v, !props && strcmp(key, "properties") == 0);
    } else if (json_is_array(n)) {
        json_array_foreach(n, i, v) strip_descriptions_in(v, false);
    }
}

static json_t *strip_descriptions(const json_t *s)
{
    json_t *copy = json_deep_copy(s);

    if (copy != NULL)
        strip_descriptions_in(copy, false);
    return copy;
}

static void check_versions(const json_t *spec, diags_t *d)
{
    static const char *const version_fields[] = {
        "name",   "served",       "storage",  "deprecated", "deprecationWarning",
        "schema", "subresources", "additionalPrinterColumns", "selectableFields"};
    const json_t *versions = json_object_get(spec, "versions"), *ver, *v;
    const json_t *conv = json_object_get(spec, "conversion");
    const char *strategy = jstr(conv, "strategy");
    size_t i, storage = 0, served = 0;
    char p[CRD_PATH_LEN], q[CRD_PATH_LEN];
    const char *key;

    if (json_array_size(versions) == 0) {
        diags_error(d, "spec.versions", "Required value: must have at least one version");
        return;
    }
    json_array_foreach(versions, i, ver) {
        const char *name = jstr(ver, "name"), *warning = jstr(ver, "deprecationWarning");
        const json_t *schema = json_object_get(json_object_get(ver, "schema"), "openAPIV3Schema");
        const json_t *sub = json_object_get(ver, "subresources");
        path_index(p, "spec.versions", i);
        if (name == NULL || !dns1035_label(name))
            diags_error(d, p, "name: Invalid value: must be a DNS-1035 label");
        for (size_t j = 0; j < i && name != NULL; j++) {
            const char *other = jstr(json_array_get(versions, j), "name");
            if (other != NULL && strcmp(other, name) == 0)
                diags_error(d, p, "name: Duplicate value: \"%s\"", name);
        }
        if (!json_is_boolean(json_object_get(ver, "served")) ||
            !json_is_boolean(json_object_get(ver, "storage")))
            diags_error(d, p, "served and storage: Required value: must be booleans");
        storage += jtrue(ver, "storage");
        served += jtrue(ver, "served");
        if (jtrue(ver, "storage") && !jtrue(ver, "served"))
            diags_error(d, p, "storage: Invalid value: the storage version must be served");
        if (warning != NULL && !jtrue(ver, "deprecated"))
            diags_error(d, p, "deprecationWarning: Invalid value: may only be set when deprecated "
                              "is true");
        if (warning != NULL && strlen(warning) > 256)
            diags_error(d, p, "deprecationWarning: Too long: must be at most 256 characters");
        json_object_foreach((json_t *)ver, key, v) {
            bool known = false;
            for (size_t f = 0; f < ARRAY_SIZE(version_fields); f++)
                known = known || strcmp(key, version_fields[f]) == 0;
            if (!known) {
                path_field(q, p, key);
                diags_error(d, q, "unknown field of CustomResourceDefinitionVersion");
            }
        }
        json_object_foreach((json_t *)sub, key, v) {
            char r[CRD_PATH_LEN];
            path_field(r, p, "subresources");
            path_field(q, r, key);
            if (strcmp(key, "status") == 0 && !(json_is_object(v) && json_object_size(v) == 0))
                diags_error(d, q, "Invalid value: must be {}");
            else if (strcmp(key, "status") != 0 && strcmp(key, "scale") != 0)
                diags_error(d, q, "unknown subresource (status and scale exist)");
        }
        path_field(q, p, "schema.openAPIV3Schema");
        if (schema == NULL) {
            diags_error(d, q, "Required value: schemas are required");
            continue;
        }
        crd_schema_check(schema, q, d);
        check_columns(ver, schema, p, d);
    }
    if (storage != 1)
        diags_error(d, "spec.versions", "Invalid value: must have exactly one version marked as "
                                        "storage version (found %zu)",
                    storage);
    if (served == 0)
        diags_error(d, "spec.versions", "Invalid value: must serve at least one version");

    /* With conversion "None" the API server only rewrites apiVersion when it reads an object in
     * another version; served versions whose schemas differ would then show fields under the
     * wrong names. Without a conversion webhook, served schemas must therefore be identical. */
    if (strategy != NULL && strcmp(strategy, "None") != 0)
        diags_error(d, "spec.conversion.strategy",
                    "Unsupported value: \"%s\": sluice ships no conversion webhook", strategy);
    json_array_foreach(versions, i, ver) {
        json_t *a, *b;
        const json_t *first = json_array_get(versions, 0);
        if (i == 0 || !jtrue(ver, "served") || !jtrue(first, "served"))
            continue;
        a = strip_descriptions(json_object_get(json_object_get(first, "schema"), "openAPIV3Schema"));
        b = strip_descriptions(json_object_get(json_object_get(ver, "schema"), "openAPIV3Schema"));
        if (a != NULL && b != NULL && !json_equal(a, b)) {
            path_index(p, "spec.versions", i);
            diags_error(d, p,
                        "schema: Invalid value: served versions %s and %s have different schemas "
                        "but conversion is None (the API server would only rewrite apiVersion)",
                        jstr(first, "name") ? jstr(first, "name") : "?",
                        jstr(ver, "name") ? jstr(ver, "name") : "?");
        }
        json_decref(a);
        json_decref(b);
    }
}

void crd_check(const json_t *crd, diags_t *d)
{
    static const char *const spec_fields[] = {"group", "names", "scope", "versions", "conversion",
                                              "preserveUnknownFields"};
    const json_t *spec = json_object_get(crd, "spec"), *v;
    const char *api = jstr(crd, "apiVersion"), *kind = jstr(crd, "kind"), *scope, *key;
    char p[CRD_PATH_LEN];

    if (api == NULL || strcmp(api, "apiextensions.k8s.io/v1") != 0)
        diags_error(d, "apiVersion", "Invalid value: must be apiextensions.k8s.io/v1");
    if (kind == NULL || strcmp(kind, "CustomResourceDefinition") != 0)
        diags_error(d, "kind", "Invalid value: must be CustomResourceDefinition");
    if (!json_is_object(spec)) {
        diags_error(d, "spec", "Required value");
        return;
    }
    json_object_foreach((json_t *)spec, key, v) {
        bool known = false;
        for (size_t i = 0; i < ARRAY_SIZE(spec_fields); i++)
            known = known || strcmp(key, spec_fields[i]) == 0;
        if (!known) {
            path_field(p, "spec", key);
            diags_error(d, p, "unknown field of CustomResourceDefinitionSpec");
        }
    }
    scope = jstr(spec, "scope");
    if (scope == NULL || (strcmp(scope, "Cluster") != 0 && strcmp(scope, "Namespaced") != 0))
        diags_error(d, "spec.scope", "Unsupported value: supported values: \"Cluster\", "
                                     "\"Namespaced\"");
    if (jtrue(spec, "preserveUnknownFields"))
        diags_error(d, "spec.preserveUnknownFields", "Invalid value: true: must be false");
    check_names(crd, spec, d);
    check_versions(spec, d);
}

/* ------------------------------------------------------------------------------------------ */
/* Loading CRDs and scanning manifests                                                        */
/* ------------------------------------------------------------------------------------------ */

static bool yaml_name(const char *name)
{
    size_t n = strlen(name);

    return name[0] != '.' && ((n > 5 && strcmp(name + n - 5, ".yaml") == 0) ||
                              (n > 4 && strcmp(name + n - 4, ".yml") == 0));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted entry names of `dir` (without "." entries); NULL on error with errno set. */
static char **list_dir(const char *dir, size_t *count)
{
    DIR *dp = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0;

    if (dp == NULL)
        return NULL;
    while ((e = readdir(dp)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            char **grown = realloc(names, ncap * sizeof(*grown));
            if (grown == NULL)
                goto fail;
            names = grown;
            cap = ncap;
        }
        names[n] = strdup(e->d_name);
        if (names[n] == NULL)
            goto fail;
        n++;
    }
    closedir(dp);
    if (n > 1)
        qsort(names, n, sizeof(*names), cmp_str);
    *count = n;
    if (names == NULL)
        names = calloc(1, sizeof(*names));
    return names;
fail:
    closedir(dp);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    errno = ENOMEM;
    return NULL;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; names != NULL && i < n; i++)
        free(names[i]);
    free(names);
}

typedef struct load_ctx_s {
    crd_set_t *set;
    const char *file;
    err_msg_t *msg;
} load_ctx_t;

static err_t on_crd_doc(void *ctx, size_t index, int line, json_t *doc)
{
    load_ctx_t *lc = ctx;

    if (!json_is_object(doc) || jstr(doc, "kind") == NULL ||
        strcmp(jstr(doc, "kind"), "CustomResourceDefinition") != 0)
        return err_set(lc->msg, ERR_INVALID, "%s: doc %zu (line %d): not a CustomResourceDefinition",
                       lc->file, index, line);
    if (json_array_append(lc->set->crds, doc) != 0 ||
        json_array_append_new(lc->set->files, json_string(lc->file)) != 0)
        return err_set(lc->msg, ERR_NOMEM, "%s: out of memory", lc->file);
    return ERR_OK;
}

err_t crd_set_load_dir(crd_set_t *set, const char *dir, err_msg_t *msg)
{
    size_t n = 0;
    char **names = list_dir(dir, &n);
    err_t rc = ERR_OK;

    if (names == NULL)
        return err_set(msg, ERR_IO, "%s: %s", dir, strerror(errno));
    set->crds = json_array();
    set->files = json_array();
    if (set->crds == NULL || set->files == NULL) {
        free_names(names, n);
        return err_set(msg, ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n && rc == ERR_OK; i++) {
        char path[CRD_PATH_LEN];
        FILE *f;
        load_ctx_t lc;
        if (!yaml_name(names[i]))
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        f = fopen(path, "r");
        if (f == NULL) {
            rc = err_set(msg, ERR_IO, "%s: %s", path, strerror(errno));
            break;
        }
        lc.set = set;
        lc.file = path;
        lc.msg = msg;
        rc = yaml_load_file(f, on_crd_doc, &lc, msg);
        if (rc == ERR_PARSE)
            err_prefix(msg, rc, "%s: ", path);
        fclose(f);
    }
    free_names(names, n);
    return rc;
}

void crd_set_fini(crd_set_t *set)
{
    if (set == NULL)
        return;
    json_decref(set->crds);
    json_decref(set->files);
    set->crds = NULL;
    set->files = NULL;
}

const json_t *crd_set_find(const crd_set_t *set, const char *group, const char *kind)
{
    const json_t *crd;
    size_t i;

    json_array_foreach(set->crds, i, crd) {
        const json_t *spec = json_object_get(crd, "spec");
        const char *g = jstr(spec, "group"), *k = jstr(json_object_get(spec, "names"), "kind");
        if (g != NULL && k != NULL && strcmp(g, group) == 0 && strcmp(k, kind) == 0)
            return crd;
    }
    return NULL;
}

bool crd_set_validate_object(const crd_set_t *set, const json_t *obj, diags_t *d)
{
    const char *api = jstr(obj, "apiVersion"), *kind = jstr(obj, "kind"), *slash;
    const json_t *crd, *schema;
    const char *scope;
    char group[256];

    if (api == NULL || kind == NULL)
        return false;
    slash = strchr(api, '/');
    if (slash == NULL || (size_t)(slash - api) >= sizeof(group))
        return false; /* the core group: Namespace, Pod, ... */
    memcpy(group, api, (size_t)(slash - api));
    group[slash - api] = '\0';
    if (strcmp(group, KUEUE_GROUP) != 0)
        return false;
    crd = crd_set_find(set, group, kind);
    if (crd == NULL) {
        diags_error(d, "kind", "Invalid value: \"%s\": no CustomResourceDefinition in crds/ has "
                               "this kind in group %s",
                    kind, group);
        return true;
    }
    schema = crd_version_schema(crd, slash + 1);
    if (schema == NULL) {
        diags_error(d, "apiVersion", "Invalid value: \"%s\": version %s of %s is not served", api,
                    slash + 1, kind);
        return true;
    }
    crd_schema_validate(schema, obj, "", d);
    scope = jstr(json_object_get(crd, "spec"), "scope");
    if (scope != NULL && strcmp(scope, "Cluster") == 0 &&
        json_object_get(json_object_get(obj, "metadata"), "namespace") != NULL)
        diags_error(d, "metadata.namespace", "Invalid value: %s is cluster-scoped; a namespace "
                                             "here is ignored and misleading",
                    kind);
    return true;
}

typedef struct scan_ctx_s {
    const crd_set_t *set;
    const char *file;
    diags_t *d;
    crd_scan_stats_t *stats;
} scan_ctx_t;

static err_t on_manifest_doc(void *ctx, size_t index, int line, json_t *doc)
{
    scan_ctx_t *sc = ctx;
    diags_t local;
    const char *kind = jstr(doc, "kind");
    const char *name = jstr(json_object_get(doc, "metadata"), "name");

    (void)line;
    sc->stats->documents++;
    diags_init(&local);
    if (crd_set_validate_object(sc->set, doc, &local))
        sc->stats->checked++;
    for (size_t i = 0; i < local.len; i++) {
        char path[CRD_PATH_LEN];
        snprintf(path, sizeof(path), "%s: doc %zu (%s %s): %s", sc->file, index,
                 kind ? kind : "?", name ? name : "?", local.items[i].path);
        diags_error(sc->d, path, "%s", local.items[i].message);
    }
    if (local.oom)
        sc->d->oom = true;
    diags_fini(&local);
    return ERR_OK;
}

err_t crd_set_validate_tree(const crd_set_t *set, const char *dir, diags_t *d,
                            crd_scan_stats_t *stats, err_msg_t *msg)
{
    size_t n = 0;
    char **names = list_dir(dir, &n);
    err_t rc = ERR_OK;

    if (names == NULL)
        return errno == ENOENT ? ERR_OK : err_set(msg, ERR_IO, "%s: %s", dir, strerror(errno));
    for (size_t i = 0; i < n && rc == ERR_OK; i++) {
        char path[CRD_PATH_LEN];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        if (stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            rc = crd_set_validate_tree(set, path, d, stats, msg);
        } else if (S_ISREG(st.st_mode) && yaml_name(names[i])) {
            FILE *f = fopen(path, "r");
            scan_ctx_t sc = {set, path, d, stats};
            if (f == NULL) {
                rc = err_set(msg, ERR_IO, "%s: %s", path, strerror(errno));
                break;
            }
            stats->files++;
            rc = yaml_load_file(f, on_manifest_doc, &sc, msg);
            if (rc == ERR_PARSE)
                err_prefix(msg, rc, "%s: ", path);
            fclose(f);
        }
    }
    free_names(names, n);
    return rc;
}
