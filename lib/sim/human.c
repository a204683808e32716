/* human -- the default summary for people: queues, waits, quota use, GPU-hours, wait reasons. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/requests.h"
#include "sim/sim.h"

#include "sim/fmt.h"
#include "sim/view.h"
#include "util/grow.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/*
 * Plain aligned text, 100 columns at most in the common case: a platform engineer reads it in a
 * terminal right after the run. Every number here is also in the --summary document (same
 * definitions, docs/simulator.md), only rounded for reading.
 */

#define MAX_COLS    8
#define CELL        96
#define TOP_REASONS 5

/* A table: rows of cells, the first column left-aligned, the others right-aligned. */
typedef struct table_s {
    char (*cells)[MAX_COLS][CELL];
    size_t rows, cap;
    int ncols;
    unsigned left; /* bit c set: column c is left-aligned (column 0 always is) */
    bool oom;
} table_t;

static void row(table_t *t, ...)
{
    va_list ap;

    if (util_grow((void **)&t->cells, &t->cap, t->rows + 1, sizeof(*t->cells)) != ERR_OK) {
        t->oom = true;
        return;
    }
    va_start(ap, t);
    for (int c = 0; c < t->ncols; c++) {
        const char *s = va_arg(ap, const char *);
        snprintf(t->cells[t->rows][c], CELL, "%s", s != NULL ? s : "");
    }
    va_end(ap);
    t->rows++;
}

static void table_print(table_t *t, FILE *out, const char *indent)
{
    size_t w[MAX_COLS] = {0};

    for (size_t r = 0; r < t->rows; r++)
        for (int c = 0; c < t->ncols; c++) {
            size_t n = strlen(t->cells[r][c]);
            if (n > w[c])
                w[c] = n;
        }
    for (size_t r = 0; r < t->rows; r++) {
        int ncols = t->ncols;
        while (ncols > 1 && t->cells[r][ncols - 1][0] == '\0')
            ncols--; /* no trailing blanks after a short row */
        fputs(indent, out);
        for (int c = 0; c < ncols; c++) {
            bool last = c + 1 == ncols;
            if (c == 0)
                fprintf(out, "%-*s", ncols == 1 ? 0 : (int)w[c], t->cells[r][c]);
            else if ((t->left >> c) & 1u)
                fprintf(out, "  %-*s", last ? 0 : (int)w[c], t->cells[r][c]);
            else
                fprintf(out, "  %*s", (int)w[c], t->cells[r][c]);
        }
        putc('\n', out);
    }
    free(t->cells);
    t->cells = NULL;
    t->rows = t->cap = 0;
}

static char *num(size_t v, char *buf)
{
    snprintf(buf, 32, "%zu", v);
    return buf;
}

static char *dur(sim_ms_t ms, char *buf)
{
    return duration_format(ms, buf);
}

/* ---- sections ------------------------------------------------------------------------------ */

static void header(const sim_rec_t *r, FILE *out)
{
    size_t counts[5] = {0};
    char buf[DURATION_STR_MAX];
    const char *why = sim_view_end_reason(r);

    for (size_t i = 0; i < r->nwls; i++)
        counts[r->wls[i].state]++;
    fprintf(out, "%zu workload%s over %s of virtual time (%s)\n", r->nwls, r->nwls == 1 ? "" : "s",
            dur(r->end, buf),
            strcmp(why, "completed") == 0 ? "every workload done"
            : strcmp(why, "until") == 0   ? "stopped at --until"
                                          : "stopped: nothing more could change");
    fprintf(out,
            "  %zu finished, %zu running, %zu pending, %zu deactivated, %zu deleted; "
            "%zu preemption%s\n",
            counts[SIM_WL_FINISHED], counts[SIM_WL_RUNNING], counts[SIM_WL_PENDING],
            counts[SIM_WL_DEACTIVATED], counts[SIM_WL_DELETED], r->npreemptions,
            r->npreemptions == 1 ? "" : "s");
}

