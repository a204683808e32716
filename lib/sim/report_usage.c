/* report_usage -- the report's quota charts: usage per ClusterQueue across the cluster, each
 * ClusterQueue's usage stacked per flavor against its quota, and pending workloads over time. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/requests.h"
#include "sim/fmt.h"
#include "sim/report_int.h"

#include <stdlib.h>
#include <string.h>

#define MAX_BANDS 12  /* ClusterQueues drawn in the cluster chart; the rest are "others" */
#define MAX_SMALL 24  /* per-ClusterQueue charts per resource */
#define MAX_LINES 12  /* pending lines */
#define MANY_LQS  200 /* more LocalQueues than this: no chart per LocalQueue */

static const rep_frame_t wide0 = {
    .left = 64, .top = 12, .w = 920, .h = 220, .width = 1000, .height = 262};
static const rep_frame_t small0 = {
    .left = 52, .top = 10, .w = 456, .h = 150, .width = 520, .height = 188};

/* The frames with the run's time range. */
static rep_frame_t frame_of(const rep_frame_t *f0, const sim_rec_t *r)
{
    rep_frame_t f = *f0;
    f.t1 = r->end > 0 ? r->end : 1;
    return f;
}

/* The resources drawn in full: the GPU resources, or every resource when none is a GPU. */
static char **main_res(const rep_t *x, size_t *n)
{
    *n = x->ngpu_res > 0 ? x->ngpu_res : x->nother_res;
    return x->ngpu_res > 0 ? x->gpu_res : x->other_res;
}

static sim_wide_t fr_usage_int(const sim_holder_t *h, const char *res)
{
    sim_wide_t s = 0;
    for (size_t i = 0; i < h->nfrs; i++)
        if (strcmp(h->frs[i].resource, res) == 0)
            s += h->frs[i].usage_int;
    return s;
}

static bool has_res(const sim_holder_t *h, const char *res)
{
    for (size_t i = 0; i < h->nfrs; i++)
        if (strcmp(h->frs[i].resource, res) == 0 &&
            (h->frs[i].usage_series.len > 0 || h->frs[i].nominal_series.len > 0))
            return true;
    return false;
}

typedef struct ranked_s {
    size_t h;
    sim_wide_t key;
    size_t rank;
} ranked_t;

static int ranked_cmp(const void *a, const void *b)
{
    const ranked_t *p = a, *q = b;
    if (p->key != q->key)
        return p->key < q->key ? 1 : -1;
    return (p->rank > q->rank) - (p->rank < q->rank);
}

static int rank_cmp(const void *a, const void *b)
{
    const ranked_t *p = a, *q = b;
    return (p->rank > q->rank) - (p->rank < q->rank);
}

/* The ClusterQueues holding `res`, the `most` biggest users in name order; *n gets the count,
 * *all the number before the cut. Caller frees. */
static ranked_t *queues_with(const rep_t *x, const char *res, size_t most, size_t *n, size_t *all)
{
    ranked_t *v = calloc(x->ncq + 1, sizeof(*v));
    size_t k = 0;

    *n = *all = 0;
    if (v == NULL)
        return NULL;
    for (size_t i = 0; i < x->ncq; i++) {
        const sim_holder_t *h = &x->r->holders[x->cqs[i]];
        if (has_res(h, res))
            v[k++] = (ranked_t){x->cqs[i], fr_usage_int(h, res), i};
    }
    *all = k;
    if (k > most) {
        qsort(v, k, sizeof(*v), ranked_cmp);
        k = most;
    }
    qsort(v, k, sizeof(*v), rank_cmp);
    *n = k;
    return v;
}

/* ---- the cluster: usage per ClusterQueue, stacked ------------------------------------------- */

