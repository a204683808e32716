/* report -- the --report HTML page: one self-contained file, charts as inline SVG, no scripts. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/sim.h"

#include "sim/fmt.h"
#include "sim/view.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Four charts, each an <svg> with a fixed id and class so tests (and readers' own tooling) can
 * find them:
 *
 *   #chart-pending       pending workloads over time, one line per ClusterQueue
 *   .chart-usage         one chart per (flavor, resource): usage (area) against the sum of
 *                        nominal quota (line) over time; ids chart-usage-<n> in name order
 *   #chart-waits         wait-time distribution per priority class (min, p50, p90, max)
 *   #chart-preemptions   each preemption as a dot on a timeline, one row per ClusterQueue
 *
 * Coordinates are integers computed with integer arithmetic from the exact record, so the page
 * is byte-identical across runs. Long series are folded to at most one vertical stroke per pixel
 * column (its minimum, maximum and last value), which keeps a 50,000-workload page small.
 */

#define W         780 /* plot width */
#define H         200 /* plot height */
#define LEFT      150 /* room for y labels (queue and class names) */
#define TOP       16
#define BOTTOM    34  /* room for x labels */
#define RIGHT     170 /* room for the legend */
#define MAX_LINES 12

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                      "#bcbd22", "#17becf", "#393b79", "#637939"};

static void esc(FILE *out, const char *s)
{
    for (; *s != '\0'; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&#39;", out);
            break;
        default:
            putc(*s, out);
        }
    }
}

/* ---- axes ----------------------------------------------------------------------------------- */

static long long px_x(sim_ms_t t, sim_ms_t end)
{
    if (end <= 0)
        return LEFT;
    if (t < 0)
        t = 0;
    if (t > end)
        t = end;
    return LEFT + (long long)(((sim_wide_t)t * W) / end);
}

static long long px_y(sim_wide_t v, sim_wide_t vmax)
{
    if (vmax <= 0 || v <= 0)
        return TOP + H;
    if (v > vmax)
        v = vmax;
    return TOP + H - (long long)((v * H) / vmax);
}

static void svg_open(FILE *out, const char *id, const char *cls, int height, const char *label)
{
    fprintf(out,
            "<svg id=\"%s\" class=\"chart %s\" xmlns=\"http://www.w3.org/2000/svg\" "
            "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
            id, cls, LEFT + W + RIGHT, height, LEFT + W + RIGHT, height);
    esc(out, label);
    fputs("\">\n", out);
}

/* The time axis along the bottom of a plot whose bottom edge is at y = `base`. */
static void time_axis(FILE *out, sim_ms_t end, int base)
{
    static const sim_ms_t steps[] = {1000,     5000,     10000,    30000,    60000,
                                     300000,   600000,   1800000,  3600000,  7200000,
                                     21600000, 43200000, 86400000, 604800000};
    sim_ms_t step = steps[sizeof(steps) / sizeof(steps[0]) - 1];
    char buf[DURATION_STR_MAX];

    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        if (end / steps[i] <= 8) {
            step = steps[i];
            break;
        }
    }
    fprintf(out, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", LEFT, base,
            LEFT + W, base);
    for (sim_ms_t t = 0; t <= end; t += step) {
        long long x = px_x(t, end);
        fprintf(out,
                "<line class=\"tick\" x1=\"%lld\" y1=\"%d\" x2=\"%lld\" y2=\"%d\"/>"
                "<text class=\"tlabel\" x=\"%lld\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                x, base, x, base + 4, x, base + 16, duration_format(t, buf));
        if (end == 0)
            break;
    }
}

static void y_labels(FILE *out, const char *top_label)
{
    fprintf(out, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", LEFT, TOP,
            LEFT, TOP + H);
    fprintf(out, "<text class=\"ylabel\" x=\"%d\" y=\"%d\" text-anchor=\"end\">", LEFT - 6,
            TOP + 4);
    esc(out, top_label);
    fprintf(out, "</text><text class=\"ylabel\" x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>\n",
            LEFT - 6, TOP + H + 4);
}

