/* test_sched_tas -- topology-aware placement (lib/sched/tas.c): Kueue's BestFit, required,
 * preferred, unconstrained, slices, and the reasons a pod set does not fit. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/tasreq.h"
#include "sched/tas.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NANO      ((qnano_t)1000000000)
#define MAX_NODES 64
#define RACK      "cloud.example.com/rack"
#define BLOCK     "cloud.example.com/block"
#define HOST      TAS_HOSTNAME_LABEL

/* A flavor's nodes, built line by line: "block rack host free-gpus". */
typedef struct fx_s {
    const char *levels[TAS_MAX_LEVELS];
    size_t nlevels;
    char vals[MAX_NODES][TAS_MAX_LEVELS][32];
    const char *vptr[MAX_NODES][TAS_MAX_LEVELS];
    qnano_t free[MAX_NODES][1];
    tas_node_t nodes[MAX_NODES];
    size_t nnodes;
} fx_t;

static const char *const res_names[] = {"nvidia.com/gpu"};

static void fx_levels(fx_t *f, const char *a, const char *b, const char *c)
{
    memset(f, 0, sizeof(*f));
    f->levels[f->nlevels++] = a;
    if (b != NULL)
        f->levels[f->nlevels++] = b;
    if (c != NULL)
        f->levels[f->nlevels++] = c;
}

/* One node: its values for each level ("-" = label absent) and free GPUs. */
static void fx_node(fx_t *f, const char *values, int gpus)
{
    size_t n = f->nnodes++, l = 0;
    char buf[128], *save = NULL;

    ck_assert_uint_lt(n, MAX_NODES);
    snprintf(buf, sizeof(buf), "%s", values);
    for (char *tok = strtok_r(buf, " ", &save); tok != NULL; tok = strtok_r(NULL, " ", &save)) {
        ck_assert_uint_lt(l, f->nlevels);
        snprintf(f->vals[n][l], sizeof(f->vals[n][l]), "%s", tok);
        f->vptr[n][l] = strcmp(tok, "-") == 0 ? NULL : f->vals[n][l];
        l++;
    }
    ck_assert_uint_eq(l, f->nlevels);
    f->free[n][0] = (qnano_t)gpus * NANO;
    f->nodes[n].values = f->vptr[n];
    f->nodes[n].free = f->free[n];
}

/* Place; the assignment rendered as "v1/v2=count v1/v2=count" or "ERR: message". */
static char *place(fx_t *f, tas_mode_t mode, const char *level, int count, int gpus_per_pod,
                   const char *slice_level, int slice_size)
{
    qnano_t per_pod[1] = {(qnano_t)gpus_per_pod * NANO};
    tas_input_t in = {.topology = "dc",
                      .levels = f->levels,
                      .nlevels = f->nlevels,
                      .resources = res_names,
                      .nres = 1,
                      .nodes = f->nodes,
                      .nnodes = f->nnodes};
    tas_request_t req = {.mode = mode,
                         .level = level,
                         .count = count,
                         .per_pod = per_pod,
                         .slice_level = slice_level,
                         .slice_size = slice_size};
    tas_assignment_t a;
    err_msg_t msg = {{0}};
    char *out = calloc(1, 4096);
    size_t len = 0;
    err_t rc;

    ck_assert_ptr_nonnull(out);
    rc = tas_place(&in, &req, &a, &msg);
    if (rc != ERR_OK) {
        snprintf(out, 4096, "%s: %s", rc == ERR_CONFLICT ? "NOFIT" : err_str(rc), msg.text);
        return out;
    }
    for (size_t l = 0; l < a.nlevels; l++)
        len += (size_t)snprintf(out + len, 4096 - len, "%s%s", l ? "," : "[", a.levels[l]);
    len += (size_t)snprintf(out + len, 4096 - len, "]");
    for (size_t i = 0; i < a.ndomains; i++) {
        len += (size_t)snprintf(out + len, 4096 - len, " ");
        for (size_t l = 0; l < a.nlevels; l++)
            len += (size_t)snprintf(out + len, 4096 - len, "%s%s", l ? "/" : "",
                                    a.values[i * a.nlevels + l]);
        len += (size_t)snprintf(out + len, 4096 - len, "=%d", (int)a.counts[i]);
    }
    tas_assignment_fini(&a);
    return out;
}

#define EXPECT_PLACE(want, ...)                                                      \
    do {                                                                             \
        char *got_ = place(__VA_ARGS__);                                             \
        ck_assert_msg(strcmp(got_, want) == 0, "want\n  %s\ngot\n  %s", want, got_); \
        free(got_);                                                                  \
    } while (0)

/* Render assignment a after `out`'s first `len` characters. */
static size_t render(char *out, size_t len, const tas_assignment_t *a)
{
    for (size_t l = 0; l < a->nlevels; l++)
        len += (size_t)snprintf(out + len, 4096 - len, "%s%s", l ? "," : "[", a->levels[l]);
    len += (size_t)snprintf(out + len, 4096 - len, "]");
    for (size_t i = 0; i < a->ndomains; i++) {
        len += (size_t)snprintf(out + len, 4096 - len, " ");
        for (size_t l = 0; l < a->nlevels; l++)
            len += (size_t)snprintf(out + len, 4096 - len, "%s%s", l ? "/" : "",
                                    a->values[i * a->nlevels + l]);
        len += (size_t)snprintf(out + len, 4096 - len, "=%d", (int)a->counts[i]);
    }
    return len;
}

