/* report -- `sluice report`: resource-hours, waits and preemptions from accounting logs. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "acct/report.h"
#include "model/requests.h"

#include "util/alloc.h"
#include "util/duration.h"
#include "util/grow.h"
#include "util/hmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/*
 * Everything is exact until printed: a record's quantity (nano-units) times milliseconds held is
 * a 128-bit integer, summed per group and resource; the table rounds hours to 3 decimals, the
 * JSON also carries the exact resource-seconds. The groups are kept in an array sorted by key
 * at output (the map is for lookups only), so the output does not depend on hashing.
 */

__extension__ typedef __int128 wide_t;

#define NANO_PER_UNIT ((wide_t)1000000000)
#define LINE_MAX_LEN  (1u << 20) /* an accounting line longer than 1 MiB is not one of ours */

typedef struct group_s {
    char *key; /* owned */
    uint64_t admissions;
    uint64_t outcomes[ACCT__OUTCOMES];
    int64_t *waits; /* owned: ms, one per admission counted */
    size_t nwaits, capwaits;
    wide_t *held; /* owned: nano-units x ms per resource (parallel to report->resources) */
    size_t nheld;
} group_t;

struct acct_report_s {
    acct_by_t by;
    int64_t since, until; /* -1: open */
    group_t **groups;     /* owned, in order of first sight */
    size_t ngroups, capgroups;
    util_hmap_t index; /* key -> group index */
    char **resources;  /* owned: every resource seen, in order of first sight */
    size_t nres, capres;
    group_t total;
    uint64_t records;
};

bool acct_by_parse(const char *s, acct_by_t *out)
{
    static const struct {
        const char *name;
        acct_by_t by;
    } names[] = {{"namespace", ACCT_BY_NAMESPACE},
                 {"ns", ACCT_BY_NAMESPACE},
                 {"localqueue", ACCT_BY_LOCALQUEUE},
                 {"lq", ACCT_BY_LOCALQUEUE},
                 {"clusterqueue", ACCT_BY_CLUSTERQUEUE},
                 {"cq", ACCT_BY_CLUSTERQUEUE},
                 {"flavor", ACCT_BY_FLAVOR}};

    for (size_t i = 0; s != NULL && i < sizeof(names) / sizeof(*names); i++) {
        if (strcasecmp(s, names[i].name) == 0) {
            *out = names[i].by;
            return true;
        }
    }
    return false;
}

acct_report_t *acct_report_new(acct_by_t by, int64_t since_ms, int64_t until_ms)
{
    acct_report_t *r = calloc(1, sizeof(*r));

    if (r == NULL)
        return NULL;
    r->by = by;
    r->since = since_ms;
    r->until = until_ms;
    util_hmap_init(&r->index, 0);
    return r;
}

static void group_fini(group_t *g)
{
    free(g->key);
    free(g->waits);
    free(g->held);
}

void acct_report_free(acct_report_t *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->ngroups; i++) {
        group_fini(r->groups[i]);
        free(r->groups[i]);
    }
    free(r->groups);
    for (size_t i = 0; i < r->nres; i++)
        free(r->resources[i]);
    free(r->resources);
    group_fini(&r->total);
    util_hmap_fini(&r->index);
    free(r);
}

/* ---- counting ----------------------------------------------------------------------------- */

static err_t resource_index(acct_report_t *r, const char *name, size_t *out)
{
    for (size_t i = 0; i < r->nres; i++) {
        if (strcmp(r->resources[i], name) == 0) {
            *out = i;
            return ERR_OK;
        }
    }
    if (util_grow((void **)&r->resources, &r->capres, r->nres + 1, sizeof(char *)) != ERR_OK)
        return ERR_NOMEM;
    r->resources[r->nres] = strdup(name);
    if (r->resources[r->nres] == NULL)
        return ERR_NOMEM;
    *out = r->nres++;
    return ERR_OK;
}

