/* scale_shape -- Kueue's scheduler-benchmark shapes (generator.yaml) and the names its runner uses.
 */
/* SPDX-License-Identifier: Apache-2.0 */
#include "scale_shape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the shapes ----------------------------------------------------------------------------- */

/* test/performance/scheduler/configs/baseline/generator.yaml: 5 cohorts x 6 ClusterQueues, per
 * ClusterQueue 350 small (every 100 ms), 100 medium (every 500 ms), 50 large (every 1200 ms). */
static const scale_tmpl_t baseline_small[] = {{"small", 200, 50, 1000}};
static const scale_tmpl_t baseline_medium[] = {{"medium", 500, 100, 5000}};
static const scale_tmpl_t baseline_large[] = {{"large", 1000, 200, 20000}};
static const scale_wlset_t baseline_sets[] = {
    {350, 100, baseline_small, 1},
    {100, 500, baseline_medium, 1},
    {50, 1200, baseline_large, 1},
};
static const scale_qset_t baseline_qsets[] = {
    {"cq", 6, 20000, 100000, "Any", "LowerPriority", baseline_sets, NELEM(baseline_sets)},
};
static const scale_cset_t baseline_csets[] = {{"cohort", 5, baseline_qsets, 1}};

/* configs/large-scale/generator.yaml: 10 cohorts x 100 ClusterQueues, per ClusterQueue 35 small
 * (every 60 ms), 11 medium (every 300 ms), 4 large (every 700 ms). */
static const scale_tmpl_t large_small[] = {{"small", 150, 50, 1000}};
static const scale_tmpl_t large_medium[] = {{"medium", 350, 100, 5000}};
static const scale_tmpl_t large_large[] = {{"large", 700, 200, 20000}};
static const scale_wlset_t large_sets[] = {
    {35, 60, large_small, 1},
    {11, 300, large_medium, 1},
    {4, 700, large_large, 1},
};
static const scale_qset_t large_qsets[] = {
    {"cq", 100, 20000, 100000, "Any", "LowerPriority", large_sets, NELEM(large_sets)},
};
static const scale_cset_t large_csets[] = {{"cohort", 10, large_qsets, 1}};

/* Ours, for CI: 1 cohort x 2 ClusterQueues x 40 workloads, the same classes, quotas and
 * policies, so borrowing and preemption happen within seconds. */
static const scale_tmpl_t smoke_small[] = {{"small", 200, 50, 1000}};
static const scale_tmpl_t smoke_medium[] = {{"medium", 500, 100, 5000}};
static const scale_tmpl_t smoke_large[] = {{"large", 1000, 200, 20000}};
static const scale_wlset_t smoke_sets[] = {
    {24, 100, smoke_small, 1},
    {10, 250, smoke_medium, 1},
    {6, 400, smoke_large, 1},
};
static const scale_qset_t smoke_qsets[] = {
    {"cq", 2, 20000, 100000, "Any", "LowerPriority", smoke_sets, NELEM(smoke_sets)},
};
static const scale_cset_t smoke_csets[] = {{"cohort", 1, smoke_qsets, 1}};

/* Kueue's figures (minimalkueue, same machine and API server) as quoted in issue 13. */
static const scale_shape_t shapes[] = {
    {"baseline",
     "rf",
     baseline_csets,
     NELEM(baseline_csets),
     {356.0, {212.6, 70.2, 12.0}, 91.0, 637.0, 27}},
    {"large-scale",
     "rf",
     large_csets,
     NELEM(large_csets),
     {1202.0, {619.0, 293.0, 127.0}, 421.0, 2.4 * 1024.0, 0}},
    {"smoke", "rf", smoke_csets, NELEM(smoke_csets), {0, {0, 0, 0}, 0, 0, 0}},
};

const scale_shape_t *scale_shape_find(const char *name)
{
    for (size_t i = 0; i < NELEM(shapes); i++) {
        if (strcmp(shapes[i].name, name) == 0)
            return &shapes[i];
    }
    return NULL;
}

const char *scale_shape_names(void)
{
    return "baseline, large-scale, smoke";
}

/* ---- layout --------------------------------------------------------------------------------- */

static int sort_names(scale_layout_t *l);

static uint64_t qset_wl_count(const scale_qset_t *qs)
{
    uint64_t n = 0;
    for (size_t s = 0; s < qs->nsets; s++)
        n += (uint64_t)qs->sets[s].count * qs->sets[s].ntmpl;
    return n;
}

