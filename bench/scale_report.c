/* scale_report -- Kueue's benchmark figures for a run (live or simulated), the API server's
 * request counts, and the table and JSON they are reported in. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "scale_report.h"

#include "model/quantity.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_names[SCALE_CLASSES] = {"small", "medium", "large", "other"};

/* ---- workloads ------------------------------------------------------------------------------ */

int scale_wlstat_record(scale_wlstat_t *w, double now_ms, int64_t created_s, int64_t admitted_s,
                        bool admitted, bool evicted, bool finished)
{
    int changed = 0;

    if (!w->seen) {
        w->seen = true;
        w->first_seen_ms = now_ms;
    }
    if (created_s >= 0)
        w->created_s = created_s;
    /* Kueue's recorder: a record that is Admitted when the previous one was not sets the time
     * to admission again (a readmission overwrites it). */
    if (admitted && !w->admitted) {
        w->admissions++;
        w->admit_seen_ms = now_ms;
        w->admitted_s = admitted_s;
        changed |= SCALE_WL_ADMITTED;
    } else if (!admitted && w->admitted) {
        changed |= SCALE_WL_UNADMIT;
    }
    if (evicted && !w->evicted) {
        w->evictions++;
        changed |= SCALE_WL_EVICTED;
    }
    if (finished && !w->finished) {
        w->finish_seen_ms = now_ms;
        changed |= SCALE_WL_FINISHED;
    }
    w->admitted = admitted;
    w->evicted = evicted;
    w->finished = finished;
    return changed;
}

double scale_wlstat_time_to_admit_ms(const scale_wlstat_t *w)
{
    if (w->admissions == 0)
        return 0; /* Kueue's recorder leaves TimeToAdmitMs at 0 */
    if (w->created_s > 0 && w->admitted_s > 0 && w->admitted_s >= w->created_s)
        return (double)(w->admitted_s - w->created_s) * 1000.0;
    return w->admit_seen_ms - w->first_seen_ms;
}

/* ---- ClusterQueues -------------------------------------------------------------------------- */

void scale_cqstat_record(scale_cqstat_t *s, double now_ms, int64_t usage_milli, int64_t quota_milli,
                         int64_t pending, int64_t reserving, int64_t admitted, bool active)
{
    if (!s->seen) {
        s->seen = true;
        s->first_ms = now_ms;
    } else if (s->usage_milli > 0) {
        s->used += (double)s->usage_milli * (now_ms - s->last_ms);
    }
    s->last_ms = now_ms;
    s->usage_milli = usage_milli;
    if (usage_milli > s->max_usage_milli)
        s->max_usage_milli = usage_milli;
    s->quota_milli = quota_milli;
    s->pending = pending;
    s->reserving = reserving;
    s->admitted = admitted;
    s->active = active;
}

static err_t milli_of(json_t *q, int64_t *out, err_msg_t *msg)
{
    quantity_t v;

    *out = 0;
    if (q == NULL)
        return ERR_OK;
    if (json_is_integer(q)) {
        *out = json_integer_value(q) * 1000;
        return ERR_OK;
    }
    if (!json_is_string(q))
        return err_set(msg, ERR_PARSE, "quantity is not a string");
    if (quantity_parse(json_string_value(q), json_string_length(q), &v, msg) != ERR_OK)
        return ERR_PARSE;
    return quantity_milli_value(v, out);
}

static json_t *first_of(json_t *arr)
{
    return json_array_get(arr, 0);
}

