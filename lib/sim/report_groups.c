/* report_groups -- the report's usage per group of queues: per LocalQueue (who, inside a shared
 * ClusterQueue, held the quota; built from the admissions, since quota is kept per ClusterQueue)
 * and per root cohort (when there are too many ClusterQueues to stack one by one). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/requests.h"
#include "sim/fmt.h"
#include "sim/report_int.h"

#include <stdlib.h>
#include <string.h>

#define MAX_BANDS 12

static const rep_frame_t wide0 = {
    .left = 64, .top = 12, .w = 920, .h = 220, .width = 1000, .height = 262};

typedef struct ev_s {
    sim_ms_t t;
    size_t lq;
    qnano_t delta;
} ev_t;

static int ev_cmp(const void *a, const void *b)
{
    const ev_t *p = a, *q = b;
    if (p->t != q->t)
        return p->t < q->t ? -1 : 1;
    return (p->lq > q->lq) - (p->lq < q->lq);
}

typedef struct lq_rank_s {
    size_t lq;
    sim_wide_t used; /* nano x ms */
} lq_rank_t;

static int rank_cmp(const void *a, const void *b)
{
    const lq_rank_t *p = a, *q = b;
    if (p->used != q->used)
        return p->used < q->used ? 1 : -1;
    return (p->lq > q->lq) - (p->lq < q->lq);
}

static int ms_cmp(const void *a, const void *b)
{
    sim_ms_t p = *(const sim_ms_t *)a, q = *(const sim_ms_t *)b;
    return (p > q) - (p < q);
}

static int lq_cmp(const void *a, const void *b)
{
    const lq_rank_t *p = a, *q = b;
    return (p->lq > q->lq) - (p->lq < q->lq);
}