static bool cluster_chart(rep_t *x, const char *res, size_t idx)
{
    const sim_rec_t *r = x->r;
    const rep_frame_t wide = frame_of(&wide0, r);
    FILE *out = x->out;
    size_t nq, all, nser = 0, ncols = (size_t)wide.w;
    ranked_t *q = queues_with(x, res, MAX_BANDS, &nq, &all);
    const sim_series_t **ser = calloc(r->ngfrs * 2 + r->nholders * 4 + 1, sizeof(*ser));
    qnano_t *v = NULL, *cum = NULL, *cols = NULL, *tmp = NULL;
    rep_grid_t g = {0};
    bool ok = false;
    char id[64];

    if (q == NULL || ser == NULL)
        goto out;
    for (size_t i = 0; i < nq; i++) {
        const sim_holder_t *h = &r->holders[q[i].h];
        for (size_t k = 0; k < h->nfrs; k++)
            if (strcmp(h->frs[k].resource, res) == 0)
                ser[nser++] = &h->frs[k].usage_series;
    }
    for (size_t i = 0; i < r->ngfrs; i++) {
        if (strcmp(r->gfrs[i].resource, res) != 0)
            continue;
        ser[nser++] = &r->gfrs[i].usage_series;
        ser[nser++] = &r->gfrs[i].nominal_series;
    }
    if (rep_grid_init(&g, ser, nser) != ERR_OK)
        goto out;
    /* Bands: the queues in name order, then "others"; then the total and the cluster quota. */
    size_t nb = nq + 1;
    v = calloc(g.n + 1, sizeof(*v));
    tmp = calloc(g.n + 1, sizeof(*tmp));
    cum = calloc((nb + 2) * (g.n + 1), sizeof(*cum));
    cols = calloc((nb + 2) * ncols, sizeof(*cols));
    if (v == NULL || tmp == NULL || cum == NULL || cols == NULL)
        goto out;
    qnano_t *total = cum + nb * g.n, *nominal = cum + (nb + 1) * g.n;
    for (size_t i = 0; i < r->ngfrs; i++) {
        if (strcmp(r->gfrs[i].resource, res) != 0)
            continue;
        rep_grid_eval(&g, &r->gfrs[i].usage_series, tmp);
        for (size_t t = 0; t < g.n; t++)
            total[t] += tmp[t];
        rep_grid_eval(&g, &r->gfrs[i].nominal_series, tmp);
        for (size_t t = 0; t < g.n; t++)
            nominal[t] += tmp[t];
    }
    for (size_t b = 0; b < nq; b++) {
        const sim_holder_t *h = &r->holders[q[b].h];
        qnano_t *c = cum + b * g.n;
        if (b > 0)
            memcpy(c, c - g.n, g.n * sizeof(*c));
        for (size_t k = 0; k < h->nfrs; k++) {
            if (strcmp(h->frs[k].resource, res) != 0)
                continue;
            rep_grid_eval(&g, &h->frs[k].usage_series, tmp);
            for (size_t t = 0; t < g.n; t++)
                c[t] += tmp[t];
        }
    }
    memcpy(cum + nq * g.n, total, g.n * sizeof(*cum)); /* "others" reach the total */
    sim_wide_t vmax = 0;
    for (size_t t = 0; t < g.n; t++) {
        if (total[t] > vmax)
            vmax = total[t];
        if (nominal[t] > vmax)
            vmax = nominal[t];
    }
    for (size_t b = 0; b < nb + 2; b++)
        rep_columns(&wide, &g, cum + b * g.n, cols + b * ncols);

    fputs("<h3>", out);
    rep_esc(out, res);
    fputs(" in use, per ClusterQueue</h3>\n", out);
    snprintf(id, sizeof(id), "chart-cluster-%zu", idx);
    rep_svg_open(out, id, "chart-cluster", &wide, "usage per ClusterQueue, stacked");
    sim_wide_t top = rep_value_axis(out, &wide, vmax, res);
    for (size_t b = 0; b < nb; b++) {
        const qnano_t *hi = cols + b * ncols, *lo = b > 0 ? hi - ncols : NULL;
        if (b == nq && all == nq)
            break; /* no others */
        fprintf(out, "<g class=\"cq\"><title>");
        rep_esc(out, b < nq ? r->holders[q[b].h].name : "other ClusterQueues");
        fputs("</title>", out);
        rep_band(out, &wide, lo, hi, top, "band usage", b < nq ? rep_cq_color(x, q[b].h) : "#ccc");
        fputs("</g>\n", out);
    }
    rep_line(out, &wide, cols + (nb + 1) * ncols, top, "series nominal", "#222");
    rep_time_axis(out, &wide, wide.top + wide.h);
    fputs("</svg>\n<div class=\"legend\">", out);
    for (size_t b = 0; b < nq; b++) {
        char lbl[300], hours[SIM_RATIO_STR_MAX];
        snprintf(lbl, sizeof(lbl), "%s (%s %s-hours)", r->holders[q[b].h].name,
                 sim_fmt_resource_hours(fr_usage_int(&r->holders[q[b].h], res), res, hours),
                 requests_resource_is_gpu(res) ? "GPU" : "resource");
        rep_legend(out, "sw", rep_cq_color(x, q[b].h), lbl);
    }
    if (all > nq) {
        snprintf(id, sizeof(id), "%zu other ClusterQueues", all - nq);
        rep_legend(out, "sw", "#ccc", id);
    }
    rep_legend(out, "dash", "#222", "nominal quota of the cluster (ClusterQueues and Cohorts)");
    fputs("</div>\n", out);
    ok = true;
out:
    rep_grid_fini(&g);
    free(q);
    free(ser);
    free(v);
    free(tmp);
    free(cum);
    free(cols);
    return ok;
}