err_t scale_cq_fields(json_t *cq, int64_t *usage_milli, int64_t *quota_milli, int64_t *pending,
                      int64_t *reserving, int64_t *admitted, bool *active, err_msg_t *msg)
{
    json_t *spec = json_object_get(cq, "spec"), *status = json_object_get(cq, "status");
    json_t *fu =
        first_of(json_object_get(first_of(json_object_get(status, "flavorsUsage")), "resources"));
    json_t *fq = first_of(json_object_get(
        first_of(json_object_get(first_of(json_object_get(spec, "resourceGroups")), "flavors")),
        "resources"));
    json_t *c;
    size_t i;

    if (milli_of(json_object_get(fu, "total"), usage_milli, msg) != ERR_OK ||
        milli_of(json_object_get(fq, "nominalQuota"), quota_milli, msg) != ERR_OK)
        return err_prefix(msg, ERR_PARSE, "ClusterQueue: ");
    *pending = json_integer_value(json_object_get(status, "pendingWorkloads"));
    *reserving = json_integer_value(json_object_get(status, "reservingWorkloads"));
    *admitted = json_integer_value(json_object_get(status, "admittedWorkloads"));
    *active = false;
    json_array_foreach(json_object_get(status, "conditions"), i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        const char *s = json_string_value(json_object_get(c, "status"));
        if (t != NULL && s != NULL && strcmp(t, "Active") == 0)
            *active = strcmp(s, "True") == 0;
    }
    return ERR_OK;
}

/* ---- API request counts --------------------------------------------------------------------- */

static scale_api_row_t *api_row(scale_api_t *a, const char *key)
{
    for (size_t i = 0; i < a->n; i++) {
        if (strcmp(a->rows[i].key, key) == 0)
            return &a->rows[i];
    }
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 32;
        scale_api_row_t *rows = realloc(a->rows, cap * sizeof(*rows));
        if (rows == NULL)
            return NULL;
        a->rows = rows;
        a->cap = cap;
    }
    memset(&a->rows[a->n], 0, sizeof(a->rows[0]));
    snprintf(a->rows[a->n].key, sizeof(a->rows[0].key), "%s", key);
    return &a->rows[a->n++];
}

const scale_api_row_t *scale_api_get(const scale_api_t *a, const char *key)
{
    for (size_t i = 0; i < a->n; i++) {
        if (strcmp(a->rows[i].key, key) == 0)
            return &a->rows[i];
    }
    return NULL;
}

err_t scale_api_add(scale_api_t *a, const char *verb, const char *resource, const char *sub,
                    long code, uint64_t count)
{
    char key[96];
    scale_api_row_t *r;

    if (resource == NULL || resource[0] == '\0')
        resource = "(non-resource)";
    snprintf(key, sizeof(key), "%s %s%s%s", verb, resource, sub && sub[0] ? "/" : "",
             sub ? sub : "");
    r = api_row(a, key);
    if (r == NULL)
        return ERR_NOMEM;
    r->total += count;
    if (code == 409)
        r->conflicts += count;
    else if (code == 429)
        r->throttled += count;
    else if (code >= 400 || code == 0)
        r->errors += count;
    return ERR_OK;
}

/* The value of label `name` in `labels` ("a=\"x\",b=\"y\""), copied into buf. */
static void label_of(const char *labels, size_t len, const char *name, char *buf, size_t n)
{
    size_t nl = strlen(name), i = 0, o = 0;

    buf[0] = '\0';
    while (i < len) {
        size_t k = i;
        while (k < len && labels[k] != '=')
            k++;
        if (k + 1 >= len || labels[k + 1] != '"')
            return;
        bool match = k - i == nl && memcmp(labels + i, name, nl) == 0;
        size_t v = k + 2;
        o = 0;
        while (v < len && labels[v] != '"') {
            if (labels[v] == '\\' && v + 1 < len)
                v++;
            if (match && o + 1 < n)
                buf[o++] = labels[v];
            v++;
        }
        if (match) {
            buf[o] = '\0';
            return;
        }
        i = v + 1;
        if (i < len && labels[i] == ',')
            i++;
    }
}