/* A pod-set group: `count` workers of `gpus_per_pod` and a leader of `leader_gpus`, rendered as
 * "workers; leader <assignment>" or "NOFIT: message". */
static char *place_group(fx_t *f, tas_mode_t mode, const char *level, int count, int gpus_per_pod,
                         int leader_gpus)
{
    qnano_t per_pod[1] = {(qnano_t)gpus_per_pod * NANO}, leader[1] = {(qnano_t)leader_gpus * NANO};
    tas_input_t in = {.topology = "dc",
                      .levels = f->levels,
                      .nlevels = f->nlevels,
                      .resources = res_names,
                      .nres = 1,
                      .nodes = f->nodes,
                      .nnodes = f->nnodes};
    tas_request_t req = {.mode = mode, .level = level, .count = count, .per_pod = per_pod};
    tas_assignment_t a, la;
    err_msg_t msg = {{0}};
    char *out = calloc(1, 4096);
    size_t len;
    err_t rc;

    ck_assert_ptr_nonnull(out);
    rc = tas_place_group(&in, &req, leader, &a, &la, &msg);
    if (rc != ERR_OK) {
        snprintf(out, 4096, "%s: %s", rc == ERR_CONFLICT ? "NOFIT" : err_str(rc), msg.text);
        return out;
    }
    len = render(out, 0, &a);
    len += (size_t)snprintf(out + len, 4096 - len, "; leader ");
    render(out, len, &la);
    tas_assignment_fini(&a);
    tas_assignment_fini(&la);
    return out;
}

#define EXPECT_GROUP(want, ...)                                                      \
    do {                                                                             \
        char *got_ = place_group(__VA_ARGS__);                                       \
        ck_assert_msg(strcmp(got_, want) == 0, "want\n  %s\ngot\n  %s", want, got_); \
        free(got_);                                                                  \
    } while (0)

/* Issue 17's example: 2 racks x 4 nodes x 8 GPUs, rack-1 partly used. */
static void issue17(fx_t *f)
{
    fx_levels(f, RACK, HOST, NULL);
    fx_node(f, "rack-1 r1-n1", 0); /* fully used */
    fx_node(f, "rack-1 r1-n2", 4); /* half used */
    fx_node(f, "rack-1 r1-n3", 8);
    fx_node(f, "rack-1 r1-n4", 8);
    fx_node(f, "rack-2 r2-n1", 8);
    fx_node(f, "rack-2 r2-n2", 8);
    fx_node(f, "rack-2 r2-n3", 8);
    fx_node(f, "rack-2 r2-n4", 8);
}

START_TEST(issue17_required_rack)
{
    fx_t f;

    issue17(&f);
    /* 4 pods x 8 GPUs: rack-1 holds 2, rack-2 holds 4: rack-2, one pod per node */
    EXPECT_PLACE("[" HOST "] r2-n1=1 r2-n2=1 r2-n3=1 r2-n4=1", &f, TAS_MODE_REQUIRED, RACK, 4, 8,
                 NULL, 0);
    /* 5 pods: no rack holds them; Kueue's message with the node exclusions */
    EXPECT_PLACE("NOFIT: topology \"dc\" allows to fit only 4 out of 5 pod(s). Total nodes: 8; "
                 "excluded: resource \"nvidia.com/gpu\": 2",
                 &f, TAS_MODE_REQUIRED, RACK, 5, 8, NULL, 0);
    /* 2 pods fit both racks: BestFit takes the most-filled one that holds them (rack-1) */
    EXPECT_PLACE("[" HOST "] r1-n3=1 r1-n4=1", &f, TAS_MODE_REQUIRED, RACK, 2, 8, NULL, 0);
    /* 1 GPU per pod: rack-1 has 20 free, rack-2 32, so rack-1 (BestFit); inside it the nodes
     * most free first, the last one by BestFit: 6 pods fit the first 8-GPU node, 12 take it and
     * then the fullest node that holds the other 4 (r1-n2, not r1-n4) */
    EXPECT_PLACE("[" HOST "] r1-n3=6", &f, TAS_MODE_REQUIRED, RACK, 6, 1, NULL, 0);
    EXPECT_PLACE("[" HOST "] r1-n2=4 r1-n3=8", &f, TAS_MODE_REQUIRED, RACK, 12, 1, NULL, 0);
}
END_TEST

START_TEST(required_host_level)
{
    fx_t f;

    issue17(&f);
    /* all pods on one node: the fullest node that holds 4 one-GPU pods is r1-n2 */
    EXPECT_PLACE("[" HOST "] r1-n2=4", &f, TAS_MODE_REQUIRED, HOST, 4, 1, NULL, 0);
    EXPECT_PLACE("NOFIT: topology \"dc\" allows to fit only 8 out of 9 pod(s). Total nodes: 8; "
                 "excluded: resource \"nvidia.com/gpu\": 1",
                 &f, TAS_MODE_REQUIRED, HOST, 9, 1, NULL, 0);
}
END_TEST

