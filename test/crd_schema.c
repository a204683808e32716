/* crd_schema -- test-only checker for CustomResourceDefinitions and the objects they describe. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "crd_schema.h"
#include "crd_schema_int.h"

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

#define KUEUE_GROUP "kueue.x-k8s.io"

/* ------------------------------------------------------------------------------------------ */
/* Small helpers                                                                              */
/* ------------------------------------------------------------------------------------------ */

void crd__path_field(char *out, const char *path, const char *name)
{
    if (path[0] == '\0')
        snprintf(out, CRD_PATH_LEN, "%s", name);
    else
        snprintf(out, CRD_PATH_LEN, "%s.%s", path, name);
}

void crd__path_index(char *out, const char *path, size_t i)
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
void crd__path_key(char *out, const char *path, const char *child, const char *key)
{
    if (path[0] == '\0')
        snprintf(out, CRD_PATH_LEN, "%s[%s]", child, key);
    else
        snprintf(out, CRD_PATH_LEN, "%s.%s[%s]", path, child, key);
}

const char *crd__jstr(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

bool crd__jtrue(const json_t *obj, const char *key)
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

const char *crd__json_kind(const json_t *v)
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
bool crd__json_integral(const json_t *v, long long *out)
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
double crd__json_num(const json_t *v)
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
        return crd__json_integral(v, &ignored);
    if (strcmp(type, "number") == 0)
        return json_is_number(v);
    return false;
}

bool crd__is_scalar_type(const char *type)
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
bool crd__dns_subdomain(const char *s)
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
bool crd__dns1035_label(const char *s)
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
        if (!crd__dns_subdomain(prefix))
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
        !digits(s + 8, 2) || (s[10] != 'T' && s[10] != 't') || !digits(s + 11, 2) || s[13] != ':' ||
        !digits(s + 14, 2) || s[16] != ':' || !digits(s + 17, 2))
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
    return (s[i] == '+' || s[i] == '-') && i + 6 == n && digits(s + i + 1, 2) && s[i + 3] == ':' &&
           digits(s + i + 4, 2);
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
 * "(?:" becomes "(" and a leading "(?i)" becomes REG_ICASE. Other flags, named groups, \b, \p{..}
 * and backslashes inside brackets are refused.
 */