int scale_layout_init(scale_layout_t *l, const scale_shape_t *shape, const char *prefix)
{
    uint32_t nco = 0, ncq = 0, co = 0, q = 0;

    memset(l, 0, sizeof(*l));
    l->shape = shape;
    if (prefix == NULL)
        prefix = "";
    snprintf(l->flavor, sizeof(l->flavor), "%s%s", prefix, shape->flavor);
    for (size_t c = 0; c < shape->ncsets; c++) {
        nco += shape->csets[c].count;
        for (size_t s = 0; s < shape->csets[c].nqsets; s++)
            ncq += shape->csets[c].count * shape->csets[c].qsets[s].count;
    }
    l->cohort_names = calloc(nco ? nco : 1, sizeof(*l->cohort_names));
    l->cohort_nominal_milli = calloc(nco ? nco : 1, sizeof(int64_t));
    l->cqs = calloc(ncq ? ncq : 1, sizeof(scale_cq_t));
    l->cq_base = calloc((size_t)ncq + 1, sizeof(uint64_t));
    if (l->cohort_names == NULL || l->cohort_nominal_milli == NULL || l->cqs == NULL ||
        l->cq_base == NULL)
        goto fail;
    l->ncohorts = nco;
    l->ncqs = ncq;
    for (size_t cs = 0; cs < shape->ncsets; cs++) {
        const scale_cset_t *cset = &shape->csets[cs];
        for (uint32_t ci = 0; ci < cset->count; ci++, co++) {
            int w = snprintf(l->cohort_names[co], SCALE_NAME_MAX, "%s%s-%u", prefix,
                             cset->class_name, ci);
            if (w < 0 || w >= SCALE_NAME_MAX)
                goto fail;
            /* Kueue creates the queue sets of a cohort, and each set's queues, concurrently; the
             * flattened order is only ours. */
            for (uint32_t qsi = 0; qsi < cset->nqsets; qsi++) {
                const scale_qset_t *qs = &cset->qsets[qsi];
                for (uint32_t qi = 0; qi < qs->count; qi++, q++) {
                    scale_cq_t *cq = &l->cqs[q];
                    cq->cohort = co;
                    cq->qset = qs;
                    cq->qset_idx = qsi;
                    cq->q_idx = qi;
                    /* The cohort name already carries the prefix. */
                    w = snprintf(cq->name, sizeof(cq->name), "%s%s-%u-%u-%s", prefix,
                                 qs->class_name, qsi, qi, l->cohort_names[co] + strlen(prefix));
                    if (w < 0 || w >= (int)sizeof(cq->name))
                        goto fail;
                    l->cohort_nominal_milli[co] += qs->nominal_milli;
                    l->cq_base[q + 1] = l->cq_base[q] + qset_wl_count(qs);
                }
            }
        }
    }
    l->nwl = l->cq_base[ncq];
    if (sort_names(l) != 0)
        goto fail;
    return 0;
fail:
    scale_layout_fini(l);
    return -1;
}

typedef struct name_idx_s {
    const char *name;
    uint32_t idx;
} name_idx_t;

static int name_idx_cmp(const void *a, const void *b)
{
    return strcmp(((const name_idx_t *)a)->name, ((const name_idx_t *)b)->name);
}

static int sort_names(scale_layout_t *l)
{
    name_idx_t *tmp = calloc(l->ncqs ? l->ncqs : 1, sizeof(*tmp));

    l->by_name = calloc(l->ncqs ? l->ncqs : 1, sizeof(uint32_t));
    if (tmp == NULL || l->by_name == NULL) {
        free(tmp);
        return -1;
    }
    for (uint32_t q = 0; q < l->ncqs; q++)
        tmp[q] = (name_idx_t){l->cqs[q].name, q};
    qsort(tmp, l->ncqs, sizeof(*tmp), name_idx_cmp);
    for (uint32_t q = 0; q < l->ncqs; q++)
        l->by_name[q] = tmp[q].idx;
    free(tmp);
    return 0;
}

