/* jsonx -- read typed fields from jansson trees, tracking the field path for diagnostics. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/jsonx.h"

#include "model/object.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- path ------------------------------------------------------------------------------- */

void jsonx_init(jsonx_t *jx, diags_t *diags)
{
    jx->diags = diags;
    jx->path[0] = '\0';
    jx->len = 0;
    jx->nomem = false;
    jx->sugg_key = NULL;
    jx->sugg_n = 0;
}

/*
 * The path buffer is fixed: decoders nest at most a dozen levels and keys are short, but input
 * keys are untrusted, so an over-long segment is cut and the path ends in "...". Popping always
 * returns to the exact previous length, so truncation never corrupts the parent's path.
 */
static size_t path_append(jsonx_t *jx, const char *seg, size_t n)
{
    size_t mark = jx->len;
    size_t room = sizeof(jx->path) - 1 - jx->len;

    if (n > room) {
        n = room;
        memcpy(jx->path + jx->len, seg, n);
        if (n >= 3)
            memcpy(jx->path + jx->len + n - 3, "...", 3);
    } else {
        memcpy(jx->path + jx->len, seg, n);
    }
    jx->len += n;
    jx->path[jx->len] = '\0';
    return mark;
}

size_t jsonx_push_key(jsonx_t *jx, const char *key)
{
    size_t mark = jx->len;

    if (jx->len > 0)
        path_append(jx, ".", 1);
    path_append(jx, key, strlen(key));
    return mark;
}

size_t jsonx_push_index(jsonx_t *jx, size_t i)
{
    char seg[32];
    int n = snprintf(seg, sizeof(seg), "[%zu]", i);

    return path_append(jx, seg, (size_t)n);
}

void jsonx_pop(jsonx_t *jx, size_t mark)
{
    if (mark <= jx->len) {
        jx->len = mark;
        jx->path[mark] = '\0';
    }
}

/* ---- diagnostics --------------------------------------------------------------------------- */

static void vreport(jsonx_t *jx, bool warning, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void vreport(jsonx_t *jx, bool warning, const char *fmt, va_list ap)
{
    char text[1024];

    vsnprintf(text, sizeof(text), fmt, ap);
    if (warning)
        diags_warn(jx->diags, jx->path, "%s", text);
    else
        diags_error(jx->diags, jx->path, "%s", text);
    if (jx->diags->oom)
        jx->nomem = true;
}

void jsonx_error(jsonx_t *jx, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vreport(jx, false, fmt, ap);
    va_end(ap);
}

void jsonx_warn(jsonx_t *jx, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vreport(jx, true, fmt, ap);
    va_end(ap);
}

void jsonx_error_at(jsonx_t *jx, const char *key, const char *fmt, ...)
{
    va_list ap;
    size_t mark = jsonx_push_key(jx, key);

    va_start(ap, fmt);
    vreport(jx, false, fmt, ap);
    va_end(ap);
    jsonx_pop(jx, mark);
}

void jsonx_required(jsonx_t *jx, const char *key)
{
    jsonx_error_at(jx, key, "Required value");
}

void jsonx_known(jsonx_t *jx, const char *key, const char *name)
{
    if (jx->sugg_key != key) {
        jx->sugg_key = key;
        jx->sugg_n = 0;
    }
    if (jx->sugg_n < JSONX_SUGGEST_NAMES)
        jx->sugg_names[jx->sugg_n++] = name;
}

void jsonx_unknown(jsonx_t *jx, const char *key)
{
    suggest_t sugg;

    suggest_init(&sugg, key);
    for (size_t i = 0; jx->sugg_key == key && i < jx->sugg_n; i++)
        suggest_offer(&sugg, jx->sugg_names[i]);
    if (sugg.best != NULL)
        jsonx_error(jx, "unknown field \"%.200s\"; did you mean \"%s\"?", key, sugg.best);
    else
        jsonx_error(jx, "unknown field \"%.200s\"", key);
}

void jsonx_unused(jsonx_t *jx, const char *key)
{
    jsonx_warn(jx, "field \"%s\" is accepted but not supported by sluice; it has no effect", key);
}

bool jsonx_oom(jsonx_t *jx)
{
    jx->nomem = true;
    return false;
}

/* ---- types ----------------------------------------------------------------------------------- */

const char *jsonx_type_name(const json_t *v)
{
    if (v == NULL)
        return "no value"; /* a member that is absent (fuzz_node: a condition without status) */
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
    default:
        return "null";
    }
}