START_TEST(preferred_goes_up_a_level)
{
    fx_t f;

    fx_levels(&f, BLOCK, RACK, HOST);
    fx_node(&f, "b1 r1 h1", 2);
    fx_node(&f, "b1 r1 h2", 2);
    fx_node(&f, "b1 r2 h3", 2);
    fx_node(&f, "b1 r2 h4", 1);
    fx_node(&f, "b2 r3 h5", 4);
    fx_node(&f, "b2 r3 h6", 4);
    /* one rack: r3 holds 8 */
    EXPECT_PLACE("[" HOST "] h5=4 h6=3", &f, TAS_MODE_PREFERRED, RACK, 7, 1, NULL, 0);
    /* no rack holds 9 (r3: 8), no block either (b1: 7, b2: 8): the top level, most free first
     * (b2, then b1 by BestFit); below it the racks of both blocks together: r3 takes 8, and the
     * last pod goes to the fullest rack that holds it (r2: 3, not r1: 4), on its fullest node */
    EXPECT_PLACE("[" HOST "] h4=1 h5=4 h6=4", &f, TAS_MODE_PREFERRED, RACK, 9, 1, NULL, 0);
    /* 6 pods, preferred rack: r3 (8) holds them; with required block the fullest block that
     * holds them is b1 (7) */
    EXPECT_PLACE("[" HOST "] h5=4 h6=2", &f, TAS_MODE_PREFERRED, RACK, 6, 1, NULL, 0);
    EXPECT_PLACE("[" HOST "] h1=2 h2=2 h3=2", &f, TAS_MODE_REQUIRED, BLOCK, 6, 1, NULL, 0);
    /* more than the whole topology */
    EXPECT_PLACE("NOFIT: topology \"dc\" allows to fit only 15 out of 16 pod(s)", &f,
                 TAS_MODE_PREFERRED, RACK, 16, 1, NULL, 0);
}
END_TEST

START_TEST(unconstrained_least_free_first)
{
    fx_t f;

    issue17(&f);
    /* LeastFreeCapacity: the node with the least free room that holds the pod */
    EXPECT_PLACE("[" HOST "] r1-n2=1", &f, TAS_MODE_UNCONSTRAINED, NULL, 1, 1, NULL, 0);
    /* 10 pods: least free first, across racks */
    EXPECT_PLACE("[" HOST "] r1-n2=4 r1-n3=6", &f, TAS_MODE_UNCONSTRAINED, NULL, 10, 1, NULL, 0);
    EXPECT_PLACE("NOFIT: topology \"dc\" allows to fit only 6 out of 7 pod(s). Total nodes: 8; "
                 "excluded: resource \"nvidia.com/gpu\": 2",
                 &f, TAS_MODE_UNCONSTRAINED, NULL, 7, 8, NULL, 0);
}
END_TEST

START_TEST(slices_stay_in_their_domain)
{
    fx_t f;

    fx_levels(&f, BLOCK, RACK, HOST);
    fx_node(&f, "b1 r1 h1", 3);
    fx_node(&f, "b1 r2 h2", 3);
    /* 4 pods in block b1: without slices the racks take 3 + 1 */
    EXPECT_PLACE("[" HOST "] h1=3 h2=1", &f, TAS_MODE_REQUIRED, BLOCK, 4, 1, NULL, 0);
    /* slices of 2 per rack: each rack holds one slice, 2 + 2 */
    EXPECT_PLACE("[" HOST "] h1=2 h2=2", &f, TAS_MODE_REQUIRED, BLOCK, 4, 1, RACK, 2);
    /* slices of 4 per rack: no rack holds one */
    EXPECT_PLACE("NOFIT: topology \"dc\" doesn't allow to fit any of 1 slice(s)", &f,
                 TAS_MODE_REQUIRED, BLOCK, 4, 1, RACK, 4);
    /* a slice-only request is unconstrained from the top level */
    EXPECT_PLACE("[" HOST "] h1=2 h2=2", &f, TAS_MODE_UNCONSTRAINED, NULL, 4, 1, RACK, 2);
}
END_TEST

START_TEST(invalid_requests)
{
    fx_t f;

    issue17(&f);
    EXPECT_PLACE("invalid argument: no requested topology level: " BLOCK, &f, TAS_MODE_REQUIRED,
                 BLOCK, 1, 1, NULL, 0);
    EXPECT_PLACE("invalid argument: podset slice topology " RACK
                 " is above the podset topology " HOST,
                 &f, TAS_MODE_REQUIRED, HOST, 2, 1, RACK, 2);
    EXPECT_PLACE("invalid argument: slice topology requested, but slice size not provided", &f,
                 TAS_MODE_REQUIRED, RACK, 2, 1, HOST, 0);
    EXPECT_PLACE("invalid argument: no requested topology level for slices: " BLOCK, &f,
                 TAS_MODE_REQUIRED, RACK, 2, 1, BLOCK, 2);
}
END_TEST