err_t crd_pattern_compile(const char *pattern, regex_t *out, err_msg_t *msg)
{
    size_t n = strlen(pattern), o = 0, start = 0;
    char *ere = malloc(n * 12 + 1);
    bool in_bracket = false;
    int rc, cflags = REG_EXTENDED | REG_NOSUB;

    if (ere == NULL)
        return err_set(msg, ERR_NOMEM, "pattern %s: out of memory", pattern);
#define EMIT(str)                   \
    do {                            \
        size_t l_ = strlen(str);    \
        memcpy(ere + o, (str), l_); \
        o += l_;                    \
    } while (0)
    /* A leading case-insensitive flag, before or after the anchor: REG_ICASE. */
    if (strncmp(pattern, "(?i)", 4) == 0) {
        cflags |= REG_ICASE;
        start = 4;
    } else if (strncmp(pattern, "^(?i)", 5) == 0) {
        cflags |= REG_ICASE;
        ere[o++] = '^';
        start = 5;
    }
    for (size_t i = start; i < n; i++) {
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
    rc = regcomp(out, ere, cflags);
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

static void validate_list_uniqueness(const json_t *s, const json_t *v, const char *path, diags_t *d)
{
    const char *lt = crd__jstr(s, "x-kubernetes-list-type");
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
                        same =
                            json_equal(map_key_value(items, a, key), map_key_value(items, b, key));
                }
            } else {
                same = false;
            }
            if (same) {
                crd__path_index(p, path, i);
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
    const char *pattern = crd__jstr(s, "pattern"), *format = crd__jstr(s, "format");
    long long bound;
    char buf[160];

    if (crd__json_integral(json_object_get(s, "maxLength"), &bound) && (long long)runes > bound)
        diags_error(d, path, "Too long: may not be more than %lld characters", bound);
    if (crd__json_integral(json_object_get(s, "minLength"), &bound) && (long long)runes < bound)
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
    const char *format = crd__jstr(s, "format");
    double x = crd__json_num(v);
    long long ix;
    char buf[64];

    jtext(v, buf, sizeof(buf));
    if (json_is_number(max)) {
        bool excl = crd__jtrue(s, "exclusiveMaximum");
        if (excl ? x >= crd__json_num(max) : x > crd__json_num(max))
            diags_error(d, path, "Invalid value: %s: should be less than %s%g", buf,
                        excl ? "" : "or equal to ", crd__json_num(max));
    }
    if (json_is_number(min)) {
        bool excl = crd__jtrue(s, "exclusiveMinimum");
        if (excl ? x <= crd__json_num(min) : x < crd__json_num(min))
            diags_error(d, path, "Invalid value: %s: should be greater than %s%g", buf,
                        excl ? "" : "or equal to ", crd__json_num(min));
    }
    /* Stricter than the API server, which does not range-check formats: Kueue's controllers
     * decode these fields into Go int32 and would fail on a larger value. */
    if (format != NULL && strcmp(format, "int32") == 0 && crd__json_integral(v, &ix) &&
        (ix < INT32_MIN || ix > INT32_MAX))
        diags_error(d, path, "Invalid value: %s: must fit in a 32-bit integer (format int32)", buf);
}

static void validate_array(const json_t *s, const json_t *v, const char *path, bool nested,
                           diags_t *d)
{
    const json_t *items = json_object_get(s, "items");
    size_t n = json_array_size(v);
    long long bound;
    char p[CRD_PATH_LEN];

    if (crd__json_integral(json_object_get(s, "maxItems"), &bound) && (long long)n > bound)
        diags_error(d, path, "Too many: %zu: must have at most %lld items", n, bound);
    if (crd__json_integral(json_object_get(s, "minItems"), &bound) && (long long)n < bound)
        diags_error(d, path, "Invalid value: %zu items: should have at least %lld items", n, bound);
    if (json_is_object(items)) {
        for (size_t i = 0; i < n; i++) {
            crd__path_index(p, path, i);
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
    bool preserve = crd__jtrue(s, "x-kubernetes-preserve-unknown-fields");
    size_t n = json_object_size(v), i;
    const json_t *item;
    const char *key;
    long long bound;
    char p[CRD_PATH_LEN];

    if (crd__json_integral(json_object_get(s, "maxProperties"), &bound) && (long long)n > bound)
        diags_error(d, path, "Too many: %zu: must have at most %lld items", n, bound);
    if (crd__json_integral(json_object_get(s, "minProperties"), &bound) && (long long)n < bound)
        diags_error(d, path, "Invalid value: %zu properties: should have at least %lld properties",
                    n, bound);
    json_array_foreach(required, i, item)
    {
        const char *name = json_string_value(item);
        if (name == NULL || json_object_get(v, name) != NULL)
            continue;
        /* Defaulting runs before validation: a defaulted field is never missing. */
        if (json_object_get(json_object_get(props, name), "default") != NULL)
            continue;
        crd__path_field(p, path, name);
        diags_error(d, p, "Required value");
    }
    json_object_foreach((json_t *)v, key, item)
    {
        const json_t *ps = json_object_get(props, key);
        crd__path_field(p, path, key);
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
            diags_error(d, path,
                        "Invalid value: must match exactly one schema (oneOf), matched %zu", hits);
    }
    if (json_is_object(not ) && node_matches(not, v))
        diags_error(d, path, "Invalid value: must not match the schema in \"not\"");
}

/* `nested`: inside anyOf/allOf/oneOf/not, where schemas only restrict values (so undeclared
 * fields are not errors there). */
static void validate_node(const json_t *s, const json_t *v, const char *path, bool nested,
                          diags_t *d)
{
    const char *type = crd__jstr(s, "type");
    const json_t *en = json_object_get(s, "enum");
    bool int_or_string = crd__jtrue(s, "x-kubernetes-int-or-string");
    bool root = !nested && path[0] == '\0';
    char buf[160];

    if (!json_is_object(s))
        return;
    if (json_is_null(v)) {
        if (!crd__jtrue(s, "nullable") && (type != NULL || int_or_string))
            diags_error(d, path, "Invalid value: null: must be of type %s",
                        int_or_string ? "integer or string" : type);
        return;
    }
    if (int_or_string) {
        long long ignored;
        if (!json_is_string(v) && !crd__json_integral(v, &ignored)) {
            diags_error(d, path, "Invalid value: %s: must be of type integer or string",
                        jtext(v, buf, sizeof(buf)));
            return;
        }
    } else if (type != NULL && !type_matches(type, v)) {
        diags_error(d, path, "Invalid value: \"%s\": must be of type %s", crd__json_kind(v), type);
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
            json_array_foreach(en, i, e)
            {
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
    static const char *const known[] = {"name",
                                        "generateName",
                                        "namespace",
                                        "labels",
                                        "annotations",
                                        "finalizers",
                                        "ownerReferences",
                                        "uid",
                                        "resourceVersion",
                                        "generation",
                                        "creationTimestamp",
                                        "deletionTimestamp",
                                        "deletionGracePeriodSeconds",
                                        "managedFields",
                                        "selfLink"};
    const char *key, *name = crd__jstr(meta, "name");
    const json_t *v;
    char p[CRD_PATH_LEN], q[CRD_PATH_LEN];

    if (!json_is_object(meta)) {
        diags_error(d, path, "Invalid value: \"%s\": must be of type object", crd__json_kind(meta));
        return;
    }
    if (name == NULL && crd__jstr(meta, "generateName") == NULL) {
        crd__path_field(p, path, "name");
        diags_error(d, p, "Required value: name or generateName is required");
    } else if (name != NULL && !crd__dns_subdomain(name)) {
        crd__path_field(p, path, "name");
        diags_error(d, p,
                    "Invalid value: \"%s\": a lowercase RFC 1123 subdomain must consist of lower "
                    "case alphanumeric characters, '-' or '.', and must start and end with an "
                    "alphanumeric character",
                    name);
    }
    json_object_foreach((json_t *)meta, key, v)
    {
        bool is_known = false;
        for (size_t i = 0; i < ARRAY_SIZE(known); i++)
            is_known = is_known || strcmp(key, known[i]) == 0;
        crd__path_field(p, path, key);
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
                diags_error(d, p, "Invalid value: \"%s\": must be of type object",
                            crd__json_kind(v));
                continue;
            }
            json_object_foreach((json_t *)v, k, lv)
            {
                path_mapkey(q, p, k);
                if (!qualified_name(k))
                    diags_error(d, q,
                                "Invalid value: \"%s\": name part must consist of "
                                "alphanumeric characters, '-', '_' or '.' (prefix: a DNS "
                                "subdomain), at most 63 characters",
                                k);
                if (!json_is_string(lv))
                    diags_error(d, q, "Invalid value: \"%s\": must be of type string (quote it)",
                                crd__json_kind(lv));
                else if (strcmp(key, "labels") == 0 &&
                         !qualified_part(json_string_value(lv), json_string_length(lv), true))
                    diags_error(d, q,
                                "Invalid value: \"%s\": a valid label value must be 63 "
                                "characters or less, alphanumeric, '-', '_' or '.'",
                                json_string_value(lv));
            }
        }
    }
}

void crd_schema_validate(const json_t *schema, const json_t *instance, const char *path, diags_t *d)
{
    validate_node(schema, instance, path ? path : "", false, d);
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

    if (!json_is_object(doc) || crd__jstr(doc, "kind") == NULL ||
        strcmp(crd__jstr(doc, "kind"), "CustomResourceDefinition") != 0)
        return err_set(lc->msg, ERR_INVALID,
                       "%s: doc %zu (line %d): not a CustomResourceDefinition", lc->file, index,
                       line);
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

    json_array_foreach(set->crds, i, crd)
    {
        const json_t *spec = json_object_get(crd, "spec");
        const char *g = crd__jstr(spec, "group"),
                   *k = crd__jstr(json_object_get(spec, "names"), "kind");
        if (g != NULL && k != NULL && strcmp(g, group) == 0 && strcmp(k, kind) == 0)
            return crd;
    }
    return NULL;
}

bool crd_set_validate_object(const crd_set_t *set, const json_t *obj, diags_t *d)
{
    const char *api = crd__jstr(obj, "apiVersion"), *kind = crd__jstr(obj, "kind"), *slash;
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
        diags_error(d, "kind",
                    "Invalid value: \"%s\": no CustomResourceDefinition in crds/ has "
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
    scope = crd__jstr(json_object_get(crd, "spec"), "scope");
    if (scope != NULL && strcmp(scope, "Cluster") == 0 &&
        json_object_get(json_object_get(obj, "metadata"), "namespace") != NULL)
        diags_error(d, "metadata.namespace",
                    "Invalid value: %s is cluster-scoped; a namespace "
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
    const char *kind = crd__jstr(doc, "kind");
    const char *name = crd__jstr(json_object_get(doc, "metadata"), "name");

    (void)line;
    sc->stats->documents++;
    diags_init(&local);
    if (crd_set_validate_object(sc->set, doc, &local))
        sc->stats->checked++;
    for (size_t i = 0; i < local.len; i++) {
        char path[CRD_PATH_LEN];
        snprintf(path, sizeof(path), "%s: doc %zu (%s %s): %s", sc->file, index, kind ? kind : "?",
                 name ? name : "?", local.items[i].path);
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
        bool link;
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        /* Symlinked directories are not followed (no loops); symlinked files are read. */
        if (lstat(path, &st) != 0)
            continue;
        link = S_ISLNK(st.st_mode);
        if (link && stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            if (link)
                continue;
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