static bool type_error(jsonx_t *jx, const json_t *v, const char *want)
{
    jsonx_error(jx, "must be of type %s, got %s", want, jsonx_type_name(v));
    return false;
}

bool jsonx_want_object(jsonx_t *jx, const json_t *v)
{
    return json_is_object(v) ? true : type_error(jx, v, "object");
}

bool jsonx_want_array(jsonx_t *jx, const json_t *v)
{
    return json_is_array(v) ? true : type_error(jx, v, "array");
}

bool jsonx_want_array_max(jsonx_t *jx, const json_t *v, size_t max)
{
    if (!jsonx_want_array(jx, v))
        return false;
    if (json_array_size(v) > max) {
        jsonx_error(jx, "Too many: %zu: must have at most %zu items", json_array_size(v), max);
        return false;
    }
    return true;
}

static bool set_string(jsonx_t *jx, char **out, const char *s)
{
    char *copy = strdup(s);

    if (copy == NULL)
        return jsonx_oom(jx);
    free(*out);
    *out = copy;
    return true;
}

bool jsonx_string(jsonx_t *jx, const json_t *v, char **out)
{
    if (!json_is_string(v))
        return type_error(jx, v, "string");
    return set_string(jx, out, json_string_value(v));
}

/*
 * Go's strconv.FormatFloat(f, 'g', -1, 64): the shortest decimal that reads back as the same
 * double, printed as %e when the decimal exponent is < -4 or >= 6 (the 'g' rule with precision 6
 * for "shortest"), else as plain digits; exponents have a sign and at least two digits
 * ("1e+06", "1.5e-07"). The shortest digit string is found by trying 1..17 significant digits
 * with snprintf and reading each back with strtod, which is exact for IEEE doubles.
 */