bool rep_usage_cluster(rep_t *x)
{
    size_t n;
    char **res = main_res(x, &n);
    bool cohorts = false;

    for (size_t i = 0; x->ncq > MAX_BANDS && i < x->ncq; i++)
        if (x->r->holders[x->cqs[i]].cohort != NULL)
            cohorts = true;

    fputs("<section id=\"usage-cluster\">\n<h2>Who used the quota</h2>\n"
          "<p>Quota in use by admitted workloads, stacked per ClusterQueue (all flavors together),"
          " and per LocalQueue when a ClusterQueue serves several, against the nominal quota of "
          "the whole cluster.</p>\n",
          x->out);
    for (size_t i = 0; i < n; i++)
        /* One ClusterQueue split among LocalQueues: the LocalQueues tell who used it. Too many
         * ClusterQueues to stack one by one: their cohorts first. */
        if ((cohorts && !rep_usage_cohorts(x, res[i], i)) ||
            (!cohorts && !(x->ncq <= 1 && x->lq_split) && !cluster_chart(x, res[i], i)) ||
            (x->lq_split && x->nlq <= MANY_LQS && !rep_usage_lq(x, res[i], i)))
            return false;
    if (n == 0)
        fputs("<p>No quota was defined.</p>\n", x->out);
    fputs("</section>\n", x->out);
    return true;
}

/* ---- one ClusterQueue: usage stacked per flavor, nominal and borrowing lines ----------------- */

/* The drawing of ClusterQueue `h`'s `res`, computed once for the scale and once to draw. */
typedef struct cq_chart_s {
    size_t fr[32]; /* its frs for res, flavor order */
    size_t nfr;
    qnano_t *cols; /* owned: per flavor: top, borrowed-from; then nominal, ceiling */
    bool ceiling;  /* every flavor has a borrowingLimit */
    sim_wide_t vmax;
    sim_wide_t borrowed_int;
    qnano_t peak; /* of its usage over every flavor */
} cq_chart_t;

static int fr_flavor_cmp(const void *a, const void *b, const sim_holder_t *h)
{
    return strcmp(h->frs[*(const size_t *)a].flavor, h->frs[*(const size_t *)b].flavor);
}