START_TEST(nodes_without_labels_and_other_lowest_levels)
{
    fx_t f;

    fx_levels(&f, BLOCK, RACK, NULL);
    fx_node(&f, "b1 r1", 2);
    fx_node(&f, "b1 r1", 2); /* a second node of the same rack: one leaf, capacities summed */
    fx_node(&f, "b1 -", 8);  /* no rack label: not part of the topology */
    fx_node(&f, "b2 r2", 3);
    /* the lowest level is not hostname: every level is listed */
    EXPECT_PLACE("[" BLOCK "," RACK "] b1/r1=4", &f, TAS_MODE_REQUIRED, RACK, 4, 1, NULL, 0);
    EXPECT_PLACE("[" BLOCK "," RACK "] b2/r2=3", &f, TAS_MODE_REQUIRED, RACK, 3, 1, NULL, 0);
    EXPECT_PLACE("NOFIT: no topology domains at level: " BLOCK,
                 &(fx_t){.levels = {BLOCK}, .nlevels = 1}, TAS_MODE_REQUIRED, BLOCK, 1, 1, NULL, 0);
}
END_TEST

/* Random topologies: whatever fits is placed within capacity, all pods placed, and a required
 * placement inside one domain of its level; a required request that fails has no domain that
 * could hold it. */