err_t scale_api_parse(scale_api_t *a, const char *text, size_t len, err_msg_t *msg)
{
    static const char metric[] = "apiserver_request_total{";
    const size_t ml = sizeof(metric) - 1;
    size_t pos = 0;

    while (pos < len) {
        const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - line) : len - pos;
        pos += ll + 1;
        if (ll <= ml || memcmp(line, metric, ml) != 0)
            continue;
        const char *close = memchr(line + ml, '}', ll - ml);
        if (close == NULL)
            return err_set(msg, ERR_PARSE, "metrics: unterminated labels");
        size_t lablen = (size_t)(close - (line + ml));
        char verb[32], res[64], sub[32], code[8], num[32];
        label_of(line + ml, lablen, "verb", verb, sizeof(verb));
        label_of(line + ml, lablen, "resource", res, sizeof(res));
        label_of(line + ml, lablen, "subresource", sub, sizeof(sub));
        label_of(line + ml, lablen, "code", code, sizeof(code));
        size_t vl = ll - (size_t)(close + 1 - line);
        if (vl >= sizeof(num))
            return err_set(msg, ERR_PARSE, "metrics: value too long");
        memcpy(num, close + 1, vl);
        num[vl] = '\0';
        char *end;
        double v = strtod(num, &end);
        if (end == num || v < 0)
            return err_set(msg, ERR_PARSE, "metrics: bad value \"%s\"", num);
        if (scale_api_add(a, verb, res, sub, strtol(code, NULL, 10), (uint64_t)llround(v)) !=
            ERR_OK)
            return err_set(msg, ERR_NOMEM, "metrics: out of memory");
    }
    return ERR_OK;
}

err_t scale_api_diff(const scale_api_t *after, const scale_api_t *before, scale_api_t *out)
{
    for (size_t i = 0; i < after->n; i++) {
        const scale_api_row_t *x = &after->rows[i], *b = scale_api_get(before, x->key);
        scale_api_row_t d = *x;
        if (b != NULL) {
            d.total -= b->total <= d.total ? b->total : d.total;
            d.conflicts -= b->conflicts <= d.conflicts ? b->conflicts : d.conflicts;
            d.throttled -= b->throttled <= d.throttled ? b->throttled : d.throttled;
            d.errors -= b->errors <= d.errors ? b->errors : d.errors;
        }
        if (d.total == 0)
            continue;
        scale_api_row_t *r = api_row(out, d.key);
        if (r == NULL)
            return ERR_NOMEM;
        *r = d;
    }
    return ERR_OK;
}

static bool is_write(const char *key)
{
    static const char *const verbs[] = {"POST ", "PUT ", "PATCH ", "DELETE ", "DELETECOLLECTION ",
                                        "APPLY "};
    for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
        if (strncmp(key, verbs[i], strlen(verbs[i])) == 0)
            return true;
    }
    return false;
}

uint64_t scale_api_writes(const scale_api_t *a)
{
    uint64_t n = 0;
    for (size_t i = 0; i < a->n; i++) {
        if (is_write(a->rows[i].key))
            n += a->rows[i].total;
    }
    return n;
}

void scale_api_fini(scale_api_t *a)
{
    free(a->rows);
    memset(a, 0, sizeof(*a));
}

/* ---- a run's figures ------------------------------------------------------------------------ */

void scale_result_from_wl(scale_result_t *r, const scale_wlstat_t *wl, double first_create_ms,
                          double last_create_ms, double last_finish_ms)
{
    const scale_layout_t *l = r->l;
    double adm[SCALE_CLASSES] = {0}, obs[SCALE_CLASSES] = {0}, fin[SCALE_CLASSES] = {0};

    memset(r->cls, 0, sizeof(r->cls));
    r->workloads = l->nwl;
    r->finished = 0;
    r->evictions = 0;
    r->ctrl_admissions = 0;
    for (uint64_t i = 0; i < l->nwl; i++) {
        scale_wlpos_t p;
        if (scale_layout_wl(l, i, &p) != 0)
            continue;
        int c = scale_class_index(p.t->class_name);
        const scale_wlstat_t *w = &wl[i];
        r->cls[c].count++;
        if (w->admissions > 0) {
            r->cls[c].admitted++;
            adm[c] += scale_wlstat_time_to_admit_ms(w);
            obs[c] += w->admit_seen_ms - w->create_ms;
        }
        if (w->finished) {
            r->cls[c].finished++;
            fin[c] += w->finish_seen_ms - w->first_seen_ms;
        }
        r->cls[c].evictions += w->evictions;
        r->evictions += w->evictions;
        r->ctrl_admissions += w->admissions;
        if (w->finished)
            r->finished++;
    }
    /* Kueue averages over every workload of the class, all admitted once its run is over; a run
     * that stopped early averages over those admitted (finished) so far. */
    for (int c = 0; c < SCALE_CLASSES; c++) {
        const scale_class_t *k = &r->cls[c];
        r->cls[c].avg_admit_s = k->admitted ? adm[c] / (double)k->admitted / 1000.0 : NAN;
        r->cls[c].avg_admit_obs_s = k->admitted ? obs[c] / (double)k->admitted / 1000.0 : NAN;
        r->cls[c].avg_finish_s = k->finished ? fin[c] / (double)k->finished / 1000.0 : NAN;
    }
    r->wall_s = r->finished == l->nwl && last_finish_ms > 0
                    ? (last_finish_ms - first_create_ms) / 1000.0
                    : NAN;
    r->gen_s = last_create_ms > 0 ? (last_create_ms - first_create_ms) / 1000.0 : NAN;
    r->work_pct = NAN;
    if (r->wall_s > 0)
        r->work_pct =
            scale_layout_work(l) / ((double)scale_layout_capacity(l) * r->wall_s * 1000.0) * 100.0;
}