static bool cq_chart_compute(const rep_t *x, size_t hi, const char *res, cq_chart_t *c)
{
    const rep_frame_t small = frame_of(&small0, x->r);
    const sim_holder_t *h = &x->r->holders[hi];
    const sim_series_t *ser[64];
    size_t nser = 0, ncols = (size_t)small.w;
    rep_grid_t g = {0};
    qnano_t *u = NULL, *n = NULL, *cum = NULL, *lo = NULL, *nsum = NULL, *ceil = NULL;
    bool ok = false;

    memset(c, 0, sizeof(*c));
    c->ceiling = true;
    for (size_t k = 0; k < h->nfrs && c->nfr < 32; k++) {
        if (strcmp(h->frs[k].resource, res) != 0)
            continue;
        /* insertion in flavor order */
        size_t j = c->nfr++;
        while (j > 0 && fr_flavor_cmp(&c->fr[j - 1], &k, h) > 0) {
            c->fr[j] = c->fr[j - 1];
            j--;
        }
        c->fr[j] = k;
    }
    for (size_t i = 0; i < c->nfr; i++) {
        const sim_fr_rec_t *fr = &h->frs[c->fr[i]];
        ser[nser++] = &fr->usage_series;
        ser[nser++] = &fr->nominal_series;
        c->borrowed_int += fr->borrowed_int;
        if (!fr->has_borrowing_limit)
            c->ceiling = false;
    }
    if (c->nfr == 0)
        c->ceiling = false;
    if (rep_grid_init(&g, ser, nser) != ERR_OK)
        return false;
    u = calloc(g.n + 1, sizeof(*u));
    n = calloc(g.n + 1, sizeof(*n));
    cum = calloc(g.n + 1, sizeof(*cum));
    lo = calloc(g.n + 1, sizeof(*lo));
    nsum = calloc(g.n + 1, sizeof(*nsum));
    ceil = calloc(g.n + 1, sizeof(*ceil));
    c->cols = calloc((c->nfr * 2 + 2) * ncols + 1, sizeof(*c->cols));
    if (u == NULL || n == NULL || cum == NULL || lo == NULL || nsum == NULL || ceil == NULL ||
        c->cols == NULL)
        goto out;
    for (size_t i = 0; i < c->nfr; i++) {
        const sim_fr_rec_t *fr = &h->frs[c->fr[i]];
        rep_grid_eval(&g, &fr->usage_series, u);
        rep_grid_eval(&g, &fr->nominal_series, n);
        for (size_t t = 0; t < g.n; t++) {
            /* Borrowed: what this flavor uses above its own nominal quota. */
            lo[t] = cum[t] + (u[t] < n[t] ? u[t] : n[t]);
            cum[t] += u[t];
            nsum[t] += n[t];
            ceil[t] += n[t] + fr->borrowing_limit;
            if (cum[t] > c->vmax)
                c->vmax = cum[t];
            if (i + 1 == c->nfr && cum[t] > c->peak)
                c->peak = cum[t];
        }
        rep_columns(&small, &g, cum, c->cols + (2 * i) * ncols);
        rep_columns(&small, &g, lo, c->cols + (2 * i + 1) * ncols);
    }
    for (size_t t = 0; t < g.n; t++) {
        if (nsum[t] > c->vmax)
            c->vmax = nsum[t];
        if (c->ceiling && ceil[t] > c->vmax)
            c->vmax = ceil[t];
    }
    rep_columns(&small, &g, nsum, c->cols + (2 * c->nfr) * ncols);
    rep_columns(&small, &g, ceil, c->cols + (2 * c->nfr + 1) * ncols);
    ok = true;
out:
    rep_grid_fini(&g);
    free(u);
    free(n);
    free(cum);
    free(lo);
    free(nsum);
    free(ceil);
    if (!ok) {
        free(c->cols);
        c->cols = NULL;
    }
    return ok;
}