static uint32_t rnd(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static int path_cmp(const fx_t *f, size_t a, size_t b)
{
    for (size_t l = 0; l < f->nlevels; l++) {
        int r = strcmp(f->vals[a][l], f->vals[b][l]);
        if (r != 0)
            return r;
    }
    return 0;
}

START_TEST(random_invariants)
{
    for (uint32_t seed = 1; seed <= 400; seed++) {
        uint32_t s = seed * 2654435761u;
        fx_t f;
        int count, per, cap[MAX_NODES], placed = 0;
        size_t prev = 0;
        tas_mode_t mode = (tas_mode_t)(rnd(&s) % 3);
        qnano_t per_pod[1];
        tas_input_t in;
        tas_request_t req;
        tas_assignment_t a;
        err_msg_t msg = {{0}};
        err_t rc;

        fx_levels(&f, BLOCK, RACK, HOST);
        for (int i = 0, n = 1 + (int)(rnd(&s) % 24); i < n; i++) {
            char v[64];
            snprintf(v, sizeof(v), "b%u r%u h%02d", rnd(&s) % 3, rnd(&s) % 3, i);
            fx_node(&f, v, (int)(rnd(&s) % 9));
        }
        count = 1 + (int)(rnd(&s) % 20);
        per = 1 + (int)(rnd(&s) % 4);
        per_pod[0] = (qnano_t)per * NANO;
        in = (tas_input_t){"dc", f.levels, f.nlevels, res_names, 1, f.nodes, f.nnodes};
        req = (tas_request_t){.mode = mode,
                              .level = mode == TAS_MODE_UNCONSTRAINED ? NULL : RACK,
                              .count = count,
                              .per_pod = per_pod};
        for (size_t i = 0; i < f.nnodes; i++)
            cap[i] = (int)(f.free[i][0] / NANO) / per;
        rc = tas_place(&in, &req, &a, &msg);
        if (rc != ERR_OK) {
            ck_assert_int_eq(rc, ERR_CONFLICT);
            if (mode == TAS_MODE_REQUIRED) /* no rack holds `count` */
                for (size_t i = 0; i < f.nnodes; i++) {
                    int sum = 0;
                    for (size_t j = 0; j < f.nnodes; j++)
                        if (strcmp(f.vals[i][0], f.vals[j][0]) == 0 &&
                            strcmp(f.vals[i][1], f.vals[j][1]) == 0)
                            sum += cap[j];
                    ck_assert_msg(sum < count, "seed %u: rack of %s holds %d >= %d", seed,
                                  f.vals[i][2], sum, count);
                }
            continue;
        }
        ck_assert_uint_eq(a.nlevels, 1);
        for (size_t d = 0; d < a.ndomains; d++) {
            size_t i = 0;
            while (i < f.nnodes && strcmp(f.vals[i][2], a.values[d]) != 0)
                i++;
            ck_assert_uint_lt(i, f.nnodes);
            ck_assert_int_gt(a.counts[d], 0);
            ck_assert_msg(a.counts[d] <= cap[i], "seed %u: %s gets %d > %d", seed, a.values[d],
                          a.counts[d], cap[i]);
            if (d > 0) /* sorted by the whole path, block, rack, host (Kueue's buildAssignment) */
                ck_assert_msg(path_cmp(&f, prev, i) < 0, "seed %u: %s then %s", seed,
                              a.values[d - 1], a.values[d]);
            prev = i;
            if (mode == TAS_MODE_REQUIRED && d > 0) {
                size_t j = 0;
                while (strcmp(f.vals[j][2], a.values[0]) != 0)
                    j++;
                ck_assert_str_eq(f.vals[i][1], f.vals[j][1]);
                ck_assert_str_eq(f.vals[i][0], f.vals[j][0]);
            }
            placed += a.counts[d];
        }
        ck_assert_int_eq(placed, count);
        tas_assignment_fini(&a);
    }
}
END_TEST

/* Kueue's PodSetTopologyRequest builder over pod-template annotations. */
static tasreq_t req_of(const char *k1, const char *v1, const char *k2, const char *v2,
                       const char *k3, const char *v3)
{
    kv_list_t ann = {NULL, 0};
    tasreq_t r;

    if (k1 != NULL)
        ck_assert_int_eq(kv_list_set(&ann, k1, v1), ERR_OK);
    if (k2 != NULL)
        ck_assert_int_eq(kv_list_set(&ann, k2, v2), ERR_OK);
    if (k3 != NULL)
        ck_assert_int_eq(kv_list_set(&ann, k3, v3), ERR_OK);
    ck_assert_int_eq(tasreq_from_annotations(&ann, &r), ERR_OK);
    /* the strings are borrowed from `ann`: compare what matters, then drop them */
    r.level = r.level != NULL ? (strcmp(r.level, RACK) == 0 ? RACK : "other") : NULL;
    kv_list_fini(&ann);
    return r;
}

/* Kueue's podset groups (LeaderWorkerSet: a leader pod set of 1 and its workers): both in one
 * domain of the requested level, every domain counted with the leader inside. */
START_TEST(group_leader_counted_in_the_domain)
{
    fx_t f;

    fx_levels(&f, RACK, HOST, NULL);
    fx_node(&f, "rack-1 r1-n1", 8);
    fx_node(&f, "rack-1 r1-n2", 8);
    fx_node(&f, "rack-2 r2-n1", 8);
    fx_node(&f, "rack-2 r2-n2", 8);
    fx_node(&f, "rack-2 r2-n3", 8);
    /* alone, 2 workers of 8 GPUs go to rack-1 (BestFit: the fuller rack that holds them) */
    EXPECT_PLACE("[" HOST "] r1-n1=1 r1-n2=1", &f, TAS_MODE_REQUIRED, RACK, 2, 8, NULL, 0);
    /* with a 4-GPU leader rack-1 holds one worker besides it: rack-2, the leader on a node of
     * its own and the workers on the others */
    EXPECT_GROUP("[" HOST "] r2-n2=1 r2-n3=1; leader [" HOST "] r2-n1=1", &f, TAS_MODE_REQUIRED,
                 RACK, 2, 8, 4);
    /* 3 workers and the leader: no rack holds them (Kueue's message counts the workers only) */
    EXPECT_GROUP("NOFIT: topology \"dc\" allows to fit only 3 out of 3 pod(s)", &f,
                 TAS_MODE_REQUIRED, RACK, 3, 8, 4);
    /* a leader that fits no node: Kueue's message names the first rack's workers' capacity */
    EXPECT_GROUP("NOFIT: topology \"dc\" allows to fit only 2 out of 1 pod(s)", &f,
                 TAS_MODE_REQUIRED, RACK, 1, 8, 16);
    /* the whole group on one host when the host level is asked for */
    fx_node(&f, "rack-2 r2-n4", 12);
    EXPECT_GROUP("[" HOST "] r2-n4=1; leader [" HOST "] r2-n4=1", &f, TAS_MODE_REQUIRED, HOST, 1, 8,
                 4);
}
END_TEST

START_TEST(group_leader_where_the_workers_still_fit)
{
    fx_t f;

    /* r1-n1 holds a worker or the leader, r1-n2 (12 GPUs) a worker and the leader: the rack
     * holds 2 workers with the leader only if the leader goes to r1-n2 (Kueue's
     * prioritizeLeaderDomain moves that node first though r1-n1 sorts before it) */
    fx_levels(&f, RACK, HOST, NULL);
    fx_node(&f, "rack-1 r1-n1", 8);
    fx_node(&f, "rack-1 r1-n2", 12);
    EXPECT_GROUP("[" HOST "] r1-n1=1 r1-n2=1; leader [" HOST "] r1-n2=1", &f, TAS_MODE_REQUIRED,
                 RACK, 2, 8, 4);
    /* a leader of 0 GPUs (one pod) fits anywhere: the first node in order */
    EXPECT_GROUP("[" HOST "] r1-n1=1 r1-n2=1; leader [" HOST "] r1-n1=1", &f, TAS_MODE_REQUIRED,
                 RACK, 2, 8, 0);
}
END_TEST

START_TEST(group_preferred_over_several_domains)
{
    fx_t f;

    fx_levels(&f, RACK, HOST, NULL);
    fx_node(&f, "rack-1 r1-n1", 8);
    fx_node(&f, "rack-1 r1-n2", 8);
    fx_node(&f, "rack-2 r2-n1", 8);
    fx_node(&f, "rack-2 r2-n2", 8);
    /* 3 workers and a leader fit no rack: preferred takes the leader's rack first, then the
     * rest for the workers */
    EXPECT_GROUP("[" HOST "] r1-n2=1 r2-n1=1 r2-n2=1; leader [" HOST "] r1-n1=1", &f,
                 TAS_MODE_PREFERRED, RACK, 3, 8, 4);
    /* 4 workers and the leader do not fit the 4 nodes at all */
    EXPECT_GROUP("NOFIT: topology \"dc\" allows to fit only 3 out of 4 pod(s)", &f,
                 TAS_MODE_PREFERRED, RACK, 4, 8, 4);
}
END_TEST

START_TEST(annotations_to_request)
{
    tasreq_t r;

    r = req_of(NULL, NULL, NULL, NULL, NULL, NULL);
    ck_assert_int_eq(r.mode, TASREQ_MODE_NONE);
    r = req_of(TASREQ_PREFERRED, "x", TASREQ_REQUIRED, RACK, NULL, NULL);
    ck_assert_int_eq(r.mode, TASREQ_MODE_REQUIRED); /* required wins */
    ck_assert_str_eq(r.level, RACK);
    r = req_of(TASREQ_UNCONSTRAINED, "true", NULL, NULL, NULL, NULL);
    ck_assert_int_eq(r.mode, TASREQ_MODE_UNCONSTRAINED);
    r = req_of(TASREQ_UNCONSTRAINED, "false", NULL, NULL, NULL, NULL);
    ck_assert_int_eq(r.mode, TASREQ_MODE_NONE);
    /* slices alone: unconstrained (from the top level) */
    r = req_of(TASREQ_SLICE_LEVEL, HOST, TASREQ_SLICE_SIZE, "4", NULL, NULL);
    ck_assert_int_eq(r.mode, TASREQ_MODE_UNCONSTRAINED);
    ck_assert_uint_eq(r.nlayers, 1);
    ck_assert_str_eq(r.layers[0].level, HOST);
    ck_assert_int_eq(r.layers[0].size, 4);
    r = req_of(TASREQ_REQUIRED, RACK, TASREQ_SLICE_LEVEL, HOST, TASREQ_SLICE_SIZE, "2");
    ck_assert_int_eq(r.mode, TASREQ_MODE_REQUIRED);
    ck_assert_int_eq(r.layers[0].size, 2);
    /* a slice level without a (valid) size is no slice constraint */
    r = req_of(TASREQ_REQUIRED, RACK, TASREQ_SLICE_LEVEL, HOST, TASREQ_SLICE_SIZE, "two");
    ck_assert_uint_eq(r.nlayers, 0);
    r = req_of(TASREQ_SLICE_LEVEL, HOST, NULL, NULL, NULL, NULL);
    ck_assert_int_eq(r.mode, TASREQ_MODE_NONE);
}
END_TEST

/* Kueue's builder over podset-slice-required-topology-constraints (TASMultiLayerTopology). */
START_TEST(annotations_to_layers)
{
    tasreq_t r;

    /* layers alone: unconstrained from the top level, outermost first */
    r = req_of(TASREQ_CONSTRAINTS,
               "[{\"topology\": \"" RACK "\", \"size\": 4}, {\"Topology\": \"" HOST
               "\", \"size\": 2, \"x\": 1}]",
               NULL, NULL, NULL, NULL);
    ck_assert_int_eq(r.mode, TASREQ_MODE_UNCONSTRAINED);
    ck_assert_uint_eq(r.nlayers, 2);
    ck_assert_str_eq(r.layers[0].level, RACK);
    ck_assert_int_eq(r.layers[0].size, 4);
    ck_assert_str_eq(r.layers[1].level, HOST); /* keys match without case, as in Go */
    ck_assert_int_eq(r.layers[1].size, 2);
    /* with required; the constraints win over the single-layer pair (validation forbids both) */
    r = req_of(TASREQ_REQUIRED, RACK, TASREQ_CONSTRAINTS,
               "[{\"topology\":\"" HOST "\",\"size\":3}]", TASREQ_SLICE_SIZE, "2");
    ck_assert_int_eq(r.mode, TASREQ_MODE_REQUIRED);
    ck_assert_uint_eq(r.nlayers, 1);
    ck_assert_int_eq(r.layers[0].size, 3);
    /* what does not decode, or has no entry or more than 3, means no slices, and no fallback */
    static const char *const bad[] = {
        "",
        "{",
        "{}",
        "null",
        "[]",
        "[1]",
        "[{\"size\": \"2\"}]",
        "[{\"size\": 2.5}]",
        "[{\"size\": 4294967296}]",
        "[{\"topology\": 1}]",
        ("[{\"topology\":\"a\",\"size\":8},{\"topology\":\"b\",\"size\":4},"
         "{\"topology\":\"c\",\"size\":2},{\"topology\":\"d\",\"size\":1}]")};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        r = req_of(TASREQ_CONSTRAINTS, bad[i], TASREQ_SLICE_LEVEL, HOST, TASREQ_SLICE_SIZE, "2");
        ck_assert_msg(r.nlayers == 0 && r.mode == TASREQ_MODE_NONE, "%s", bad[i]);
    }
    /* null entries and fields are zero values, as in Go (validation then reports them) */
    r = req_of(TASREQ_CONSTRAINTS, "[null, {\"topology\": null, \"size\": null}]", NULL, NULL, NULL,
               NULL);
    ck_assert_uint_eq(r.nlayers, 2);
    ck_assert_str_eq(r.layers[1].level, "");
    ck_assert_int_eq(r.layers[1].size, 0);
}
END_TEST

