/* compare -- `sluice sim --compare A.yaml B.yaml`: one workload stream, two quota designs. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/compare.h"
#include "model/requests.h"

#include "sim/fmt.h"
#include "sim/sim.h"
#include "sim/stats.h"
#include "sim/view.h"
#include "util/alloc.h"
#include "util/duration.h"
#include "util/str.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * The figures, per side (docs/simulator.md, "Comparing designs"; the same definitions as the
 * summary's, so that a column can be checked against `sluice sim --summary`):
 *   wait p50/p90 per team   team = namespace; a workload's wait is its total pending time
 *                           (summary "wait"), nearest rank
 *   GPU-hours per team      what the team's workloads held of GPU resources, exact
 *   preemptions per team    times its workloads were preempted
 *   GPU utilisation         used / nominal GPU quota, integrated over the run (every GPU
 *                           (flavor, resource) of every ClusterQueue and Cohort)
 *   idle GPU quota          nominal - used, in GPU-hours
 *   fairness                the summary's jainFairnessIndex over ClusterQueues (weighted
 *                           dominant share)
 */

bool sim_compare_is_design(kind_t k)
{
    return k == KIND_RESOURCE_FLAVOR || k == KIND_CLUSTER_QUEUE || k == KIND_COHORT ||
           k == KIND_LOCAL_QUEUE || k == KIND_CONFIGURATION;
}

/* Append the documents of `src` whose design-ness is `design`, remapping `prev` indices. */
static err_t take(sim_scenario_t *out, const sim_scenario_t *src, bool design, size_t *skipped)
{
    size_t *map = calloc(src->ndocs + 1, sizeof(*map));

    if (map == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < src->ndocs; i++) {
        const sim_doc_t *d = &src->docs[i];
        map[i] = SIM_DOC_NONE;
        if (sim_compare_is_design(d->obj.kind) != design) {
            if (skipped != NULL)
                (*skipped)++;
            continue;
        }
        out->docs[out->ndocs] = *d; /* borrows the object, label and all */
        if (d->prev != SIM_DOC_NONE)
            out->docs[out->ndocs].prev = map[d->prev];
        map[i] = out->ndocs++;
    }
    free(map);
    return ERR_OK;
}

