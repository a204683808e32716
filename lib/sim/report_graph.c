/* report_graph -- the scenario's queue graph (lib/graph) for the --report page. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/report_int.h"
#include "sim/run_int.h"

#include "graph/graph.h"
#include "inventory/manifests.h"

#include <stdlib.h>
#include <string.h>

/*
 * `sluice graph` draws manifests; the simulator draws its scenario the same way, so the report
 * shows the queue structure the numbers below it come from. The queues as the scenario first
 * defines them (a document that changes an object later in the run is not drawn: the cohort
 * tree above the graph shows quota changes with their times). No Nodes: a scenario has none,
 * so no pools and no capacity problems; every other problem `sluice graph` finds is listed.
 */

err_t sim__graph_svg(const sim_scenario_t *sc, char **out, err_msg_t *msg)
{
    size_t n = sc->ndocs ? sc->ndocs : 1, len = 0;
    inv_view_t v = {0};
    graph_t g = {0};
    char *text = NULL;
    FILE *f = NULL;
    err_t rc = ERR_NOMEM;

    v.flavors = calloc(n, sizeof(*v.flavors));
    v.cqs = calloc(n, sizeof(*v.cqs));
    v.cohorts = calloc(n, sizeof(*v.cohorts));
    v.lqs = calloc(n, sizeof(*v.lqs));
    v.cq_status = calloc(n, sizeof(*v.cq_status));
    v.lq_status = calloc(n, sizeof(*v.lq_status));
    if (v.flavors == NULL || v.cqs == NULL || v.cohorts == NULL || v.lqs == NULL ||
        v.cq_status == NULL || v.lq_status == NULL)
        goto out;
    for (size_t i = 0; i < sc->ndocs; i++) {
        const object_t *o = &sc->docs[i].obj;
        if (sc->docs[i].prev != SIM_DOC_NONE)
            continue;
        switch (o->kind) {
        case KIND_RESOURCE_FLAVOR:
            v.flavors[v.nflavors++] = &o->u.flavor;
            break;
        case KIND_CLUSTER_QUEUE:
            v.cqs[v.ncqs++] = &o->u.cq;
            break;
        case KIND_COHORT:
            v.cohorts[v.ncohorts++] = &o->u.cohort;
            break;
        case KIND_LOCAL_QUEUE:
            v.lqs[v.nlqs++] = &o->u.lq;
            break;
        default:
            break;
        }
    }
    rc = graph_build(&v, NULL, NULL, &g, msg);
    if (rc != ERR_OK)
        goto out;
    rc = ERR_NOMEM;
    f = open_memstream(&text, &len);
    if (f == NULL)
        goto out;
    rc = graph_write_svg_element(&g, f);
    if (fclose(f) != 0 && rc == ERR_OK)
        rc = ERR_NOMEM; /* a memory stream fails only for memory */
    f = NULL;
    if (rc == ERR_OK && text == NULL)
        rc = ERR_NOMEM;
    if (rc == ERR_OK) {
        *out = text;
        text = NULL;
    }
out:
    if (rc != ERR_OK && msg != NULL && msg->text[0] == '\0')
        err_set(msg, rc, "drawing the queue graph: %s",
                rc == ERR_NOMEM ? "out of memory" : "write failed");
    free(text);
    graph_fini(&g);
    inv_view_fini(&v);
    return rc;
}

bool rep_graph(rep_t *x)
{
    FILE *out = x->out;

    if (x->r->graph_svg == NULL)
        return true;
    fputs("<section id=\"queue-graph\">\n<h2>Queue graph</h2>\n<p>LocalQueues \xe2\x86\x92 "
          "ClusterQueues (framed by cohort) \xe2\x86\x92 ResourceFlavors, with nominal quota and "
          "borrowing and lending limits, as <code>sluice graph</code> draws the scenario's "
          "queues (docs/graph.md); problems found while drawing are listed under it.</p>\n"
          "<div class=\"graph\">\n",
          out);
    fputs(x->r->graph_svg, out);
    fputs("</div>\n</section>\n", out);
    return true;
}
