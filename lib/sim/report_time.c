/* report_time -- the report's timeline of admissions (a Gantt chart with preemption arrows) and
 * its preemptions section (counts per time bucket, who preempted whom). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/report_int.h"
#include "sim/view.h"

#include <stdlib.h>
#include <string.h>

#define MAX_GANTT   300 /* workloads in the timeline (the first submitted) */
#define MAX_TABLE   500 /* rows of the who-preempted-whom table */
#define MAX_REASONS 8
#define ROW_H       12
#define GROUP_H     18
#define LABEL_CHARS 34

typedef struct order_s {
    size_t w;
    size_t rank;
    sim_ms_t submit;
} order_t;

static int order_cmp(const void *a, const void *b)
{
    const order_t *p = a, *q = b;
    if (p->rank != q->rank)
        return p->rank < q->rank ? -1 : 1;
    if (p->submit != q->submit)
        return p->submit < q->submit ? -1 : 1;
    return (p->w > q->w) - (p->w < q->w);
}

static const char *cq_name(const sim_rec_t *r, size_t h)
{
    return h != SIM_NONE ? r->holders[h].name : "(no ClusterQueue)";
}

static const char *span_end_word(sim_span_end_t how)
{
    switch (how) {
    case SIM_SPAN_RUNNING:
        return "still running at the end";
    case SIM_SPAN_FINISHED:
        return "finished";
    case SIM_SPAN_PREEMPTED:
        return "preempted";
    case SIM_SPAN_EVICTED:
        return "evicted by a stop policy";
    case SIM_SPAN_DEACTIVATED:
        return "deactivated";
    case SIM_SPAN_DELETED:
        return "deleted";
    }
    return "";
}

/* A workload name cut to fit the label column: its end is what tells workloads apart. */
static void label(FILE *out, const char *name)
{
    size_t n = strlen(name);
    if (n <= LABEL_CHARS) {
        rep_esc(out, name);
        return;
    }
    fputs("\xe2\x80\xa6", out);
    rep_esc(out, name + n - (LABEL_CHARS - 1));
}

