/* cmd_inventory -- `sluice inventory`: node pools, their GPUs, and quota against capacity. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "commands.h"

#include "cli.h"

#include "inventory/capacity.h"
#include "inventory/inventory.h"
#include "inventory/live.h"
#include "inventory/manifests.h"
#include "kube/kubeconfig.h"
#include "model/names.h"
#include "model/yamlw.h"
#include "util/util.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/*
 * Flow: read the Nodes (files, or a LIST from the cluster), group them into pools, and when
 * ResourceFlavors and ClusterQueues were read too (files given beside the nodes, or Kueue's
 * objects in the cluster), compare quota with capacity. Output goes to standard output; read
 * problems go to standard error.
 */

enum { EXIT_OK = 0, EXIT_INVALID = 1, EXIT_USAGE = 2 };

static void usage(FILE *out)
{
    fprintf(out,
            "usage: sluice inventory [options] FILE...\n"
            "       sluice inventory [options] --kubeconfig KUBECONFIG\n"
            "\n"
            "Take stock of a cluster's node pools before writing quota: nodes grouped by the GPU\n"
            "Feature Discovery labels (GPU product, GPU memory, MIG strategy) or by the label\n"
            "keys given; per pool the nodes, allocatable nvidia.com/gpu and nvidia.com/mig-*,\n"
            "CPU, memory, driver versions, the taints every node carries, and the ResourceFlavor\n"
            "that would select it. Nodes labelled as GPU nodes that expose no GPU resource (the\n"
            "device plugin is not running) are listed as problems.\n"
            "\n"
            "FILE holds Nodes (`kubectl get nodes -o yaml`, a List or Node documents) and may\n"
            "hold Kueue objects too; a directory is its *.yaml, *.yml and *.json files in name\n"
            "order (not recursive); - is standard input. When ResourceFlavors and ClusterQueues\n"
            "(or Cohorts) are among them, the nominal quota on each flavor and resource is\n"
            "compared with the allocatable capacity of the nodes the flavor's nodeLabels select;\n"
            "quota above capacity is a warning. With --kubeconfig the Nodes, and Kueue's queue\n"
            "objects when its CRDs are installed, are listed from the cluster (read-only).\n"
            "\n"
            "options:\n"
            "      --kubeconfig FILE   list from the cluster of this kubeconfig\n"
            "      --context NAME      a.kubeconfig a.context (default: current-context)\n"
            "      --group-by KEY,...  label keys that form the pools (at most 8; default\n"
            "                          nvidia.com/gpu.product,nvidia.com/gpu.memory,\n"
            "                          nvidia.com/mig.strategy)\n"
            "      --flavors           print only the suggested ResourceFlavor manifests\n"
            "                          (YAML, ready for kubectl apply -f -)\n"
            "  -o, --output FORMAT     table (default), json or yaml\n"
            "  -h, --help              print this help and exit\n"
            "  --                      end of options (a FILE may then start with -)\n"
            "\n"
            "exit status: 0 inventory printed (problems and quota warnings included), 1 some\n"
            "object could not be read (it is left out), 2 usage error, a file could not be read,\n"
            "or the cluster could not be listed.\n");
}

typedef enum { OUT_TABLE, OUT_JSON, OUT_YAML } out_fmt_t;

/* Split "a,b,c" into `keys` (pointers into `buf`, a copy of `list`); false with a message on a
 * bad key or too many. */
static bool parse_keys(cli_t *p, const char *list, char *buf, size_t size, const char **keys,
                       size_t *n)
{
    char *k, *save = NULL;

    snprintf(buf, size, "%s", list);
    *n = 0;
    for (k = buf; k != NULL; k = save) {
        save = strchr(k, ',');
        if (save != NULL)
            *save++ = '\0';
        if (*n == INV_MAX_KEYS) {
            cli_fail(p, "--group-by: at most %d label keys", INV_MAX_KEYS);
            return false;
        }
        if (!names_is_label_key(k)) {
            cli_fail(p, "--group-by: \"%s\" is not a valid label key", k);
            return false;
        }
        keys[(*n)++] = k;
    }
    return true;
}