void scale_result_cq_usage(scale_result_t *r, const scale_cqstat_t *cq)
{
    double used = 0, first = 0, last = 0;
    int64_t quota = 0;
    bool any = false;

    /* Kueue's CQGroupSummary for the class "cq": Σ CPUUsed, Σ nominal quota, and the monitoring
     * time from the first ClusterQueue event of the class to its last one. */
    for (uint32_t q = 0; q < r->l->ncqs; q++) {
        if (!cq[q].seen)
            continue;
        used += cq[q].used;
        quota += cq[q].quota_milli;
        if (!any || cq[q].first_ms < first)
            first = cq[q].first_ms;
        if (!any || cq[q].last_ms > last)
            last = cq[q].last_ms;
        any = true;
    }
    r->cq_usage_pct =
        (any && quota > 0 && last > first) ? used * 100.0 / ((double)quota * (last - first)) : NAN;
}

/* "ns/name" -> class index, from the name's first dash-separated word. */
static int class_of_sim_name(const char *name)
{
    const char *slash = name ? strchr(name, '/') : NULL;
    char cls[32];
    size_t n;

    if (slash == NULL)
        return SCALE_CLASSES - 1;
    slash++;
    n = strcspn(slash, "-");
    if (n >= sizeof(cls))
        return SCALE_CLASSES - 1;
    memcpy(cls, slash, n);
    cls[n] = '\0';
    return scale_class_index(cls);
}

err_t scale_result_from_sim(scale_result_t *r, json_t *summary, err_msg_t *msg)
{
    json_t *wls = json_object_get(summary, "workloads"), *w;
    json_t *util = first_of(json_object_get(json_object_get(summary, "overall"), "utilization"));
    double adm[SCALE_CLASSES] = {0}, fin[SCALE_CLASSES] = {0};
    double first = -1, last_create = 0, last_finish = 0;
    size_t i;

    if (!json_is_array(wls))
        return err_set(msg, ERR_PARSE, "sim summary: no workloads array");
    if (json_array_size(wls) != r->l->nwl)
        return err_set(msg, ERR_PARSE, "sim summary: %zu workloads, the shape has %llu",
                       json_array_size(wls), (unsigned long long)r->l->nwl);
    memset(r->cls, 0, sizeof(r->cls));
    r->workloads = json_array_size(wls);
    r->finished = 0;
    r->evictions = 0;
    json_array_foreach(wls, i, w)
    {
        int c = class_of_sim_name(json_string_value(json_object_get(w, "name")));
        json_t *sub = json_object_get(w, "submitted"), *la = json_object_get(w, "lastAdmitted");
        json_t *fi = json_object_get(w, "finished");
        double s = json_number_value(sub);

        r->cls[c].count++;
        if (first < 0 || s < first)
            first = s;
        if (s > last_create)
            last_create = s;
        if (json_is_number(la)) {
            r->cls[c].admitted++;
            adm[c] += json_number_value(la) - s;
        }
        if (json_is_number(fi)) {
            r->cls[c].finished++;
            fin[c] += json_number_value(fi) - s;
            r->finished++;
            if (json_number_value(fi) > last_finish)
                last_finish = json_number_value(fi);
        }
        uint64_t pre = (uint64_t)json_integer_value(json_object_get(w, "preemptions"));
        r->cls[c].evictions += pre;
        r->evictions += pre;
    }
    for (int c = 0; c < SCALE_CLASSES; c++) {
        const scale_class_t *k = &r->cls[c];
        r->cls[c].avg_admit_s = k->admitted ? adm[c] / (double)k->admitted : NAN;
        r->cls[c].avg_admit_obs_s = NAN;
        r->cls[c].avg_finish_s = k->finished ? fin[c] / (double)k->finished : NAN;
    }
    if (first < 0)
        first = 0;
    r->wall_s = last_finish - first;
    r->gen_s = last_create - first;
    r->work_pct = r->wall_s > 0
                      ? scale_layout_work(r->l) /
                            ((double)scale_layout_capacity(r->l) * r->wall_s * 1000.0) * 100.0
                      : NAN;
    r->cq_usage_pct = json_is_number(json_object_get(util, "utilization"))
                          ? json_number_value(json_object_get(util, "utilization")) * 100.0
                          : NAN;
    return ERR_OK;
}