bool rep_usage_lq(rep_t *x, const char *res, size_t idx)
{
    const sim_rec_t *r = x->r;
    FILE *out = x->out;
    rep_frame_t f = wide0;
    size_t nev = 0, nb, nrank = 0, ncols = (size_t)f.w;
    ev_t *ev = calloc(r->nspans * 2 + 1, sizeof(*ev));
    lq_rank_t *rank = calloc(x->nlq + 1, sizeof(*rank));
    size_t *band_of = calloc(x->nlq + 1, sizeof(*band_of));
    qnano_t *cur = calloc(x->nlq + 1, sizeof(*cur));
    sim_ms_t *t = NULL;
    qnano_t *cum = NULL, *cols = NULL;
    bool ok = false;
    char id[64];

    f.t1 = r->end > 0 ? r->end : 1;
    if (ev == NULL || rank == NULL || band_of == NULL || cur == NULL)
        goto out;
    for (size_t i = 0; i < x->nlq; i++)
        rank[i] = (lq_rank_t){i, 0};
    for (size_t s = 0; s < r->nspans; s++) {
        const sim_span_t *sp = &r->spans[s];
        size_t lq = rep_lq_index(x, r->wls[sp->wl].lq);
        if (sp->gfr == SIM_NONE || lq == SIM_NONE || strcmp(r->gfrs[sp->gfr].resource, res) != 0)
            continue;
        sim_ms_t end = sp->end >= 0 ? sp->end : r->end;
        ev[nev++] = (ev_t){sp->start, lq, sp->amount};
        ev[nev++] = (ev_t){end, lq, -sp->amount};
        rank[lq].used += (sim_wide_t)sp->amount * (end - sp->start);
    }
    for (size_t i = 0; i < x->nlq; i++)
        nrank += rank[i].used > 0 ? 1 : 0;
    qsort(rank, x->nlq, sizeof(*rank), rank_cmp);
    nb = nrank < MAX_BANDS ? nrank : MAX_BANDS;
    qsort(rank, nb, sizeof(*rank), lq_cmp);
    for (size_t i = 0; i < x->nlq; i++)
        band_of[i] = nb; /* others */
    for (size_t b = 0; b < nb; b++)
        band_of[rank[b].lq] = b;
    qsort(ev, nev, sizeof(*ev), ev_cmp);

    /* The instants: 0, every change, every change of the cluster's nominal quota. */
    size_t nt = 1 + nev;
    for (size_t i = 0; i < r->ngfrs; i++)
        if (strcmp(r->gfrs[i].resource, res) == 0)
            nt += r->gfrs[i].nominal_series.len;
    t = calloc(nt, sizeof(*t));
    cum = calloc((nb + 2) * nt, sizeof(*cum));
    cols = calloc((nb + 2) * ncols, sizeof(*cols));
    if (t == NULL || cum == NULL || cols == NULL)
        goto out;
    size_t n = 0;
    t[n++] = 0;
    for (size_t i = 0; i < nev; i++)
        t[n++] = ev[i].t;
    for (size_t i = 0; i < r->ngfrs; i++)
        if (strcmp(r->gfrs[i].resource, res) == 0)
            for (size_t k = 0; k < r->gfrs[i].nominal_series.len; k++)
                t[n++] = r->gfrs[i].nominal_series.t[k];
    rep_grid_t g = {t, n};
    qsort(g.t, g.n, sizeof(*g.t), ms_cmp);
    size_t o = 0;
    for (size_t i = 0; i < g.n; i++)
        if (o == 0 || g.t[o - 1] != g.t[i])
            g.t[o++] = g.t[i];
    g.n = o;
    qnano_t *nominal = cum + (nb + 1) * g.n;
    qnano_t *tmp = cum + nb * g.n; /* scratch, then "others" */
    for (size_t i = 0; i < r->ngfrs; i++) {
        if (strcmp(r->gfrs[i].resource, res) != 0)
            continue;
        rep_grid_eval(&g, &r->gfrs[i].nominal_series, tmp);
        for (size_t k = 0; k < g.n; k++)
            nominal[k] += tmp[k];
    }
    sim_wide_t vmax = 0;
    size_t e = 0;
    for (size_t k = 0; k < g.n; k++) {
        while (e < nev && ev[e].t <= g.t[k]) {
            cur[ev[e].lq] += ev[e].delta;
            e++;
        }
        qnano_t band[MAX_BANDS + 1] = {0}, sum = 0;
        for (size_t i = 0; i < x->nlq; i++)
            band[band_of[i]] += cur[i];
        for (size_t b = 0; b <= nb; b++) {
            sum += band[b];
            cum[b * g.n + k] = sum;
        }
        if (sum > vmax)
            vmax = sum;
        if (nominal[k] > vmax)
            vmax = nominal[k];
    }
    for (size_t b = 0; b < nb + 2; b++)
        rep_columns(&f, &g, cum + b * g.n, cols + b * ncols);

    fputs("<h3>", out);
    rep_esc(out, res);
    fputs(" in use, per LocalQueue</h3>\n", out);
    snprintf(id, sizeof(id), "chart-lq-%zu", idx);
    rep_svg_open(out, id, "chart-lq", &f, "usage per LocalQueue, stacked");
    sim_wide_t top = rep_value_axis(out, &f, vmax, res);
    for (size_t b = 0; b <= nb; b++) {
        const qnano_t *hi = cols + b * ncols, *lo = b > 0 ? hi - ncols : NULL;
        if (b == nb && nrank == nb)
            break; /* no others */
        fputs("<g class=\"lq\"><title>", out);
        rep_esc(out, b < nb ? x->lqs[rank[b].lq] : "other LocalQueues");
        fputs("</title>", out);
        rep_band(out, &f, lo, hi, top, "band usage",
                 b < nb ? rep_lq_color(x, x->lqs[rank[b].lq]) : "#ccc");
        fputs("</g>\n", out);
    }
    rep_line(out, &f, cols + (nb + 1) * ncols, top, "series nominal", "#222");
    rep_time_axis(out, &f, f.top + f.h);
    fputs("</svg>\n<div class=\"legend\">", out);
    for (size_t b = 0; b < nb; b++) {
        char lbl[300], hours[SIM_RATIO_STR_MAX];
        snprintf(lbl, sizeof(lbl), "%s (%s %s-hours)", x->lqs[rank[b].lq],
                 sim_fmt_resource_hours(rank[b].used, res, hours),
                 requests_resource_is_gpu(res) ? "GPU" : "resource");
        rep_legend(out, "sw", rep_lq_color(x, x->lqs[rank[b].lq]), lbl);
    }
    if (nrank > nb) {
        snprintf(id, sizeof(id), "%zu other LocalQueues", nrank - nb);
        rep_legend(out, "sw", "#ccc", id);
    }
    rep_legend(out, "dash", "#222", "nominal quota of the cluster");
    fputs("</div>\n", out);
    ok = true;
out:
    free(ev);
    free(rank);
    free(band_of);
    free(cur);
    free(t);
    free(cum);
    free(cols);
    return ok;
}