err_t sim_compare_scenario(const sim_scenario_t *stream, const sim_scenario_t *design,
                           sim_scenario_t *out, size_t *ignored, err_msg_t *msg)
{
    *ignored = 0;
    out->docs = calloc(stream->ndocs + design->ndocs + 1, sizeof(*out->docs));
    if (out->docs == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    out->cap = stream->ndocs + design->ndocs;
    if (take(out, design, true, ignored) != ERR_OK || take(out, stream, false, NULL) != ERR_OK) {
        sim_compare_scenario_fini(out);
        return err_set(msg, ERR_NOMEM, "out of memory");
    }
    out->config = design->config; /* the design's Configuration (fair sharing...), or none */
    return ERR_OK;
}

void sim_compare_scenario_fini(sim_scenario_t *sc)
{
    free(sc->docs); /* the documents themselves belong to the two scenarios */
    memset(sc, 0, sizeof(*sc));
}

/* ---- figures ------------------------------------------------------------------------------ */

typedef struct team_s {
    const char *ns; /* borrowed from the record */
    sim_ms_t *waits;
    size_t n, cap;
    sim_wide_t gpu_nano_ms;
    size_t preemptions;
} team_t;

typedef struct side_s {
    const sim_rec_t *r;
    const char *name;
    sim_wide_t used, nominal; /* GPU integrals */
    double jain;
    size_t jn;
    size_t pending; /* still pending when the run stopped */
    team_t *teams;  /* sorted by namespace */
    size_t nteams;
} side_t;

static team_t *team_of(side_t *s, const char *ns)
{
    size_t lo = 0, hi = s->nteams;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(s->teams[mid].ns, ns);
        if (c == 0)
            return &s->teams[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    team_t *t = realloc(s->teams, (s->nteams + 1) * sizeof(*t));
    if (t == NULL)
        return NULL;
    s->teams = t;
    memmove(&t[lo + 1], &t[lo], (s->nteams - lo) * sizeof(*t));
    memset(&t[lo], 0, sizeof(*t));
    t[lo].ns = ns;
    s->nteams++;
    return &t[lo];
}

static void side_fini(side_t *s)
{
    for (size_t i = 0; i < s->nteams; i++)
        free(s->teams[i].waits);
    free(s->teams);
}

static err_t side_init(side_t *s, const sim_rec_t *r, const char *name)
{
    sim_view_groups_t g;
    size_t ncq;
    size_t *cqs;
    long double *share;

    memset(s, 0, sizeof(*s));
    s->r = r;
    s->name = name;
    for (size_t i = 0; i < r->ngfrs; i++) {
        if (requests_resource_is_gpu(r->gfrs[i].resource)) {
            s->used += r->gfrs[i].usage_int;
            s->nominal += r->gfrs[i].nominal_int;
        }
    }
    for (size_t i = 0; i < r->nwls; i++) {
        const sim_wl_rec_t *w = &r->wls[i];
        team_t *t = team_of(s, w->ns);
        if (t == NULL)
            return ERR_NOMEM;
        if (t->n == t->cap) {
            size_t cap = t->cap ? 2 * t->cap : 8;
            sim_ms_t *v = realloc(t->waits, cap * sizeof(*v));
            if (v == NULL)
                return ERR_NOMEM;
            t->waits = v;
            t->cap = cap;
        }
        t->waits[t->n++] = w->wait;
        t->gpu_nano_ms += w->gpu_nano_ms;
        t->preemptions += w->preemptions;
        s->pending += w->state == SIM_WL_PENDING;
    }
    for (size_t i = 0; i < s->nteams; i++)
        sim_stats_sort(s->teams[i].waits, s->teams[i].n);
    if (sim_view_groups_init(&g, r) != ERR_OK)
        return ERR_NOMEM;
    cqs = sim_view_cqs(r, &ncq);
    share = calloc(ncq + 1, sizeof(*share));
    if ((cqs == NULL && ncq > 0) || share == NULL) {
        free(cqs);
        free(share);
        sim_view_groups_fini(&g);
        return ERR_NOMEM;
    }
    for (size_t i = 0; i < ncq; i++) {
        if (sim_view_fair_share(r, &g, cqs[i], &share[s->jn]))
            s->jn++;
    }
    s->jain = sim_stats_jain(share, s->jn);
    free(cqs);
    free(share);
    sim_view_groups_fini(&g);
    return ERR_OK;
}

static const team_t *find_team(const side_t *s, const char *ns)
{
    for (size_t i = 0; i < s->nteams; i++)
        if (strcmp(s->teams[i].ns, ns) == 0)
            return &s->teams[i];
    return NULL;
}

/* The sorted union of both sides' namespaces (borrowed strings); *n gets the count. */
static const char **team_names(const side_t *a, const side_t *b, size_t *n)
{
    const char **v = calloc(a->nteams + b->nteams + 1, sizeof(*v));
    size_t i = 0, j = 0;

    *n = 0;
    if (v == NULL)
        return NULL;
    while (i < a->nteams || j < b->nteams) {
        int c = i == a->nteams ? 1 : j == b->nteams ? -1 : strcmp(a->teams[i].ns, b->teams[j].ns);
        if (c <= 0)
            v[(*n)++] = a->teams[i].ns;
        else
            v[(*n)++] = b->teams[j].ns;
        i += c <= 0;
        j += c >= 0;
    }
    return v;
}

/* ---- output ------------------------------------------------------------------------------- */

static void wait_text(const team_t *t, unsigned p, bool json, char *buf)
{
    if (t == NULL || t->n == 0) {
        snprintf(buf, DURATION_STR_MAX, "%s", json ? "null" : "-");
        return;
    }
    if (json)
        duration_format_secs(sim_stats_percentile(t->waits, t->n, p), buf);
    else
        duration_format(sim_stats_percentile(t->waits, t->n, p), buf);
}

static void gpu_text(sim_wide_t v, char *buf)
{
    sim_fmt_gpu_hours(v, buf);
}

static void write_side_json(FILE *out, const side_t *s)
{
    char buf[SIM_RATIO_STR_MAX], d[DURATION_STR_MAX];
    json_t *name = json_string(s->name);
    char *q = name != NULL ? util_json_dumps(name, JSON_ENCODE_ANY) : NULL;

    fprintf(out, "{\"file\":%s,\"makespanSeconds\":%s,\"workloads\":%zu,\"pendingAtEnd\":%zu,",
            q != NULL ? q : "null", duration_format_secs(s->r->end, d), s->r->nwls, s->pending);
    free(q);
    json_decref(name);
    fprintf(out, "\"gpuUtilization\":%s,",
            s->nominal > 0 ? sim_ratio_format(s->used, s->nominal, 4, buf) : "null");
    fprintf(out, "\"gpuHoursUsed\":%s,", sim_fmt_gpu_hours(s->used, buf));
    fprintf(out, "\"idleGpuQuotaHours\":%s,",
            sim_fmt_gpu_hours(s->nominal > s->used ? s->nominal - s->used : 0, buf));
    fprintf(out, "\"preemptions\":%zu,\"jainFairnessIndex\":%s,\"jainClusterQueues\":%zu,",
            s->r->npreemptions, s->jn > 0 ? sim_fmt_fraction(s->jain, buf) : "null", s->jn);
    fputs("\"teams\":[", out);
    for (size_t i = 0; i < s->nteams; i++) {
        const team_t *t = &s->teams[i];
        char p50[DURATION_STR_MAX], p90[DURATION_STR_MAX];
        json_t *ns = json_string(t->ns);
        char *nq = ns != NULL ? util_json_dumps(ns, JSON_ENCODE_ANY) : NULL;
        wait_text(t, 50, true, p50);
        wait_text(t, 90, true, p90);
        fprintf(out,
                "%s{\"namespace\":%s,\"workloads\":%zu,\"waitSeconds\":{\"p50\":%s,\"p90\":%s},"
                "\"gpuHours\":%s,\"preemptions\":%zu}",
                i ? "," : "", nq != NULL ? nq : "null", t->n, p50, p90,
                sim_fmt_gpu_hours(t->gpu_nano_ms, buf), t->preemptions);
        free(nq);
        json_decref(ns);
    }
    fputs("]}", out);
}

static void write_table(FILE *out, const side_t *a, const side_t *b)
{
    char x[SIM_RATIO_STR_MAX], y[SIM_RATIO_STR_MAX];
    const char **names;
    size_t n, w = strlen("TEAM (namespace)");

    fprintf(out, "A: %s\nB: %s (its quota design, A's workloads)\n\n", a->name, b->name);
    fprintf(out, "%-32s %14s %14s\n", "", "A", "B");
    fprintf(out, "%-32s %14s %14s\n", "makespan", duration_format(a->r->end, x),
            duration_format(b->r->end, y));
    fprintf(out, "%-32s %14zu %14zu\n", "workloads", a->r->nwls, b->r->nwls);
    fprintf(out, "%-32s %14zu %14zu\n", "  pending when the run stopped", a->pending, b->pending);
    fprintf(out, "%-32s %14s %14s\n", "GPU utilisation (of GPU quota)",
            sim_fmt_percent(a->used, a->nominal, x), sim_fmt_percent(b->used, b->nominal, y));
    gpu_text(a->used, x);
    gpu_text(b->used, y);
    fprintf(out, "%-32s %14s %14s\n", "GPU-hours used", x, y);
    gpu_text(a->nominal > a->used ? a->nominal - a->used : 0, x);
    gpu_text(b->nominal > b->used ? b->nominal - b->used : 0, y);
    fprintf(out, "%-32s %14s %14s\n", "idle GPU quota (GPU-hours)", x, y);
    fprintf(out, "%-32s %14zu %14zu\n", "preemptions", a->r->npreemptions, b->r->npreemptions);
    fprintf(out, "%-32s %14s %14s\n", "fairness (Jain, ClusterQueues)",
            a->jn > 0 ? sim_fmt_fraction(a->jain, x) : "-",
            b->jn > 0 ? sim_fmt_fraction(b->jain, y) : "-");
    names = team_names(a, b, &n);
    if (names == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        w = strlen(names[i]) > w ? strlen(names[i]) : w;
    fprintf(out, "\n%-*s  %10s %10s  %10s %10s  %10s %10s  %11s %11s\n", (int)w, "TEAM (namespace)",
            "WAIT-P50 A", "WAIT-P50 B", "WAIT-P90 A", "WAIT-P90 B", "GPU-H A", "GPU-H B",
            "PREEMPTED A", "PREEMPTED B");
    for (size_t i = 0; i < n; i++) {
        const team_t *ta = find_team(a, names[i]), *tb = find_team(b, names[i]);
        char w1[DURATION_STR_MAX], w2[DURATION_STR_MAX], w3[DURATION_STR_MAX], w4[DURATION_STR_MAX];
        wait_text(ta, 50, false, w1);
        wait_text(tb, 50, false, w2);
        wait_text(ta, 90, false, w3);
        wait_text(tb, 90, false, w4);
        gpu_text(ta ? ta->gpu_nano_ms : 0, x);
        gpu_text(tb ? tb->gpu_nano_ms : 0, y);
        fprintf(out, "%-*s  %10s %10s  %10s %10s  %10s %10s  %11zu %11zu\n", (int)w, names[i], w1,
                w2, w3, w4, x, y, ta ? ta->preemptions : 0, tb ? tb->preemptions : 0);
    }
    free(names);
}

err_t sim_compare_write(const sim_rec_t *a, const char *name_a, const sim_rec_t *b,
                        const char *name_b, bool json, FILE *out, err_msg_t *msg)
{
    side_t sa, sb;
    err_t rc = side_init(&sa, a, name_a);

    if (rc == ERR_OK)
        rc = side_init(&sb, b, name_b);
    else
        memset(&sb, 0, sizeof(sb));
    if (rc != ERR_OK) {
        side_fini(&sa);
        side_fini(&sb);
        return err_set(msg, rc, "comparing: out of memory");
    }
    if (json) {
        fputs("{\"a\":", out);
        write_side_json(out, &sa);
        fputs(",\"b\":", out);
        write_side_json(out, &sb);
        fputs("}\n", out);
    } else {
        write_table(out, &sa, &sb);
    }
    side_fini(&sa);
    side_fini(&sb);
    if (fflush(out) != 0 || ferror(out))
        return err_set(msg, ERR_IO, "writing the comparison: %s", strerror(errno));
    return ERR_OK;
}

/* ---- HTML: the table above the two runs' reports, side by side ---------------------------- */

/* The report of `r` (sim_report_write) into a new string (*text, *len); ERR_NOMEM, ERR_IO. */
static err_t capture_report(const sim_rec_t *r, const char *name, char **text, size_t *len,
                            err_msg_t *msg)
{
    FILE *f = open_memstream(text, len);
    err_t rc;

    if (f == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    rc = sim_report_write(r, name, f, msg);
    if (fclose(f) != 0 && rc == ERR_OK)
        rc = err_set(msg, ERR_NOMEM, "out of memory");
    return rc;
}

err_t sim_compare_html(const sim_rec_t *a, const char *name_a, const sim_rec_t *b,
                       const char *name_b, FILE *out, err_msg_t *msg)
{
    char *table = NULL, *ra = NULL, *rb = NULL;
    size_t ntable = 0, na = 0, nb = 0;
    FILE *t = open_memstream(&table, &ntable);
    err_t rc;

    if (t == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    rc = sim_compare_write(a, name_a, b, name_b, false, t, msg);
    if (fclose(t) != 0 && rc == ERR_OK)
        rc = err_set(msg, ERR_NOMEM, "out of memory");
    if (rc == ERR_OK)
        rc = capture_report(a, name_a, &ra, &na, msg);
    if (rc == ERR_OK) {
        char title[1024];
        snprintf(title, sizeof(title), "%s's design with %s's workloads", name_b, name_a);
        rc = capture_report(b, title, &rb, &nb, msg);
    }
    if (rc != ERR_OK)
        goto out;
    /* One page, no scripts, no network: the table, then each run's own report (the page
     * `sluice sim --report` writes) in an iframe's srcdoc, A left and B right. */
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>sluice sim --compare</title>\n<style>\n"
          "body{font-family:system-ui,sans-serif;margin:1rem;color:#222}\n"
          "pre{background:#f6f6f6;padding:.75rem;overflow-x:auto;font-size:.85rem}\n"
          ".sides{display:grid;grid-template-columns:1fr 1fr;gap:1rem}\n"
          "@media (max-width:900px){.sides{grid-template-columns:1fr}}\n"
          "iframe{width:100%;height:180rem;border:1px solid #ccc}\n"
          "h2{font-size:1rem;margin:.5rem 0}\n"
          "@media print{iframe{height:auto;border:0}}\n"
          "</style></head><body>\n<h1>Two quota designs, one workload stream</h1>\n<pre "
          "id=\"compare-table\">",
          out);
    util_html_escape(out, table, ntable);
    fputs("</pre>\n<div class=\"sides\">\n<section id=\"side-a\"><h2>A: ", out);
    util_html_escape(out, name_a, strlen(name_a));
    fputs("</h2><iframe title=\"A\" srcdoc=\"", out);
    util_html_escape(out, ra, na);
    fputs("\"></iframe></section>\n<section id=\"side-b\"><h2>B: ", out);
    util_html_escape(out, name_b, strlen(name_b));
    fputs(" (its design, A's workloads)</h2><iframe title=\"B\" srcdoc=\"", out);
    util_html_escape(out, rb, nb);
    fputs("\"></iframe></section>\n</div>\n</body></html>\n", out);
    if (fflush(out) != 0 || ferror(out))
        rc = err_set(msg, ERR_IO, "writing the comparison: %s", strerror(errno));
out:
    free(table);
    free(ra);
    free(rb);
    return rc;
}
