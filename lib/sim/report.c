/* report -- the --report HTML page: one self-contained file, charts as inline SVG, no scripts. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/requests.h"
#include "sim/sim.h"

#include "sim/fmt.h"
#include "sim/report_int.h"
#include "sim/view.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * The page tells a run's story top-down. Every chart is an <svg> with a fixed id or class so
 * tests (and readers' own tooling) can find it:
 *
 *   #key-figures            workloads, preemptions, waits, GPU-hours at a glance
 *   #summary                the text summary a terminal shows
 *   #cohort-tree            cohorts and ClusterQueues with their quotas (report_tree.c)
 *   #queue-graph            the scenario's queue graph as `sluice graph` draws it: LocalQueues ->
 *                           ClusterQueues in cohort frames -> flavors, problems under it
 *                           (report_graph.c, lib/graph)
 *   .chart-cluster          per GPU resource: usage stacked per ClusterQueue (report_usage.c)
 *   .chart-usage            per ClusterQueue and resource: usage stacked per flavor, borrowed
 *                           part hatched, nominal and borrowing-limit lines; CPU and memory
 *                           folded unless a wait explanation names them
 *   #chart-pending          pending workloads per ClusterQueue over time
 *   #chart-waits-cq, -lq, -pc   wait distributions per ClusterQueue, LocalQueue, priority class
 *                           (report_waits.c)
 *   #chart-timeline         admissions as a Gantt chart with preemption arrows (report_time.c)
 *   #chart-preemptions      preemptions per time bucket and reason; #preemptions-by-queue and
 *                           #preemptions-table say who preempted whom
 *   #reasons-table          why workloads waited, quoted with numbers and workload names
 *
 * Charts have a viewBox and no fixed size, so they follow the window; @media print lays the
 * page out for paper.
 */

