/* report_waits -- the report's wait-time distributions per ClusterQueue, per LocalQueue and per
 * priority class: one row each, every wait a dot, min-max whisker, p50-p90 box. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/report_int.h"

#include <stdlib.h>
#include <string.h>

#define ROW      22
#define MAX_ROWS 40  /* LocalQueues shown (the busiest) */
#define MAX_DOTS 400 /* a row with more waits shows its distribution as box and whisker only */

typedef struct item_s {
    const char *key;
    size_t rank; /* order of the key (ClusterQueue rank), or SIM_NONE: by key text */
    sim_ms_t wait;
} item_t;

static int item_cmp(const void *a, const void *b)
{
    const item_t *p = a, *q = b;
    if (p->rank != q->rank)
        return p->rank < q->rank ? -1 : 1;
    int c = strcmp(p->key, q->key);
    if (c != 0)
        return c;
    return (p->wait > q->wait) - (p->wait < q->wait);
}

typedef struct row_s {
    size_t start, n;
} row_t;

static int row_cmp_n(const void *a, const void *b)
{
    const row_t *p = a, *q = b;
    if (p->n != q->n)
        return p->n < q->n ? 1 : -1;
    return (p->start > q->start) - (p->start < q->start);
}

static int row_cmp_start(const void *a, const void *b)
{
    const row_t *p = a, *q = b;
    return (p->start > q->start) - (p->start < q->start);
}

/* One chart: the items sorted, rows split where the key changes. */
static bool chart(rep_t *x, const char *id, const char *what, item_t *v, size_t nv, sim_ms_t wmax)
{
    FILE *out = x->out;
    row_t *rows = calloc(nv + 1, sizeof(*rows));
    sim_ms_t *w = calloc(nv + 1, sizeof(*w));
    size_t nrows = 0, all;
    char b1[DURATION_STR_MAX], b2[DURATION_STR_MAX], b3[DURATION_STR_MAX];

    if (rows == NULL || w == NULL) {
        free(rows);
        free(w);
        return false;
    }
    qsort(v, nv, sizeof(*v), item_cmp);
    for (size_t i = 0; i < nv;) {
        size_t j = i;
        while (j < nv && v[j].rank == v[i].rank && strcmp(v[j].key, v[i].key) == 0)
            j++;
        rows[nrows++] = (row_t){i, j - i};
        i = j;
    }
    all = nrows;
    if (nrows > MAX_ROWS) {
        qsort(rows, nrows, sizeof(*rows), row_cmp_n);
        nrows = MAX_ROWS;
        qsort(rows, nrows, sizeof(*rows), row_cmp_start);
    }
    rep_frame_t f = {.left = 200, .top = 8, .w = 560, .h = (int)nrows * ROW, .width = 1000};
    f.height = f.top + f.h + 24;
    f.t1 = wmax > 0 ? wmax : 1;
    fprintf(out, "<h3>Per %s</h3>\n", what);
    if (all > nrows)
        fprintf(out, "<p>The %zu with the most workloads, of %zu.</p>\n", nrows, all);
    rep_svg_open(out, id, "chart-boxes", &f, "wait time distribution");
    for (size_t k = 0; k < nrows; k++) {
        size_t n = rows[k].n;
        const item_t *it = v + rows[k].start;
        int y = f.top + (int)k * ROW;
        for (size_t i = 0; i < n; i++)
            w[i] = it[i].wait;
        sim_ms_t lo = w[0], p50 = sim_stats_percentile(w, n, 50),
                 p90 = sim_stats_percentile(w, n, 90), hi = w[n - 1];
        if (k % 2 == 1)
            fprintf(out, "<rect class=\"stripe\" x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\"/>", y,
                    f.width, ROW);
        fprintf(out, "<g class=\"box\"><title>");
        rep_esc(out, it[0].key);
        fprintf(out, ": %zu workload%s, wait min %s, p50 %s, p90 %s, max ", n, n == 1 ? "" : "s",
                duration_format(lo, b1), duration_format(p50, b2), duration_format(p90, b3));
        fprintf(out, "%s</title><text class=\"ylabel\" x=\"%d\" y=\"%d\" text-anchor=\"end\">",
                duration_format(hi, b1), f.left - 8, y + 15);
        rep_esc(out, it[0].key);
        fprintf(out,
                "</text><line class=\"whisker\" x1=\"%lld\" y1=\"%d\" x2=\"%lld\" y2=\"%d\"/>"
                "<rect class=\"iqr\" x=\"%lld\" y=\"%d\" width=\"%lld\" height=\"14\"/>",
                rep_x(&f, lo), y + 11, rep_x(&f, hi), y + 11, rep_x(&f, p50), y + 4,
                rep_x(&f, p90) - rep_x(&f, p50) + 1);
        for (size_t i = 0; n <= MAX_DOTS && i < n; i++)
            fprintf(out, "<circle class=\"wait\" cx=\"%lld\" cy=\"%d\" r=\"2\"/>", rep_x(&f, w[i]),
                    y + 11 + (int)(i % 5) * 2 - 4);
        fprintf(out,
                "<line class=\"median\" x1=\"%lld\" y1=\"%d\" x2=\"%lld\" y2=\"%d\"/>"
                "<text class=\"stat\" x=\"%d\" y=\"%d\">%zu \xc2\xb7 p50 %s \xc2\xb7 p90 %s",
                rep_x(&f, p50), y + 2, rep_x(&f, p50), y + 20, f.left + f.w + 14, y + 15, n,
                duration_format(p50, b1), duration_format(p90, b2));
        fprintf(out, " \xc2\xb7 max %s</text></g>\n", duration_format(hi, b1));
    }
    rep_time_axis(out, &f, f.top + f.h);
    fputs("</svg>\n", out);
    free(rows);
    free(w);
    return true;
}