/* Place with slice layers: the outermost (slice_level, slice_size) and up to 2 inner ones. */
static char *place_layers(fx_t *f, tas_mode_t mode, const char *level, int count, const char *l0,
                          int s0, const char *l1, int s1, const char *l2, int s2)
{
    qnano_t per_pod[1] = {NANO};
    tas_input_t in = {.topology = "dc",
                      .levels = f->levels,
                      .nlevels = f->nlevels,
                      .resources = res_names,
                      .nres = 1,
                      .nodes = f->nodes,
                      .nnodes = f->nnodes};
    tas_request_t req = {.mode = mode,
                         .level = level,
                         .count = count,
                         .per_pod = per_pod,
                         .slice_level = l0,
                         .slice_size = s0,
                         .inner = {{l1, s1}, {l2, s2}},
                         .ninner = l2 != NULL   ? 2
                                   : l1 != NULL ? 1
                                                : 0};
    tas_assignment_t a;
    err_msg_t msg = {{0}};
    char *out = calloc(1, 4096);
    err_t rc;

    ck_assert_ptr_nonnull(out);
    rc = tas_place(&in, &req, &a, &msg);
    if (rc != ERR_OK) {
        snprintf(out, 4096, "%s: %s", rc == ERR_CONFLICT ? "NOFIT" : err_str(rc), msg.text);
        return out;
    }
    render(out, 0, &a);
    tas_assignment_fini(&a);
    return out;
}

