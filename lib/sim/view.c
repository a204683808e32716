/* view -- ordered views of a run record shared by the summary, human and report writers. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/view.h"

#include <stdlib.h>
#include <string.h>

/* qsort has no context argument in C11: sort (key, index) pairs instead. */
typedef struct sort_item_s {
    const char *a;
    const char *b;
    size_t idx;
} sort_item_t;

static int item_cmp(const void *x, const void *y)
{
    const sort_item_t *p = x, *q = y;
    int c = strcmp(p->a, q->a);
    if (c == 0 && p->b != NULL && q->b != NULL)
        c = strcmp(p->b, q->b);
    if (c == 0)
        c = (p->idx > q->idx) - (p->idx < q->idx);
    return c;
}

static size_t *sorted(sort_item_t *items, size_t n, size_t *out_n)
{
    size_t *idx;

    *out_n = 0;
    if (n == 0) {
        free(items);
        return NULL;
    }
    qsort(items, n, sizeof(*items), item_cmp);
    idx = malloc(n * sizeof(*idx));
    if (idx != NULL) {
        for (size_t i = 0; i < n; i++)
            idx[i] = items[i].idx;
        *out_n = n;
    }
    free(items);
    return idx;
}

size_t *sim_view_cqs(const sim_rec_t *r, size_t *n)
{
    sort_item_t *items = calloc(r->nholders + 1, sizeof(*items));
    size_t k = 0;

    if (items == NULL) {
        *n = 0;
        return NULL;
    }
    for (size_t i = 0; i < r->nholders; i++) {
        if (!r->holders[i].is_cohort)
            items[k++] = (sort_item_t){r->holders[i].name, NULL, i};
    }
    return sorted(items, k, n);
}

size_t *sim_view_gfrs(const sim_rec_t *r, size_t *n)
{
    sort_item_t *items = calloc(r->ngfrs + 1, sizeof(*items));

    if (items == NULL) {
        *n = 0;
        return NULL;
    }
    for (size_t i = 0; i < r->ngfrs; i++)
        items[i] = (sort_item_t){r->gfrs[i].flavor, r->gfrs[i].resource, i};
    return sorted(items, r->ngfrs, n);
}

size_t *sim_view_frs(const sim_rec_t *r, size_t h, size_t *n)
{
    const sim_holder_t *hd = &r->holders[h];
    sort_item_t *items = calloc(hd->nfrs + 1, sizeof(*items));

    if (items == NULL) {
        *n = 0;
        return NULL;
    }
    for (size_t i = 0; i < hd->nfrs; i++)
        items[i] = (sort_item_t){hd->frs[i].flavor, hd->frs[i].resource, i};
    return sorted(items, hd->nfrs, n);
}

err_t sim_view_groups_init(sim_view_groups_t *g, const sim_rec_t *r)
{
    size_t nb = r->nholders + 1;

    g->start = calloc(nb + 1, sizeof(*g->start));
    g->wl = malloc((r->nwls + 1) * sizeof(*g->wl));
    if (g->start == NULL || g->wl == NULL) {
        sim_view_groups_fini(g);
        return ERR_NOMEM;
    }
    /* Counting sort by holder: stable, so creation order is kept inside each group. */
    for (size_t i = 0; i < r->nwls; i++) {
        size_t b = r->wls[i].cq == SIM_NONE ? r->nholders : r->wls[i].cq;
        g->start[b + 1]++;
    }
    for (size_t b = 0; b < nb; b++)
        g->start[b + 1] += g->start[b];
    size_t *fill = calloc(nb, sizeof(*fill));
    if (fill == NULL) {
        sim_view_groups_fini(g);
        return ERR_NOMEM;
    }
    for (size_t i = 0; i < r->nwls; i++) {
        size_t b = r->wls[i].cq == SIM_NONE ? r->nholders : r->wls[i].cq;
        g->wl[g->start[b] + fill[b]++] = i;
    }
    free(fill);
    return ERR_OK;
}

void sim_view_groups_fini(sim_view_groups_t *g)
{
    if (g == NULL)
        return;
    free(g->start);
    free(g->wl);
    g->start = NULL;
    g->wl = NULL;
}

size_t sim_view_group_len(const sim_view_groups_t *g, size_t h)
{
    return g->start[h + 1] - g->start[h];
}

sim_ms_t *sim_view_waits(const sim_rec_t *r, const sim_view_groups_t *g, size_t h, size_t *n)
{
    size_t k = sim_view_group_len(g, h);
    sim_ms_t *v = malloc((k + 1) * sizeof(*v));

    *n = 0;
    if (v == NULL)
        return NULL;
    for (size_t i = 0; i < k; i++)
        v[i] = r->wls[g->wl[g->start[h] + i]].wait;
    sim_stats_sort(v, k);
    *n = k;
    return v;
}

const char *sim_view_end_reason(const sim_rec_t *r)
{
    if (r->until_reached)
        return "until";
    for (size_t i = 0; i < r->nwls; i++) {
        if (r->wls[i].state == SIM_WL_PENDING || r->wls[i].state == SIM_WL_RUNNING)
            return "stalled";
    }
    return "completed";
}

const char *sim_view_state(sim_wl_state_t s)
{
    switch (s) {
    case SIM_WL_PENDING:
        return "Pending";
    case SIM_WL_RUNNING:
        return "Running";
    case SIM_WL_FINISHED:
        return "Finished";
    case SIM_WL_DEACTIVATED:
        return "Deactivated";
    case SIM_WL_DELETED:
        return "Deleted";
    }
    return "";
}

bool sim_view_fair_share(const sim_rec_t *r, const sim_view_groups_t *g, size_t h, long double *x)
{
    const sim_holder_t *hd = &r->holders[h];
    long double best = 0;

    if (sim_view_group_len(g, h) == 0)
        return false;
    for (size_t i = 0; i < hd->nfrs; i++) {
        const sim_fr_rec_t *fr = &hd->frs[i];
        const sim_gfr_t *cluster = &r->gfrs[fr->gfr];
        if (cluster->nominal_int <= 0)
            continue;
        long double share = (long double)fr->usage_int / (long double)cluster->nominal_int;
        if (share > best)
            best = share;
    }
    /* weight is in nano-units: 1e9 is Kueue's default weight of 1. A zero weight (allowed by
     * Kueue: such a queue only gets what nobody else wants) counts as the smallest weight. */
    long double w = hd->weight > 0 ? (long double)hd->weight / 1e9L : 1e-9L;
    *x = best / w;
    return true;
}