void scale_result_fini(scale_result_t *r)
{
    scale_api_fini(&r->api_total);
    scale_api_fini(&r->api_runner);
}

/* ---- printing ------------------------------------------------------------------------------- */

/* A cell: v with `dec` decimals, or "-" when unknown, NaN or negative. */
static void cell(char *buf, size_t n, bool known, double v, int dec)
{
    if (!known || isnan(v) || v < 0)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.*f", dec, v);
}

static void row(FILE *f, const char *label, const char *a, const char *b, const char *c,
                const char *d)
{
    fprintf(f, "| %-48s | %14s | %14s | %14s | %12s |\n", label, a, b, c, d);
}

typedef double (*getter_fn)(const scale_result_t *r, int arg, bool *known);

static void row_of(FILE *f, const char *label, const scale_result_t *live,
                   const scale_result_t *sim, getter_fn get, int arg, int dec, double kueue,
                   double bound)
{
    char a[32], b[32], c[32], d[32];
    bool k1 = false, k2 = false;
    double v1 = live ? get(live, arg, &k1) : NAN, v2 = sim ? get(sim, arg, &k2) : NAN;

    cell(a, sizeof(a), live && k1, v1, dec);
    cell(b, sizeof(b), sim && k2, v2, dec);
    cell(c, sizeof(c), kueue > 0, kueue, dec);
    cell(d, sizeof(d), bound > 0, bound, dec);
    row(f, label, a, b, c, d);
}