/* A step path of `s` over [0, end], folded per pixel column. `close_area`: return to the
 * baseline to make a fillable area. */
static void step_path(FILE *out, const sim_series_t *s, sim_ms_t end, sim_wide_t vmax,
                      const char *cls, const char *color, bool close_area)
{
    long long col = -1, lo = 0, hi = 0, last = TOP + H;
    long long start = px_x(0, end);

    fprintf(out, "<path class=\"%s\" %s=\"%s\" d=\"M%lld %d", cls, close_area ? "fill" : "stroke",
            color, start, TOP + H);
    for (size_t i = 0; i < s->len && s->t[i] <= end; i++) {
        long long x = px_x(s->t[i], end), y = px_y(s->v[i], vmax);
        if (x != col) {
            if (col >= 0)
                fprintf(out, "V%lldV%lldV%lld", lo, hi, last);
            fprintf(out, "H%lld", x);
            col = x;
            lo = hi = last;
        }
        if (y < lo)
            lo = y;
        if (y > hi)
            hi = y;
        last = y;
    }
    if (col >= 0)
        fprintf(out, "V%lldV%lldV%lld", lo, hi, last);
    fprintf(out, "H%lld", px_x(end, end));
    if (close_area)
        fprintf(out, "V%dZ", TOP + H);
    fputs("\"/>\n", out);
}

static sim_wide_t series_max(const sim_series_t *s)
{
    sim_wide_t m = 0;
    for (size_t i = 0; i < s->len; i++)
        if (s->v[i] > m)
            m = s->v[i];
    return m;
}

/* ---- charts --------------------------------------------------------------------------------- */

typedef struct line_s {
    size_t h;
    sim_wide_t max;
} line_t;

static int line_cmp(const void *x, const void *y)
{
    const line_t *a = x, *b = y;
    if (a->max != b->max)
        return a->max < b->max ? 1 : -1;
    return (a->h > b->h) - (a->h < b->h);
}

static bool chart_pending(const sim_rec_t *r, const size_t *cqs, size_t ncq, FILE *out)
{
    line_t *lines = calloc(ncq + 1, sizeof(*lines));
    sim_wide_t vmax = 0;
    size_t n = ncq < MAX_LINES ? ncq : MAX_LINES;
    char buf[64];

    if (lines == NULL)
        return false;
    for (size_t i = 0; i < ncq; i++)
        lines[i] = (line_t){cqs[i], series_max(&r->holders[cqs[i]].pending_series)};
    /* The busiest queues when there are more than fit; name order otherwise (cqs is sorted). */
    if (ncq > MAX_LINES)
        qsort(lines, ncq, sizeof(*lines), line_cmp);
    for (size_t i = 0; i < n; i++)
        if (lines[i].max > vmax)
            vmax = lines[i].max;
    fputs("<h2>Pending workloads over time</h2>\n", out);
    if (ncq > MAX_LINES)
        fprintf(out, "<p>The %d ClusterQueues with the longest queues, of %zu.</p>\n", MAX_LINES,
                ncq);
    svg_open(out, "chart-pending", "chart-lines", TOP + H + BOTTOM,
             "pending workloads per ClusterQueue");
    snprintf(buf, sizeof(buf), "%lld", (long long)vmax);
    y_labels(out, buf);
    for (size_t i = 0; i < n; i++) {
        const sim_holder_t *h = &r->holders[lines[i].h];
        const char *color = palette[i % (sizeof(palette) / sizeof(palette[0]))];
        step_path(out, &h->pending_series, r->end, vmax > 0 ? vmax : 1, "series pending", color,
                  false);
        fprintf(out,
                "<rect class=\"swatch\" x=\"%d\" y=\"%zu\" width=\"10\" height=\"10\" "
                "fill=\"%s\"/><text class=\"legend\" x=\"%d\" y=\"%zu\">",
                LEFT + W + 12, TOP + i * 16, color, LEFT + W + 26, TOP + i * 16 + 9);
        esc(out, h->name);
        fputs("</text>\n", out);
    }
    time_axis(out, r->end, TOP + H);
    fputs("</svg>\n", out);
    free(lines);
    return true;
}