int64_t scale_layout_cq_find(const scale_layout_t *l, const char *name)
{
    uint32_t lo = 0, hi = l->ncqs;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = strcmp(l->cqs[l->by_name[mid]].name, name);
        if (c == 0)
            return l->by_name[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* The number ending at `end` (exclusive) and starting after a '-' at or after `start`; sets
 * *dash to that '-'. Returns -1 when there is none. */
static long trailing_number(const char *start, const char *end, const char **dash)
{
    const char *p = end;
    long v = 0, mul = 1;

    while (p > start && p[-1] >= '0' && p[-1] <= '9') {
        p--;
        v += (p[0] - '0') * mul;
        mul *= 10;
        if (mul > 1000000000L)
            return -1;
    }
    if (p == end || p == start || p[-1] != '-')
        return -1;
    *dash = p - 1;
    return v;
}

int64_t scale_layout_wl_find(const scale_layout_t *l, const char *ns, const char *name)
{
    int64_t q = scale_layout_cq_find(l, ns);
    const char *end = name + strlen(name), *d3, *d2, *d1;
    long tmpl, rep, set;

    if (q < 0)
        return -1;
    tmpl = trailing_number(name, end, &d3);
    rep = tmpl < 0 ? -1 : trailing_number(name, d3, &d2);
    set = rep < 0 ? -1 : trailing_number(name, d2, &d1);
    if (set < 0)
        return -1;
    const scale_qset_t *qs = l->cqs[q].qset;
    if ((size_t)set >= qs->nsets || (uint32_t)rep >= qs->sets[set].count ||
        (size_t)tmpl >= qs->sets[set].ntmpl)
        return -1;
    const char *cls = qs->sets[set].tmpl[tmpl].class_name;
    if ((size_t)(d1 - name) != strlen(cls) || strncmp(name, cls, strlen(cls)) != 0)
        return -1;
    return (int64_t)scale_layout_wl_index(l, (uint32_t)q, (uint32_t)set, (uint32_t)rep,
                                          (uint32_t)tmpl);
}

void scale_layout_fini(scale_layout_t *l)
{
    free(l->by_name);
    free(l->cohort_names);
    free(l->cohort_nominal_milli);
    free(l->cqs);
    free(l->cq_base);
    memset(l, 0, sizeof(*l));
}

int scale_layout_wl(const scale_layout_t *l, uint64_t idx, scale_wlpos_t *out)
{
    uint32_t lo = 0, hi = l->ncqs;

    if (idx >= l->nwl)
        return -1;
    /* The last ClusterQueue whose base is <= idx. */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (l->cq_base[mid] <= idx)
            lo = mid;
        else
            hi = mid;
    }
    const scale_qset_t *qs = l->cqs[lo].qset;
    uint64_t off = idx - l->cq_base[lo];
    for (uint32_t s = 0; s < qs->nsets; s++) {
        const scale_wlset_t *set = &qs->sets[s];
        uint64_t n = (uint64_t)set->count * set->ntmpl;
        if (off < n) {
            out->cq = lo;
            out->set = s;
            out->rep = (uint32_t)(off / set->ntmpl);
            out->tmpl = (uint32_t)(off % set->ntmpl);
            out->t = &set->tmpl[out->tmpl];
            return 0;
        }
        off -= n;
    }
    return -1;
}

uint64_t scale_layout_wl_index(const scale_layout_t *l, uint32_t cq, uint32_t set, uint32_t rep,
                               uint32_t tmpl)
{
    const scale_qset_t *qs = l->cqs[cq].qset;
    uint64_t idx = l->cq_base[cq];
    for (uint32_t s = 0; s < set; s++)
        idx += (uint64_t)qs->sets[s].count * qs->sets[s].ntmpl;
    return idx + (uint64_t)rep * qs->sets[set].ntmpl + tmpl;
}

void scale_wl_name(const scale_wlpos_t *p, char *buf, size_t n)
{
    snprintf(buf, n, "%s-%u-%u-%u", p->t->class_name, p->set, p->rep, p->tmpl);
}

int scale_class_index(const char *class_name)
{
    static const char *const names[] = {"small", "medium", "large"};
    for (int i = 0; i < 3; i++) {
        if (class_name != NULL && strcmp(class_name, names[i]) == 0)
            return i;
    }
    return 3;
}

double scale_layout_work(const scale_layout_t *l)
{
    double work = 0;
    for (uint32_t q = 0; q < l->ncqs; q++) {
        const scale_qset_t *qs = l->cqs[q].qset;
        for (size_t s = 0; s < qs->nsets; s++) {
            for (size_t t = 0; t < qs->sets[s].ntmpl; t++) {
                const scale_tmpl_t *tm = &qs->sets[s].tmpl[t];
                work += (double)qs->sets[s].count * (double)tm->request_milli * tm->runtime_ms;
            }
        }
    }
    return work;
}

int64_t scale_layout_capacity(const scale_layout_t *l)
{
    int64_t cap = 0;
    for (uint32_t q = 0; q < l->ncqs; q++)
        cap += l->cqs[q].qset->nominal_milli;
    return cap;
}

double scale_layout_lower_bound_s(const scale_layout_t *l)
{
    int64_t cap = scale_layout_capacity(l);
    return cap > 0 ? scale_layout_work(l) / (double)cap / 1000.0 : 0;
}

double scale_layout_generation_s(const scale_layout_t *l)
{
    double longest = 0;
    for (uint32_t q = 0; q < l->ncqs; q++) {
        const scale_qset_t *qs = l->cqs[q].qset;
        for (size_t s = 0; s < qs->nsets; s++) {
            double d = (double)qs->sets[s].count * (double)qs->sets[s].ntmpl *
                       qs->sets[s].interval_ms / 1000.0;
            if (d > longest)
                longest = d;
        }
    }
    return longest;
}
