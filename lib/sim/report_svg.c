/* report_svg -- drawing primitives of the --report page: scales, axes, banded step charts. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/fmt.h"
#include "sim/report_int.h"

#include "util/str.h"

#include <stdlib.h>
#include <string.h>

#define NANO ((sim_wide_t)1000000000)

/* Tableau-like, without its red: red marks preemptions. */
static const char *const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1",
                                      "#76b7b2", "#edc948", "#9c755f", "#86bcb6",
                                      "#1f3b73", "#bab0ac", "#637939", "#d4a6c8"};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

const char *rep_color(size_t i)
{
    return palette[i % NPALETTE];
}

const char *rep_reason_color(size_t i)
{
    static const char *const reds[] = {"#d62728", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"};
    return reds[i % (sizeof(reds) / sizeof(reds[0]))];
}

/* Flavors have their own colors, none of them red (red marks preemptions). */
static const char *const flavor_palette[] = {"#76b7b2", "#edc948", "#b07aa1", "#9c755f",
                                             "#86bc86", "#a0cbe8", "#ffbe7d", "#d4a6c8"};
#define NFLAVOR_PALETTE (sizeof(flavor_palette) / sizeof(flavor_palette[0]))

const char *rep_flavor_color(const rep_t *x, const char *flavor)
{
    for (size_t i = 0; i < x->nflavors; i++)
        if (strcmp(x->flavors[i], flavor) == 0)
            return flavor_palette[i % NFLAVOR_PALETTE];
    return "#999999";
}

const char *rep_cq_color(const rep_t *x, size_t holder)
{
    size_t rank = holder != SIM_NONE ? x->cq_rank[holder] : SIM_NONE;
    return rank != SIM_NONE ? palette[rank % NPALETTE] : "#999999";
}

static int lq_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

size_t rep_lq_index(const rep_t *x, const char *lq)
{
    if (lq == NULL || x->nlq == 0)
        return SIM_NONE;
    char *const *p = bsearch(&lq, x->lqs, x->nlq, sizeof(*x->lqs), lq_cmp);
    return p != NULL ? (size_t)(p - x->lqs) : SIM_NONE;
}

const char *rep_lq_color(const rep_t *x, const char *lq)
{
    size_t i = rep_lq_index(x, lq);
    return i != SIM_NONE ? palette[i % NPALETTE] : "#999999";
}

void rep_esc(FILE *out, const char *s)
{
    util_html_escape(out, s, strlen(s));
}

long long rep_x(const rep_frame_t *f, sim_ms_t t)
{
    sim_ms_t span = f->t1 - f->t0;

    if (span <= 0)
        return f->left;
    if (t < f->t0)
        t = f->t0;
    if (t > f->t1)
        t = f->t1;
    return f->left + (long long)(((sim_wide_t)(t - f->t0) * f->w) / span);
}

long long rep_y(const rep_frame_t *f, sim_wide_t v, sim_wide_t vmax)
{
    if (vmax <= 0 || v <= 0)
        return f->top + f->h;
    if (v > vmax)
        v = vmax;
    return f->top + f->h - (long long)((v * f->h) / vmax);
}

void rep_svg_open(FILE *out, const char *id, const char *cls, const rep_frame_t *f,
                  const char *label)
{
    fprintf(out,
            "<svg id=\"%s\" class=\"chart %s\" xmlns=\"http://www.w3.org/2000/svg\" "
            "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
            id, cls, f->width, f->height);
    rep_esc(out, label);
    fputs("\">\n", out);
}

sim_ms_t rep_time_step(sim_ms_t span, int most)
{
    static const sim_ms_t steps[] = {1000,     5000,     10000,    30000,    60000,   300000,
                                     600000,   900000,   1800000,  3600000,  7200000, 10800000,
                                     21600000, 43200000, 86400000, 604800000};
    size_t n = sizeof(steps) / sizeof(steps[0]);

    for (size_t i = 0; i < n; i++)
        if (span / steps[i] <= most)
            return steps[i];
    sim_ms_t s = steps[n - 1];
    while (span / s > most)
        s *= 2;
    return s;
}

void rep_time_axis(FILE *out, const rep_frame_t *f, int base)
{
    sim_ms_t span = f->t1 - f->t0;
    sim_ms_t step = rep_time_step(span, f->w / 70 > 2 ? f->w / 70 : 2);
    char buf[DURATION_STR_MAX];

    fprintf(out, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", f->left, base,
            f->left + f->w, base);
    for (sim_ms_t t = f->t0 - f->t0 % step; t <= f->t1; t += step) {
        if (t < f->t0)
            continue;
        long long x = rep_x(f, t);
        fprintf(out,
                "<line class=\"tick\" x1=\"%lld\" y1=\"%d\" x2=\"%lld\" y2=\"%d\"/>"
                "<text class=\"tlabel\" x=\"%lld\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                x, base, x, base + 4, x, base + 15, duration_format(t, buf));
        if (span <= 0)
            break;
    }
}

static bool memory_like(const char *resource)
{
    return resource != NULL &&
           (strstr(resource, "memory") != NULL || strstr(resource, "storage") != NULL ||
            strncmp(resource, "hugepages-", 10) == 0);
}

/* A round step for a scale up to vmax with at most `most` steps. */
static sim_wide_t value_step(sim_wide_t vmax, const char *resource, int most)
{
    sim_wide_t step;

    if (memory_like(resource)) {
        step = NANO * 1024; /* 1Ki, doubling */
        while (vmax / step > most)
            step *= 2;
        return step;
    }
    /* Counts and non-memory resources: 1, 2, 5 x 10^k, from 1 (a GPU, a core, a workload). */
    step = resource == NULL ? 1 : NANO;
    for (int k = 0; k < 60; k++) {
        static const int m[] = {1, 2, 5};
        sim_wide_t s = step * m[k % 3];
        if (vmax / s <= most)
            return s;
        if (k % 3 == 2)
            step *= 10;
    }
    return step;
}

sim_wide_t rep_value_axis(FILE *out, const rep_frame_t *f, sim_wide_t vmax, const char *resource)
{
    int most = f->h >= 120 ? 5 : 3;
    sim_wide_t step = value_step(vmax > 0 ? vmax : 1, resource, most);
    sim_wide_t top = vmax <= 0 ? step : ((vmax + step - 1) / step) * step;
    char q[QUANTITY_STR_MAX];

    for (sim_wide_t v = 0; v <= top; v += step) {
        long long y = rep_y(f, v, top);
        if (v > 0)
            fprintf(out, "<line class=\"grid\" x1=\"%d\" y1=\"%lld\" x2=\"%d\" y2=\"%lld\"/>",
                    f->left, y, f->left + f->w, y);
        if (resource != NULL)
            sim_fmt_quantity(v, resource, q);
        else
            snprintf(q, sizeof(q), "%lld", (long long)v);
        fprintf(out, "<text class=\"ylabel\" x=\"%d\" y=\"%lld\" text-anchor=\"end\">%s</text>\n",
                f->left - 5, y + 4, q);
    }
    fprintf(out, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", f->left,
            f->top, f->left, f->top + f->h);
    return top;
}

/* ---- merged timelines ------------------------------------------------------------------- */

static int ms_cmp(const void *a, const void *b)
{
    sim_ms_t x = *(const sim_ms_t *)a, y = *(const sim_ms_t *)b;
    return (x > y) - (x < y);
}

err_t rep_grid_init(rep_grid_t *g, const sim_series_t *const *s, size_t n)
{
    size_t total = 1;

    g->t = NULL;
    g->n = 0;
    for (size_t i = 0; i < n; i++)
        total += s[i]->len;
    g->t = malloc(total * sizeof(*g->t));
    if (g->t == NULL)
        return ERR_NOMEM;
    g->t[g->n++] = 0; /* every series is 0 before its first point */
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < s[i]->len; k++)
            g->t[g->n++] = s[i]->t[k];
    qsort(g->t, g->n, sizeof(*g->t), ms_cmp);
    size_t o = 0;
    for (size_t i = 0; i < g->n; i++)
        if (o == 0 || g->t[o - 1] != g->t[i])
            g->t[o++] = g->t[i];
    g->n = o;
    return ERR_OK;
}

void rep_grid_fini(rep_grid_t *g)
{
    free(g->t);
    g->t = NULL;
    g->n = 0;
}

void rep_grid_eval(const rep_grid_t *g, const sim_series_t *s, qnano_t *v)
{
    size_t k = 0;
    qnano_t cur = 0;

    for (size_t i = 0; i < g->n; i++) {
        while (k < s->len && s->t[k] <= g->t[i])
            cur = s->v[k++];
        v[i] = cur;
    }
}

void rep_columns(const rep_frame_t *f, const rep_grid_t *g, const qnano_t *v, qnano_t *cols)
{
    sim_ms_t span = f->t1 - f->t0;
    size_t k = 0;
    qnano_t cur = 0;

    for (int c = 0; c < f->w; c++) {
        sim_ms_t a = f->t0 + (sim_ms_t)(((sim_wide_t)span * c) / f->w);
        sim_ms_t b = f->t0 + (sim_ms_t)(((sim_wide_t)span * (c + 1)) / f->w);
        /* The value holding at a, then every point strictly inside [a, b). */
        while (k < g->n && g->t[k] <= a)
            cur = v[k++];
        qnano_t m = cur;
        while (k < g->n && g->t[k] < b) {
            cur = v[k++];
            if (cur > m)
                m = cur;
        }
        cols[c] = m;
    }
}

/* The step edge through columns v[] left to right (forward) or right to left. */
static void edge(FILE *out, const rep_frame_t *f, const qnano_t *v, sim_wide_t vmax, bool forward)
{
    long long last = -1;

    for (int i = 0; i < f->w; i++) {
        int c = forward ? i : f->w - 1 - i;
        long long y = v != NULL ? rep_y(f, v[c], vmax) : f->top + f->h;
        if (y != last) {
            fprintf(out, "V%lld", y);
            last = y;
        }
        /* One horizontal run per column; equal neighbours merge into one H by the next V. */
        if (i + 1 == f->w ||
            (v != NULL ? rep_y(f, v[forward ? c + 1 : c - 1], vmax) : f->top + f->h) != y)
            fprintf(out, "H%d", forward ? f->left + c + 1 : f->left + c);
    }
}

void rep_band(FILE *out, const rep_frame_t *f, const qnano_t *lo, const qnano_t *hi,
              sim_wide_t vmax, const char *cls, const char *fill)
{
    fprintf(out, "<path class=\"%s\" fill=\"%s\" d=\"M%d %lld", cls, fill, f->left,
            lo != NULL ? rep_y(f, lo[0], vmax) : (long long)(f->top + f->h));
    edge(out, f, hi, vmax, true);
    edge(out, f, lo, vmax, false);
    fputs("Z\"/>\n", out);
}

void rep_line(FILE *out, const rep_frame_t *f, const qnano_t *v, sim_wide_t vmax, const char *cls,
              const char *stroke)
{
    fprintf(out, "<path class=\"%s\" stroke=\"%s\" d=\"M%d %lld", cls, stroke, f->left,
            rep_y(f, v[0], vmax));
    edge(out, f, v, vmax, true);
    fputs("\"/>\n", out);
}

void rep_legend(FILE *out, const char *kind, const char *color, const char *label)
{
    fprintf(out, "<span class=\"key\"><i class=\"%s\" style=\"--c:%s\"></i>", kind, color);
    rep_esc(out, label);
    fputs("</span>\n", out);
}