static const char style[] =
    ":root{--ink:#222;--muted:#666;--line:#ddd}\n"
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;padding:16px "
    "24px;color:var(--ink);max-width:1400px;line-height:1.4}\n"
    "h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:36px 0 6px;border-bottom:1px solid "
    "var(--line);padding-bottom:4px}h3{font-size:14px;margin:18px 0 4px}\n"
    "p{margin:4px 0 8px;max-width:90ch}small{color:var(--muted);font-weight:normal}\n"
    "nav{font-size:13px;margin:4px 0 12px}nav a{margin-right:12px;color:#1f5fa8}\n"
    "#key-figures{display:flex;flex-wrap:wrap;gap:8px;margin:12px 0}\n"
    ".fig{border:1px solid var(--line);border-radius:6px;padding:6px 12px;min-width:110px}\n"
    ".fig b{display:block;font-size:20px}.fig span{font-size:12px;color:var(--muted)}\n"
    "pre{background:#f6f6f6;padding:12px;font-size:12px;white-space:pre-wrap;"
    "overflow-wrap:anywhere;margin:0}\n"
    "details{margin:8px 0}summary{cursor:pointer;font-weight:600;font-size:14px}\n"
    "svg.chart{display:block;width:100%;height:auto;background:#fff;margin:4px 0}\n"
    "svg.chart text{font-size:11px;fill:#333}svg.chart .count{font-size:10px;font-weight:600}\n"
    ".graph{overflow-x:auto;margin:4px 0}.graph svg{display:block;max-width:100%;height:auto}\n"
    ".axis{stroke:#555;stroke-width:1}.tick{stroke:#555}.grid{stroke:#e6e6e6}\n"
    "path.pending{fill:none;stroke-width:1.5}path.nominal{fill:none;stroke-width:1.5;"
    "stroke-dasharray:6 3}path.ceiling{fill:none;stroke-width:1.2;stroke-dasharray:1 3}\n"
    "path.band{stroke:none}path.usage,path.flavor{fill-opacity:.9}\n"
    ".whisker{stroke:#555;stroke-width:1.5}.iqr{fill:#9ecae1;fill-opacity:.5;stroke:#1f77b4}"
    ".median{stroke:#d62728;stroke-width:2.5}circle.wait{fill:#1f3b73;fill-opacity:.45}"
    ".stripe{fill:#f7f7f7}\n"
    ".waiting{stroke:#bbb;stroke-width:1.5}.span{stroke:#fff;stroke-width:.5}"
    ".cross{stroke:#d62728;stroke-width:2;fill:none}.cap.deactivated{fill:#222}"
    ".cap.evicted{fill:#f28e2b}.arrow{fill:none;stroke:#d62728;stroke-width:1.2;"
    "stroke-opacity:.85}.sep{stroke:#ccc}.gname{font-weight:700;font-size:12px}"
    ".wname{font-size:10px;fill:#444}\n"
    ".charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(420px,1fr));"
    "gap:8px 20px}\n"
    "figure{margin:0}figcaption{font-size:13px}\n"
    ".legend{font-size:12px;display:flex;flex-wrap:wrap;gap:4px 14px;margin:2px 0 6px}\n"
    ".key i{display:inline-block;width:14px;height:10px;margin-right:4px;vertical-align:-1px}\n"
    ".key i.sw{background:var(--c)}.key i.line{height:0;border-top:2px solid var(--c);"
    "vertical-align:3px}.key i.dash{height:0;border-top:2px dashed var(--c);vertical-align:3px}"
    ".key i.dot{height:0;border-top:2px dotted var(--c);vertical-align:3px}"
    ".key i.arrow{height:0;border-top:2px solid var(--c);vertical-align:3px}"
    ".key i.hatch{background:repeating-linear-gradient(45deg,var(--c) 0 1.5px,transparent 1.5px "
    "4px);border:1px solid #999}\n"
    "table.data{border-collapse:collapse;font-size:13px;margin:6px 0}"
    "table.data th,table.data td{border-bottom:1px solid var(--line);padding:3px 10px;"
    "text-align:left;vertical-align:top}table.data th{background:#f6f6f6}"
    "td.num,th.num{text-align:right;white-space:nowrap}td.msg{max-width:80ch}\n"
    "ul.tree,ul.tree ul{list-style:none;margin:0;padding-left:22px}ul.tree{padding-left:0}"
    "ul.tree ul{border-left:1px solid #ccc;margin-left:6px}ul.tree li{margin:6px 0}\n"
    ".tree .kind{font-size:11px;text-transform:uppercase;color:var(--muted);letter-spacing:.04em}"
    ".tree .facts,.tree .weight{font-size:12px;color:var(--muted);margin-left:8px}"
    ".tree .weight{color:#1f5fa8;font-weight:600}\n"
    ".tree .dot{display:inline-block;width:10px;height:10px;border-radius:50%;"
    "background:var(--c);margin-right:6px}\n"
    ".quotas{display:flex;flex-wrap:wrap;gap:4px;margin:2px 0 0}.q{font-size:12px;border:1px "
    "solid var(--line);border-radius:4px;padding:0 6px;color:var(--muted)}.q.gpu{color:var(--ink);"
    "border-color:#9ab}.q.none{font-style:italic}\n"
    "@media print{body{max-width:none;padding:0;font-size:11px}nav{display:none}"
    "h2{break-after:avoid;margin-top:18px}h3,figcaption{break-after:avoid}"
    "svg.chart,figure,tr,.fig{break-inside:avoid}pre{font-size:9px}"
    ".charts{grid-template-columns:1fr 1fr}summary{list-style:none}"
    "a{color:inherit;text-decoration:none}@page{margin:12mm}}\n";

/* Patterns and markers the charts reference by id. */
static const char defs[] =
    "<svg class=\"defs\" width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\">"
    "<defs><pattern id=\"hatch\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\" "
    "patternTransform=\"rotate(45)\"><rect width=\"5\" height=\"5\" fill=\"#fff\" "
    "fill-opacity=\".35\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"5\" stroke=\"#222\" "
    "stroke-width=\"1.6\"/></pattern><marker id=\"arrowhead\" viewBox=\"0 0 8 8\" refX=\"7\" "
    "refY=\"4\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0 0L8 4L0 8z\" "
    "fill=\"#d62728\"/></marker></defs></svg>\n";

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Add `s` to the sorted-later set v[*n] unless present. */
static void set_add(char **v, size_t *n, char *s)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(v[i], s) == 0)
            return;
    v[(*n)++] = s;
}