static bool queues(const sim_rec_t *r, const size_t *cqs, size_t ncq, FILE *out)
{
    table_t t = {.ncols = 7};
    sim_view_groups_t g;
    char a[32], b[32], c[32], p50[DURATION_STR_MAX], p90[DURATION_STR_MAX], mx[DURATION_STR_MAX];

    if (sim_view_groups_init(&g, r) != ERR_OK)
        return false;
    fprintf(out, "\nClusterQueues (wait = time pending, counted until admission or the end)\n");
    row(&t, "ClusterQueue", "admitted", "preempted", "pending", "wait p50", "wait p90", "wait max");
    for (size_t i = 0; i < ncq; i++) {
        const sim_holder_t *h = &r->holders[cqs[i]];
        size_t nw;
        sim_ms_t *w = sim_view_waits(r, &g, cqs[i], &nw);
        if (w == NULL) {
            sim_view_groups_fini(&g);
            free(t.cells);
            return false;
        }
        row(&t, h->name, num(h->admissions, a), num(h->preemptions, b),
            num(h->pending > 0 ? (size_t)h->pending : 0, c),
            dur(sim_stats_percentile(w, nw, 50), p50), dur(sim_stats_percentile(w, nw, 90), p90),
            dur(nw > 0 ? w[nw - 1] : 0, mx));
        free(w);
    }
    if (ncq == 0)
        row(&t, "(none)", "", "", "", "", "", "");
    sim_view_groups_fini(&g);
    bool ok = !t.oom;
    table_print(&t, out, "  ");
    return ok;
}

static bool usage(const sim_rec_t *r, const size_t *cqs, size_t ncq, FILE *out)
{
    table_t t = {.ncols = 7, .left = 0x6};
    char nom[QUANTITY_STR_MAX], peak[QUANTITY_STR_MAX], share[SIM_RATIO_STR_MAX],
        borrowed[SIM_RATIO_STR_MAX], used[SIM_RATIO_STR_MAX];
    bool any = false;

    fprintf(
        out,
        "\nUsage of nominal quota (used: averaged over the run; over nominal: borrowed from the "
        "cohort or\nleft over after a quota cut, in resource-hours)\n");
    row(&t, "ClusterQueue", "flavor", "resource", "nominal", "used", "peak", "over nominal");
    for (size_t i = 0; i < ncq; i++) {
        const sim_holder_t *h = &r->holders[cqs[i]];
        size_t nfr;
        size_t *frs = sim_view_frs(r, cqs[i], &nfr);
        if (frs == NULL && h->nfrs > 0)
            return false;
        for (size_t k = 0; k < nfr; k++) {
            const sim_fr_rec_t *fr = &h->frs[frs[k]];
            sim_fmt_percent(fr->usage_int, fr->nominal_int, share);
            if (fr->nominal_int <= 0 && fr->usage_int > 0) {
                /* No nominal quota at all: everything it used was borrowed. */
                snprintf(share, sizeof(share), "borrowed");
            }
            sim_fmt_resource_hours(fr->borrowed_int, fr->resource, borrowed);
            sim_fmt_quantity(fr->nominal, fr->resource, nom);
            sim_fmt_quantity(fr->peak, fr->resource, peak);
            snprintf(used, sizeof(used), "%s", share);
            row(&t, h->name, fr->flavor, fr->resource, nom, used, peak, borrowed);
            any = true;
        }
        free(frs);
    }
    if (!any)
        row(&t, "(no quota)", "", "", "", "", "", "");
    bool ok = !t.oom;
    table_print(&t, out, "  ");
    return ok;
}

typedef struct ns_item_s {
    const char *ns;
    sim_wide_t gpu;
} ns_item_t;

static int ns_cmp(const void *x, const void *y)
{
    return strcmp(((const ns_item_t *)x)->ns, ((const ns_item_t *)y)->ns);
}

