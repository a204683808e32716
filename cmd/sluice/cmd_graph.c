/* cmd_graph -- `sluice graph`: draw LocalQueues -> ClusterQueues -> cohorts -> flavors -> pools. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "commands.h"

#include "cli.h"

#include "graph/graph.h"
#include "inventory/capacity.h"
#include "inventory/inventory.h"
#include "inventory/live.h"
#include "inventory/manifests.h"
#include "kube/kubeconfig.h"
#include "util/util.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/*
 * Flow: read the objects (files, or LISTs from the cluster), pools from the Nodes among them (if
 * any) grouped as `sluice inventory` groups them, quota against capacity, then the graph; the
 * drawing goes to standard output and its problems, one a line, to standard error (the SVG also
 * lists them under the drawing; DOT and Mermaid as comments at the end).
 */

enum { EXIT_OK = 0, EXIT_INVALID = 1, EXIT_USAGE = 2 };

static void usage(FILE *out)
{
    fprintf(out,
            "usage: sluice graph [options] FILE...\n"
            "       sluice graph [options] --kubeconfig KUBECONFIG\n"
            "\n"
            "Draw how work flows to hardware: LocalQueues -> ClusterQueues (framed by their\n"
            "cohort tree) -> ResourceFlavors -> node pools, with each ClusterQueue's nominal\n"
            "quota, borrowing limit and lending limit per flavor and resource. Problems found\n"
            "while drawing are listed: a LocalQueue pointing to a missing ClusterQueue, a\n"
            "ClusterQueue nothing points to or using a missing flavor, a flavor no queue uses\n"
            "or no node serves, a cohort whose members lend nothing, quota above capacity.\n"
            "\n"
            "FILE holds Kueue manifests (ResourceFlavor, ClusterQueue, Cohort, LocalQueue; other\n"
            "kinds are skipped) and may hold Nodes (`kubectl get nodes -o yaml`): then node\n"
            "pools are drawn, grouped as `sluice inventory` groups them, and quota is compared\n"
            "with capacity. A directory is its *.yaml, *.yml and *.json files in name order (not\n"
            "recursive); - is standard input. With --kubeconfig all of these are listed from the\n"
            "cluster (read-only).\n"
            "\n"
            "options:\n"
            "      --kubeconfig FILE  list from the cluster of this kubeconfig\n"
            "      --context NAME     kubeconfig context (default: current-context)\n"
            "  -o, --output FORMAT    dot (Graphviz, the default), mermaid, or svg (a standalone\n"
            "                         SVG drawn by sluice itself, problems listed under it)\n"
            "  -h, --help             print this help and exit\n"
            "  --                     end of options (a FILE may then start with -)\n"
            "\n"
            "The drawing goes to standard output, the problems to standard error (one a line,\n"
            "\"problem: ...\"; DOT and Mermaid also carry them as comments at the end).\n"
            "\n"
            "exit status: 0 drawn (problems included), 1 some object could not be read (it is\n"
            "left out), 2 usage error, a file could not be read, or the cluster could not be\n"
            "listed.\n");
}

enum { OPT_KUBECONFIG = 1, OPT_CONTEXT, OPT_OUTPUT };

static const cli_opt_t graph_opts[] = {
    {OPT_KUBECONFIG, 0, "kubeconfig", CLI_ARG_REQUIRED, "FILE", NULL, "list from this cluster"},
    {OPT_CONTEXT, 0, "context", CLI_ARG_REQUIRED, "NAME", NULL, "kubeconfig context"},
    CLI_OPT_OUTPUT(OPT_OUTPUT, "dot mermaid svg"),
};

static err_t draw(const graph_t *g, const char *fmt)
{
    err_t e;

    if (strcmp(fmt, "svg") == 0)
        e = graph_write_svg(g, stdout);
    else if (strcmp(fmt, "mermaid") == 0)
        e = graph_write_mermaid(g, stdout);
    else
        e = graph_write_dot(g, stdout);
    if (e == ERR_OK && strcmp(fmt, "svg") != 0)
        for (size_t i = 0; i < g->nproblems; i++)
            printf("%s problem: %s\n", strcmp(fmt, "mermaid") == 0 ? "%%" : "//", g->problems[i]);
    for (size_t i = 0; i < g->nproblems; i++)
        fprintf(stderr, "problem: %s\n", g->problems[i]);
    return e == ERR_OK && ferror(stdout) ? ERR_IO : e;
}