static double g_wall(const scale_result_t *r, int arg, bool *k)
{
    (void)arg;
    *k = r->finished == r->workloads && r->workloads > 0;
    return r->wall_s;
}
static double g_finished(const scale_result_t *r, int arg, bool *k)
{
    (void)arg;
    *k = true;
    return (double)r->finished;
}
static double g_gen(const scale_result_t *r, int arg, bool *k)
{
    (void)arg;
    *k = true;
    return r->gen_s;
}
static double g_admit(const scale_result_t *r, int arg, bool *k)
{
    *k = r->cls[arg].admitted > 0;
    return r->cls[arg].avg_admit_s;
}
static double g_admit_obs(const scale_result_t *r, int arg, bool *k)
{
    *k = r->cls[arg].admitted > 0;
    return r->cls[arg].avg_admit_obs_s;
}
static double g_finish(const scale_result_t *r, int arg, bool *k)
{
    *k = r->cls[arg].finished > 0;
    return r->cls[arg].avg_finish_s;
}
static double g_evict(const scale_result_t *r, int arg, bool *k)
{
    (void)arg;
    *k = true;
    return (double)r->evictions;
}
static double g_cqpct(const scale_result_t *r, int arg, bool *k)
{
    (void)arg;
    *k = true;
    return r->cq_usage_pct;
}
static double g_workpct(const scale_result_t *r, int arg, bool *k)
{
    (void)arg;
    *k = r->finished == r->workloads;
    return r->work_pct;
}
static const scale_proc_t *proc_of(const scale_result_t *r, int arg)
{
    switch (arg) {
    case 0:
        return &r->ctrl;
    case 1:
        return &r->runner;
    case 2:
        return &r->apiserver;
    default:
        return &r->etcd;
    }
}
static double g_cpu(const scale_result_t *r, int arg, bool *k)
{
    *k = proc_of(r, arg)->known;
    return proc_of(r, arg)->cpu_s;
}
static double g_rss(const scale_result_t *r, int arg, bool *k)
{
    *k = proc_of(r, arg)->known;
    return proc_of(r, arg)->rss_mib;
}
static double g_cpu_per_wl(const scale_result_t *r, int arg, bool *k)
{
    (void)arg;
    *k = r->ctrl.known && r->finished > 0;
    return r->finished ? r->ctrl.cpu_s * 1000.0 / (double)r->finished : NAN;
}
static double g_writes_per_wl(const scale_result_t *r, int arg, bool *k)
{
    uint64_t all = scale_api_writes(&r->api_total), mine = scale_api_writes(&r->api_runner);
    *k = r->have_api && r->workloads > 0;
    if (arg == 1)
        return (double)mine / (double)r->workloads;
    return (double)(all > mine ? all - mine : 0) / (double)r->workloads;
}

static void print_api(FILE *f, const scale_result_t *r)
{
    uint64_t wall = 0;

    fprintf(f, "\nAPI server requests during the run (apiserver_request_total, after - before):\n");
    fprintf(f, "| %-34s | %9s | %9s | %9s | %7s | %7s |\n", "request", "total", "runner", "sluice+",
            "409", "429");
    fprintf(f, "|%s|%s|%s|%s|%s|%s|\n", "------------------------------------", "-----------",
            "-----------", "-----------", "---------", "---------");
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < r->api_total.n; i++) {
            const scale_api_row_t *t = &r->api_total.rows[i];
            if (is_write(t->key) != (pass == 0))
                continue;
            const scale_api_row_t *m = scale_api_get(&r->api_runner, t->key);
            uint64_t mine = m ? m->total : 0;
            fprintf(f, "| %-34s | %9llu | %9llu | %9llu | %7llu | %7llu |\n", t->key,
                    (unsigned long long)t->total, (unsigned long long)mine,
                    (unsigned long long)(t->total > mine ? t->total - mine : 0),
                    (unsigned long long)t->conflicts, (unsigned long long)t->throttled);
            wall += t->total;
        }
    }
    fprintf(f, "(\"sluice+\" = total - the runner's own requests: sluice's, plus the few the API "
               "server makes itself; 409/429 = of the total)\n");
    (void)wall;
}