static bool chart_usage(const sim_rec_t *r, FILE *out)
{
    size_t ng;
    size_t *g = sim_view_gfrs(r, &ng);
    char q[QUANTITY_STR_MAX], id[48], label[300], share[SIM_RATIO_STR_MAX];

    if (g == NULL && r->ngfrs > 0)
        return false;
    fputs("<h2>Usage against nominal quota, per flavor and resource</h2>\n"
          "<p>Shaded: quota in use by admitted workloads (all ClusterQueues). Line: the sum of "
          "nominal quota of ClusterQueues and Cohorts.</p>\n",
          out);
    for (size_t i = 0; i < ng; i++) {
        const sim_gfr_t *x = &r->gfrs[g[i]];
        sim_wide_t vmax = series_max(&x->usage_series);
        sim_wide_t nmax = series_max(&x->nominal_series);
        if (nmax > vmax)
            vmax = nmax;
        snprintf(id, sizeof(id), "chart-usage-%zu", i);
        snprintf(label, sizeof(label), "%s / %s", x->flavor, x->resource);
        fprintf(out, "<h3>");
        esc(out, label);
        fprintf(out, " <small>(utilization %s)</small></h3>\n",
                sim_fmt_percent(x->usage_int, x->nominal_int, share));
        svg_open(out, id, "chart-usage", TOP + H + BOTTOM, label);
        y_labels(out, sim_fmt_quantity(vmax, x->resource, q));
        step_path(out, &x->usage_series, r->end, vmax > 0 ? vmax : 1, "series usage", "#9ecae1",
                  true);
        step_path(out, &x->nominal_series, r->end, vmax > 0 ? vmax : 1, "series nominal", "#d62728",
                  false);
        fprintf(out,
                "<rect class=\"swatch\" x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" "
                "fill=\"#9ecae1\"/><text class=\"legend\" x=\"%d\" y=\"%d\">in use</text>\n"
                "<rect class=\"swatch\" x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" "
                "fill=\"#d62728\"/><text class=\"legend\" x=\"%d\" y=\"%d\">nominal</text>\n",
                LEFT + W + 12, TOP, LEFT + W + 26, TOP + 9, LEFT + W + 12, TOP + 16, LEFT + W + 26,
                TOP + 25);
        time_axis(out, r->end, TOP + H);
        fputs("</svg>\n", out);
    }
    if (ng == 0)
        fputs("<p>No quota was defined.</p>\n", out);
    free(g);
    return true;
}

typedef struct pc_item_s {
    const char *pclass;
    int32_t priority;
    sim_ms_t wait;
} pc_item_t;

static int pc_cmp(const void *x, const void *y)
{
    const pc_item_t *a = x, *b = y;
    int c = strcmp(a->pclass, b->pclass);
    if (c != 0)
        return c;
    return (a->wait > b->wait) - (a->wait < b->wait);
}