static bool gpu_hours(const sim_rec_t *r, const size_t *cqs, size_t ncq, FILE *out)
{
    ns_item_t *items = calloc(r->nwls + 1, sizeof(*items));
    size_t n = 0;
    bool any_gpu = false;
    char buf[SIM_RATIO_STR_MAX];

    if (items == NULL)
        return false;
    for (size_t i = 0; i < r->ngfrs; i++)
        any_gpu |= requests_resource_is_gpu(r->gfrs[i].resource);
    fprintf(out, "\nGPU-hours (resources whose name contains \"gpu\")\n");
    if (!any_gpu) {
        fprintf(out, "  none: no quota or usage names a GPU resource\n");
        free(items);
        return true;
    }
    for (size_t i = 0; i < r->nwls; i++)
        items[i] = (ns_item_t){r->wls[i].ns, r->wls[i].gpu_nano_ms};
    qsort(items, r->nwls, sizeof(*items), ns_cmp);
    fputs("  by namespace:   ", out);
    for (size_t i = 0; i < r->nwls;) {
        sim_wide_t sum = 0;
        size_t j = i;
        while (j < r->nwls && strcmp(items[j].ns, items[i].ns) == 0)
            sum += items[j++].gpu;
        fprintf(out, "%s%s %s", n++ > 0 ? ", " : "", items[i].ns, sim_fmt_gpu_hours(sum, buf));
        i = j;
    }
    fputs(n == 0 ? "(no workloads)\n" : "\n", out);
    fputs("  by ClusterQueue: ", out);
    for (size_t i = 0; i < ncq; i++)
        fprintf(out, "%s%s %s", i > 0 ? ", " : "", r->holders[cqs[i]].name,
                sim_fmt_gpu_hours(r->holders[cqs[i]].gpu_nano_ms, buf));
    fputs(ncq == 0 ? "(none)\n" : "\n", out);
    free(items);
    return true;
}

static int reason_cmp(const void *x, const void *y)
{
    const sim_reason_t *const *a = x, *const *b = y;
    if ((*a)->total != (*b)->total)
        return (*a)->total < (*b)->total ? 1 : -1;
    return strcmp((*a)->text, (*b)->text);
}

static bool reasons(const sim_rec_t *r, FILE *out)
{
    const sim_reason_t **v = calloc(r->nreasons + 1, sizeof(*v));
    char buf[DURATION_STR_MAX];
    size_t shown = 0;

    if (v == NULL)
        return false;
    for (size_t i = 0; i < r->nreasons; i++)
        v[i] = &r->reasons[i];
    qsort(v, r->nreasons, sizeof(*v), reason_cmp);
    fprintf(out, "\nWhy workloads waited (the engine's explanations, numbers shown as N; by total "
                 "waiting time)\n");
    for (size_t i = 0; i < r->nreasons && shown < TOP_REASONS; i++) {
        if (v[i]->total <= 0)
            continue;
        fprintf(out, "  %8s  %5zu wait%s  %s\n", dur(v[i]->total, buf), v[i]->waits,
                v[i]->waits == 1 ? " " : "s", v[i]->text);
        shown++;
    }
    if (shown == 0)
        fprintf(out, "  nothing waited\n");
    free(v);
    return true;
}

err_t sim_human_write(const sim_rec_t *r, FILE *out, err_msg_t *msg)
{
    size_t ncq;
    size_t *cqs = sim_view_cqs(r, &ncq);
    bool ok = cqs != NULL || ncq == 0;

    header(r, out);
    ok = ok && queues(r, cqs, ncq, out);
    ok = ok && usage(r, cqs, ncq, out);
    ok = ok && gpu_hours(r, cqs, ncq, out);
    ok = ok && reasons(r, out);
    free(cqs);
    if (!ok)
        return err_set(msg, ERR_NOMEM, "writing the summary: out of memory");
    if (fflush(out) != 0 || ferror(out))
        return err_set(msg, ERR_IO, "writing the summary: %s", strerror(errno != 0 ? errno : EIO));
    return ERR_OK;
}