static int graph_run(int argc, char **argv)
{
    const char *kubeconfig = NULL, *context = NULL, *output = "dot", *val;
    cli_t p;
    int id, nfiles = 0, status = EXIT_OK;
    inv_set_t set;
    inv_view_t view = {0};
    inventory_t inv = {0};
    capacity_t cap = {0};
    graph_t g = {0};
    err_msg_t msg = {{0}};
    err_t e;

    cli_init(&p, &cmd_graph, argc, argv);
    while ((id = cli_next(&p, &val)) != CLI_DONE) {
        switch (id) {
        case CLI_STOP:
            return p.status;
        case CLI_OPERAND:
            argv[++nfiles] = (char *)val; /* nfiles < p.i: read already */
            break;
        case OPT_KUBECONFIG:
            kubeconfig = val;
            break;
        case OPT_CONTEXT:
            context = val;
            break;
        case OPT_OUTPUT:
            output = val; /* one of the option's choices: the parser refused the others */
            break;
        }
    }
    if (nfiles == 0 && kubeconfig == NULL)
        return cli_fail_usage(&p, "no FILE given, nor --kubeconfig");
    if (nfiles > 0 && kubeconfig != NULL)
        return cli_fail_usage(&p, "give FILEs or --kubeconfig, not both");

    inv_set_init(&set, stderr);
    if (kubeconfig != NULL) {
        kube_config_t cfg;
        inv_live_res_t res[5];
        kube_config_init(&cfg);
        res[0] = inv_live_nodes;
        memcpy(res + 1, inv_live_queues, sizeof(inv_live_queues));
        e = kube_config_load(kubeconfig, context, &cfg, &msg);
        if (e == ERR_OK)
            e = inv_live_list(&cfg, res, 5, &set, &msg);
        kube_config_fini(&cfg);
        if (e != ERR_OK) {
            fprintf(stderr, "sluice graph: %s\n", msg.text[0] ? msg.text : err_str(e));
            status = EXIT_USAGE;
            goto out;
        }
    }
    for (int i = 1; i <= nfiles; i++) {
        e = inv_set_read_path(&set, argv[i], &msg);
        if (e != ERR_OK) {
            fprintf(stderr, "sluice graph: %s\n", msg.text);
            status = EXIT_USAGE;
            goto out;
        }
    }
    e = inv_set_view(&set, &view);
    if (e == ERR_OK && set.nnodes > 0) {
        e = inventory_build(set.nodes, set.nnodes, inventory_default_keys, 3, &inv, &msg);
        if (e == ERR_OK)
            e = capacity_compare(view.flavors, view.nflavors, view.cqs, view.ncqs, view.cohorts,
                                 view.ncohorts, set.nodes, set.nnodes, &cap, &msg);
    }
    if (e == ERR_OK)
        e = graph_build(&view, set.nnodes > 0 ? &inv : NULL, set.nnodes > 0 ? &cap : NULL, &g,
                        &msg);
    if (e == ERR_OK)
        e = draw(&g, output);
    if (e != ERR_OK) {
        fprintf(stderr, "sluice graph: %s\n", msg.text[0] ? msg.text : err_str(e));
        status = EXIT_USAGE;
    } else if (set.ninvalid > 0) {
        status = EXIT_INVALID;
    }
out:
    graph_fini(&g);
    capacity_fini(&cap);
    inventory_fini(&inv);
    inv_view_fini(&view);
    inv_set_fini(&set);
    return status;
}

const cli_cmd_t cmd_graph = {"graph",
                             "draw LocalQueues -> ClusterQueues -> cohorts -> flavors -> pools",
                             graph_run,
                             graph_opts,
                             ARRAY_SIZE(graph_opts),
                             "FILE...",
                             NULL,
                             usage};