/* The LocalQueues workloads were submitted to, and whether a ClusterQueue serves several. */
static bool lqs_init(rep_t *x)
{
    const sim_rec_t *r = x->r;
    size_t *first_lq = calloc(r->nholders + 1, sizeof(*first_lq));

    x->lqs = calloc(r->nwls + 1, sizeof(*x->lqs));
    if (first_lq == NULL || x->lqs == NULL) {
        free(first_lq);
        return false;
    }
    for (size_t i = 0; i < r->nwls; i++)
        if (r->wls[i].lq != NULL)
            x->lqs[x->nlq++] = r->wls[i].lq;
    qsort(x->lqs, x->nlq, sizeof(char *), str_cmp);
    size_t o = 0;
    for (size_t i = 0; i < x->nlq; i++)
        if (o == 0 || strcmp(x->lqs[o - 1], x->lqs[i]) != 0)
            x->lqs[o++] = x->lqs[i];
    x->nlq = o;
    for (size_t h = 0; h < r->nholders; h++)
        first_lq[h] = SIM_NONE;
    for (size_t i = 0; i < r->nwls; i++) {
        size_t cq = r->wls[i].cq, lq = rep_lq_index(x, r->wls[i].lq);
        if (cq == SIM_NONE || lq == SIM_NONE)
            continue;
        if (first_lq[cq] == SIM_NONE)
            first_lq[cq] = lq;
        else if (first_lq[cq] != lq)
            x->lq_split = true;
    }
    free(first_lq);
    return true;
}

static bool rep_init(rep_t *x, const sim_rec_t *r, FILE *out)
{
    memset(x, 0, sizeof(*x));
    x->r = r;
    x->out = out;
    x->cqs = sim_view_cqs(r, &x->ncq);
    x->cq_rank = calloc(r->nholders + 1, sizeof(*x->cq_rank));
    x->flavors = calloc(r->ngfrs + 1, sizeof(*x->flavors));
    x->gpu_res = calloc(r->ngfrs + 1, sizeof(*x->gpu_res));
    x->other_res = calloc(r->ngfrs + 1, sizeof(*x->other_res));
    size_t ncq = 0;
    for (size_t i = 0; i < r->nholders; i++)
        ncq += r->holders[i].is_cohort ? 0 : 1;
    if ((x->cqs == NULL && ncq > 0) || x->cq_rank == NULL || x->flavors == NULL ||
        x->gpu_res == NULL || x->other_res == NULL)
        return false;
    for (size_t i = 0; i < r->nholders; i++)
        x->cq_rank[i] = SIM_NONE;
    for (size_t i = 0; i < x->ncq; i++)
        x->cq_rank[x->cqs[i]] = i;
    for (size_t i = 0; i < r->ngfrs; i++) {
        set_add(x->flavors, &x->nflavors, r->gfrs[i].flavor);
        if (requests_resource_is_gpu(r->gfrs[i].resource))
            set_add(x->gpu_res, &x->ngpu_res, r->gfrs[i].resource);
        else
            set_add(x->other_res, &x->nother_res, r->gfrs[i].resource);
    }
    qsort(x->flavors, x->nflavors, sizeof(char *), str_cmp);
    qsort(x->gpu_res, x->ngpu_res, sizeof(char *), str_cmp);
    qsort(x->other_res, x->nother_res, sizeof(char *), str_cmp);
    return lqs_init(x);
}

static void rep_fini(rep_t *x)
{
    free(x->cqs);
    free(x->cq_rank);
    free(x->flavors);
    free(x->gpu_res);
    free(x->other_res);
    free(x->lqs);
}

static void figure(FILE *out, const char *value, const char *what)
{
    fputs("<div class=\"fig\"><b>", out);
    rep_esc(out, value);
    fputs("</b><span>", out);
    rep_esc(out, what);
    fputs("</span></div>\n", out);
}