static void cq_chart_draw(rep_t *x, size_t hi, const char *res, const cq_chart_t *c,
                          sim_wide_t vmax, size_t *seq)
{
    const rep_frame_t small = frame_of(&small0, x->r);
    FILE *out = x->out;
    const sim_holder_t *h = &x->r->holders[hi];
    size_t ncols = (size_t)small.w;
    char id[48], q1[QUANTITY_STR_MAX], hours[SIM_RATIO_STR_MAX];
    qnano_t nominal_now = 0;

    for (size_t i = 0; i < c->nfr; i++)
        nominal_now += h->frs[c->fr[i]].nominal;
    fputs("<figure class=\"cq-usage\"><figcaption><b>", out);
    rep_esc(out, h->name);
    fputs("</b> ", out);
    rep_esc(out, res);
    fprintf(out, ": nominal %s", sim_fmt_quantity(nominal_now, res, q1));
    fprintf(out, ", peak %s", sim_fmt_quantity(c->peak, res, q1));
    if (c->borrowed_int > 0)
        fprintf(out, ", over nominal %s resource-hours",
                sim_fmt_resource_hours(c->borrowed_int, res, hours));
    fputs("</figcaption>\n", out);
    snprintf(id, sizeof(id), "chart-usage-%zu", (*seq)++);
    fprintf(out,
            "<svg id=\"%s\" class=\"chart chart-usage\" xmlns=\"http://www.w3.org/2000/svg\" "
            "viewBox=\"0 0 %d %d\" role=\"img\" data-cq=\"",
            id, small.width, small.height);
    rep_esc(out, h->name);
    fputs("\" data-resource=\"", out);
    rep_esc(out, res);
    fputs("\" aria-label=\"usage of ", out);
    rep_esc(out, h->name);
    fputs(" per flavor\">\n", out);
    sim_wide_t top = rep_value_axis(out, &small, vmax, res);
    for (size_t i = 0; i < c->nfr; i++) {
        const sim_fr_rec_t *fr = &h->frs[c->fr[i]];
        const qnano_t *hi_c = c->cols + 2 * i * ncols;
        const qnano_t *lo_c = i > 0 ? hi_c - 2 * ncols : NULL;
        fputs("<g class=\"flavor\"><title>", out);
        rep_esc(out, fr->flavor);
        fputs("</title>", out);
        rep_band(out, &small, lo_c, hi_c, top, "band flavor", rep_flavor_color(x, fr->flavor));
        if (fr->borrowed_int > 0)
            rep_band(out, &small, c->cols + (2 * i + 1) * ncols, hi_c, top, "band borrowed",
                     "url(#hatch)");
        fputs("</g>\n", out);
    }
    rep_line(out, &small, c->cols + 2 * c->nfr * ncols, top, "series nominal", "#222");
    if (c->ceiling)
        rep_line(out, &small, c->cols + (2 * c->nfr + 1) * ncols, top, "series ceiling", "#222");
    rep_time_axis(out, &small, small.top + small.h);
    fputs("</svg>\n<div class=\"legend\">", out);
    for (size_t i = 0; i < c->nfr; i++)
        rep_legend(out, "sw", rep_flavor_color(x, h->frs[c->fr[i]].flavor),
                   h->frs[c->fr[i]].flavor);
    fputs("</div></figure>\n", out);
}

/* The charts of every ClusterQueue holding `res`, on one scale. */
static bool cq_charts(rep_t *x, const char *res, size_t *seq)
{
    size_t nq, all;
    ranked_t *q = queues_with(x, res, MAX_SMALL, &nq, &all);
    cq_chart_t *c = calloc(nq + 1, sizeof(*c));
    sim_wide_t vmax = 0;
    bool ok = q != NULL && c != NULL;

    for (size_t i = 0; ok && i < nq; i++) {
        ok = cq_chart_compute(x, q[i].h, res, &c[i]);
        if (ok && c[i].vmax > vmax)
            vmax = c[i].vmax;
    }
    if (ok && all > nq)
        fprintf(x->out, "<p>The %zu ClusterQueues using the most, of %zu.</p>\n", nq, all);
    if (ok)
        fputs("<div class=\"charts\">\n", x->out);
    for (size_t i = 0; ok && i < nq; i++)
        cq_chart_draw(x, q[i].h, res, &c[i], vmax, seq);
    if (ok)
        fputs("</div>\n", x->out);
    for (size_t i = 0; c != NULL && i < nq; i++)
        free(c[i].cols);
    free(c);
    free(q);
    return ok;
}