/* ---- per root cohort ------------------------------------------------------------------------ */

/* The root of the cohort tree ClusterQueue `h` belongs to (its own name when in none). */
static const char *root_of(const sim_rec_t *r, size_t h)
{
    const char *name = r->holders[h].cohort;
    char key[600];
    size_t c;

    if (name == NULL)
        return r->holders[h].name;
    for (int depth = 0; depth < 16; depth++) {
        snprintf(key, sizeof(key), "cohort/%s", name);
        if (!util_hmap_get_index(&r->holder_index, key, &c) || r->holders[c].cohort == NULL)
            break;
        name = r->holders[c].cohort;
    }
    return name;
}

typedef struct group_s {
    const char *name;
    sim_wide_t used;
    size_t band;
} group_t;

static int group_name_cmp(const void *a, const void *b)
{
    return strcmp(((const group_t *)a)->name, ((const group_t *)b)->name);
}

static int group_used_cmp(const void *a, const void *b)
{
    const group_t *p = a, *q = b;
    if (p->used != q->used)
        return p->used < q->used ? 1 : -1;
    return strcmp(p->name, q->name);
}

/* Add the steps of `s` to delta[] at their instants of `g` (a prefix sum then gives values). */
static void grid_add_steps(const rep_grid_t *g, const sim_series_t *s, qnano_t *delta)
{
    qnano_t prev = 0;
    size_t k = 0;

    for (size_t i = 0; i < s->len; i++) {
        while (k < g->n && g->t[k] < s->t[i])
            k++;
        if (k < g->n)
            delta[k] += s->v[i] - prev;
        prev = s->v[i];
    }
}