static err_t write_data(json_t *doc, out_fmt_t fmt)
{
    err_msg_t msg = {{0}};

    return cli_output_write(stdout, fmt == OUT_JSON ? CLI_OUTPUT_JSON : CLI_OUTPUT_YAML, doc, &msg);
}

/* --flavors: the suggested manifests alone, as YAML documents or a JSON List. */
static err_t write_flavors(const inventory_t *inv, out_fmt_t fmt)
{
    json_t **docs = calloc(inv->npools ? inv->npools : 1, sizeof(*docs));
    size_t n = 0;
    err_msg_t msg = {{0}};
    err_t e = ERR_OK;

    if (docs == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < inv->npools && e == ERR_OK; i++) {
        if (inv->pools[i].flavor == NULL)
            continue;
        docs[n] = inventory_flavor_json(inv, &inv->pools[i]);
        if (docs[n++] == NULL)
            e = ERR_NOMEM;
    }
    if (e == ERR_OK && fmt == OUT_JSON) {
        json_t *list = json_pack("{s:s, s:s, s:[]}", "apiVersion", "v1", "kind", "List", "items");
        for (size_t i = 0; list != NULL && i < n; i++)
            if (json_array_append(json_object_get(list, "items"), docs[i]) != 0) {
                json_decref(list);
                list = NULL;
            }
        e = list != NULL ? write_data(list, OUT_JSON) : ERR_NOMEM;
        json_decref(list);
    } else if (e == ERR_OK && n > 0) {
        e = yamlw_file(stdout, (const json_t *const *)docs, n, &msg);
    }
    for (size_t i = 0; i < n; i++)
        json_decref(docs[i]);
    free(docs);
    return e;
}

static err_t run(const inventory_t *inv, const capacity_t *cap, bool have_quota, out_fmt_t fmt)
{
    json_t *doc;
    err_t e;

    if (fmt == OUT_TABLE) {
        e = inventory_write_table(inv, stdout);
        if (e == ERR_OK && have_quota) {
            printf("\nquota against capacity:\n");
            e = capacity_write_table(cap, stdout);
        }
        return e;
    }
    doc = inventory_json(inv);
    if (doc != NULL && have_quota &&
        json_object_set_new(doc, "capacity", capacity_json(cap)) != 0) {
        json_decref(doc);
        doc = NULL;
    }
    if (doc == NULL)
        return ERR_NOMEM;
    e = write_data(doc, fmt);
    json_decref(doc);
    return e;
}

enum { OPT_KUBECONFIG = 1, OPT_CONTEXT, OPT_GROUP_BY, OPT_FLAVORS, OPT_OUTPUT };

static const cli_opt_t inventory_opts[] = {
    {OPT_KUBECONFIG, 0, "kubeconfig", CLI_ARG_REQUIRED, "FILE", NULL, "list from this cluster"},
    {OPT_CONTEXT, 0, "context", CLI_ARG_REQUIRED, "NAME", NULL, "kubeconfig context"},
    {OPT_GROUP_BY, 0, "group-by", CLI_ARG_REQUIRED, "KEY,...", NULL, "label keys forming pools"},
    {OPT_FLAVORS, 0, "flavors", CLI_ARG_NONE, NULL, NULL, "only the suggested flavors"},
    CLI_OPT_OUTPUT(OPT_OUTPUT, "table json yaml"),
};

typedef struct inv_args_s {
    const char *kubeconfig, *context, *group_by, *output;
    bool flavors;
} inv_args_t;