void scale_report_print(FILE *f, const scale_result_t *live, const scale_result_t *sim)
{
    const scale_result_t *any = live ? live : sim;
    const scale_layout_t *l = any->l;
    const scale_ref_t *k = &l->shape->kueue;
    double lb = scale_layout_lower_bound_s(l), gen = scale_layout_generation_s(l);
    char hdr[96];

    snprintf(hdr, sizeof(hdr), "%s: %u CQs, %llu workloads", l->shape->name, l->ncqs,
             (unsigned long long)l->nwl);
    fprintf(f, "\n");
    row(f, hdr, "sluice run", "sluice sim", "Kueue", "lower bound");
    fprintf(f, "|%s|%s|%s|%s|%s|\n", "--------------------------------------------------",
            "----------------", "----------------", "----------------", "--------------");
    row_of(f, "workloads finished", live, sim, g_finished, 0, 0, 0, 0);
    row_of(f, "wall, first create -> last finish (s)", live, sim, g_wall, 0, 1, k->wall_s,
           lb > gen ? lb : gen);
    row_of(f, "creation, first -> last create (s)", live, sim, g_gen, 0, 1, 0, gen);
    for (int c = 0; c < 3; c++) {
        char label[64];
        snprintf(label, sizeof(label), "avg time to admission, %s (s)", class_names[c]);
        row_of(f, label, live, sim, g_admit, c, 1, k->admit_s[c], 0);
    }
    for (int c = 0; c < 3; c++) {
        char label[64];
        snprintf(label, sizeof(label), "  observed by the runner (ms clock), %s (s)",
                 class_names[c]);
        row_of(f, label, live, NULL, g_admit_obs, c, 2, 0, 0);
    }
    for (int c = 0; c < 3; c++) {
        char label[64];
        snprintf(label, sizeof(label), "avg time to finish, %s (s)", class_names[c]);
        row_of(f, label, live, sim, g_finish, c, 1, 0, 0);
    }
    row_of(f, "evictions", live, sim, g_evict, 0, 0, (double)k->evictions, 0);
    row_of(f, "ClusterQueue usage, Kueue's computation (%)", live, sim, g_cqpct, 0, 1, 0, 0);
    row_of(f, "useful work / (capacity x wall) (%)", live, sim, g_workpct, 0, 1, 0,
           lb >= gen ? 100.0 : lb / gen * 100.0);
    row_of(f, "controller CPU (s)", live, NULL, g_cpu, 0, 1, k->cpu_s, 0);
    row_of(f, "controller CPU per finished workload (ms)", live, NULL, g_cpu_per_wl, 0, 2,
           k->cpu_s > 0 ? k->cpu_s * 1000.0 / (double)l->nwl : 0, 0);
    row_of(f, "controller peak RSS (MiB)", live, NULL, g_rss, 0, 0, k->rss_mib, 0);
    row_of(f, "controller writes per workload", live, NULL, g_writes_per_wl, 0, 2, 0, 0);
    row_of(f, "runner writes per workload", live, NULL, g_writes_per_wl, 1, 2, 0, 0);
    row_of(f, "runner CPU (s)", live, NULL, g_cpu, 1, 1, 0, 0);
    row_of(f, "kube-apiserver CPU during the run (s)", live, NULL, g_cpu, 2, 1, 0, 0);
    row_of(f, "etcd CPU during the run (s)", live, NULL, g_cpu, 3, 1, 0, 0);
    if (live != NULL && live->have_check) {
        fprintf(f, "\nquota check over %llu Workload records in resourceVersion order: ",
                (unsigned long long)live->check_records);
        if (live->check_violations == 0)
            fprintf(f, "no ClusterQueue or cohort above its quota, no double admission%s\n",
                    live->check_gaps ? " (BUT THE HISTORY HAS GAPS)" : "");
        else
            fprintf(f, "%llu VIOLATION(S); first: %s\n", (unsigned long long)live->check_violations,
                    live->check_first);
        fprintf(f, "highest quota held: a ClusterQueue %.1f cpu, a cohort %.1f cpu\n",
                (double)live->peak_cq_milli / 1000.0, (double)live->peak_cohort_milli / 1000.0);
    }
    if (live != NULL && live->have_api)
        print_api(f, live);
    if (live != NULL && live->load_start >= 0)
        fprintf(f, "\nmachine load average (1 min): %.2f at the start, %.2f at the end\n",
                live->load_start, live->load_end);
    if (live != NULL && live->notes[0])
        fprintf(f, "\nnotes: %s\n", live->notes);
}

/* ---- JSON ----------------------------------------------------------------------------------- */

static json_t *num_or_null(double v)
{
    return isnan(v) ? json_null() : json_real(v);
}

static json_t *proc_json(const scale_proc_t *p)
{
    if (!p->known)
        return json_null();
    return json_pack("{s:o,s:o}", "cpuSeconds", json_real(p->cpu_s), "peakRssMiB",
                     json_real(p->rss_mib));
}