#define EXPECT_LAYERS(want, ...)                                                     \
    do {                                                                             \
        char *got_ = place_layers(__VA_ARGS__);                                      \
        ck_assert_msg(strcmp(got_, want) == 0, "want\n  %s\ngot\n  %s", want, got_); \
        free(got_);                                                                  \
    } while (0)

#define DC "cloud.example.com/dc"

/* Kueue's tas_cache_test "multi-layer topology" cases (one CPU per pod there, one GPU here). */
START_TEST(layers_as_kueue_places_them)
{
    fx_t f;

    /* block required; rack slices of 4; host slices of 2: 8 pods, 4 per rack, 2 per host (x1
     * holds one pod: no host slice) */
    fx_levels(&f, BLOCK, RACK, HOST);
    fx_node(&f, "b1 r1 x1", 1);
    fx_node(&f, "b1 r1 x2", 4);
    fx_node(&f, "b1 r2 x3", 3);
    fx_node(&f, "b1 r2 x4", 4);
    EXPECT_LAYERS("[" HOST "] x2=4 x3=2 x4=2", &f, TAS_MODE_REQUIRED, BLOCK, 8, RACK, 4, HOST, 2,
                  NULL, 0);

    /* host slice rounding makes the rack slice impossible */
    fx_levels(&f, BLOCK, RACK, HOST);
    fx_node(&f, "b1 r1 x1", 3);
    fx_node(&f, "b1 r1 x2", 3);
    fx_node(&f, "b1 r1 x3", 0);
    EXPECT_LAYERS("NOFIT: topology \"dc\" doesn't allow to fit; 0/1 slice(s) fit on level " RACK
                  "; 2/3 slice(s) fit on level " HOST
                  ". Total nodes: 3; excluded: resource \"nvidia.com/gpu\": 1",
                  &f, TAS_MODE_REQUIRED, BLOCK, 6, RACK, 6, HOST, 2, NULL, 0);

    /* a small host kills rack slices despite enough total capacity; one layer (racks of 8)
     * fits the same 16 pods */
    fx_levels(&f, BLOCK, RACK, HOST);
    fx_node(&f, "b1 r1 x1", 7);
    fx_node(&f, "b1 r1 x2", 4);
    fx_node(&f, "b1 r2 x3", 7);
    fx_node(&f, "b1 r2 x4", 3);
    EXPECT_LAYERS("NOFIT: topology \"dc\" doesn't allow to fit; 1/2 slice(s) fit on level " RACK
                  "; 3/4 slice(s) fit on level " HOST,
                  &f, TAS_MODE_REQUIRED, BLOCK, 16, RACK, 8, HOST, 4, NULL, 0);
    EXPECT_LAYERS("[" HOST "] x1=4 x2=4 x3=5 x4=3", &f, TAS_MODE_REQUIRED, BLOCK, 16, RACK, 8, NULL,
                  0, NULL, 0);

    /* enough host slices but not enough rack slices */
    fx_levels(&f, BLOCK, RACK, HOST);
    fx_node(&f, "b1 r1 x1", 4);
    fx_node(&f, "b1 r2 x2", 4);
    fx_node(&f, "b1 r3 x3", 4);
    EXPECT_LAYERS("NOFIT: topology \"dc\" doesn't allow to fit; 0/2 slice(s) fit on level " RACK
                  "; 6/6 slice(s) fit on level " HOST,
                  &f, TAS_MODE_REQUIRED, BLOCK, 12, RACK, 6, HOST, 2, NULL, 0);

    /* three layers, small hosts cascading up: dc required, blocks of 12, racks of 6, hosts
     * of 3 */
    fx_levels(&f, DC, BLOCK, RACK);
    f.levels[f.nlevels++] = HOST;
    fx_node(&f, "dc1 b1 r1 x1", 4);
    fx_node(&f, "dc1 b1 r1 x2", 4);
    fx_node(&f, "dc1 b1 r2 x3", 4);
    fx_node(&f, "dc1 b1 r2 x4", 4);
    fx_node(&f, "dc1 b2 r3 x5", 4);
    fx_node(&f, "dc1 b2 r3 x6", 4);
    fx_node(&f, "dc1 b2 r4 x7", 1);
    fx_node(&f, "dc1 b2 r4 x8", 1);
    EXPECT_LAYERS("NOFIT: topology \"dc\" doesn't allow to fit; 1/2 slice(s) fit on level " BLOCK
                  "; 3/4 slice(s) fit on level " RACK "; 6/8 slice(s) fit on level " HOST,
                  &f, TAS_MODE_REQUIRED, DC, 24, BLOCK, 12, RACK, 6, HOST, 3);
    /* 12 pods: the whole of b1, 3 per host */
    EXPECT_LAYERS("[" HOST "] x1=3 x2=3 x3=3 x4=3", &f, TAS_MODE_REQUIRED, DC, 12, BLOCK, 12, RACK,
                  6, HOST, 3);
}
END_TEST