static int inventory_run(int argc, char **argv)
{
    inv_args_t a = {0};
    const char *keys[INV_MAX_KEYS], *val;
    cli_t p;
    int id;
    char keybuf[2048];
    size_t nkeys = 3;
    int nfiles = 0, status = EXIT_OK;
    out_fmt_t fmt = OUT_TABLE;
    inv_set_t set;
    inv_view_t view = {0};
    inventory_t inv = {0};
    capacity_t cap = {0};
    err_msg_t msg = {{0}};
    bool have_quota;
    err_t e;

    cli_init(&p, &cmd_inventory, argc, argv);
    while ((id = cli_next(&p, &val)) != CLI_DONE) {
        switch (id) {
        case CLI_STOP:
            return p.status;
        case CLI_OPERAND:
            argv[++nfiles] = (char *)val; /* nfiles < p.i: read already */
            break;
        case OPT_KUBECONFIG:
            a.kubeconfig = val;
            break;
        case OPT_CONTEXT:
            a.context = val;
            break;
        case OPT_GROUP_BY:
            a.group_by = val;
            break;
        case OPT_FLAVORS:
            a.flavors = true;
            break;
        case OPT_OUTPUT:
            a.output = val;
            break;
        }
    }
    if (nfiles == 0 && a.kubeconfig == NULL)
        return cli_fail_usage(&p, "no FILE given, nor --kubeconfig");
    if (nfiles > 0 && a.kubeconfig != NULL)
        return cli_fail_usage(&p, "give FILEs or --kubeconfig, not both");
    switch (cli_output_parse(a.output)) {
    case CLI_OUTPUT_JSON:
        fmt = OUT_JSON;
        break;
    case CLI_OUTPUT_YAML:
        fmt = OUT_YAML;
        break;
    default:
        fmt = OUT_TABLE;
        break;
    }
    memcpy(keys, inventory_default_keys, sizeof(inventory_default_keys));
    if (a.group_by != NULL && !parse_keys(&p, a.group_by, keybuf, sizeof(keybuf), keys, &nkeys))
        return p.status;

    inv_set_init(&set, stderr);
    if (a.kubeconfig != NULL) {
        kube_config_t cfg;
        inv_live_res_t res[5];
        kube_config_init(&cfg);
        res[0] = inv_live_nodes;
        memcpy(res + 1, inv_live_queues, sizeof(inv_live_queues));
        e = kube_config_load(a.kubeconfig, a.context, &cfg, &msg);
        if (e == ERR_OK)
            e = inv_live_list(&cfg, res, 5, &set, &msg);
        kube_config_fini(&cfg);
        if (e != ERR_OK) {
            fprintf(stderr, "sluice inventory: %s\n", msg.text[0] ? msg.text : err_str(e));
            status = EXIT_USAGE;
            goto out;
        }
    }
    for (int i = 1; i <= nfiles; i++) {
        e = inv_set_read_path(&set, argv[i], &msg);
        if (e != ERR_OK) {
            fprintf(stderr, "sluice inventory: %s\n", msg.text);
            status = EXIT_USAGE;
            goto out;
        }
    }
    if (set.nnodes == 0) {
        fprintf(stderr, "sluice inventory: no Node among the objects read\n");
        status = set.ninvalid > 0 ? EXIT_INVALID : EXIT_USAGE;
        goto out;
    }
    e = inv_set_view(&set, &view);
    if (e == ERR_OK)
        e = inventory_build(set.nodes, set.nnodes, keys, nkeys, &inv, &msg);
    have_quota = view.nflavors > 0 && (view.ncqs > 0 || view.ncohorts > 0);
    if (e == ERR_OK && have_quota)
        e = capacity_compare(view.flavors, view.nflavors, view.cqs, view.ncqs, view.cohorts,
                             view.ncohorts, set.nodes, set.nnodes, &cap, &msg);
    if (e == ERR_OK)
        e = a.flavors ? write_flavors(&inv, fmt) : run(&inv, &cap, have_quota, fmt);
    if (e != ERR_OK) {
        fprintf(stderr, "sluice inventory: %s\n", msg.text[0] ? msg.text : err_str(e));
        status = EXIT_USAGE;
    } else if (set.ninvalid > 0) {
        status = EXIT_INVALID;
    }
out:
    capacity_fini(&cap);
    inventory_fini(&inv);
    inv_view_fini(&view);
    inv_set_fini(&set);
    return status;
}

const cli_cmd_t cmd_inventory = {"inventory",
                                 "node pools, their GPUs, and quota against capacity",
                                 inventory_run,
                                 inventory_opts,
                                 ARRAY_SIZE(inventory_opts),
                                 "FILE...",
                                 NULL,
                                 usage};