static bool chart_waits(const sim_rec_t *r, FILE *out)
{
    pc_item_t *v = calloc(r->nwls + 1, sizeof(*v));
    sim_ms_t *w = calloc(r->nwls + 1, sizeof(*w));
    sim_ms_t wmax = 0;
    size_t groups = 0;
    char buf[DURATION_STR_MAX];

    if (v == NULL || w == NULL) {
        free(v);
        free(w);
        return false;
    }
    for (size_t i = 0; i < r->nwls; i++) {
        v[i] = (pc_item_t){r->wls[i].priority_class[0] != '\0' ? r->wls[i].priority_class
                                                               : "(no priority class)",
                           r->wls[i].priority, r->wls[i].wait};
        if (v[i].wait > wmax)
            wmax = v[i].wait;
    }
    qsort(v, r->nwls, sizeof(*v), pc_cmp);
    for (size_t i = 0; i < r->nwls;) {
        size_t j = i;
        while (j < r->nwls && strcmp(v[j].pclass, v[i].pclass) == 0)
            j++;
        groups++;
        i = j;
    }
    int height = TOP + (int)groups * 28 + BOTTOM;
    fputs("<h2>Wait time per priority class</h2>\n<p>Each bar spans the shortest to the longest "
          "wait; the box spans the median (p50) to p90.</p>\n",
          out);
    svg_open(out, "chart-waits", "chart-boxes", height,
             "wait time distribution per priority class");
    size_t row = 0;
    for (size_t i = 0; i < r->nwls; row++) {
        size_t j = i, n = 0;
        while (j < r->nwls && strcmp(v[j].pclass, v[i].pclass) == 0)
            w[n++] = v[j++].wait;
        int y = TOP + (int)row * 28;
        sim_ms_t lo = w[0], p50 = sim_stats_percentile(w, n, 50),
                 p90 = sim_stats_percentile(w, n, 90), hi = w[n - 1];
        fprintf(out,
                "<g class=\"box\"><text class=\"ylabel\" x=\"%d\" y=\"%d\" "
                "text-anchor=\"end\">",
                LEFT - 6, y + 14);
        esc(out, v[i].pclass);
        fprintf(out,
                "</text><line class=\"whisker\" x1=\"%lld\" y1=\"%d\" x2=\"%lld\" y2=\"%d\"/>"
                "<rect class=\"iqr\" x=\"%lld\" y=\"%d\" width=\"%lld\" height=\"16\"/>"
                "<line class=\"median\" x1=\"%lld\" y1=\"%d\" x2=\"%lld\" y2=\"%d\"/>",
                px_x(lo, wmax), y + 10, px_x(hi, wmax), y + 10, px_x(p50, wmax), y + 2,
                px_x(p90, wmax) - px_x(p50, wmax) + 1, px_x(p50, wmax), y + 2, px_x(p50, wmax),
                y + 18);
        fprintf(out, "<text class=\"legend\" x=\"%d\" y=\"%d\">%zu, p50 %s</text></g>\n",
                LEFT + W + 12, y + 14, n, duration_format(p50, buf));
        i = j;
    }
    time_axis(out, wmax, TOP + (int)groups * 28);
    fputs("</svg>\n", out);
    free(v);
    free(w);
    return true;
}