/* An inner layer two levels below the outer one: the level between goes in its size too
 * (Kueue's buildSliceSizeAtLevel fills it), so the racks take whole host slices. */
START_TEST(layers_fill_the_levels_between)
{
    fx_t f;

    fx_levels(&f, BLOCK, RACK, HOST);
    fx_node(&f, "b1 r1 h1", 3);
    fx_node(&f, "b1 r1 h2", 2);
    fx_node(&f, "b1 r2 h3", 3);
    fx_node(&f, "b1 r2 h4", 1);
    EXPECT_LAYERS("[" HOST "] h1=2 h2=2 h3=2", &f, TAS_MODE_REQUIRED, BLOCK, 6, BLOCK, 6, HOST, 2,
                  NULL, 0);
    /* one layer: pod by pod below the block */
    EXPECT_LAYERS("[" HOST "] h2=2 h3=3 h4=1", &f, TAS_MODE_REQUIRED, BLOCK, 6, BLOCK, 6, NULL, 0,
                  NULL, 0);
    /* slices only (unconstrained from the top level), preferred: the same layers hold */
    EXPECT_LAYERS("[" HOST "] h1=2 h2=2 h3=2", &f, TAS_MODE_UNCONSTRAINED, NULL, 6, BLOCK, 6, HOST,
                  2, NULL, 0);
    /* preferred racks: no rack holds a slice of 6 in host slices of 2 (r1 gives 4), and the
     * block counts the racks' slices only: no fit, counted at the block level */
    EXPECT_LAYERS("NOFIT: topology \"dc\" doesn't allow to fit; 0/1 slice(s) fit on level " RACK
                  "; 3/3 slice(s) fit on level " HOST,
                  &f, TAS_MODE_PREFERRED, RACK, 6, RACK, 6, HOST, 2, NULL, 0);
}
END_TEST

/* Layers Kueue's scheduler refuses (buildSliceSizeAtLevel), in its words. */
START_TEST(layers_refused)
{
    fx_t f;

    fx_levels(&f, BLOCK, RACK, HOST);
    fx_node(&f, "b1 r1 h1", 8);
    EXPECT_LAYERS("invalid argument: no requested topology level for additional slice layer: zone",
                  &f, TAS_MODE_REQUIRED, BLOCK, 4, RACK, 4, "zone", 2, NULL, 0);
    EXPECT_LAYERS("invalid argument: additional slice layer topology " BLOCK
                  " must be at a lower level than " RACK,
                  &f, TAS_MODE_REQUIRED, BLOCK, 4, RACK, 4, BLOCK, 2, NULL, 0);
    EXPECT_LAYERS("invalid argument: additional slice layer topology " RACK
                  " must be at a lower level than " RACK,
                  &f, TAS_MODE_REQUIRED, BLOCK, 4, RACK, 4, RACK, 2, NULL, 0);
    EXPECT_LAYERS(
        "invalid argument: additional slice layer size 3 must evenly divide parent layer size 4",
        &f, TAS_MODE_REQUIRED, BLOCK, 4, RACK, 4, HOST, 3, NULL, 0);
    EXPECT_LAYERS(
        "invalid argument: additional slice layer size 0 must evenly divide parent layer size 4",
        &f, TAS_MODE_REQUIRED, BLOCK, 4, RACK, 4, HOST, 0, NULL, 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sched_tas");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, issue17_required_rack);
    tcase_add_test(tc, required_host_level);
    tcase_add_test(tc, preferred_goes_up_a_level);
    tcase_add_test(tc, unconstrained_least_free_first);
    tcase_add_test(tc, slices_stay_in_their_domain);
    tcase_add_test(tc, invalid_requests);
    tcase_add_test(tc, nodes_without_labels_and_other_lowest_levels);
    tcase_add_test(tc, random_invariants);
    tcase_add_test(tc, annotations_to_request);
    tcase_add_test(tc, group_leader_counted_in_the_domain);
    tcase_add_test(tc, group_leader_where_the_workers_still_fit);
    tcase_add_test(tc, group_preferred_over_several_domains);
    tcase_add_test(tc, annotations_to_layers);
    tcase_add_test(tc, layers_as_kueue_places_them);
    tcase_add_test(tc, layers_fill_the_levels_between);
    tcase_add_test(tc, layers_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
