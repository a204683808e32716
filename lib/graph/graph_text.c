/* graph_text -- the queue graph as Graphviz DOT, as a Mermaid flowchart, and its problems. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "graph/graph.h"

#include <string.h>

/* Colours shared with the SVG writer's legend: queues blue, cluster queues green, flavors amber,
 * pools grey; anything a problem names has a red border. */
static const char *const fill[] = {"#e8f0fe", "#e6f4ea", "#fef7e0", "#f1f3f4"};
static const char *const stroke[] = {"#4285f4", "#34a853", "#f9ab00", "#80868b"};

/* A DOT double-quoted string: " and \ escaped, newlines as \n (centred lines). */
static void dot_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; s != NULL && *s != '\0'; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(out, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", out);
        else
            fputc(*s, out);
    }
    fputc('"', out);
}

static void dot_cluster(const graph_t *g, size_t c, int depth, FILE *out)
{
    const graph_cohort_t *co = &g->cohorts[c];

    fprintf(out, "%*ssubgraph cluster_c%zu {\n", depth * 2, "", c);
    fprintf(out, "%*s  label=", depth * 2, "");
    {
        char label[2048];
        size_t n = (size_t)snprintf(label, sizeof(label), "cohort %s%s", co->name,
                                    co->declared ? "" : " (implicit)");
        for (size_t q = 0; q < co->nquotas && n < sizeof(label); q++)
            n += (size_t)snprintf(label + n, sizeof(label) - n, "\n%s: %s", co->quotas[q].flavor,
                                  co->quotas[q].text);
        dot_str(out, label);
    }
    fprintf(out, "; style=\"rounded,dashed\"; color=\"%s\"; fontcolor=\"#3c4043\";\n",
            co->problem ? "#d93025" : "#9aa0a6");
    for (size_t k = c + 1; k < g->ncohorts; k++)
        if (g->cohorts[k].parent == c)
            dot_cluster(g, k, depth + 1, out);
    for (size_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i].kind == GRAPH_CQ && g->nodes[i].cohort == c)
            fprintf(out, "%*s  n%zu;\n", depth * 2, "", i);
    fprintf(out, "%*s}\n", depth * 2, "");
}

err_t graph_write_dot(const graph_t *g, FILE *out)
{
    fputs("digraph queues {\n"
          "  rankdir=LR;\n"
          "  graph [fontname=\"Helvetica\", fontsize=11, nodesep=0.3, ranksep=1.2];\n"
          "  node [fontname=\"Helvetica\", fontsize=10, shape=box, style=\"rounded,filled\"];\n"
          "  edge [fontname=\"Helvetica\", fontsize=9, color=\"#5f6368\"];\n",
          out);
    for (size_t i = 0; i < g->nnodes; i++) {
        const graph_node_t *n = &g->nodes[i];
        char label[1024];
        snprintf(label, sizeof(label), "%s%s%s%s", n->name, n->detail ? "\n" : "",
                 n->detail ? n->detail : "", n->missing ? "\n(missing)" : "");
        fprintf(out, "  n%zu [label=", i);
        dot_str(out, label);
        fprintf(out, ", fillcolor=\"%s\", color=\"%s\"%s];\n", fill[n->kind],
                n->problem ? "#d93025" : stroke[n->kind],
                n->missing   ? ", style=\"rounded,dashed\", penwidth=2"
                : n->problem ? ", penwidth=2"
                             : "");
    }
    for (size_t c = 0; c < g->ncohorts; c++)
        if (g->cohorts[c].parent == GRAPH_NONE)
            dot_cluster(g, c, 1, out);
    for (size_t e = 0; e < g->nedges; e++) {
        fprintf(out, "  n%zu -> n%zu", g->edges[e].from, g->edges[e].to);
        if (g->edges[e].label != NULL) {
            fputs(" [label=", out);
            dot_str(out, g->edges[e].label);
            fputc(']', out);
        }
        fputs(";\n", out);
    }
    fputs("}\n", out);
    return ferror(out) ? ERR_IO : ERR_OK;
}