char *jsonx_format_go_float(double f, char *buf, size_t size)
{
    char tmp[40], digits[24];
    int prec, exp10 = 0;
    size_t nd = 0;
    const char *p;
    char *o = buf, *end = buf + size - 1;

    if (size == 0)
        return buf;
    if (f == 0) {
        snprintf(buf, size, "%s", signbit(f) ? "-0" : "0");
        return buf;
    }
    if (!isfinite(f)) {
        snprintf(buf, size, "%s", isnan(f) ? "NaN" : (f > 0 ? "+Inf" : "-Inf"));
        return buf;
    }
    for (prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, f);
        if (strtod(tmp, NULL) == f)
            break;
    }
    /* tmp = "-d.ddddde+XX": collect the digits and the exponent. */
    for (p = tmp; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9' && nd < sizeof(digits) - 1)
            digits[nd++] = *p;
    digits[nd] = '\0';
    if (*p == 'e')
        exp10 = (int)strtol(p + 1, NULL, 10);
    while (nd > 1 && digits[nd - 1] == '0')
        digits[--nd] = '\0';

#define PUT(c)          \
    do {                \
        if (o < end)    \
            *o++ = (c); \
    } while (0)
    if (f < 0)
        PUT('-');
    if (exp10 < -4 || exp10 >= 6) {
        char e[16];
        PUT(digits[0]);
        if (nd > 1) {
            PUT('.');
            for (size_t i = 1; i < nd; i++)
                PUT(digits[i]);
        }
        snprintf(e, sizeof(e), "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
        for (const char *q = e; *q; q++)
            PUT(*q);
    } else {
        int dp = exp10 + 1; /* digits before the decimal point */
        if (dp <= 0) {
            PUT('0');
            PUT('.');
            for (int i = 0; i < -dp; i++)
                PUT('0');
            for (size_t i = 0; i < nd; i++)
                PUT(digits[i]);
        } else {
            for (int i = 0; i < dp; i++)
                PUT((size_t)i < nd ? digits[i] : '0');
            if ((size_t)dp < nd) {
                PUT('.');
                for (size_t i = (size_t)dp; i < nd; i++)
                    PUT(digits[i]);
            }
        }
    }
#undef PUT
    *o = '\0';
    return buf;
}

char *jsonx_scalar_to_string(const json_t *v)
{
    char buf[64];

    switch (json_typeof(v)) {
    case JSON_STRING:
        return strdup(json_string_value(v));
    case JSON_INTEGER:
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return strdup(buf);
    case JSON_REAL:
        return strdup(jsonx_format_go_float(json_real_value(v), buf, sizeof(buf)));
    case JSON_TRUE:
        return strdup("true");
    case JSON_FALSE:
        return strdup("false");
    default:
        return NULL;
    }
}

bool jsonx_string_conv(jsonx_t *jx, const json_t *v, char **out)
{
    char *s;

    if (json_is_object(v) || json_is_array(v) || json_is_null(v))
        return type_error(jx, v, "string");
    s = jsonx_scalar_to_string(v);
    if (s == NULL)
        return jsonx_oom(jx);
    free(*out);
    *out = s;
    return true;
}

bool jsonx_bool(jsonx_t *jx, const json_t *v, bool *out)
{
    if (!json_is_boolean(v))
        return type_error(jx, v, "boolean");
    *out = json_is_true(v);
    return true;
}

static bool get_int(jsonx_t *jx, const json_t *v, int64_t lo, int64_t hi, const char *what,
                    int64_t *out)
{
    int64_t n;

    if (json_is_integer(v)) {
        n = (int64_t)json_integer_value(v);
    } else if (json_is_real(v)) {
        double d = json_real_value(v);
        /* 9.2e18 is the first double above INT64_MAX; trunc() rejects fractions. */
        if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || trunc(d) != d) {
            char buf[40];
            jsonx_error(jx, "Invalid value: %s: must be %s",
                        jsonx_format_go_float(d, buf, sizeof(buf)), what);
            return false;
        }
        n = (int64_t)d;
    } else {
        return type_error(jx, v, "integer");
    }
    if (n < lo || n > hi) {
        jsonx_error(jx, "Invalid value: %lld: must be %s", (long long)n, what);
        return false;
    }
    *out = n;
    return true;
}

bool jsonx_int32(jsonx_t *jx, const json_t *v, int32_t *out)
{
    int64_t n;

    if (!get_int(jx, v, INT32_MIN, INT32_MAX, "a 32-bit integer", &n))
        return false;
    *out = (int32_t)n;
    return true;
}

bool jsonx_int64(jsonx_t *jx, const json_t *v, int64_t *out)
{
    return get_int(jx, v, INT64_MIN, INT64_MAX, "a 64-bit integer", out);
}

bool jsonx_quantity(jsonx_t *jx, const json_t *v, quantity_t *out)
{
    char *s = NULL;
    quantity_t q;
    err_msg_t msg;
    err_t rc;

    if (json_is_boolean(v) || json_is_null(v) || json_is_object(v) || json_is_array(v)) {
        jsonx_error(jx, "must be a quantity (string or number), got %s", jsonx_type_name(v));
        return false;
    }
    s = jsonx_scalar_to_string(v);
    if (s == NULL)
        return jsonx_oom(jx);
    rc = quantity_parse(s, strlen(s), &q, &msg);
    if (rc == ERR_NOMEM) {
        free(s);
        return jsonx_oom(jx);
    }
    if (rc != ERR_OK) {
        if (rc == ERR_OVERFLOW)
            jsonx_error(jx, "invalid quantity \"%s\": value out of range", s);
        else
            jsonx_error(jx, "invalid quantity \"%s\"", s);
        free(s);
        return false;
    }
    free(s);
    *out = q;
    return true;
}

