/* live -- list Nodes and Kueue's queue objects from an API server into a manifest set. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "inventory/live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const inv_live_res_t inv_live_nodes = {{"", "v1", "nodes", false}, false};
const inv_live_res_t inv_live_queues[4] = {
    {{"kueue.x-k8s.io", "v1beta2", "resourceflavors", false}, true},
    {{"kueue.x-k8s.io", "v1beta2", "clusterqueues", false}, true},
    {{"kueue.x-k8s.io", "v1beta2", "cohorts", false}, true},
    {{"kueue.x-k8s.io", "v1beta2", "localqueues", true}, true},
};

/*
 * LIST -> (page) -> LIST ?continue=... -> next resource -> ... -> close the client -> the loop
 * ends. One request is in flight at a time: a command run once does not need more, and the
 * server's priority and fairness sees one polite client.
 */
typedef struct live_s {
    kube_client_t *client;
    const inv_live_res_t *res;
    size_t nres, cur;
    inv_set_t *set;
    err_t err;
    err_msg_t msg;
    char origin[512];
} live_t;

static void next(live_t *l, const char *continue_token);

static void on_list(const kube_result_t *r, void *data)
{
    live_t *l = data;
    const json_t *md;
    const char *cont = NULL;
    err_t e;

    if (r->canceled) {
        if (l->err == ERR_OK)
            l->err = err_set(&l->msg, ERR_IO, "request canceled");
        return;
    }
    if (r->err != ERR_OK) {
        if (r->status == 404 && l->res[l->cur].optional) {
            l->cur++;
            next(l, NULL);
            return;
        }
        l->err = r->err;
        l->msg = r->msg;
        kube_client_close(l->client, NULL, NULL);
        return;
    }
    snprintf(l->origin, sizeof(l->origin), "%s/%s", kube_client_server(l->client),
             l->res[l->cur].res.resource);
    e = inv_set_add(l->set, r->body, l->origin, 1, 0);
    if (e != ERR_OK) {
        l->err = err_set(&l->msg, e, "out of memory");
        kube_client_close(l->client, NULL, NULL);
        return;
    }
    md = json_object_get(r->body, "metadata");
    if (json_is_string(json_object_get(md, "continue")))
        cont = json_string_value(json_object_get(md, "continue"));
    if (cont != NULL && cont[0] != '\0') {
        next(l, cont);
        return;
    }
    l->cur++;
    next(l, NULL);
}

static void next(live_t *l, const char *continue_token)
{
    kube_list_opts_t opts = {.limit = 500, .continue_token = continue_token};
    err_t e;

    if (l->cur >= l->nres) {
        kube_client_close(l->client, NULL, NULL);
        return;
    }
    e = kube_list(l->client, &l->res[l->cur].res, NULL, &opts, on_list, l, NULL, &l->msg);
    if (e != ERR_OK) {
        l->err = e;
        kube_client_close(l->client, NULL, NULL);
    }
}

err_t inv_live_list(kube_config_t *cfg, const inv_live_res_t *res, size_t nres, inv_set_t *set,
                    err_msg_t *msg)
{
    uv_loop_t loop;
    live_t l;
    err_t e;
    int rc;

    memset(&l, 0, sizeof(l));
    l.res = res;
    l.nres = nres;
    l.set = set;
    rc = uv_loop_init(&loop);
    if (rc != 0)
        return err_set(msg, ERR_IO, "event loop: %s", uv_strerror(rc));
    e = kube_client_new(&loop, cfg, NULL, &l.client, msg);
    if (e == ERR_OK) {
        next(&l, NULL);
        uv_run(&loop, UV_RUN_DEFAULT);
        e = l.err;
        if (e != ERR_OK && msg != NULL)
            *msg = l.msg;
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&loop) != 0 && e == ERR_OK)
        e = err_set(msg, ERR_IO, "event loop did not close");
    return e;
}