bool rep_usage_per_cq(rep_t *x)
{
    FILE *out = x->out;
    size_t n, seq = 0;
    char **res = main_res(x, &n);

    fputs("<section id=\"usage-cq\">\n<h2>Usage per ClusterQueue</h2>\n"
          "<p>Each ClusterQueue's quota in use, stacked per flavor; hatched: the part above that "
          "flavor's nominal quota (borrowed from the cohort, or left over after a quota cut). "
          "Dashed line: its nominal quota; dotted: nominal plus borrowingLimit (when every flavor "
          "has one). One scale per resource, so queues compare.</p>\n<div class=\"legend\">",
          out);
    rep_legend(out, "hatch", "#555", "borrowed (above nominal)");
    rep_legend(out, "dash", "#222", "nominal quota");
    rep_legend(out, "dot", "#222", "nominal + borrowingLimit");
    fputs("</div>\n", out);
    for (size_t i = 0; i < n; i++)
        if (!cq_charts(x, res[i], &seq))
            return false;
    /* CPU, memory and the rest: folded unless a wait explanation says they were short. */
    for (size_t i = 0; x->ngpu_res > 0 && i < x->nother_res; i++) {
        bool open = rep_resource_short(x->r, x->other_res[i]);
        fprintf(out, "<details class=\"fold\"%s><summary>", open ? " open" : "");
        rep_esc(out, x->other_res[i]);
        fprintf(out, " per ClusterQueue <small>(%s)</small></summary>\n",
                open ? "shown: workloads waited for it while GPUs were free"
                     : "folded: no workload waited for it alone; GPUs were the constraint");
        if (!cq_charts(x, x->other_res[i], &seq))
            return false;
        fputs("</details>\n", out);
    }
    fputs("</section>\n", out);
    return true;
}

/* ---- pending workloads ---------------------------------------------------------------------- */

bool rep_pending(rep_t *x)
{
    const sim_rec_t *r = x->r;
    const rep_frame_t wide = frame_of(&wide0, r);
    FILE *out = x->out;
    ranked_t *v = calloc(x->ncq + 1, sizeof(*v));
    const sim_series_t **ser = calloc(x->ncq + 1, sizeof(*ser));
    size_t n = x->ncq < MAX_LINES ? x->ncq : MAX_LINES, ncols = (size_t)wide.w;
    qnano_t *vals = NULL, *cols = NULL;
    rep_grid_t g = {0};
    sim_wide_t vmax = 0;
    bool ok = false;

    if (v == NULL || ser == NULL)
        goto out;
    for (size_t i = 0; i < x->ncq; i++) {
        const sim_series_t *s = &r->holders[x->cqs[i]].pending_series;
        sim_wide_t m = 0;
        for (size_t k = 0; k < s->len; k++)
            if (s->v[k] > m)
                m = s->v[k];
        v[i] = (ranked_t){x->cqs[i], m, i};
    }
    /* The busiest queues when there are more than fit; name order otherwise. */
    if (x->ncq > MAX_LINES) {
        qsort(v, x->ncq, sizeof(*v), ranked_cmp);
        qsort(v, n, sizeof(*v), rank_cmp);
    }
    for (size_t i = 0; i < n; i++) {
        ser[i] = &r->holders[v[i].h].pending_series;
        if (v[i].key > vmax)
            vmax = v[i].key;
    }
    if (rep_grid_init(&g, ser, n) != ERR_OK)
        goto out;
    vals = calloc(g.n + 1, sizeof(*vals));
    cols = calloc(ncols, sizeof(*cols));
    if (vals == NULL || cols == NULL)
        goto out;
    fputs("<section id=\"pending\">\n<h2>Pending workloads over time</h2>\n", out);
    if (x->ncq > MAX_LINES)
        fprintf(out, "<p>The %d ClusterQueues with the longest queues, of %zu.</p>\n", MAX_LINES,
                x->ncq);
    rep_svg_open(out, "chart-pending", "chart-lines", &wide, "pending workloads per ClusterQueue");
    sim_wide_t top = rep_value_axis(out, &wide, vmax, NULL);
    for (size_t i = 0; i < n; i++) {
        rep_grid_eval(&g, ser[i], vals);
        rep_columns(&wide, &g, vals, cols);
        fputs("<g><title>", out);
        rep_esc(out, r->holders[v[i].h].name);
        fputs("</title>", out);
        rep_line(out, &wide, cols, top, "series pending", rep_cq_color(x, v[i].h));
        fputs("</g>\n", out);
    }
    rep_time_axis(out, &wide, wide.top + wide.h);
    fputs("</svg>\n<div class=\"legend\">", out);
    for (size_t i = 0; i < n; i++)
        rep_legend(out, "sw", rep_cq_color(x, v[i].h), r->holders[v[i].h].name);
    fputs("</div>\n</section>\n", out);
    ok = true;
out:
    rep_grid_fini(&g);
    free(v);
    free(ser);
    free(vals);
    free(cols);
    return ok;
}
