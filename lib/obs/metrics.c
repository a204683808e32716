/* metrics -- a registry of counters, gauges and histograms with labels, and its Prometheus text. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "obs/metrics.h"

#include "util/grow.h"
#include "util/hmap.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_SERIES 10000

typedef struct series_s {
    char **values;         /* owned: one per label (each owned) */
    double value;          /* counter, gauge; histogram: sum */
    metrics_exact_t exact; /* exact counters (family exact_digits > 0): the value */
    uint64_t count;        /* histogram: observations */
    uint64_t *counts;      /* owned: histogram, per bucket (not cumulative) incl. +Inf last */
} series_t;

struct metrics_family_s {
    metrics_registry_t *r; /* borrowed: the owner */
    char *name;            /* owned */
    char *help;            /* owned */
    metrics_type_t type;
    char *labels[METRICS_MAX_LABELS]; /* owned */
    size_t nlabels;
    double buckets[METRICS_MAX_BUCKETS];
    size_t nbuckets;
    unsigned exact_digits; /* > 0: an exact counter, values in 10^-exact_digits units */
    series_t *series;      /* owned, in first-seen order */
    size_t len, cap;
    util_hmap_t index;  /* series key -> index */
    size_t overflow;    /* index + 1 of the overflow series, 0 while there is none */
    size_t last;        /* index + 1 of the series found last (a cheap first guess), or 0 */
    uint64_t overflows; /* observations that went to the overflow series */
};

struct metrics_registry_s {
    metrics_family_t **families; /* owned, registration order */
    size_t len, cap;
    size_t max_series;
};

/* ---- buffer ------------------------------------------------------------------------------ */

void metrics_buf_fini(metrics_buf_t *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

err_t metrics_buf_reserve(metrics_buf_t *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len - 1)
        return ERR_NOMEM;
    return util_grow((void **)&b->data, &b->cap, b->len + extra + 1, 1);
}

static err_t buf_put(metrics_buf_t *b, const char *s, size_t n)
{
    if (metrics_buf_reserve(b, n) != ERR_OK)
        return ERR_NOMEM;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return ERR_OK;
}

static err_t buf_str(metrics_buf_t *b, const char *s)
{
    return buf_put(b, s, strlen(s));
}

err_t metrics_buf_printf(metrics_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || metrics_buf_reserve(b, (size_t)n) != ERR_OK)
        return ERR_NOMEM;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return ERR_OK;
}

/* ---- names ------------------------------------------------------------------------------- */

/* Prometheus metric names: [a-zA-Z_:][a-zA-Z0-9_:]*; label names the same without ':'. */
static bool valid_name(const char *s, bool colon)
{
    if (s == NULL || *s == '\0')
        return false;
    for (size_t i = 0; s[i] != '\0'; i++) {
        char ch = s[i];
        bool alpha = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
                     (colon && ch == ':');
        if (!alpha && !(i > 0 && ch >= '0' && ch <= '9'))
            return false;
    }
    return true;
}

/* ---- registry ---------------------------------------------------------------------------- */

metrics_registry_t *metrics_registry_new(size_t max_series)
{
    metrics_registry_t *r = calloc(1, sizeof(*r));

    if (r != NULL)
        r->max_series = max_series ? max_series : DEFAULT_MAX_SERIES;
    return r;
}

static void series_fini(const metrics_family_t *f, series_t *s)
{
    for (size_t i = 0; s->values != NULL && i < f->nlabels; i++)
        free(s->values[i]);
    free(s->values);
    free(s->counts);
}

void metrics_family_clear(metrics_family_t *f)
{
    for (size_t i = 0; i < f->len; i++)
        series_fini(f, &f->series[i]);
    f->len = 0;
    f->last = 0;
    f->overflow = 0;
    f->overflows = 0;
    util_hmap_fini(&f->index);
}

static void family_free(metrics_family_t *f)
{
    if (f == NULL)
        return;
    metrics_family_clear(f);
    free(f->series);
    for (size_t i = 0; i < f->nlabels; i++)
        free(f->labels[i]);
    free(f->name);
    free(f->help);
    free(f);
}

void metrics_registry_free(metrics_registry_t *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->len; i++)
        family_free(r->families[i]);
    free(r->families);
    free(r);
}

