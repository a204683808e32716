/* report_tree -- the report's cohort tree with quotas, and the engine's explanations of why
 * workloads waited (with their numbers and workload names). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/requests.h"
#include "sim/fmt.h"
#include "sim/report_int.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH       16
#define MAX_HISTORY     4 /* quota changes shown per (flavor, resource) */
#define MAX_REASON_ROWS 12
#define MAX_OPEN_CQS    3  /* ClusterQueues of a cohort shown before the rest fold, when... */
#define MANY_CQS        40 /* ...there are more than this many in all */

bool rep_resource_short(const sim_rec_t *r, const char *res)
{
    size_t n = strlen(res);

    /* An explanation that names `res` short and no GPU resource: then `res`, not the GPUs,
     * held the workload back. */
    for (size_t i = 0; i < r->nreasons; i++) {
        bool named = false, gpu = false;
        for (const char *p = strstr(r->reasons[i].text, "quota for "); p != NULL;
             p = strstr(p + 1, "quota for ")) {
            const char *name = p + 10;
            size_t len = strcspn(name, " ");
            char buf[256];
            if (len == n && strncmp(name, res, n) == 0)
                named = true;
            snprintf(buf, sizeof(buf), "%.*s", (int)len, name);
            if (requests_resource_is_gpu(buf))
                gpu = true;
        }
        if (named && !gpu)
            return true;
    }
    return false;
}

/* ---- the tree ------------------------------------------------------------------------------ */

typedef struct node_s {
    const char *name; /* borrowed */
    size_t holder;    /* SIM_NONE: named by a ClusterQueue but no Cohort object */
    const char *parent;
    bool seen;
} node_t;

typedef struct tree_s {
    node_t *v; /* cohorts, by name */
    size_t n;
} tree_t;

static int node_cmp(const void *a, const void *b)
{
    return strcmp(((const node_t *)a)->name, ((const node_t *)b)->name);
}

static node_t *node_find(tree_t *t, const char *name)
{
    node_t key = {.name = name};
    return t->n > 0 ? bsearch(&key, t->v, t->n, sizeof(*t->v), node_cmp) : NULL;
}

static int fr_order(const sim_fr_rec_t *a, const sim_fr_rec_t *b)
{
    bool ga = requests_resource_is_gpu(a->resource), gb = requests_resource_is_gpu(b->resource);
    if (ga != gb)
        return ga ? -1 : 1;
    int c = strcmp(a->flavor, b->flavor);
    return c != 0 ? c : strcmp(a->resource, b->resource);
}

/* A quota as written, with its changes over the run ("16 -> 8 at 3h"). */
static void quota_value(FILE *out, const sim_fr_rec_t *fr)
{
    const sim_series_t *s = &fr->nominal_series;
    char q[QUANTITY_STR_MAX], b[DURATION_STR_MAX];
    size_t shown = 0;

    if (s->len == 0) {
        fprintf(out, "<b>%s</b>", sim_fmt_quantity(fr->nominal, fr->resource, q));
        return;
    }
    fprintf(out, "<b>%s</b>", sim_fmt_quantity(s->v[0], fr->resource, q));
    for (size_t i = 1; i < s->len && shown < MAX_HISTORY; i++, shown++)
        fprintf(out, " \xe2\x86\x92 <b>%s</b> at %s", sim_fmt_quantity(s->v[i], fr->resource, q),
                duration_format(s->t[i], b));
}

/* The quota chips of holder `h`, GPUs first. */
static void quotas(FILE *out, const sim_holder_t *h)
{
    const sim_fr_rec_t *v[64];
    size_t n = 0;
    char q[QUANTITY_STR_MAX];

    for (size_t i = 0; i < h->nfrs && n < 64; i++) {
        const sim_fr_rec_t *fr = &h->frs[i];
        if (fr->nominal_series.len == 0)
            continue; /* not in its spec */
        size_t j = n++;
        while (j > 0 && fr_order(v[j - 1], fr) > 0) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = fr;
    }
    if (n == 0) {
        fputs("<span class=\"q none\">no quota of its own</span>", out);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "<span class=\"q%s\">",
                requests_resource_is_gpu(v[i]->resource) ? " gpu" : "");
        rep_esc(out, v[i]->flavor);
        fputs(" \xc2\xb7 ", out);
        rep_esc(out, v[i]->resource);
        fputc(' ', out);
        quota_value(out, v[i]);
        if (v[i]->has_borrowing_limit)
            fprintf(out, " <small>borrow \xe2\x89\xa4 %s</small>",
                    sim_fmt_quantity(v[i]->borrowing_limit, v[i]->resource, q));
        if (v[i]->has_lending_limit)
            fprintf(out, " <small>lend \xe2\x89\xa4 %s</small>",
                    sim_fmt_quantity(v[i]->lending_limit, v[i]->resource, q));
        fputs("</span>", out);
    }
}