bool rep_waits(rep_t *x)
{
    const sim_rec_t *r = x->r;
    FILE *out = x->out;
    item_t *v = calloc(r->nwls + 1, sizeof(*v));
    sim_ms_t wmax = 0;
    size_t classes = 0;
    bool ok = v != NULL;

    if (!ok)
        return false;
    for (size_t i = 0; i < r->nwls; i++)
        if (r->wls[i].wait > wmax)
            wmax = r->wls[i].wait;
    fputs("<section id=\"waits\">\n<h2>Wait time</h2>\n<p>Time each workload spent pending "
          "(until admission, or the end of the run), one dot per workload; the bar spans the "
          "shortest to the longest wait, the box the median (p50, red mark) to p90. All charts "
          "share one time scale.</p>\n",
          out);
    if (r->nwls == 0) {
        fputs("<p>No workloads.</p>\n</section>\n", out);
        free(v);
        return true;
    }
    for (size_t i = 0; i < r->nwls; i++) {
        const sim_wl_rec_t *w = &r->wls[i];
        v[i] = (item_t){w->cq != SIM_NONE ? r->holders[w->cq].name : "(no ClusterQueue)",
                        w->cq != SIM_NONE ? x->cq_rank[w->cq] : SIM_NONE, w->wait};
    }
    ok = chart(x, "chart-waits-cq", "ClusterQueue", v, r->nwls, wmax);
    for (size_t i = 0; ok && i < r->nwls; i++)
        v[i] = (item_t){r->wls[i].lq != NULL ? r->wls[i].lq : "(no LocalQueue)", 0, r->wls[i].wait};
    if (ok)
        ok = chart(x, "chart-waits-lq", "LocalQueue (namespace/name)", v, r->nwls, wmax);
    for (size_t i = 0; ok && i < r->nwls; i++) {
        v[i] = (item_t){r->wls[i].priority_class[0] != '\0' ? r->wls[i].priority_class
                                                            : "(no priority class)",
                        0, r->wls[i].wait};
        if (i > 0 && strcmp(v[i].key, v[0].key) != 0)
            classes = 2;
    }
    if (ok && classes > 1)
        ok = chart(x, "chart-waits-pc", "priority class", v, r->nwls, wmax);
    if (ok)
        fputs("</section>\n", out);
    free(v);
    return ok;
}