/* The key figures: what a reader checks first. */
static bool key_figures(rep_t *x)
{
    const sim_rec_t *r = x->r;
    FILE *out = x->out;
    size_t counts[5] = {0};
    sim_ms_t *w = calloc(r->nwls + 1, sizeof(*w));
    sim_wide_t gpu = 0;
    char a[64], b[DURATION_STR_MAX], c[DURATION_STR_MAX], h[SIM_RATIO_STR_MAX];

    if (w == NULL)
        return false;
    for (size_t i = 0; i < r->nwls; i++) {
        counts[r->wls[i].state]++;
        w[i] = r->wls[i].wait;
        gpu += r->wls[i].gpu_nano_ms;
    }
    sim_stats_sort(w, r->nwls);
    fputs("<div id=\"key-figures\">\n", out);
    snprintf(a, sizeof(a), "%zu", r->nwls);
    figure(out, a, "workloads");
    snprintf(a, sizeof(a), "%zu / %zu", counts[SIM_WL_FINISHED],
             counts[SIM_WL_RUNNING] + counts[SIM_WL_PENDING]);
    figure(out, a, "finished / still there");
    snprintf(a, sizeof(a), "%zu", r->npreemptions);
    figure(out, a, "preemptions");
    snprintf(a, sizeof(a), "%s / %s", duration_format(sim_stats_percentile(w, r->nwls, 50), b),
             duration_format(sim_stats_percentile(w, r->nwls, 90), c));
    figure(out, a, "wait p50 / p90");
    if (x->ngpu_res > 0)
        figure(out, sim_fmt_gpu_hours(gpu, h), "GPU-hours");
    figure(out, duration_format(r->end, b), "virtual time");
    fputs("</div>\n", out);
    free(w);
    return true;
}

err_t sim_report_write(const sim_rec_t *r, const char *title, FILE *out, err_msg_t *msg)
{
    rep_t x;
    char *human = NULL;
    size_t human_len = 0;
    FILE *mem;
    bool ok = rep_init(&x, r, out);

    /* The same text summary a terminal shows. */
    mem = open_memstream(&human, &human_len);
    if (mem == NULL || sim_human_write(r, mem, NULL) != ERR_OK)
        ok = false;
    if (mem != NULL)
        fclose(mem);
    if (ok) {
        fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
              "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
              "<title>sluice sim: ",
              out);
        rep_esc(out, title);
        fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n%s<h1>sluice sim: ", style,
                defs);
        rep_esc(out, title);
        fputs("</h1>\n<nav><a href=\"#cohorts\">quotas</a><a href=\"#queue-graph\">queue graph</a>"
              "<a href=\"#usage-cluster\">who used "
              "the quota</a><a href=\"#usage-cq\">per ClusterQueue</a><a href=\"#pending\">"
              "pending</a><a href=\"#waits\">waits</a><a href=\"#timeline\">timeline</a>"
              "<a href=\"#preemptions\">preemptions</a><a href=\"#reasons\">why waited</a>"
              "<a href=\"#text-summary\">text summary</a></nav>\n",
              out);
        ok = key_figures(&x) && rep_tree(&x) && rep_graph(&x) && rep_usage_cluster(&x) &&
             rep_usage_per_cq(&x) && rep_pending(&x) && rep_waits(&x) && rep_gantt(&x) &&
             rep_preemptions(&x) && rep_reasons(&x);
        if (ok) {
            fputs("<section id=\"text-summary\">\n<h2>Text summary</h2>\n<p>As <code>sluice "
                  "sim</code> prints it.</p>\n<pre id=\"summary\">",
                  out);
            rep_esc(out, human != NULL ? human : "");
            fputs("</pre>\n</section>\n", out);
        }
        fputs("</body>\n</html>\n", out);
    }
    free(human);
    rep_fini(&x);
    if (!ok)
        return err_set(msg, ERR_NOMEM, "writing the report: out of memory");
    if (fflush(out) != 0 || ferror(out))
        return err_set(msg, ERR_IO, "writing the report: %s", strerror(errno != 0 ? errno : EIO));
    return ERR_OK;
}