static bool weights_matter(const sim_rec_t *r)
{
    for (size_t i = 0; i < r->nholders; i++)
        if (!r->holders[i].is_cohort && r->holders[i].weight != 1000000000)
            return true;
    return false;
}

static void cq_node(rep_t *x, size_t h, bool weights)
{
    const sim_holder_t *hd = &x->r->holders[h];
    FILE *out = x->out;
    char b[SIM_RATIO_STR_MAX];

    fprintf(out,
            "<li class=\"cq\"><div class=\"head\"><i class=\"dot\" style=\"--c:%s\"></i>"
            "<span class=\"kind\">ClusterQueue</span> <b>",
            rep_cq_color(x, h));
    rep_esc(out, hd->name);
    fputs("</b>", out);
    if (weights) {
        quantity_t w = {hd->weight, QUANTITY_DECIMAL_SI};
        char q[QUANTITY_STR_MAX];
        fprintf(out, " <span class=\"weight\">weight %s</span>", quantity_format(w, q));
    }
    fprintf(out, " <span class=\"facts\">%zu admitted, %zu preempted", hd->admissions,
            hd->preemptions);
    if (x->ngpu_res > 0)
        fprintf(out, ", %s GPU-hours", sim_fmt_gpu_hours(hd->gpu_nano_ms, b));
    fputs("</span></div>", out);
    fputs("<div class=\"quotas\">", out);
    quotas(out, hd);
    fputs("</div></li>\n", out);
}

static void cohort_node(rep_t *x, tree_t *t, node_t *c, bool weights, int depth)
{
    const sim_rec_t *r = x->r;
    FILE *out = x->out;

    c->seen = true;
    fputs("<li class=\"cohort\"><div class=\"head\"><span class=\"kind\">Cohort</span> <b>", out);
    rep_esc(out, c->name);
    fputs("</b></div><div class=\"quotas\">", out);
    if (c->holder != SIM_NONE)
        quotas(out, &r->holders[c->holder]);
    else
        fputs("<span class=\"q none\">no Cohort object: no quota of its own</span>", out);
    fputs("</div>\n<ul>\n", out);
    if (depth < MAX_DEPTH) {
        for (size_t i = 0; i < t->n; i++)
            if (!t->v[i].seen && t->v[i].parent != NULL && strcmp(t->v[i].parent, c->name) == 0)
                cohort_node(x, t, &t->v[i], weights, depth + 1);
    }
    size_t members = 0, shown = 0, open = x->ncq > MANY_CQS ? MAX_OPEN_CQS : x->ncq;
    for (size_t i = 0; i < x->ncq; i++) {
        const char *co = r->holders[x->cqs[i]].cohort;
        members += co != NULL && strcmp(co, c->name) == 0 ? 1 : 0;
    }
    for (size_t i = 0; i < x->ncq; i++) {
        const char *co = r->holders[x->cqs[i]].cohort;
        if (co == NULL || strcmp(co, c->name) != 0)
            continue;
        /* A large cohort shows its first queues; the rest fold away. */
        if (shown++ == open && members > open + 1)
            fprintf(out,
                    "<li><details class=\"fold\"><summary>%zu more ClusterQueues</summary>"
                    "<ul>\n",
                    members - open);
        cq_node(x, x->cqs[i], weights);
    }
    if (members > open + 1)
        fputs("</ul></details></li>\n", out);
    fputs("</ul></li>\n", out);
}