metrics_family_t *metrics_family_get(const metrics_registry_t *r, const char *name)
{
    for (size_t i = 0; i < r->len; i++)
        if (strcmp(r->families[i]->name, name) == 0)
            return r->families[i];
    return NULL;
}

err_t metrics_family_add(metrics_registry_t *r, const char *name, const char *help,
                         metrics_type_t type, const char *const *labels, const double *buckets,
                         size_t nbuckets, metrics_family_t **out, err_msg_t *msg)
{
    metrics_family_t *f;
    size_t n = 0;

    if (!valid_name(name, true))
        return err_set(msg, ERR_INVALID, "metric %s: not a Prometheus metric name",
                       name ? name : "(null)");
    if (metrics_family_get(r, name) != NULL)
        return err_set(msg, ERR_INVALID, "metric %s: registered twice", name);
    while (labels != NULL && labels[n] != NULL) {
        if (n == METRICS_MAX_LABELS)
            return err_set(msg, ERR_INVALID, "metric %s: more than %d labels", name,
                           METRICS_MAX_LABELS);
        if (!valid_name(labels[n], false) || strncmp(labels[n], "__", 2) == 0 ||
            (type == METRICS_HISTOGRAM && strcmp(labels[n], "le") == 0))
            return err_set(msg, ERR_INVALID, "metric %s: label %s: invalid or reserved name", name,
                           labels[n]);
        for (size_t j = 0; j < n; j++)
            if (strcmp(labels[j], labels[n]) == 0)
                return err_set(msg, ERR_INVALID, "metric %s: label %s named twice", name,
                               labels[n]);
        n++;
    }
    if (type == METRICS_HISTOGRAM) {
        if (buckets == NULL || nbuckets == 0 || nbuckets > METRICS_MAX_BUCKETS)
            return err_set(msg, ERR_INVALID, "metric %s: want 1..%d buckets", name,
                           METRICS_MAX_BUCKETS);
        for (size_t i = 0; i < nbuckets; i++)
            if (!isfinite(buckets[i]) || (i > 0 && !(buckets[i] > buckets[i - 1])))
                return err_set(msg, ERR_INVALID,
                               "metric %s: buckets[%zu]: bounds must be finite and strictly "
                               "increasing",
                               name, i);
    } else if (nbuckets != 0) {
        return err_set(msg, ERR_INVALID, "metric %s: buckets on a metric that is no histogram",
                       name);
    }
    if (util_grow((void **)&r->families, &r->cap, r->len + 1, sizeof(*r->families)) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "out of memory");
    f = calloc(1, sizeof(*f));
    if (f == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    f->r = r;
    f->type = type;
    f->name = strdup(name);
    f->help = strdup(help ? help : "");
    if (f->name == NULL || f->help == NULL)
        goto oom;
    for (f->nlabels = 0; f->nlabels < n; f->nlabels++) {
        f->labels[f->nlabels] = strdup(labels[f->nlabels]);
        if (f->labels[f->nlabels] == NULL)
            goto oom;
    }
    if (type == METRICS_HISTOGRAM) {
        memcpy(f->buckets, buckets, nbuckets * sizeof(*buckets));
        f->nbuckets = nbuckets;
    }
    util_hmap_init(&f->index, 0);
    r->families[r->len++] = f;
    if (out != NULL)
        *out = f;
    return ERR_OK;
oom:
    family_free(f);
    return err_set(msg, ERR_NOMEM, "out of memory");
}

size_t metrics_family_len(const metrics_family_t *f)
{
    return f->len;
}

/* ---- series ------------------------------------------------------------------------------ */

/* The lookup key of a label tuple: each value length-prefixed, so no value can fake a split.
 * Built by hand (no printf): it is made for every observation. */
static char *series_key(const metrics_family_t *f, const char *const *values, char *stack, size_t n)
{
    size_t need = 1, lens[METRICS_MAX_LABELS];
    char *k, *p;

    for (size_t i = 0; i < f->nlabels; i++) {
        lens[i] = strlen(values[i] ? values[i] : "");
        need += 21 + lens[i];
    }
    k = need <= n ? stack : malloc(need);
    if (k == NULL)
        return NULL;
    p = k;
    for (size_t i = 0; i < f->nlabels; i++) {
        char digits[24];
        size_t nd = 0, v = lens[i];
        do {
            digits[nd++] = (char)('0' + v % 10);
            v /= 10;
        } while (v > 0);
        while (nd > 0)
            *p++ = digits[--nd];
        *p++ = ':';
        memcpy(p, values[i] ? values[i] : "", lens[i]);
        p += lens[i];
    }
    *p = '\0';
    return k;
}

/* Append a new series with `values` (copied). */
static err_t series_new(metrics_family_t *f, const char *const *values, size_t *out)
{
    series_t s = {0};

    if (util_grow((void **)&f->series, &f->cap, f->len + 1, sizeof(*f->series)) != ERR_OK)
        return ERR_NOMEM;
    if (f->nlabels > 0) {
        s.values = calloc(f->nlabels, sizeof(*s.values));
        if (s.values == NULL)
            return ERR_NOMEM;
        for (size_t i = 0; i < f->nlabels; i++) {
            s.values[i] = strdup(values[i] ? values[i] : "");
            if (s.values[i] == NULL)
                goto oom;
        }
    }
    if (f->type == METRICS_HISTOGRAM) {
        s.counts = calloc(f->nbuckets + 1, sizeof(*s.counts));
        if (s.counts == NULL)
            goto oom;
    }
    f->series[f->len] = s;
    *out = f->len++;
    return ERR_OK;
oom:
    series_fini(f, &s);
    return ERR_NOMEM;
}

/* Are `values` those of series `s`? */
static bool same_values(const metrics_family_t *f, const series_t *s, const char *const *values)
{
    for (size_t i = 0; i < f->nlabels; i++)
        if (strcmp(s->values[i], values[i] ? values[i] : "") != 0)
            return false;
    return true;
}

/* The series of `values`, made when new (or the overflow series past max_series). */
static err_t series_find(metrics_family_t *f, const char *const *values, series_t **out)
{
    char stack[512], *key;
    size_t i;
    err_t rc = ERR_OK;

    /* Observations come in runs (the workloads of one queue, one after the other): try the
     * series found last before building a key and hashing it. */
    if (f->last != 0 && f->last <= f->len && f->last != f->overflow &&
        same_values(f, &f->series[f->last - 1], values)) {
        *out = &f->series[f->last - 1];
        return ERR_OK;
    }
    key = series_key(f, values, stack, sizeof(stack));
    if (key == NULL)
        return ERR_NOMEM;
    if (util_hmap_get_index(&f->index, key, &i)) {
        *out = &f->series[i];
        f->last = i + 1;
        goto out;
    }
    if (f->len - (f->overflow ? 1 : 0) >= f->r->max_series) {
        if (f->overflow == 0) {
            const char *ov[METRICS_MAX_LABELS];
            for (size_t l = 0; l < f->nlabels; l++)
                ov[l] = METRICS_OVERFLOW;
            char ostack[512], *okey = series_key(f, ov, ostack, sizeof(ostack));
            if (okey == NULL || (rc = series_new(f, ov, &i)) != ERR_OK) {
                rc = ERR_NOMEM;
                if (okey != ostack)
                    free(okey);
                goto out;
            }
            /* Indexed too, so metrics_value() reads it. */
            if (util_hmap_put_index(&f->index, okey, i) != ERR_OK) {
                series_fini(f, &f->series[--f->len]);
                rc = ERR_NOMEM;
            } else {
                f->overflow = i + 1;
            }
            if (okey != ostack)
                free(okey);
            if (rc != ERR_OK)
                goto out;
        }
        f->overflows++;
        *out = &f->series[f->overflow - 1];
        goto out;
    }
    if ((rc = series_new(f, values, &i)) != ERR_OK)
        goto out;
    if (util_hmap_put_index(&f->index, key, i) != ERR_OK) {
        series_fini(f, &f->series[--f->len]);
        rc = ERR_NOMEM;
        goto out;
    }
    *out = &f->series[i];
    f->last = i + 1;
out:
    if (key != stack)
        free(key);
    return rc;
}

err_t metrics_family_set_exact(metrics_family_t *f, unsigned digits)
{
    if (f->type != METRICS_COUNTER || digits == 0 || digits > 18 || f->len > 0)
        return ERR_INVALID;
    f->exact_digits = digits;
    return ERR_OK;
}

err_t metrics_counter_add_exact(metrics_family_t *f, const char *const *values,
                                metrics_exact_t delta)
{
    series_t *s;
    err_t rc;

    if (f->type != METRICS_COUNTER || f->exact_digits == 0)
        return ERR_INVALID;
    if ((rc = series_find(f, values, &s)) != ERR_OK)
        return rc;
    /* Saturate rather than wrap: a counter never goes down (unreachable in practice: 10^26
     * GPU-seconds at 12 digits). */
    s->exact = s->exact + delta < s->exact ? ~(metrics_exact_t)0 : s->exact + delta;
    return ERR_OK;
}

static uint64_t pow10u(unsigned d)
{
    uint64_t p = 1;

    while (d-- > 0)
        p *= 10;
    return p;
}

/* Exact series as a double, for metrics_value(). */
static double exact_double(const metrics_family_t *f, const series_t *s)
{
    uint64_t scale = pow10u(f->exact_digits);

    return (double)(s->exact / scale) + (double)(uint64_t)(s->exact % scale) / (double)scale;
}

const char *metrics_format_exact(metrics_exact_t v, unsigned digits, char *buf, size_t n)
{
    char tmp[64];
    size_t nd = 0, at = 0, frac_end;
    uint64_t scale = pow10u(digits);
    metrics_exact_t ip = v / scale;
    uint64_t fp = (uint64_t)(v % scale);

    if (n < 64) {
        if (n > 0)
            buf[0] = '\0';
        return buf;
    }
    do {
        tmp[nd++] = (char)('0' + (unsigned)(ip % 10));
        ip /= 10;
    } while (ip > 0);
    while (nd > 0)
        buf[at++] = tmp[--nd];
    if (fp != 0) {
        buf[at++] = '.';
        for (unsigned i = 0; i < digits; i++) {
            uint64_t p = pow10u(digits - 1 - i);
            buf[at++] = (char)('0' + (fp / p) % 10);
        }
        frac_end = at;
        while (buf[frac_end - 1] == '0')
            frac_end--;
        at = frac_end;
    }
    buf[at] = '\0';
    return buf;
}

err_t metrics_counter_add(metrics_family_t *f, const char *const *values, double delta)
{
    series_t *s;
    err_t rc;

    if (f->type != METRICS_COUNTER || f->exact_digits > 0 || !(delta >= 0))
        return ERR_INVALID;
    if ((rc = series_find(f, values, &s)) != ERR_OK)
        return rc;
    s->value += delta;
    return ERR_OK;
}

err_t metrics_gauge_set(metrics_family_t *f, const char *const *values, double v)
{
    series_t *s;
    err_t rc;

    if (f->type != METRICS_GAUGE)
        return ERR_INVALID;
    if ((rc = series_find(f, values, &s)) != ERR_OK)
        return rc;
    /* Several label tuples folded into the overflow series add up rather than overwrite. */
    if (f->overflow != 0 && s == &f->series[f->overflow - 1])
        s->value += v;
    else
        s->value = v;
    return ERR_OK;
}

err_t metrics_gauge_add(metrics_family_t *f, const char *const *values, double delta)
{
    series_t *s;
    err_t rc;

    if (f->type != METRICS_GAUGE)
        return ERR_INVALID;
    if ((rc = series_find(f, values, &s)) != ERR_OK)
        return rc;
    s->value += delta;
    return ERR_OK;
}

err_t metrics_histogram_observe(metrics_family_t *f, const char *const *values, double v)
{
    series_t *s;
    size_t b = 0;
    err_t rc;

    if (f->type != METRICS_HISTOGRAM || isnan(v))
        return ERR_INVALID;
    if ((rc = series_find(f, values, &s)) != ERR_OK)
        return rc;
    while (b < f->nbuckets && v > f->buckets[b])
        b++;
    s->counts[b]++;
    s->count++;
    s->value += v;
    return ERR_OK;
}

bool metrics_value(const metrics_family_t *f, const char *const *values, double *out)
{
    char stack[512], *key = series_key(f, values, stack, sizeof(stack));
    size_t i;
    bool found;

    if (key == NULL)
        return false;
    found = util_hmap_get_index(&f->index, key, &i);
    if (key != stack)
        free(key);
    if (!found)
        return false;
    *out = f->type == METRICS_HISTOGRAM ? (double)f->series[i].count
           : f->exact_digits > 0        ? exact_double(f, &f->series[i])
                                        : f->series[i].value;
    return true;
}

/* ---- text exposition --------------------------------------------------------------------- */

const char *metrics_format_value(double v, char *buf, size_t n)
{
    if (isnan(v)) {
        snprintf(buf, n, "NaN");
    } else if (isinf(v)) {
        snprintf(buf, n, v > 0 ? "+Inf" : "-Inf");
    } else if (v == (double)(int64_t)v && v > -9007199254740992.0 && v < 9007199254740992.0 &&
               n >= 24) {
        /* Integers (counts, most quantities) exactly, without printf. */
        char digits[24];
        size_t nd = 0, at = 0;
        int64_t iv = (int64_t)v;
        uint64_t u = iv < 0 ? (uint64_t)(-iv) : (uint64_t)iv;
        do {
            digits[nd++] = (char)('0' + u % 10);
            u /= 10;
        } while (u > 0);
        if (iv < 0)
            buf[at++] = '-';
        while (nd > 0)
            buf[at++] = digits[--nd];
        buf[at] = '\0';
    } else {
        /* The shortest of %.15g..%.17g that reads back exactly (Go's FormatFloat 'g', -1). */
        for (int prec = 15; prec <= 17; prec++) {
            snprintf(buf, n, "%.*g", prec, v);
            if (strtod(buf, NULL) == v)
                break;
        }
    }
    return buf;
}

/* HELP text escapes backslash and newline; label values also the double quote. */
static err_t put_escaped(metrics_buf_t *b, const char *s, bool quote)
{
    const char *run = s;

    for (; *s != '\0'; s++) {
        const char *rep = *s == '\\'           ? "\\\\"
                          : *s == '\n'         ? "\\n"
                          : quote && *s == '"' ? "\\\""
                                               : NULL;
        if (rep == NULL)
            continue;
        if (buf_put(b, run, (size_t)(s - run)) != ERR_OK || buf_str(b, rep) != ERR_OK)
            return ERR_NOMEM;
        run = s + 1;
    }
    return buf_put(b, run, (size_t)(s - run));
}

/* A series' label pairs `a="x",b="y"` (escaped), into `b`: once per series, however many lines
 * (a histogram's buckets) repeat them. */
static err_t put_label_pairs(metrics_buf_t *b, const metrics_family_t *f, const series_t *s)
{
    for (size_t i = 0; i < f->nlabels; i++) {
        if ((i > 0 && buf_put(b, ",", 1) != ERR_OK) || buf_str(b, f->labels[i]) != ERR_OK ||
            buf_put(b, "=\"", 2) != ERR_OK || put_escaped(b, s->values[i], true) != ERR_OK ||
            buf_put(b, "\"", 1) != ERR_OK)
            return ERR_NOMEM;
    }
    return ERR_OK;
}

/* One sample line: name, suffix, `{pairs[,le="le"]}` (nothing when both are empty), the value. */
static err_t put_line(metrics_buf_t *b, const metrics_family_t *f, const char *suffix,
                      const metrics_buf_t *pairs, const char *le, const char *num)
{
    bool braces = pairs->len > 0 || le != NULL;

    if (buf_str(b, f->name) != ERR_OK || buf_str(b, suffix) != ERR_OK ||
        (braces && buf_put(b, "{", 1) != ERR_OK) || buf_put(b, pairs->data, pairs->len) != ERR_OK)
        return ERR_NOMEM;
    if (le != NULL && (buf_str(b, pairs->len > 0 ? ",le=\"" : "le=\"") != ERR_OK ||
                       buf_str(b, le) != ERR_OK || buf_put(b, "\"", 1) != ERR_OK))
        return ERR_NOMEM;
    if ((braces && buf_put(b, "}", 1) != ERR_OK) || buf_put(b, " ", 1) != ERR_OK ||
        buf_str(b, num) != ERR_OK)
        return ERR_NOMEM;
    return buf_put(b, "\n", 1);
}

/* A series' value as the exposition writes it. */
static const char *sample_value(const metrics_family_t *f, const series_t *s, double v, char *num,
                                size_t n)
{
    if (f->exact_digits > 0)
        return metrics_format_exact(s->exact, f->exact_digits, num, n);
    return metrics_format_value(v, num, n);
}

/*
 * A family's text. What repeats is formatted once: a histogram's bucket bounds once per family
 * (a bound like 0.005 takes printf and strtod), a series' label pairs once per series, not once
 * per line (at 1,000 ClusterQueues and LocalQueues the wait-time histograms are 62,000 lines).
 */
static err_t render_family(const metrics_family_t *f, metrics_buf_t *b, metrics_buf_t *pairs)
{
    static const char *const types[] = {"counter", "gauge", "histogram"};
    char le[METRICS_MAX_BUCKETS + 1][40], num[64];

    if (metrics_buf_printf(b, "# HELP %s ", f->name) != ERR_OK ||
        put_escaped(b, f->help, false) != ERR_OK ||
        metrics_buf_printf(b, "\n# TYPE %s %s\n", f->name, types[f->type]) != ERR_OK)
        return ERR_NOMEM;
    if (f->type == METRICS_HISTOGRAM) {
        for (size_t k = 0; k < f->nbuckets; k++)
            metrics_format_value(f->buckets[k], le[k], sizeof(le[k]));
        snprintf(le[f->nbuckets], sizeof(le[f->nbuckets]), "+Inf");
    }
    for (size_t i = 0; i < f->len; i++) {
        const series_t *s = &f->series[i];
        uint64_t cum = 0;
        pairs->len = 0;
        if (put_label_pairs(pairs, f, s) != ERR_OK)
            return ERR_NOMEM;
        if (f->type != METRICS_HISTOGRAM) {
            if (put_line(b, f, "", pairs, NULL, sample_value(f, s, s->value, num, sizeof(num))) !=
                ERR_OK)
                return ERR_NOMEM;
            continue;
        }
        for (size_t k = 0; k <= f->nbuckets; k++) {
            cum += s->counts[k];
            if (put_line(b, f, "_bucket", pairs, le[k],
                         metrics_format_value((double)cum, num, sizeof(num))) != ERR_OK)
                return ERR_NOMEM;
        }
        if (put_line(b, f, "_sum", pairs, NULL, metrics_format_value(s->value, num, sizeof(num))) !=
                ERR_OK ||
            put_line(b, f, "_count", pairs, NULL,
                     metrics_format_value((double)s->count, num, sizeof(num))) != ERR_OK)
            return ERR_NOMEM;
    }
    return ERR_OK;
}

err_t metrics_render(const metrics_registry_t *r, metrics_buf_t *out)
{
    bool any_overflow = false;
    metrics_buf_t pairs = {0};

    if (metrics_buf_reserve(&pairs, 256) != ERR_OK)
        return ERR_NOMEM;
    for (size_t i = 0; i < r->len; i++) {
        if (render_family(r->families[i], out, &pairs) != ERR_OK) {
            metrics_buf_fini(&pairs);
            return ERR_NOMEM;
        }
        any_overflow |= r->families[i]->overflows > 0;
    }
    metrics_buf_fini(&pairs);
    if (!any_overflow)
        return ERR_OK;
    if (buf_str(out, "# HELP sluice_metrics_series_overflow_total Observations folded into a "
                     "metric's overflow series (label values \"" METRICS_OVERFLOW
                     "\") because it reached its series limit.\n"
                     "# TYPE sluice_metrics_series_overflow_total counter\n") != ERR_OK)
        return ERR_NOMEM;
    for (size_t i = 0; i < r->len; i++)
        if (r->families[i]->overflows > 0 &&
            metrics_buf_printf(out, "sluice_metrics_series_overflow_total{metric=\"%s\"} %llu\n",
                               r->families[i]->name,
                               (unsigned long long)r->families[i]->overflows) != ERR_OK)
            return ERR_NOMEM;
    return ERR_OK;
}

/* ---- bucket layouts ---------------------------------------------------------------------- */

size_t metrics_kueue_buckets(size_t n, double *out)
{
    if (n > METRICS_MAX_BUCKETS)
        n = METRICS_MAX_BUCKETS;
    for (size_t i = 0; i < n; i++)
        out[i] = i == 0 ? 1.0 : 2.5 * ldexp(1.0, (int)i - 1);
    return n;
}

size_t metrics_default_buckets(double *out)
{
    static const double def[] = {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};

    memcpy(out, def, sizeof(def));
    return sizeof(def) / sizeof(def[0]);
}