static json_t *api_json(const scale_api_t *a)
{
    json_t *o = json_object();
    for (size_t i = 0; o != NULL && i < a->n; i++) {
        const scale_api_row_t *r = &a->rows[i];
        if (json_object_set_new(o, r->key,
                                json_pack("{s:I,s:I,s:I,s:I}", "total", (json_int_t)r->total,
                                          "conflicts", (json_int_t)r->conflicts, "throttled",
                                          (json_int_t)r->throttled, "errors",
                                          (json_int_t)r->errors)) != 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

json_t *scale_result_json(const scale_result_t *r)
{
    const scale_layout_t *l = r->l;
    json_t *o = NULL, *cls = json_object();

    if (cls == NULL)
        return NULL;
    for (int c = 0; c < SCALE_CLASSES; c++) {
        if (r->cls[c].count == 0)
            continue;
        if (json_object_set_new(
                cls, class_names[c],
                json_pack("{s:I,s:I,s:I,s:o,s:o,s:o,s:I}", "count", (json_int_t)r->cls[c].count,
                          "admitted", (json_int_t)r->cls[c].admitted, "finished",
                          (json_int_t)r->cls[c].finished, "averageTimeToAdmissionSeconds",
                          num_or_null(r->cls[c].avg_admit_s),
                          "averageTimeToAdmissionObservedSeconds",
                          num_or_null(r->cls[c].avg_admit_obs_s), "averageTimeToFinishSeconds",
                          num_or_null(r->cls[c].avg_finish_s), "evictions",
                          (json_int_t)r->cls[c].evictions)) != 0)
            goto fail;
    }
    o = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:o,s:o,s:o,s:o,s:O,s:I,s:o,s:o,s:o}", "mode", r->mode,
                  "shape", l->shape->name, "cohorts", (json_int_t)l->ncohorts, "clusterQueues",
                  (json_int_t)l->ncqs, "workloads", (json_int_t)r->workloads, "finished",
                  (json_int_t)r->finished, "wallSeconds", num_or_null(r->wall_s), "creationSeconds",
                  num_or_null(r->gen_s), "lowerBoundSeconds",
                  json_real(scale_layout_lower_bound_s(l)), "generationSeconds",
                  json_real(scale_layout_generation_s(l)), "classes", cls, "evictions",
                  (json_int_t)r->evictions, "clusterQueueUsagePercent",
                  num_or_null(r->cq_usage_pct), "usefulWorkPercent", num_or_null(r->work_pct),
                  "admissions", json_integer((json_int_t)r->ctrl_admissions));
    if (o == NULL)
        goto fail;
    json_decref(cls);
    cls = NULL;
    if (json_object_set_new(o, "controller", proc_json(&r->ctrl)) ||
        json_object_set_new(o, "runner", proc_json(&r->runner)) ||
        json_object_set_new(o, "apiserverDuringRun", proc_json(&r->apiserver)) ||
        json_object_set_new(o, "etcdDuringRun", proc_json(&r->etcd)))
        goto fail;
    if (r->have_api) {
        uint64_t all = scale_api_writes(&r->api_total), mine = scale_api_writes(&r->api_runner);
        if (json_object_set_new(o, "apiRequests", api_json(&r->api_total)) ||
            json_object_set_new(o, "runnerRequests", api_json(&r->api_runner)) ||
            json_object_set_new(o, "controllerWritesPerWorkload",
                                json_real((double)(all > mine ? all - mine : 0) /
                                          (double)(r->workloads ? r->workloads : 1))))
            goto fail;
    }
    if (r->have_check &&
        json_object_set_new(o, "quotaCheck",
                            json_pack("{s:I,s:I,s:I,s:s,s:f,s:f}", "records",
                                      (json_int_t)r->check_records, "violations",
                                      (json_int_t)r->check_violations, "gaps",
                                      (json_int_t)r->check_gaps, "firstViolation", r->check_first,
                                      "peakClusterQueueCpu", (double)r->peak_cq_milli / 1000.0,
                                      "peakCohortCpu", (double)r->peak_cohort_milli / 1000.0)))
        goto fail;
    if (r->load_start >= 0 &&
        json_object_set_new(o, "loadAverage",
                            json_pack("{s:f,s:f}", "start", r->load_start, "end", r->load_end)))
        goto fail;
    if (r->notes[0] && json_object_set_new(o, "notes", json_string(r->notes)))
        goto fail;
    return o;
fail:
    json_decref(cls);
    json_decref(o);
    return NULL;
}