bool rep_gantt(rep_t *x)
{
    const sim_rec_t *r = x->r;
    FILE *out = x->out;
    size_t n = r->nwls < MAX_GANTT ? r->nwls : MAX_GANTT;
    order_t *o = calloc(n + 1, sizeof(*o));
    long long *ypos = calloc(r->nwls + 1, sizeof(*ypos));
    char b1[DURATION_STR_MAX], b2[DURATION_STR_MAX];

    if (o == NULL || ypos == NULL) {
        free(o);
        free(ypos);
        return false;
    }
    for (size_t i = 0; i < r->nwls; i++)
        ypos[i] = -1;
    for (size_t i = 0; i < n; i++) {
        size_t cq = r->wls[i].cq;
        o[i] = (order_t){i, cq != SIM_NONE ? x->cq_rank[cq] : SIM_NONE, r->wls[i].submit};
    }
    qsort(o, n, sizeof(*o), order_cmp);
    size_t groups = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || o[i].rank != o[i - 1].rank)
            groups++;
    rep_frame_t f = {.left = 210, .top = 4, .w = 760, .width = 1000, .t1 = r->end > 0 ? r->end : 1};
    f.h = (int)(n * ROW_H + groups * GROUP_H);
    f.height = f.top + f.h + 22;

    /* Bars take the color of their flavor when there is a choice of flavors, else of their
     * ClusterQueue. */
    bool by_flavor = x->nflavors > 1;
    fprintf(out,
            "<section id=\"timeline\">\n<h2>Timeline of admissions</h2>\n<p>One row per "
            "workload, grouped by ClusterQueue: a thin line while it waits, a bar while it holds "
            "quota (colored by %s). A red arrow goes from the workload that preempted to the one "
            "it stopped; a red cross ends a preempted run, a black cap a deactivated one. Hover "
            "for details.</p>\n",
            by_flavor     ? "the flavor of its largest GPU request"
            : x->lq_split ? "its LocalQueue"
                          : "its ClusterQueue");
    if (r->nwls > n)
        fprintf(out, "<p>The first %zu workloads submitted, of %zu.</p>\n", n, r->nwls);
    fputs("<div class=\"legend\">", out);
    for (size_t i = 0; by_flavor && i < x->nflavors; i++)
        rep_legend(out, "sw", rep_flavor_color(x, x->flavors[i]), x->flavors[i]);
    for (size_t i = 0; !by_flavor && x->lq_split && i < x->nlq && i < 24; i++)
        rep_legend(out, "sw", rep_lq_color(x, x->lqs[i]), x->lqs[i]);
    rep_legend(out, "line", "#999", "waiting");
    rep_legend(out, "arrow", "#d62728", "preempted (from preemptor to victim)");
    fputs("</div>\n", out);
    rep_svg_open(out, "chart-timeline", "chart-gantt", &f, "timeline of admissions");
    /* Grid lines first, under the bars. */
    sim_ms_t step = rep_time_step(f.t1, f.w / 70);
    for (sim_ms_t t = step; t < f.t1; t += step)
        fprintf(out, "<line class=\"grid\" x1=\"%lld\" y1=\"%d\" x2=\"%lld\" y2=\"%d\"/>",
                rep_x(&f, t), f.top, rep_x(&f, t), f.top + f.h);
    fputc('\n', out);
    long long y = f.top;
    for (size_t i = 0; i < n; i++) {
        const sim_wl_rec_t *w = &r->wls[o[i].w];
        if (i == 0 || o[i].rank != o[i - 1].rank) {
            fprintf(out,
                    "<g class=\"group\"><line class=\"sep\" x1=\"0\" y1=\"%lld\" x2=\"%d\" "
                    "y2=\"%lld\"/><text class=\"gname\" x=\"4\" y=\"%lld\">",
                    y, f.width, y, y + 13);
            rep_esc(out, cq_name(r, w->cq));
            fputs("</text></g>\n", out);
            y += GROUP_H;
        }
        ypos[o[i].w] = y + ROW_H / 2;
        sim_ms_t until = w->left >= 0 ? w->left : r->end;
        fputs("<g class=\"wl\"><title>", out);
        rep_esc(out, w->name);
        fprintf(out, ": submitted %s, waited %s, ", duration_format(w->submit, b1),
                duration_format(w->wait, b2));
        rep_esc(out, sim_view_state(w->state));
        fprintf(out, "</title><text class=\"wname\" x=\"%d\" y=\"%lld\" text-anchor=\"end\">",
                f.left - 6, y + ROW_H - 2);
        label(out, w->name);
        fprintf(out,
                "</text><line class=\"waiting\" x1=\"%lld\" y1=\"%lld\" x2=\"%lld\" "
                "y2=\"%lld\"/></g>\n",
                rep_x(&f, w->submit), y + ROW_H / 2, rep_x(&f, until), y + ROW_H / 2);
        y += ROW_H;
    }
    for (size_t s = 0; s < r->nspans; s++) {
        const sim_span_t *sp = &r->spans[s];
        if (ypos[sp->wl] < 0)
            continue;
        sim_ms_t end = sp->end >= 0 ? sp->end : r->end;
        long long x0 = rep_x(&f, sp->start), x1 = rep_x(&f, end), yc = ypos[sp->wl];
        const char *flavor = sp->gfr != SIM_NONE ? r->gfrs[sp->gfr].flavor : "";
        fprintf(out,
                "<rect class=\"span\" x=\"%lld\" y=\"%lld\" width=\"%lld\" height=\"8\" "
                "fill=\"%s\"><title>",
                x0, yc - 4, x1 - x0 > 1 ? x1 - x0 : 1,
                by_flavor     ? rep_flavor_color(x, flavor)
                : x->lq_split ? rep_lq_color(x, r->wls[sp->wl].lq)
                              : rep_cq_color(x, sp->cq));
        rep_esc(out, r->wls[sp->wl].name);
        fputs(" on ", out);
        rep_esc(out, flavor[0] != '\0' ? flavor : "no quota");
        fprintf(out, " in %s: %s", cq_name(r, sp->cq), duration_format(sp->start, b1));
        fprintf(out, " to %s, %s</title></rect>", duration_format(end, b2), span_end_word(sp->how));
        if (sp->how == SIM_SPAN_PREEMPTED)
            fprintf(out, "<path class=\"cross\" d=\"M%lld %lldl6 6m0 -6l-6 6\"/>", x1 - 3, yc - 3);
        else if (sp->how == SIM_SPAN_DEACTIVATED || sp->how == SIM_SPAN_EVICTED)
            fprintf(out, "<rect class=\"cap %s\" x=\"%lld\" y=\"%lld\" width=\"3\" height=\"12\"/>",
                    sp->how == SIM_SPAN_EVICTED ? "evicted" : "deactivated", x1 - 1, yc - 6);
        fputc('\n', out);
    }
    /* Arrows last, over the bars. */
    for (size_t i = 0; i < r->npreemptions; i++) {
        const sim_preemption_t *p = &r->preemptions[i];
        if (p->preemptor == SIM_NONE || ypos[p->preemptor] < 0 || ypos[p->victim] < 0)
            continue;
        long long xa = rep_x(&f, p->t), y1 = ypos[p->preemptor], y2 = ypos[p->victim];
        long long d = y2 > y1 ? y2 - y1 : y1 - y2, bulge = 8 + d / 6;
        if (bulge > 70)
            bulge = 70;
        fprintf(out,
                "<path class=\"arrow\" d=\"M%lld %lldC%lld %lld %lld %lld %lld %lld\" "
                "marker-end=\"url(#arrowhead)\"><title>",
                xa, y1, xa + bulge, y1, xa + bulge, y2, xa + 4, y2);
        fprintf(out, "%s: ", duration_format(p->t, b1));
        rep_esc(out, r->wls[p->preemptor].name);
        fputs(" preempted ", out);
        rep_esc(out, r->wls[p->victim].name);
        fprintf(out, " (%s)</title></path>\n", p->reason);
    }
    rep_time_axis(out, &f, f.top + f.h);
    fputs("</svg>\n</section>\n", out);
    free(o);
    free(ypos);
    return true;
}