/* A Mermaid quoted label: " as #quot;, newlines as <br/>, < and > as entities. */
static void mmd_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; s != NULL && *s != '\0'; s++) {
        if (*s == '"')
            fputs("#quot;", out);
        else if (*s == '\n')
            fputs("<br/>", out);
        else if (*s == '<')
            fputs("#lt;", out);
        else if (*s == '>')
            fputs("#gt;", out);
        else
            fputc(*s, out);
    }
    fputc('"', out);
}

static void mmd_subgraph(const graph_t *g, size_t c, int depth, FILE *out)
{
    char label[512];

    snprintf(label, sizeof(label), "cohort %s%s", g->cohorts[c].name,
             g->cohorts[c].declared ? "" : " (implicit)");
    fprintf(out, "%*ssubgraph c%zu[", depth * 2, "", c);
    mmd_str(out, label);
    fputs("]\n", out);
    for (size_t k = c + 1; k < g->ncohorts; k++)
        if (g->cohorts[k].parent == c)
            mmd_subgraph(g, k, depth + 1, out);
    for (size_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i].kind == GRAPH_CQ && g->nodes[i].cohort == c)
            fprintf(out, "%*s  n%zu\n", depth * 2, "", i);
    fprintf(out, "%*send\n", depth * 2, "");
}

err_t graph_write_mermaid(const graph_t *g, FILE *out)
{
    static const char *const cls[] = {"lq", "cq", "flavor", "pool"};

    fputs("flowchart LR\n", out);
    for (size_t i = 0; i < g->nnodes; i++) {
        const graph_node_t *n = &g->nodes[i];
        char label[1024];
        snprintf(label, sizeof(label), "%s%s%s%s", n->name, n->detail ? "\n" : "",
                 n->detail ? n->detail : "", n->missing ? "\n(missing)" : "");
        fprintf(out, "  n%zu[", i);
        mmd_str(out, label);
        fputs("]\n", out);
    }
    for (size_t c = 0; c < g->ncohorts; c++)
        if (g->cohorts[c].parent == GRAPH_NONE)
            mmd_subgraph(g, c, 1, out);
    for (size_t e = 0; e < g->nedges; e++) {
        fprintf(out, "  n%zu -->", g->edges[e].from);
        if (g->edges[e].label != NULL) {
            fputc('|', out);
            mmd_str(out, g->edges[e].label);
            fputc('|', out);
        }
        fprintf(out, " n%zu\n", g->edges[e].to);
    }
    for (size_t k = 0; k < 4; k++)
        fprintf(out, "  classDef %s fill:%s,stroke:%s\n", cls[k], fill[k], stroke[k]);
    fputs("  classDef problem stroke:#d93025,stroke-width:2px\n", out);
    for (size_t k = 0; k < 4; k++) {
        bool any = false;
        for (size_t i = 0; i < g->nnodes; i++)
            if (g->nodes[i].kind == (graph_kind_t)k) {
                fprintf(out, "%sn%zu", any ? "," : "  class ", i);
                any = true;
            }
        if (any)
            fprintf(out, " %s\n", cls[k]);
    }
    {
        bool any = false;
        for (size_t i = 0; i < g->nnodes; i++)
            if (g->nodes[i].problem) {
                fprintf(out, "%sn%zu", any ? "," : "  class ", i);
                any = true;
            }
        if (any)
            fputs(" problem\n", out);
    }
    return ferror(out) ? ERR_IO : ERR_OK;
}

err_t graph_write_problems(const graph_t *g, FILE *out)
{
    if (g->nproblems == 0)
        fputs("no problems found\n", out);
    for (size_t i = 0; i < g->nproblems; i++)
        fprintf(out, "problem: %s\n", g->problems[i]);
    return ferror(out) ? ERR_IO : ERR_OK;
}