bool rep_usage_cohorts(rep_t *x, const char *res, size_t idx)
{
    const sim_rec_t *r = x->r;
    FILE *out = x->out;
    rep_frame_t f = wide0;
    size_t ng = 0, nb, nser = 0, ncols = (size_t)f.w;
    group_t *gr = calloc(x->ncq + 1, sizeof(*gr));
    size_t *band_of_cq = calloc(x->ncq + 1, sizeof(*band_of_cq));
    const sim_series_t **ser = NULL;
    qnano_t *cum = NULL, *cols = NULL, *tmp = NULL;
    rep_grid_t g = {0};
    bool ok = false;
    char id[64];

    f.t1 = r->end > 0 ? r->end : 1;
    if (gr == NULL || band_of_cq == NULL)
        goto out;
    size_t nfr = 0;
    for (size_t i = 0; i < x->ncq; i++)
        nfr += r->holders[x->cqs[i]].nfrs;
    ser = calloc(nfr + r->ngfrs + 1, sizeof(*ser));
    if (ser == NULL)
        goto out;
    /* Groups by root cohort, with what each used. */
    for (size_t i = 0; i < x->ncq; i++) {
        const sim_holder_t *h = &r->holders[x->cqs[i]];
        const char *root = root_of(r, x->cqs[i]);
        size_t k = 0;
        while (k < ng && strcmp(gr[k].name, root) != 0)
            k++;
        if (k == ng)
            gr[ng++] = (group_t){root, 0, 0};
        band_of_cq[i] = k; /* group index for now */
        for (size_t j = 0; j < h->nfrs; j++) {
            if (strcmp(h->frs[j].resource, res) != 0)
                continue;
            gr[k].used += h->frs[j].usage_int;
            ser[nser++] = &h->frs[j].usage_series;
        }
    }
    for (size_t i = 0; i < r->ngfrs; i++)
        if (strcmp(r->gfrs[i].resource, res) == 0)
            ser[nser++] = &r->gfrs[i].nominal_series;
    /* The biggest groups get a band each, in name order; the rest are "others". */
    size_t *rank = calloc(ng + 1, sizeof(*rank));
    if (rank == NULL)
        goto out;
    group_t *sorted = calloc(ng + 1, sizeof(*sorted));
    if (sorted == NULL) {
        free(rank);
        goto out;
    }
    memcpy(sorted, gr, ng * sizeof(*gr));
    qsort(sorted, ng, sizeof(*sorted), group_used_cmp);
    nb = ng < MAX_BANDS ? ng : MAX_BANDS;
    qsort(sorted, nb, sizeof(*sorted), group_name_cmp);
    for (size_t k = 0; k < ng; k++) {
        gr[k].band = nb;
        for (size_t b = 0; b < nb; b++)
            if (strcmp(sorted[b].name, gr[k].name) == 0)
                gr[k].band = b;
    }
    for (size_t i = 0; i < x->ncq; i++)
        band_of_cq[i] = gr[band_of_cq[i]].band;
    free(rank);

    if (rep_grid_init(&g, ser, nser) != ERR_OK) {
        free(sorted);
        goto out;
    }
    cum = calloc((nb + 2) * g.n + 1, sizeof(*cum));
    cols = calloc((nb + 2) * ncols, sizeof(*cols));
    tmp = calloc(g.n + 1, sizeof(*tmp));
    if (cum == NULL || cols == NULL || tmp == NULL) {
        free(sorted);
        goto out;
    }
    for (size_t i = 0; i < x->ncq; i++) {
        const sim_holder_t *h = &r->holders[x->cqs[i]];
        for (size_t j = 0; j < h->nfrs; j++)
            if (strcmp(h->frs[j].resource, res) == 0)
                grid_add_steps(&g, &h->frs[j].usage_series, cum + band_of_cq[i] * g.n);
    }
    qnano_t *nominal = cum + (nb + 1) * g.n;
    for (size_t i = 0; i < r->ngfrs; i++) {
        if (strcmp(r->gfrs[i].resource, res) != 0)
            continue;
        rep_grid_eval(&g, &r->gfrs[i].nominal_series, tmp);
        for (size_t k = 0; k < g.n; k++)
            nominal[k] += tmp[k];
    }
    /* Deltas to values, then stacked. */
    sim_wide_t vmax = 0;
    for (size_t b = 0; b <= nb; b++) {
        qnano_t *c = cum + b * g.n, run = 0;
        for (size_t k = 0; k < g.n; k++) {
            run += c[k];
            c[k] = run + (b > 0 ? cum[(b - 1) * g.n + k] : 0); /* the band below */
            if (c[k] > vmax)
                vmax = c[k];
        }
    }
    for (size_t k = 0; k < g.n; k++)
        if (nominal[k] > vmax)
            vmax = nominal[k];
    for (size_t b = 0; b < nb + 2; b++)
        rep_columns(&f, &g, cum + b * g.n, cols + b * ncols);

    fputs("<h3>", out);
    rep_esc(out, res);
    fprintf(out,
            " in use, per cohort <small>(the %zu ClusterQueues grouped by the root of their "
            "cohort tree)</small></h3>\n",
            x->ncq);
    snprintf(id, sizeof(id), "chart-cohorts-%zu", idx);
    rep_svg_open(out, id, "chart-cohorts", &f, "usage per cohort, stacked");
    sim_wide_t top = rep_value_axis(out, &f, vmax, res);
    for (size_t b = 0; b <= nb; b++) {
        const qnano_t *hi = cols + b * ncols, *lo = b > 0 ? hi - ncols : NULL;
        if (b == nb && ng == nb)
            break; /* no others */
        fputs("<g class=\"cohort\"><title>", out);
        rep_esc(out, b < nb ? sorted[b].name : "other cohorts");
        fputs("</title>", out);
        rep_band(out, &f, lo, hi, top, "band usage", b < nb ? rep_color(b) : "#ccc");
        fputs("</g>\n", out);
    }
    rep_line(out, &f, cols + (nb + 1) * ncols, top, "series nominal", "#222");
    rep_time_axis(out, &f, f.top + f.h);
    fputs("</svg>\n<div class=\"legend\">", out);
    for (size_t b = 0; b < nb; b++) {
        char lbl[300], hours[SIM_RATIO_STR_MAX];
        snprintf(lbl, sizeof(lbl), "%s (%s %s-hours)", sorted[b].name,
                 sim_fmt_resource_hours(sorted[b].used, res, hours),
                 requests_resource_is_gpu(res) ? "GPU" : "resource");
        rep_legend(out, "sw", rep_color(b), lbl);
    }
    if (ng > nb) {
        snprintf(id, sizeof(id), "%zu other cohorts", ng - nb);
        rep_legend(out, "sw", "#ccc", id);
    }
    rep_legend(out, "dash", "#222", "nominal quota of the cluster");
    fputs("</div>\n", out);
    free(sorted);
    ok = true;
out:
    rep_grid_fini(&g);
    free(gr);
    free(band_of_cq);
    free(ser);
    free(cum);
    free(cols);
    free(tmp);
    return ok;
}