bool jsonx_enum(jsonx_t *jx, const json_t *v, const char *const *values, int *out)
{
    char list[512];
    size_t used = 0;
    const char *s;

    if (!json_is_string(v))
        return type_error(jx, v, "string");
    s = json_string_value(v);
    for (int i = 0; values[i] != NULL; i++) {
        if (strcmp(s, values[i]) == 0) {
            *out = i;
            return true;
        }
    }
    list[0] = '\0';
    for (int i = 0; values[i] != NULL && used < sizeof(list); i++) {
        int n = snprintf(list + used, sizeof(list) - used, "%s\"%s\"", i ? ", " : "", values[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    if (suggest_pick(s, values) != NULL)
        jsonx_error(jx, "Unsupported value: \"%.200s\": supported values: %s; did you mean \"%s\"?",
                    s, list, suggest_pick(s, values));
    else
        jsonx_error(jx, "Unsupported value: \"%.200s\": supported values: %s", s, list);
    return false;
}

/*
 * String-keyed maps (labels, ResourceLists) become arrays sorted by key: one member reader per
 * element type, and one all-or-nothing loop. A member reader fills its element completely or
 * leaves it empty and returns false (having reported why, or recorded OOM).
 */
typedef struct map_ops_s {
    size_t size; /* of one element */
    bool (*member)(jsonx_t *jx, const char *key, const json_t *val, void *elem);
    void (*fini)(void *elem);
    int (*cmp)(const void *a, const void *b);
} map_ops_t;

/* The members of object `v` (at most `max`, 0 = unlimited) as a new sorted array in *items and
 * *len; false (nothing allocated) when `v` or any member is unusable. */
static bool read_map(jsonx_t *jx, const json_t *v, size_t max, const map_ops_t *ops, void **items,
                     size_t *len)
{
    char *arr = NULL;
    size_t n = 0;
    const char *key;
    json_t *val;
    bool ok = true;

    if (!jsonx_want_object(jx, v))
        return false;
    if (max > 0 && json_object_size(v) > max) {
        jsonx_error(jx, "Too many: %zu: must have at most %zu items", json_object_size(v), max);
        return false;
    }
    if (json_object_size(v) > 0) {
        arr = calloc(json_object_size(v), ops->size);
        if (arr == NULL)
            return jsonx_oom(jx);
    }
    json_object_foreach((json_t *)v, key, val)
    {
        size_t mark = jsonx_push_key(jx, key);

        if (ops->member(jx, key, val, arr + n * ops->size))
            n++;
        else
            ok = false;
        jsonx_pop(jx, mark);
    }
    if (!ok) {
        for (size_t i = 0; i < n; i++)
            ops->fini(arr + i * ops->size);
        free(arr);
        return false;
    }
    if (n > 1)
        qsort(arr, n, ops->size, ops->cmp);
    *items = arr;
    *len = n;
    return true;
}

static bool kv_member(jsonx_t *jx, const char *key, const json_t *val, void *elem)
{
    kv_t *kv = elem;
    char *value = NULL;

    if (!jsonx_string_conv(jx, val, &value))
        return false;
    kv->key = strdup(key);
    if (kv->key == NULL) {
        free(value);
        return jsonx_oom(jx);
    }
    kv->value = value;
    return true;
}

static void kv_fini(void *elem)
{
    kv_t *kv = elem;

    free(kv->key);
    free(kv->value);
}

static int kv_cmp(const void *a, const void *b)
{
    return strcmp(((const kv_t *)a)->key, ((const kv_t *)b)->key);
}

bool jsonx_kv_map(jsonx_t *jx, const json_t *v, size_t max, kv_list_t *out)
{
    static const map_ops_t ops = {sizeof(kv_t), kv_member, kv_fini, kv_cmp};
    void *items;
    size_t len;

    if (!read_map(jx, v, max, &ops, &items, &len))
        return false;
    kv_list_fini(out);
    out->items = items;
    out->len = len;
    return true;
}

static bool resource_member(jsonx_t *jx, const char *key, const json_t *val, void *elem)
{
    resource_t *r = elem;
    quantity_t q;

    if (!jsonx_quantity(jx, val, &q))
        return false;
    r->name = strdup(key);
    if (r->name == NULL)
        return jsonx_oom(jx);
    r->value = q;
    return true;
}

static void resource_fini(void *elem)
{
    free(((resource_t *)elem)->name);
}

static int res_cmp(const void *a, const void *b)
{
    return strcmp(((const resource_t *)a)->name, ((const resource_t *)b)->name);
}

bool jsonx_resource_list(jsonx_t *jx, const json_t *v, resource_list_t *out)
{
    static const map_ops_t ops = {sizeof(resource_t), resource_member, resource_fini, res_cmp};
    void *items;
    size_t len;

    if (!read_map(jx, v, 0, &ops, &items, &len))
        return false;
    resource_list_fini(out);
    out->items = items;
    out->len = len;
    return true;
}

bool jsonx_string_array(jsonx_t *jx, const json_t *v, size_t max, bool conv, char ***out, size_t *n)
{
    char **items = NULL;
    size_t len = json_is_array(v) ? json_array_size(v) : 0, i;
    bool ok = true;

    if (!jsonx_want_array_max(jx, v, max ? max : (size_t)-1))
        return false;
    if (len > 0) {
        items = calloc(len, sizeof(*items));
        if (items == NULL)
            return jsonx_oom(jx);
    }
    for (i = 0; i < len; i++) {
        size_t mark = jsonx_push_index(jx, i);
        json_t *item = json_array_get(v, i);

        if (!(conv ? jsonx_string_conv(jx, item, &items[i]) : jsonx_string(jx, item, &items[i])))
            ok = false;
        jsonx_pop(jx, mark);
    }
    if (!ok) {
        strv_free(items, len);
        return false;
    }
    strv_free(*out, *n);
    *out = items;
    *n = len;
    return true;
}

/* ---- time -------------------------------------------------------------------------------------
 */

static bool digits(const char *s, int n, int *out)
{
    int v = 0;

    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

/* RFC 3339 as Go's time.RFC3339 parser accepts it: "YYYY-MM-DDTHH:MM:SS[.frac](Z|+hh:mm|-hh:mm)".
 * The fraction is dropped (whole seconds are all admission ordering needs). */
bool jsonx_parse_time(const char *s, int64_t *out)
{
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int year, mon, day, hour, min, sec, oh = 0, om = 0;
    struct tm tm;
    const char *p;
    int64_t t;

    if (strlen(s) < 20 || !digits(s, 4, &year) || s[4] != '-' || !digits(s + 5, 2, &mon) ||
        s[7] != '-' || !digits(s + 8, 2, &day) || (s[10] != 'T' && s[10] != 't') ||
        !digits(s + 11, 2, &hour) || s[13] != ':' || !digits(s + 14, 2, &min) || s[16] != ':' ||
        !digits(s + 17, 2, &sec))
        return false;
    if (mon < 1 || mon > 12 || day < 1 || day > mdays[mon - 1] || hour > 23 || min > 59 || sec > 59)
        return false;
    if (mon == 2 && day == 29 && !((year % 4 == 0 && year % 100 != 0) || year % 400 == 0))
        return false;
    p = s + 19;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        if (!digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om) || oh > 23 || om > 59)
            return false;
        if (*p == '-') {
            oh = -oh;
            om = -om;
        }
        p += 6;
    } else {
        return false;
    }
    if (*p != '\0')
        return false;
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = year - 1900;
    tm.tm_mon = mon - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = min;
    tm.tm_sec = sec;
    t = (int64_t)timegm(&tm);
    *out = t - (int64_t)oh * 3600 - (int64_t)om * 60;
    return true;
}

bool jsonx_time(jsonx_t *jx, const json_t *v, int64_t *out)
{
    if (!json_is_string(v))
        return type_error(jx, v, "string");
    if (!jsonx_parse_time(json_string_value(v), out)) {
        jsonx_error(jx, "Invalid value: \"%.100s\": must be an RFC 3339 timestamp",
                    json_string_value(v));
        return false;
    }
    return true;
}

err_t jsonx_known_fields(const json_t *o, const char *const *known, const char *path,
                         err_msg_t *msg)
{
    const char *key;
    json_t *v;

    json_object_foreach((json_t *)o, key, v)
    {
        size_t i = 0;
        while (known[i] != NULL && strcmp(known[i], key) != 0)
            i++;
        if (known[i] == NULL)
            return err_set(msg, ERR_INVALID, "%s.%s: unknown field", path, key);
    }
    return ERR_OK;
}