static err_t group_get(acct_report_t *r, const char *key, group_t **out)
{
    size_t i;
    group_t *g;

    if (util_hmap_get_index(&r->index, key, &i)) {
        *out = r->groups[i];
        return ERR_OK;
    }
    if (util_grow((void **)&r->groups, &r->capgroups, r->ngroups + 1, sizeof(group_t *)) != ERR_OK)
        return ERR_NOMEM;
    g = calloc(1, sizeof(*g));
    if (g == NULL || (g->key = strdup(key)) == NULL ||
        util_hmap_put_index(&r->index, key, r->ngroups) != ERR_OK) {
        if (g != NULL)
            free(g->key);
        free(g);
        return ERR_NOMEM;
    }
    r->groups[r->ngroups++] = g;
    *out = g;
    return ERR_OK;
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static bool in_range(const acct_report_t *r, int64_t t)
{
    return (r->since < 0 || t >= r->since) && (r->until < 0 || t < r->until);
}

/* Count `rec` into `g`; only its uses of `flavor` when not NULL. */
static err_t group_add(acct_report_t *r, group_t *g, const acct_rec_t *rec, const char *flavor,
                       err_msg_t *msg)
{
    int64_t from = r->since < 0 ? rec->admitted_ms : max64(rec->admitted_ms, r->since);
    int64_t to = r->until < 0 ? rec->ended_ms : min64(rec->ended_ms, r->until);

    if (in_range(r, rec->admitted_ms)) {
        if (util_grow((void **)&g->waits, &g->capwaits, g->nwaits + 1, sizeof(int64_t)) != ERR_OK)
            return err_set(msg, ERR_NOMEM, "out of memory");
        g->waits[g->nwaits++] = rec->admitted_ms - rec->queued_ms;
        g->admissions++;
    }
    if (in_range(r, rec->ended_ms))
        g->outcomes[rec->outcome]++;
    if (to <= from)
        return ERR_OK;
    for (size_t i = 0; i < rec->nuse; i++) {
        const acct_use_t *u = &rec->use[i];
        size_t ri;
        wide_t add, limit = ((wide_t)1 << 125);

        if (flavor != NULL && strcmp(u->flavor, flavor) != 0)
            continue;
        if (resource_index(r, u->resource, &ri) != ERR_OK)
            return err_set(msg, ERR_NOMEM, "out of memory");
        if (ri >= g->nheld) {
            wide_t *h = realloc(g->held, r->nres * sizeof(*h));
            if (h == NULL)
                return err_set(msg, ERR_NOMEM, "out of memory");
            memset(h + g->nheld, 0, (r->nres - g->nheld) * sizeof(*h));
            g->held = h;
            g->nheld = r->nres;
        }
        /* amount <= 1e36 and a span of ms below 2^63: the product fits in 2^125 only when the
         * amount is sane; check before multiplying. */
        if (u->amount != 0 && (wide_t)(to - from) > limit / u->amount)
            return err_set(msg, ERR_OVERFLOW, "%s %s/%s: resource-time out of range", rec->workload,
                           u->flavor, u->resource);
        add = u->amount * (wide_t)(to - from);
        if (g->held[ri] > limit - add)
            return err_set(msg, ERR_OVERFLOW, "%s: total %s-time out of range", g->key,
                           u->resource);
        g->held[ri] += add;
    }
    return ERR_OK;
}

err_t acct_report_add(acct_report_t *r, const acct_rec_t *rec, err_msg_t *msg)
{
    char key[1024];
    group_t *g;
    err_t rc;

    r->records++;
    if (r->by == ACCT_BY_FLAVOR) {
        /* Each flavor the record used once (use[] holds one entry per flavor and resource). */
        for (size_t i = 0; i < rec->nuse; i++) {
            bool seen = false;
            for (size_t k = 0; k < i && !seen; k++)
                seen = strcmp(rec->use[k].flavor, rec->use[i].flavor) == 0;
            if (seen)
                continue;
            const char *f = rec->use[i].flavor[0] ? rec->use[i].flavor : "(none)";
            if (group_get(r, f, &g) != ERR_OK)
                return err_set(msg, ERR_NOMEM, "out of memory");
            rc = group_add(r, g, rec, rec->use[i].flavor, msg);
            if (rc != ERR_OK)
                return rc;
        }
    } else {
        if (r->by == ACCT_BY_NAMESPACE)
            snprintf(key, sizeof(key), "%s", rec->ns);
        else if (r->by == ACCT_BY_LOCALQUEUE)
            snprintf(key, sizeof(key), "%s/%s", rec->ns,
                     rec->local_queue[0] ? rec->local_queue : "(none)");
        else
            snprintf(key, sizeof(key), "%s", rec->cluster_queue);
        if (group_get(r, key, &g) != ERR_OK)
            return err_set(msg, ERR_NOMEM, "out of memory");
        rc = group_add(r, g, rec, NULL, msg);
        if (rc != ERR_OK)
            return rc;
    }
    return group_add(r, &r->total, rec, NULL, msg);
}

err_t acct_report_read(acct_report_t *r, FILE *in, const char *name, FILE *err, size_t *skipped,
                       err_msg_t *msg)
{
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t n;
    err_t rc = ERR_OK;

    while ((n = getline(&line, &cap, in)) >= 0) {
        json_error_t jerr;
        json_t *j;
        acct_rec_t rec;
        err_msg_t m = {{0}};

        lineno++;
        if (n <= 1)
            continue;
        if ((size_t)n > LINE_MAX_LEN) {
            fprintf(err, "%s:%zu: line longer than %u bytes, skipped\n", name, lineno,
                    LINE_MAX_LEN);
            (*skipped)++;
            continue;
        }
        j = util_json_loadb(line, (size_t)n, 0, &jerr);
        if (j == NULL) {
            fprintf(err, "%s:%zu: not JSON (%s), skipped\n", name, lineno, jerr.text);
            (*skipped)++;
            continue;
        }
        rc = acct_record_parse(j, &rec, &m);
        if (rc == ERR_NOT_FOUND) {
            const char *type = json_string_value(json_object_get(j, "type"));
            if (type != NULL && strcmp(type, "rotated") == 0)
                fprintf(err,
                        "%s:%zu: note: rotation deleted %s (records seq %lld..%lld): "
                        "earlier usage is not counted\n",
                        name, lineno, json_string_value(json_object_get(j, "dropped")),
                        (long long)json_integer_value(json_object_get(j, "firstSeq")),
                        (long long)json_integer_value(json_object_get(j, "lastSeq")));
            rc = ERR_OK;
        } else if (rc == ERR_PARSE) {
            fprintf(err, "%s:%zu: %s, skipped\n", name, lineno, m.text);
            (*skipped)++;
            rc = ERR_OK;
        } else if (rc == ERR_OK) {
            rc = acct_report_add(r, &rec, &m);
            acct_rec_fini(&rec);
            if (rc != ERR_OK)
                err_set(msg, rc, "%s:%zu: %s", name, lineno, m.text);
        } else {
            err_set(msg, rc, "%s:%zu: %s", name, lineno, m.text);
        }
        json_decref(j);
        if (rc != ERR_OK)
            break;
    }
    free(line);
    if (rc == ERR_OK && ferror(in))
        rc = err_set(msg, ERR_IO, "%s: %s", name, strerror(errno));
    return rc;
}

/* ---- output ------------------------------------------------------------------------------- */

static bool is_memory(const char *resource)
{
    return strcmp(resource, "memory") == 0 || strcmp(resource, "ephemeral-storage") == 0 ||
           strncmp(resource, "hugepages-", 10) == 0;
}

/* num / den (num >= 0, den > 0) rounded half up to `dec` decimals (0..12), trailing zeros
 * kept for the table's alignment when `fixed`, dropped otherwise. */
static char *ratio(wide_t num, wide_t den, int dec, bool fixed, char *buf, size_t cap)
{
    wide_t scale = 1, ip, fp;
    char digits[40];
    int n = 0;
    size_t len = 0;

    for (int i = 0; i < dec; i++)
        scale *= 10;
    if (num < 0) { /* only from a log whose figures overflowed: printed, never trusted */
        const wide_t max = (wide_t)(((unsigned __int128)1 << 127) - 1);
        num = num < -max ? max : -num;
        if (cap > 1)
            buf[len++] = '-';
    }
    /* Rounded to `dec` decimals without multiplying `num` first (that overflowed for sums near
     * the top of the range: fuzz_acct): the whole part, then the remainder (< den) scaled. */
    ip = num / den;
    fp = (num % den * scale * 2 + den) / (den * 2);
    if (fp == scale) {
        ip++;
        fp = 0;
    }
    do {
        digits[n++] = (char)('0' + (int)(ip % 10));
        ip /= 10;
    } while (ip > 0 && n < 39);
    while (n > 0 && len + 1 < cap)
        buf[len++] = digits[--n];
    if (dec > 0) {
        char frac[16];
        for (int i = dec - 1; i >= 0; i--) {
            frac[i] = (char)('0' + (int)(fp % 10));
            fp /= 10;
        }
        int keep = dec;
        while (!fixed && keep > 0 && frac[keep - 1] == '0')
            keep--;
        if (keep > 0 && len + 1 + (size_t)keep < cap) {
            buf[len++] = '.';
            memcpy(buf + len, frac, (size_t)keep);
            len += (size_t)keep;
        }
    }
    buf[len] = '\0';
    return buf;
}

/* Hours of `nano_ms` of `resource` (GiB-hours for memory-like ones), 3 decimals. */
static char *hours(wide_t nano_ms, const char *resource, bool fixed, char *buf, size_t cap)
{
    wide_t den = NANO_PER_UNIT * 3600000;
    if (is_memory(resource))
        den *= 1073741824;
    return ratio(nano_ms, den, 3, fixed, buf, cap);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest rank: the value at 1-based rank ceil(p * n / 100) of the sorted waits. */
static int64_t percentile(const int64_t *sorted, size_t n, unsigned p)
{
    size_t rank;

    if (n == 0)
        return 0;
    rank = (p * n + 99) / 100;
    return sorted[rank > 0 ? rank - 1 : 0];
}

static int cmp_group(const void *a, const void *b)
{
    return strcmp((*(group_t *const *)a)->key, (*(group_t *const *)b)->key);
}

/* Does resource `x` come before `y` in the columns: GPUs first, then by name? */
static bool res_before(const char *x, const char *y)
{
    if (requests_resource_is_gpu(x) != requests_resource_is_gpu(y))
        return requests_resource_is_gpu(x);
    return strcmp(x, y) < 0;
}

static const char *by_name(acct_by_t by)
{
    static const char *const names[] = {"namespace", "localqueue", "clusterqueue", "flavor"};
    return names[by];
}

static wide_t held_of(const group_t *g, size_t ri)
{
    return ri < g->nheld ? g->held[ri] : 0;
}

static void json_time_or_null(FILE *out, int64_t ms)
{
    char buf[40];
    if (ms < 0) {
        fputs("null", out);
        return;
    }
    chainlog_format_time(ms, buf, sizeof(buf));
    fprintf(out, "\"%s\"", buf);
}

/* A JSON string literal of `s` (keys are Kubernetes names, but a log is input: escape). */
static void json_str(FILE *out, const char *s)
{
    json_t *v = json_string(s);
    char *text = v ? util_json_dumps(v, JSON_ENCODE_ANY) : NULL;

    fputs(text ? text : "\"\"", out);
    free(text);
    json_decref(v);
}

static void write_group_json(FILE *out, const acct_report_t *r, const group_t *g,
                             const size_t *order, int64_t *sorted)
{
    char buf[64];

    fputs("{\"key\":", out);
    json_str(out, g->key);
    fprintf(out, ",\"admissions\":%llu", (unsigned long long)g->admissions);
    for (int o = 0; o < ACCT__OUTCOMES; o++)
        fprintf(out, ",\"%s\":%llu", acct_outcome_str((acct_outcome_t)o),
                (unsigned long long)g->outcomes[o]);
    fputs(",\"resources\":[", out);
    for (size_t i = 0; i < r->nres; i++) {
        const char *res = r->resources[order[i]];
        wide_t h = held_of(g, order[i]);
        fprintf(out, "%s{\"resource\":", i ? "," : "");
        json_str(out, res);
        fprintf(out, ",\"unit\":\"%s\",\"hours\":%s", is_memory(res) ? "GiB-hours" : "hours",
                hours(h, res, false, buf, sizeof(buf)));
        fprintf(out, ",\"resourceSeconds\":%s}",
                ratio(h, NANO_PER_UNIT * 1000, 12, false, buf, sizeof(buf)));
    }
    if (g->nwaits > 0)
        memcpy(sorted, g->waits, g->nwaits * sizeof(*sorted));
    qsort(sorted, g->nwaits, sizeof(*sorted), cmp_i64);
    fputs("],\"waitSeconds\":", out);
    if (g->nwaits == 0) {
        fputs("null", out);
    } else {
        char d[DURATION_STR_MAX];
        fprintf(out, "{\"p50\":%s", duration_format_secs(percentile(sorted, g->nwaits, 50), d));
        fprintf(out, ",\"p90\":%s", duration_format_secs(percentile(sorted, g->nwaits, 90), d));
        fprintf(out, ",\"p99\":%s}", duration_format_secs(percentile(sorted, g->nwaits, 99), d));
    }
    fputc('}', out);
}

/* One row of cells for group `g` (table and CSV). */
static void row_cells(const acct_report_t *r, const group_t *g, const size_t *order,
                      int64_t *sorted, bool csv, char cells[][48])
{
    size_t c = 0;

    snprintf(cells[c++], 48, "%llu", (unsigned long long)g->admissions);
    for (size_t i = 0; i < r->nres; i++)
        hours(held_of(g, order[i]), r->resources[order[i]], !csv, cells[c++], 48);
    if (g->nwaits > 0)
        memcpy(sorted, g->waits, g->nwaits * sizeof(*sorted));
    qsort(sorted, g->nwaits, sizeof(*sorted), cmp_i64);
    for (unsigned p = 0; p < 3; p++) {
        static const unsigned ps[3] = {50, 90, 99};
        if (g->nwaits == 0)
            snprintf(cells[c++], 48, "%s", csv ? "" : "-");
        else if (csv)
            duration_format_secs(percentile(sorted, g->nwaits, ps[p]), cells[c++]);
        else
            duration_format(percentile(sorted, g->nwaits, ps[p]), cells[c++]);
    }
    for (int o = 0; o < ACCT__OUTCOMES; o++)
        snprintf(cells[c++], 48, "%llu", (unsigned long long)g->outcomes[o]);
}

/* A CSV field: quoted when it holds a comma, quote or newline. */
static void csv_field(FILE *out, const char *s)
{
    if (strpbrk(s, ",\"\n\r") == NULL) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void row_out(FILE *out, acct_out_t fmt, const char *key, char cells[][48], size_t ncols,
                    const size_t *width)
{
    if (fmt == ACCT_OUT_CSV) {
        csv_field(out, key);
        for (size_t c = 0; c < ncols; c++) {
            fputc(',', out);
            csv_field(out, cells[c]);
        }
        fputc('\n', out);
        return;
    }
    fprintf(out, "%-*s", (int)width[0], key);
    for (size_t c = 0; c < ncols; c++)
        fprintf(out, "  %*s", (int)width[c + 1], cells[c]);
    fputc('\n', out);
}

err_t acct_report_write(const acct_report_t *r, acct_out_t fmt, FILE *out, err_msg_t *msg)
{
    size_t ncols = 1 + r->nres + 3 + ACCT__OUTCOMES, maxw = r->total.nwaits;
    size_t *order = calloc(r->nres + 1, sizeof(*order));
    group_t **groups = calloc(r->ngroups + 1, sizeof(*groups));
    char(*cells)[48] = calloc(ncols * (r->ngroups + 1), sizeof(*cells));
    char(*heads)[48] = calloc(ncols, sizeof(*heads));
    size_t *width = calloc(ncols + 1, sizeof(*width));
    int64_t *sorted = NULL;
    static const char *const firsts[] = {"NAMESPACE", "LOCALQUEUE", "CLUSTERQUEUE", "FLAVOR"};
    err_t rc = ERR_OK;

    for (size_t i = 0; i < r->ngroups; i++)
        maxw = r->groups[i]->nwaits > maxw ? r->groups[i]->nwaits : maxw;
    sorted = calloc(maxw + 1, sizeof(*sorted));
    if (order == NULL || groups == NULL || cells == NULL || heads == NULL || width == NULL ||
        sorted == NULL) {
        rc = err_set(msg, ERR_NOMEM, "out of memory");
        goto out;
    }
    /* Columns: GPUs first, then by name (insertion sort: a handful of resources). */
    for (size_t i = 0; i < r->nres; i++) {
        size_t k = i;
        while (k > 0 && res_before(r->resources[i], r->resources[order[k - 1]])) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = i;
    }
    if (r->ngroups > 0)
        memcpy(groups, r->groups, r->ngroups * sizeof(*groups));
    qsort(groups, r->ngroups, sizeof(*groups), cmp_group);

    if (fmt == ACCT_OUT_JSON) {
        fprintf(out, "{\"by\":\"%s\",\"since\":", by_name(r->by));
        json_time_or_null(out, r->since);
        fputs(",\"until\":", out);
        json_time_or_null(out, r->until);
        fprintf(out, ",\"records\":%llu,\"groups\":[", (unsigned long long)r->records);
        for (size_t i = 0; i < r->ngroups; i++) {
            if (i)
                fputc(',', out);
            write_group_json(out, r, groups[i], order, sorted);
        }
        fputs("],\"total\":", out);
        write_group_json(out, r, &r->total, order, sorted);
        fputs("}\n", out);
    } else {
        bool csv = fmt == ACCT_OUT_CSV;
        size_t c = 0;

        /* ADMITTED <resource>-H... WAIT-P50 WAIT-P90 WAIT-P99 FINISHED PREEMPTED EVICTED DELETED */
        snprintf(heads[c++], 48, "ADMITTED");
        for (size_t i = 0; i < r->nres; i++) {
            const char *res = r->resources[order[i]];
            snprintf(heads[c++], 48, "%.40s%s", res, is_memory(res) ? "-GiB-H" : "-H");
        }
        snprintf(heads[c++], 48, "WAIT-P50");
        snprintf(heads[c++], 48, "WAIT-P90");
        snprintf(heads[c++], 48, "WAIT-P99");
        for (int o = 0; o < ACCT__OUTCOMES; o++, c++) {
            const char *s = acct_outcome_str((acct_outcome_t)o);
            size_t k = 0;
            for (; s[k] != '\0' && k < 47; k++)
                heads[c][k] = (char)(s[k] - 'a' + 'A');
            heads[c][k] = '\0';
        }
        for (size_t g = 0; g < r->ngroups; g++)
            row_cells(r, groups[g], order, sorted, csv, &cells[g * ncols]);
        row_cells(r, &r->total, order, sorted, csv, &cells[r->ngroups * ncols]);
        width[0] = strlen(firsts[r->by]) > 5 ? strlen(firsts[r->by]) : 5;
        for (size_t g = 0; g < r->ngroups; g++)
            width[0] = strlen(groups[g]->key) > width[0] ? strlen(groups[g]->key) : width[0];
        for (size_t k = 0; k < ncols; k++) {
            width[k + 1] = strlen(heads[k]);
            for (size_t g = 0; g <= r->ngroups; g++)
                if (strlen(cells[g * ncols + k]) > width[k + 1])
                    width[k + 1] = strlen(cells[g * ncols + k]);
        }
        row_out(out, fmt, firsts[r->by], heads, ncols, width);
        for (size_t g = 0; g < r->ngroups; g++)
            row_out(out, fmt, groups[g]->key, &cells[g * ncols], ncols, width);
        row_out(out, fmt, "TOTAL", &cells[r->ngroups * ncols], ncols, width);
    }
    if (fflush(out) != 0 || ferror(out))
        rc = err_set(msg, ERR_IO, "writing the report: %s", strerror(errno));
out:
    free(order);
    free(groups);
    free(cells);
    free(heads);
    free(width);
    free(sorted);
    return rc;
}