static bool chart_preemptions(const sim_rec_t *r, const size_t *cqs, size_t ncq, FILE *out)
{
    size_t *row_of = calloc(r->nholders + 1, sizeof(*row_of));
    size_t rows = 0;
    char buf[DURATION_STR_MAX];

    if (row_of == NULL)
        return false;
    /* One row per ClusterQueue that lost a workload, in name order. */
    for (size_t i = 0; i < r->nholders; i++)
        row_of[i] = SIM_NONE;
    for (size_t i = 0; i < ncq; i++)
        if (r->holders[cqs[i]].preemptions > 0)
            row_of[cqs[i]] = rows++;
    fprintf(out,
            "<h2>Preemptions</h2>\n<p>%zu preemption%s; each dot is one workload stopped to "
            "make room (hover for details).</p>\n",
            r->npreemptions, r->npreemptions == 1 ? "" : "s");
    int height = TOP + (int)(rows > 0 ? rows : 1) * 22 + BOTTOM;
    svg_open(out, "chart-preemptions", "chart-timeline", height, "preemptions over time");
    for (size_t i = 0; i < ncq; i++) {
        if (row_of[cqs[i]] == SIM_NONE)
            continue;
        fprintf(out, "<text class=\"ylabel\" x=\"%d\" y=\"%zu\" text-anchor=\"end\">", LEFT - 6,
                TOP + row_of[cqs[i]] * 22 + 12);
        esc(out, r->holders[cqs[i]].name);
        fputs("</text>\n", out);
    }
    for (size_t i = 0; i < r->npreemptions; i++) {
        const sim_preemption_t *p = &r->preemptions[i];
        size_t row = p->cq != SIM_NONE ? row_of[p->cq] : SIM_NONE;
        if (row == SIM_NONE)
            continue;
        fprintf(out, "<circle class=\"preemption\" cx=\"%lld\" cy=\"%zu\" r=\"4\"><title>",
                px_x(p->t, r->end), TOP + row * 22 + 8);
        fprintf(out, "%s: ", duration_format(p->t, buf));
        esc(out, r->wls[p->victim].name);
        fputs(" preempted by ", out);
        esc(out, p->preemptor != SIM_NONE ? r->wls[p->preemptor].name : "?");
        fprintf(out, " (%s)</title></circle>\n", p->reason);
    }
    time_axis(out, r->end, TOP + (int)(rows > 0 ? rows : 1) * 22);
    fputs("</svg>\n", out);
    free(row_of);
    return true;
}

/* ---- the page -------------------------------------------------------------------------------- */

static const char style[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#222;"
    "max-width:1120px}\n"
    "h1{font-size:22px}h2{font-size:18px;margin-top:32px}h3{font-size:14px;margin:16px 0 4px}\n"
    "pre{background:#f6f6f6;padding:12px;overflow-x:auto;font-size:12px}\n"
    "svg.chart{display:block;background:#fff;border:1px solid #ddd;margin:6px 0}\n"
    "svg text{font-size:11px;fill:#333}\n"
    ".axis{stroke:#555;stroke-width:1}.tick{stroke:#555}\n"
    "path.pending{fill:none;stroke-width:1.5}path.usage{stroke:none;fill-opacity:.8}\n"
    "path.nominal{fill:none;stroke-width:2;stroke-dasharray:6 3}\n"
    ".whisker{stroke:#555;stroke-width:2}.iqr{fill:#9ecae1;stroke:#1f77b4}"
    ".median{stroke:#d62728;stroke-width:2}\n"
    ".preemption{fill:#d62728;fill-opacity:.7}\n";

err_t sim_report_write(const sim_rec_t *r, const char *title, FILE *out, err_msg_t *msg)
{
    size_t ncq;
    size_t *cqs = sim_view_cqs(r, &ncq);
    char *human = NULL;
    size_t human_len = 0;
    FILE *mem;
    bool ok = cqs != NULL || ncq == 0;

    /* The same text summary a terminal shows, at the top of the page. */
    mem = open_memstream(&human, &human_len);
    if (mem == NULL || sim_human_write(r, mem, NULL) != ERR_OK)
        ok = false;
    if (mem != NULL)
        fclose(mem);
    if (ok) {
        fputs(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>sluice "
            "sim: ",
            out);
        esc(out, title);
        fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>sluice sim: ", style);
        esc(out, title);
        fputs("</h1>\n<pre id=\"summary\">", out);
        esc(out, human != NULL ? human : "");
        fputs("</pre>\n", out);
        ok = chart_pending(r, cqs, ncq, out) && chart_usage(r, out) && chart_waits(r, out) &&
             chart_preemptions(r, cqs, ncq, out);
        fputs("</body>\n</html>\n", out);
    }
    free(human);
    free(cqs);
    if (!ok)
        return err_set(msg, ERR_NOMEM, "writing the report: out of memory");
    if (fflush(out) != 0 || ferror(out))
        return err_set(msg, ERR_IO, "writing the report: %s", strerror(errno != 0 ? errno : EIO));
    return ERR_OK;
}