bool rep_tree(rep_t *x)
{
    const sim_rec_t *r = x->r;
    FILE *out = x->out;
    tree_t t = {calloc(r->nholders * 2 + 1, sizeof(node_t)), 0};
    bool weights = weights_matter(r), loose = false;

    if (t.v == NULL)
        return false;
    /* Cohort objects, then cohorts only named (by a ClusterQueue or as a parent). */
    for (size_t i = 0; i < r->nholders; i++)
        if (r->holders[i].is_cohort)
            t.v[t.n++] = (node_t){r->holders[i].name, i, r->holders[i].cohort, false};
    qsort(t.v, t.n, sizeof(*t.v), node_cmp);
    for (size_t i = 0; i < r->nholders; i++) {
        const char *co = r->holders[i].cohort;
        if (co == NULL || node_find(&t, co) != NULL)
            continue;
        t.v[t.n++] = (node_t){co, SIM_NONE, NULL, false};
        qsort(t.v, t.n, sizeof(*t.v), node_cmp);
    }
    fputs("<section id=\"cohorts\">\n<h2>Cohorts and quotas</h2>\n<p>Nominal quota per flavor "
          "and resource (GPUs first), with borrowing and lending limits; a change during the "
          "run shows as \xe2\x86\x92 with its time.</p>\n<ul id=\"cohort-tree\" class=\"tree\">\n",
          out);
    for (size_t i = 0; i < t.n; i++) {
        const node_t *p = t.v[i].parent != NULL ? node_find(&t, t.v[i].parent) : NULL;
        if (p == NULL && !t.v[i].seen)
            cohort_node(x, &t, &t.v[i], weights, 0);
    }
    for (size_t i = 0; i < t.n; i++)
        if (!t.v[i].seen)
            cohort_node(x, &t, &t.v[i], weights, 0); /* a parent cycle: shown from anywhere */
    for (size_t i = 0; i < x->ncq; i++) {
        if (r->holders[x->cqs[i]].cohort != NULL)
            continue;
        if (!loose && t.n > 0)
            fputs("<li class=\"loose\"><div class=\"head\"><span class=\"kind\">No cohort</span>"
                  "</div><ul>\n",
                  out);
        loose = true;
        cq_node(x, x->cqs[i], weights);
    }
    if (loose && t.n > 0)
        fputs("</ul></li>\n", out);
    if (x->ncq == 0 && t.n == 0)
        fputs("<li>No ClusterQueue or Cohort was defined.</li>\n", out);
    fputs("</ul>\n</section>\n", out);
    free(t.v);
    return true;
}

/* ---- explanations ----------------------------------------------------------------------- */

static int reason_cmp(const void *a, const void *b, const sim_rec_t *r)
{
    const sim_reason_t *p = &r->reasons[*(const size_t *)a], *q = &r->reasons[*(const size_t *)b];
    if (p->total != q->total)
        return p->total < q->total ? 1 : -1;
    return strcmp(p->text, q->text);
}

bool rep_reasons(rep_t *x)
{
    const sim_rec_t *r = x->r;
    FILE *out = x->out;
    size_t *idx = calloc(r->nreasons + 1, sizeof(*idx));
    char b[DURATION_STR_MAX];

    if (idx == NULL)
        return false;
    /* Insertion sort: the reasons are few (one per distinct explanation pattern). */
    for (size_t i = 0; i < r->nreasons; i++) {
        size_t j = i;
        idx[j] = i;
        while (j > 0 && reason_cmp(&idx[j - 1], &idx[j], r) > 0) {
            size_t s = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = s;
            j--;
        }
    }
    fputs("<section id=\"reasons\">\n<h2>Why workloads waited</h2>\n<p>The engine's "
          "explanations, grouped by pattern (the same words with other numbers) and ordered by "
          "the total waiting time they explain; each quoted as first written, with its "
          "workload.</p>\n",
          out);
    if (r->nreasons == 0) {
        fputs("<p>No workload waited with an explanation.</p>\n</section>\n", out);
        free(idx);
        return true;
    }
    fputs("<table id=\"reasons-table\" class=\"data\">\n<thead><tr><th class=\"num\">waited</th>"
          "<th class=\"num\">waits</th><th>explanation (first occurrence)</th><th>workload</th>"
          "</tr></thead><tbody>\n",
          out);
    size_t n = r->nreasons < MAX_REASON_ROWS ? r->nreasons : MAX_REASON_ROWS;
    for (size_t i = 0; i < n; i++) {
        const sim_reason_t *s = &r->reasons[idx[i]];
        fprintf(out, "<tr class=\"reason\"><td class=\"num\">%s</td><td class=\"num\">%zu</td>",
                duration_format(s->total, b), s->waits);
        fputs("<td class=\"msg\" title=\"", out);
        rep_esc(out, s->text);
        fputs("\">", out);
        rep_esc(out, s->example != NULL ? s->example : s->text);
        fputs("</td><td>", out);
        rep_esc(out, s->example_wl < r->nwls ? r->wls[s->example_wl].name : "");
        fputs("</td></tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
    if (r->nreasons > n)
        fprintf(out, "<p>%zu more patterns explain less waiting.</p>\n", r->nreasons - n);
    fputs("</section>\n", out);
    free(idx);
    return true;
}