/* ---- preemptions ------------------------------------------------------------------------- */

typedef struct pair_s {
    size_t by, victim; /* holders (SIM_NONE: unknown) */
    const char *reason;
    size_t n;
} pair_t;

static int pair_cmp(const void *a, const void *b)
{
    const pair_t *p = a, *q = b;
    if (p->n != q->n)
        return p->n < q->n ? 1 : -1;
    if (p->by != q->by)
        return p->by < q->by ? -1 : 1;
    if (p->victim != q->victim)
        return p->victim < q->victim ? -1 : 1;
    return strcmp(p->reason, q->reason);
}

static bool buckets(rep_t *x, const char **reasons, size_t nreasons)
{
    const sim_rec_t *r = x->r;
    FILE *out = x->out;
    rep_frame_t f = {.left = 64, .top = 12, .w = 920, .h = 150, .width = 1000, .height = 192};
    f.t1 = r->end > 0 ? r->end : 1;
    sim_ms_t step = rep_time_step(f.t1, 48);
    size_t nb = (size_t)(f.t1 / step) + 1;
    size_t *count = calloc(nb * (nreasons + 1) + 1, sizeof(*count));
    size_t most = 0;
    char b1[DURATION_STR_MAX], b2[DURATION_STR_MAX];

    if (count == NULL)
        return false;
    for (size_t i = 0; i < r->npreemptions; i++) {
        size_t b = (size_t)(r->preemptions[i].t / step), k = 0;
        while (k < nreasons && strcmp(reasons[k], r->preemptions[i].reason) != 0)
            k++;
        count[b * (nreasons + 1) + k]++;
        count[b * (nreasons + 1) + nreasons]++;
        if (count[b * (nreasons + 1) + nreasons] > most)
            most = count[b * (nreasons + 1) + nreasons];
    }
    f.t1 = (sim_ms_t)nb * step; /* whole buckets */
    fprintf(out, "<p>Preemptions per %s, by reason.</p>\n", duration_format(step, b1));
    rep_svg_open(out, "chart-preemptions", "chart-buckets", &f, "preemptions per time bucket");
    sim_wide_t top = rep_value_axis(out, &f, (sim_wide_t)most, NULL);
    for (size_t b = 0; b < nb; b++) {
        const size_t *c = count + b * (nreasons + 1);
        if (c[nreasons] == 0)
            continue;
        long long x0 = rep_x(&f, (sim_ms_t)b * step), x1 = rep_x(&f, (sim_ms_t)(b + 1) * step);
        long long wdt = x1 - x0 > 3 ? x1 - x0 - 2 : 1;
        size_t below = 0;
        for (size_t k = 0; k < nreasons; k++) {
            if (c[k] == 0)
                continue;
            long long ya = rep_y(&f, (sim_wide_t)(below + c[k]), top),
                      yb = rep_y(&f, (sim_wide_t)below, top);
            fprintf(out,
                    "<rect class=\"bucket\" x=\"%lld\" y=\"%lld\" width=\"%lld\" height=\"%lld\" "
                    "fill=\"%s\"><title>%s to %s: %zu %s</title></rect>",
                    x0 + 1, ya, wdt, yb - ya, rep_reason_color(k),
                    duration_format((sim_ms_t)b * step, b1),
                    duration_format((sim_ms_t)(b + 1) * step, b2), c[k], reasons[k]);
            below += c[k];
        }
        fprintf(out,
                "<text class=\"count\" x=\"%lld\" y=\"%lld\" text-anchor=\"middle\">%zu</text>\n",
                x0 + 1 + wdt / 2, rep_y(&f, (sim_wide_t)below, top) - 3, below);
    }
    rep_time_axis(out, &f, f.top + f.h);
    fputs("</svg>\n<div class=\"legend\">", out);
    for (size_t k = 0; k < nreasons; k++)
        rep_legend(out, "sw", rep_reason_color(k), reasons[k]);
    fputs("</div>\n", out);
    free(count);
    return true;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

bool rep_preemptions(rep_t *x)
{
    const sim_rec_t *r = x->r;
    FILE *out = x->out;
    const char *reasons[MAX_REASONS + 1];
    size_t nreasons = 0, npairs = 0;
    pair_t *pairs = calloc(r->npreemptions + 1, sizeof(*pairs));
    char b1[DURATION_STR_MAX];

    if (pairs == NULL)
        return false;
    fprintf(out, "<section id=\"preemptions\">\n<h2>Preemptions</h2>\n<p>%zu preemption%s.</p>\n",
            r->npreemptions, r->npreemptions == 1 ? "" : "s");
    if (r->npreemptions == 0) {
        fputs("</section>\n", out);
        free(pairs);
        return true;
    }
    for (size_t i = 0; i < r->npreemptions; i++) {
        const char *why = r->preemptions[i].reason;
        size_t k = 0;
        while (k < nreasons && strcmp(reasons[k], why) != 0)
            k++;
        if (k == nreasons && nreasons < MAX_REASONS)
            reasons[nreasons++] = why;
    }
    qsort(reasons, nreasons, sizeof(*reasons), str_cmp);
    if (!buckets(x, reasons, nreasons)) {
        free(pairs);
        return false;
    }
    /* Who preempted whom, per pair of ClusterQueues. */
    for (size_t i = 0; i < r->npreemptions; i++) {
        const sim_preemption_t *p = &r->preemptions[i];
        size_t by = p->preemptor != SIM_NONE ? r->wls[p->preemptor].cq : SIM_NONE, k = 0;
        while (k < npairs && !(pairs[k].by == by && pairs[k].victim == p->cq &&
                               strcmp(pairs[k].reason, p->reason) == 0))
            k++;
        if (k == npairs)
            pairs[npairs++] = (pair_t){by, p->cq, p->reason, 0};
        pairs[k].n++;
    }
    qsort(pairs, npairs, sizeof(*pairs), pair_cmp);
    fputs("<h3>Who preempted whom</h3>\n<table id=\"preemptions-by-queue\" class=\"data\">\n"
          "<thead><tr><th>preemptor's ClusterQueue</th><th>victim's ClusterQueue</th>"
          "<th>reason</th><th class=\"num\">preemptions</th></tr></thead><tbody>\n",
          out);
    for (size_t k = 0; k < npairs; k++) {
        fputs("<tr><td>", out);
        rep_esc(out, pairs[k].by != SIM_NONE ? r->holders[pairs[k].by].name : "(unknown)");
        fputs("</td><td>", out);
        rep_esc(out, cq_name(r, pairs[k].victim));
        fprintf(out, "</td><td>%s</td><td class=\"num\">%zu</td></tr>\n", pairs[k].reason,
                pairs[k].n);
    }
    fputs("</tbody></table>\n", out);
    size_t rows = r->npreemptions < MAX_TABLE ? r->npreemptions : MAX_TABLE;
    fprintf(out, "<details class=\"fold\"%s><summary>Every preemption (%zu%s)</summary>\n",
            r->npreemptions <= 40 ? " open" : "", rows,
            r->npreemptions > rows ? ", the first ones" : "");
    fputs("<table id=\"preemptions-table\" class=\"data\">\n<thead><tr><th class=\"num\">at</th>"
          "<th>preempted workload</th><th>its ClusterQueue</th><th>preempted by</th>"
          "<th>its ClusterQueue</th><th>reason</th></tr></thead><tbody>\n",
          out);
    for (size_t i = 0; i < rows; i++) {
        const sim_preemption_t *p = &r->preemptions[i];
        fprintf(out, "<tr class=\"preemption\"><td class=\"num\">%s</td><td>",
                duration_format(p->t, b1));
        rep_esc(out, r->wls[p->victim].name);
        fputs("</td><td>", out);
        rep_esc(out, cq_name(r, p->cq));
        fputs("</td><td>", out);
        rep_esc(out, p->preemptor != SIM_NONE ? r->wls[p->preemptor].name : "(unknown)");
        fputs("</td><td>", out);
        rep_esc(out, p->preemptor != SIM_NONE ? cq_name(r, r->wls[p->preemptor].cq) : "");
        fprintf(out, "</td><td>%s</td></tr>\n", p->reason);
    }
    fputs("</tbody></table>\n</details>\n</section>\n", out);
    free(pairs);
    return true;
}
