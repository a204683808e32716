/* test_scale_check -- the benchmark's quota checker fails on overcommit and double admission,
 * and the shapes, names and figures match Kueue's runner. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "scale_check.h"
#include "scale_live.h"
#include "scale_report.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a small test language: records of the smoke shape ------------------------------------- */

typedef struct fx_s {
    scale_layout_t l;
    scale_check_t chk;
    uint64_t rv;
} fx_t;

static void fx_init(fx_t *fx, const char *shape)
{
    err_msg_t msg;
    ck_assert_int_eq(scale_layout_init(&fx->l, scale_shape_find(shape), NULL), 0);
    ck_assert_int_eq(scale_check_init(&fx->chk, &fx->l, &msg), ERR_OK);
    fx->rv = 100;
}

static void fx_fini(fx_t *fx)
{
    scale_check_fini(&fx->chk);
    scale_layout_fini(&fx->l);
}

/* Record states: PENDING nothing; HELD admitted; EVICTED_HELD Evicted=True still holding;
 * RELEASED evicted and released; DROPPED released without any eviction; FINISHED. */
enum { PENDING, HELD, EVICTED_HELD, RELEASED, DROPPED, FINISHED };

/* Apply a record of workload (cq, set, rep) in state `st`, holding `cpu` in ClusterQueue
 * `adm_cq` when it holds quota. Returns the checker's verdict. */
static err_t rec(fx_t *fx, uint32_t cq, uint32_t set, uint32_t rep, int st, uint32_t adm_cq,
                 int64_t cpu)
{
    scale_rec_t r;
    scale_wlpos_t p;
    uint64_t idx = scale_layout_wl_index(&fx->l, cq, set, rep, 0);

    ck_assert_int_eq(scale_layout_wl(&fx->l, idx, &p), 0);
    memset(&r, 0, sizeof(r));
    snprintf(r.ns, sizeof(r.ns), "%s", fx->l.cqs[cq].name);
    scale_wl_name(&p, r.name, sizeof(r.name));
    r.rv = ++fx->rv;
    r.reserved = st == HELD || st == EVICTED_HELD || st == FINISHED;
    r.admitted = r.reserved && st != FINISHED;
    r.evicted = st == EVICTED_HELD || st == RELEASED;
    r.finished = st == FINISHED;
    if (r.reserved) {
        snprintf(r.cq, sizeof(r.cq), "%s", fx->l.cqs[adm_cq].name);
        r.usage_milli = cpu * 1000;
    }
    return scale_check_apply(&fx->chk, idx, &r, NULL);
}

/* ---- shapes and names ----------------------------------------------------------------------- */

START_TEST(test_baseline_shape)
{
    scale_layout_t l;
    scale_wlpos_t p;
    char name[SCALE_NAME_MAX];

    ck_assert_int_eq(scale_layout_init(&l, scale_shape_find("baseline"), NULL), 0);
    ck_assert_uint_eq(l.ncohorts, 5);
    ck_assert_uint_eq(l.ncqs, 30);
    ck_assert_uint_eq(l.nwl, 15000);
    ck_assert_str_eq(l.cqs[7].name, "cq-0-1-cohort-1");
    ck_assert_str_eq(l.flavor, "rf");
    /* Kueue: 30 x (350 x 1 x 0.2 + 100 x 5 x 0.5 + 50 x 20 x 1) cpu-s over 600 cpu = 66 s. */
    ck_assert(fabs(scale_layout_lower_bound_s(&l) - 66.0) < 1e-9);
    ck_assert(fabs(scale_layout_generation_s(&l) - 60.0) < 1e-9);
    ck_assert_int_eq(scale_layout_wl(&l, 500 + 350 + 3, &p), 0);
    ck_assert_uint_eq(p.cq, 1);
    scale_wl_name(&p, name, sizeof(name));
    ck_assert_str_eq(name, "medium-1-3-0");
    ck_assert_int_eq(scale_layout_wl_find(&l, "cq-0-1-cohort-0", "medium-1-3-0"), 853);
    ck_assert_int_eq(scale_layout_wl_find(&l, "cq-0-1-cohort-0", "small-1-3-0"), -1);
    ck_assert_int_eq(scale_layout_wl_find(&l, "cq-0-1-cohort-0", "medium-1-100-0"), -1);
    ck_assert_int_eq(scale_layout_wl_find(&l, "other", "medium-1-3-0"), -1);
    ck_assert_int_eq(scale_layout_wl_find(&l, "cq-0-5-cohort-4", "large-2-49-0"), 14999);
    scale_layout_fini(&l);
}
END_TEST

START_TEST(test_large_scale_and_prefix)
{
    scale_layout_t l;

    ck_assert_int_eq(scale_layout_init(&l, scale_shape_find("large-scale"), "p1-"), 0);
    ck_assert_uint_eq(l.ncqs, 1000);
    ck_assert_uint_eq(l.nwl, 50000);
    ck_assert_str_eq(l.cohort_names[9], "p1-cohort-9");
    ck_assert_str_eq(l.cqs[999].name, "p1-cq-0-99-cohort-9");
    ck_assert_str_eq(l.flavor, "p1-rf");
    ck_assert_int_eq(scale_layout_cq_find(&l, "p1-cq-0-42-cohort-3"), 342);
    ck_assert(fabs(scale_layout_lower_bound_s(&l) - 4.025) < 1e-9);
    ck_assert(scale_shape_find("nope") == NULL);
    scale_layout_fini(&l);
}
END_TEST

/* ---- the checker ---------------------------------------------------------------------------- */

START_TEST(test_clean_history_passes)
{
    fx_t fx;

    fx_init(&fx, "smoke");
    /* cq 0 holds 20 (nominal) + borrows 20 of cq 1's nominal: the cohort's 40 in all. */
    ck_assert_int_eq(rec(&fx, 0, 2, 0, PENDING, 0, 0), ERR_OK);
    ck_assert_int_eq(rec(&fx, 0, 2, 0, HELD, 0, 20), ERR_OK);
    ck_assert_int_eq(rec(&fx, 0, 2, 1, HELD, 0, 20), ERR_OK);
    /* preempted: still holding until released, then admitted again */
    ck_assert_int_eq(rec(&fx, 0, 2, 1, EVICTED_HELD, 0, 20), ERR_OK);
    ck_assert_int_eq(rec(&fx, 0, 2, 1, RELEASED, 0, 0), ERR_OK);
    ck_assert_int_eq(rec(&fx, 1, 1, 0, HELD, 1, 5), ERR_OK);
    ck_assert_int_eq(rec(&fx, 0, 2, 0, FINISHED, 0, 20), ERR_OK);
    ck_assert_int_eq(rec(&fx, 0, 2, 1, HELD, 0, 20), ERR_OK);
    ck_assert_uint_eq(fx.chk.violations, 0);
    ck_assert_uint_eq(fx.chk.admissions, 4);
    ck_assert_int_eq(fx.chk.cohort_peak[0], 40000);
    ck_assert_int_eq(fx.chk.cq_held[0], 20000);
    fx_fini(&fx);
}
END_TEST

START_TEST(test_cohort_overcommit_fails)
{
    fx_t fx;
    err_msg_t msg;
    scale_rec_t r;

    fx_init(&fx, "smoke");
    ck_assert_int_eq(rec(&fx, 0, 2, 0, HELD, 0, 20), ERR_OK);
    ck_assert_int_eq(rec(&fx, 1, 2, 0, HELD, 1, 20), ERR_OK);
    ck_assert_int_eq(rec(&fx, 1, 0, 0, HELD, 1, 1), ERR_CONFLICT); /* 41 > 40 */
    ck_assert_uint_eq(fx.chk.violations, 1);
    ck_assert_ptr_nonnull(strstr(fx.chk.first_violation.text, "cohort cohort-0 holds 41 cpu"));
    ck_assert_ptr_nonnull(strstr(fx.chk.first_violation.text, "small-0-0-0"));
    ck_assert_ptr_nonnull(strstr(fx.chk.first_violation.text, "resourceVersion 103"));
    /* the message is returned too */
    memset(&r, 0, sizeof(r));
    snprintf(r.ns, sizeof(r.ns), "x");
    ck_assert_int_eq(scale_check_apply(&fx.chk, fx.l.nwl, &r, &msg), ERR_CONFLICT);
    ck_assert_ptr_nonnull(strstr(msg.text, "not a workload of the shape"));
    fx_fini(&fx);
}
END_TEST

START_TEST(test_cluster_queue_overcommit_fails)
{
    fx_t fx;

    /* nominal 20 + borrowingLimit 100 = 120 per ClusterQueue (the cohort has 2000): 4 x 25 +
     * 20 fit, one more cpu does not. */
    fx_init(&fx, "large-scale");
    for (uint32_t i = 0; i < 4; i++)
        ck_assert_int_eq(rec(&fx, 0, 2, i, HELD, 0, 25), ERR_OK);
    ck_assert_int_eq(rec(&fx, 0, 1, 0, HELD, 0, 20), ERR_OK);      /* 120 */
    ck_assert_int_eq(rec(&fx, 0, 0, 0, HELD, 0, 1), ERR_CONFLICT); /* 121 */
    ck_assert_ptr_nonnull(strstr(fx.chk.first_violation.text,
                                 "ClusterQueue cq-0-0-cohort-0 holds 121 cpu > nominalQuota 20 + "
                                 "borrowingLimit 100"));
    fx_fini(&fx);
}
END_TEST

START_TEST(test_double_admission_fails)
{
    fx_t fx;

    fx_init(&fx, "smoke");
    ck_assert_int_eq(rec(&fx, 0, 0, 0, HELD, 0, 1), ERR_OK);
    /* released without an eviction record, then admitted again */
    ck_assert_int_eq(rec(&fx, 0, 0, 0, DROPPED, 0, 0), ERR_OK);
    ck_assert_int_eq(rec(&fx, 0, 0, 0, HELD, 0, 1), ERR_CONFLICT);
    ck_assert_ptr_nonnull(strstr(fx.chk.first_violation.text, "without an eviction"));
    fx_fini(&fx);

    /* moved to another ClusterQueue while holding quota */
    fx_init(&fx, "smoke");
    ck_assert_int_eq(rec(&fx, 0, 0, 0, HELD, 0, 1), ERR_OK);
    ck_assert_int_eq(rec(&fx, 0, 0, 0, HELD, 1, 1), ERR_CONFLICT);
    ck_assert_ptr_nonnull(strstr(fx.chk.first_violation.text, "admitted twice"));
    fx_fini(&fx);

    /* held again after it finished */
    fx_init(&fx, "smoke");
    ck_assert_int_eq(rec(&fx, 0, 0, 0, HELD, 0, 1), ERR_OK);
    ck_assert_int_eq(rec(&fx, 0, 0, 0, FINISHED, 0, 1), ERR_OK);
    ck_assert_int_eq(rec(&fx, 0, 0, 0, HELD, 0, 1), ERR_CONFLICT);
    fx_fini(&fx);
}
END_TEST

START_TEST(test_order_and_gaps)
{
    fx_t fx;

    fx_init(&fx, "smoke");
    ck_assert_int_eq(rec(&fx, 0, 0, 0, HELD, 0, 1), ERR_OK);
    fx.rv -= 5;
    ck_assert_int_eq(rec(&fx, 0, 0, 1, HELD, 0, 1), ERR_CONFLICT);
    ck_assert_ptr_nonnull(strstr(fx.chk.first_violation.text, "resourceVersion not after"));
    scale_check_gap(&fx.chk);
    fx.rv -= 5;
    ck_assert_int_eq(rec(&fx, 0, 0, 2, HELD, 0, 1), ERR_OK);
    ck_assert_uint_eq(fx.chk.gaps, 1);
    fx_fini(&fx);
}
END_TEST

START_TEST(test_relist_checks_only_limits)
{
    fx_t fx;

    /* The case of a large-scale run: cohort-0 (40 cpu) full with two 20-cpu holders; within a
     * watch gap one was evicted and released, and a third admitted. The relist lists the third
     * (older resourceVersion) before the released one: applied in resourceVersion order that
     * would be 60 cpu, a state that never existed. Released records first, it is 40. */
    fx_init(&fx, "smoke");
    ck_assert_int_eq(rec(&fx, 0, 2, 0, HELD, 0, 20), ERR_OK);
    ck_assert_int_eq(rec(&fx, 1, 2, 0, HELD, 1, 20), ERR_OK);
    scale_check_gap(&fx.chk);
    ck_assert_int_eq(rec(&fx, 0, 2, 0, RELEASED, 0, 0), ERR_OK);
    ck_assert_int_eq(rec(&fx, 0, 2, 1, HELD, 0, 20), ERR_OK);
    /* moved to another ClusterQueue unseen: released and admitted again, no violation */
    ck_assert_int_eq(rec(&fx, 1, 2, 0, HELD, 0, 20), ERR_OK);
    ck_assert_int_eq(fx.chk.cq_held[0], 40000);
    ck_assert_int_eq(fx.chk.cq_held[1], 0);
    /* a listed state above the quota is still a violation */
    ck_assert_int_eq(rec(&fx, 1, 0, 0, HELD, 1, 1), ERR_CONFLICT);
    ck_assert_ptr_nonnull(strstr(fx.chk.first_violation.text, "cohort cohort-0 holds 41 cpu"));
    scale_check_gap_end(&fx.chk);
    ck_assert_uint_eq(fx.chk.violations, 1);
    /* after the relist every transition is checked again: a move while holding is one */
    ck_assert_int_eq(rec(&fx, 0, 2, 1, HELD, 1, 20), ERR_CONFLICT);
    ck_assert_uint_eq(fx.chk.violations, 2);
    fx_fini(&fx);
}
END_TEST

/* ---- decoding records ----------------------------------------------------------------------- */

static const char admitted_wl[] =
    "{\"metadata\":{\"name\":\"large-2-0-0\",\"namespace\":\"cq-0-1-cohort-0\","
    "\"resourceVersion\":\"4711\",\"generation\":1,"
    "\"creationTimestamp\":\"2026-01-02T03:04:05Z\"},"
    "\"status\":{\"admission\":{\"clusterQueue\":\"cq-0-1-cohort-0\",\"podSetAssignments\":"
    "[{\"name\":\"main\",\"flavors\":{\"cpu\":\"rf\"},\"resourceUsage\":{\"cpu\":\"20\"},"
    "\"count\":1},{\"name\":\"b\",\"resourceUsage\":{\"cpu\":\"500m\"}}]},"
    "\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\",\"reason\":\"QuotaReserved\","
    "\"lastTransitionTime\":\"2026-01-02T03:04:09Z\"},{\"type\":\"Admitted\",\"status\":\"True\","
    "\"lastTransitionTime\":\"2026-01-02T03:04:09Z\"},{\"type\":\"Evicted\",\"status\":\"False\","
    "\"lastTransitionTime\":\"2026-01-02T03:04:09Z\"}]}}";

START_TEST(test_record_parse)
{
    json_t *o = json_loads(admitted_wl, 0, NULL);
    scale_rec_t r;
    err_msg_t msg;

    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(scale_rec_parse(o, false, &r, &msg), ERR_OK);
    ck_assert_str_eq(r.ns, "cq-0-1-cohort-0");
    ck_assert_str_eq(r.name, "large-2-0-0");
    ck_assert_uint_eq(r.rv, 4711);
    ck_assert(r.reserved && r.admitted && !r.evicted && !r.finished && !r.deleted);
    ck_assert_str_eq(r.cq, "cq-0-1-cohort-0");
    ck_assert_int_eq(r.usage_milli, 20500);
    ck_assert_int_eq(r.admitted_at_s - r.created_s, 4);
    ck_assert_int_eq(json_array_size(r.conditions), 3);
    /* without an admission, QuotaReserved=True alone does not hold quota */
    json_object_del(json_object_get(o, "status"), "admission");
    ck_assert_int_eq(scale_rec_parse(o, false, &r, &msg), ERR_OK);
    ck_assert(!r.reserved && r.usage_milli == 0 && r.cq[0] == '\0');
    json_object_del(json_object_get(o, "metadata"), "name");
    ck_assert_int_eq(scale_rec_parse(o, false, &r, &msg), ERR_PARSE);
    json_decref(o);

    ck_assert_int_eq(scale_rfc3339("1970-01-01T00:01:00Z"), 60);
    ck_assert_int_eq(scale_rfc3339("1970-01-01T01:00:00.123+01:00"), 0);
    ck_assert_int_eq(scale_rfc3339("1970-01-01 00:00:00Z"), -1);
    ck_assert_int_eq(scale_rfc3339(NULL), -1);
}
END_TEST

START_TEST(test_trace_round_trip)
{
    json_t *o = json_loads(admitted_wl, 0, NULL), *line;
    scale_rec_t r, back;

    ck_assert_int_eq(scale_rec_parse(o, false, &r, NULL), ERR_OK);
    line = scale_trace_line(&r, "MODIFIED", 12.5);
    ck_assert_ptr_nonnull(line);
    ck_assert_int_eq(scale_trace_parse(line, &back, NULL), ERR_OK);
    ck_assert_str_eq(back.name, r.name);
    ck_assert_str_eq(back.cq, r.cq);
    ck_assert_uint_eq(back.rv, r.rv);
    ck_assert_int_eq(back.usage_milli, r.usage_milli);
    ck_assert(back.reserved && back.admitted && !back.evicted);
    json_decref(line);
    json_decref(o);
}
END_TEST

/* ---- figures -------------------------------------------------------------------------------- */

START_TEST(test_metrics_parse_and_diff)
{
    static const char before[] =
        "# HELP apiserver_request_total x\n# TYPE apiserver_request_total counter\n"
        "apiserver_request_total{code=\"201\",component=\"apiserver\",contentType=\"application/"
        "json\",dry_run=\"\",group=\"kueue.x-k8s.io\",resource=\"workloads\",scope=\"resource\","
        "subresource=\"\",verb=\"POST\",version=\"v1beta2\"} 10\n"
        "apiserver_request_total{code=\"200\",group=\"kueue.x-k8s.io\",resource=\"workloads\","
        "subresource=\"status\",verb=\"PATCH\"} 5\n"
        "apiserver_request_duration_seconds_bucket{le=\"0.1\"} 7\n";
    static const char after[] =
        "apiserver_request_total{code=\"201\",group=\"kueue.x-k8s.io\",resource=\"workloads\","
        "subresource=\"\",verb=\"POST\"} 110\n"
        "apiserver_request_total{code=\"200\",group=\"kueue.x-k8s.io\",resource=\"workloads\","
        "subresource=\"status\",verb=\"PATCH\"} 305\n"
        "apiserver_request_total{code=\"409\",group=\"kueue.x-k8s.io\",resource=\"workloads\","
        "subresource=\"status\",verb=\"PATCH\"} 7\n"
        "apiserver_request_total{code=\"201\",group=\"\",resource=\"events\",subresource=\"\","
        "verb=\"POST\"} 2e+02\n"
        "apiserver_request_total{code=\"200\",group=\"\",resource=\"\",subresource=\"\","
        "verb=\"GET\"} 1\n";
    scale_api_t b = {0}, a = {0}, d = {0};
    const scale_api_row_t *r;

    ck_assert_int_eq(scale_api_parse(&b, before, strlen(before), NULL), ERR_OK);
    ck_assert_int_eq(scale_api_parse(&a, after, strlen(after), NULL), ERR_OK);
    ck_assert_int_eq(scale_api_diff(&a, &b, &d), ERR_OK);
    r = scale_api_get(&d, "POST workloads");
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->total, 100);
    r = scale_api_get(&d, "PATCH workloads/status");
    ck_assert_uint_eq(r->total, 307);
    ck_assert_uint_eq(r->conflicts, 7);
    ck_assert_uint_eq(scale_api_get(&d, "POST events")->total, 200);
    ck_assert_ptr_nonnull(scale_api_get(&d, "GET (non-resource)"));
    ck_assert_uint_eq(scale_api_writes(&d), 607);
    ck_assert_int_eq(scale_api_parse(&a, "apiserver_request_total{verb=\"x\" 1\n", 35, NULL),
                     ERR_PARSE);
    scale_api_fini(&a);
    scale_api_fini(&b);
    scale_api_fini(&d);
}
END_TEST

START_TEST(test_kueue_figures)
{
    scale_wlstat_t w = {0};
    scale_cqstat_t cq[2] = {{0}};
    scale_layout_t l;
    scale_result_t r = {0};

    /* Time to admission from the API's whole-second timestamps; a readmission overwrites it. */
    ck_assert_int_eq(scale_wlstat_record(&w, 1000, 100, -1, false, false, false), 0);
    ck_assert_int_eq(scale_wlstat_record(&w, 3500, 100, 102, true, false, false),
                     SCALE_WL_ADMITTED);
    ck_assert(scale_wlstat_time_to_admit_ms(&w) == 2000);
    ck_assert_int_eq(scale_wlstat_record(&w, 3600, 100, 102, true, true, false), SCALE_WL_EVICTED);
    ck_assert_int_eq(scale_wlstat_record(&w, 3700, 100, -1, false, true, false), SCALE_WL_UNADMIT);
    ck_assert_int_eq(scale_wlstat_record(&w, 9000, 100, 108, true, false, false),
                     SCALE_WL_ADMITTED);
    ck_assert(scale_wlstat_time_to_admit_ms(&w) == 8000);
    ck_assert_uint_eq(w.evictions, 1);
    ck_assert_uint_eq(w.admissions, 2);
    /* without timestamps: the recorder's own clock */
    w.created_s = 0;
    ck_assert(scale_wlstat_time_to_admit_ms(&w) == 8000);

    /* ClusterQueue usage: 10 cpu for 1 s then 20 for 1 s over 2 queues of 20 for 2 s. */
    ck_assert_int_eq(scale_layout_init(&l, scale_shape_find("smoke"), NULL), 0);
    scale_cqstat_record(&cq[0], 0, 10000, 20000, 3, 1, 1, true);
    scale_cqstat_record(&cq[0], 1000, 20000, 20000, 0, 1, 1, true);
    scale_cqstat_record(&cq[0], 2000, 0, 20000, 0, 0, 0, true);
    scale_cqstat_record(&cq[1], 0, 0, 20000, 0, 0, 0, true);
    r.l = &l;
    scale_result_cq_usage(&r, cq);
    ck_assert(fabs(r.cq_usage_pct - 37.5) < 1e-9);
    ck_assert_int_eq(cq[0].max_usage_milli, 20000);
    scale_layout_fini(&l);
}
END_TEST

START_TEST(test_partial_run_figures)
{
    scale_layout_t l;
    scale_result_t r = {0};
    scale_wlstat_t *wl;

    ck_assert_int_eq(scale_layout_init(&l, scale_shape_find("smoke"), NULL), 0);
    wl = calloc(l.nwl, sizeof(*wl));
    ck_assert_ptr_nonnull(wl);
    /* Two small workloads admitted after 2 s and 4 s, one finished; nothing else yet. */
    for (int i = 0; i < 2; i++) {
        wl[i].create_ms = 1000;
        scale_wlstat_record(&wl[i], 1000, 10, -1, false, false, false);
        scale_wlstat_record(&wl[i], 3000 + 2000 * i, 10, 12 + 2 * i, true, false, false);
    }
    scale_wlstat_record(&wl[0], 3500, 10, 12, true, false, true);
    r.l = &l;
    scale_result_from_wl(&r, wl, 1000, 2000, 0);
    ck_assert_uint_eq(r.cls[0].count, 48);
    ck_assert_uint_eq(r.cls[0].admitted, 2);
    ck_assert_uint_eq(r.cls[0].finished, 1);
    ck_assert(fabs(r.cls[0].avg_admit_s - 3.0) < 1e-9);
    ck_assert(fabs(r.cls[0].avg_admit_obs_s - 3.0) < 1e-9);
    ck_assert(fabs(r.cls[0].avg_finish_s - 2.5) < 1e-9);
    ck_assert(isnan(r.cls[1].avg_admit_s));
    ck_assert(isnan(r.wall_s)); /* not every workload finished */
    ck_assert(isnan(r.work_pct));
    ck_assert_uint_eq(r.finished, 1);
    free(wl);
    scale_layout_fini(&l);
}
END_TEST

START_TEST(test_sim_summary_figures)
{
    scale_layout_t l;
    scale_result_t r = {0};
    json_t *wls, *doc;
    err_msg_t msg;

    ck_assert_int_eq(scale_layout_init(&l, scale_shape_find("smoke"), NULL), 0);
    wls = json_array();
    for (uint64_t i = 0; i < l.nwl; i++) {
        scale_wlpos_t p;
        char name[2 * SCALE_NAME_MAX + 2], wn[SCALE_NAME_MAX];
        ck_assert_int_eq(scale_layout_wl(&l, i, &p), 0);
        scale_wl_name(&p, wn, sizeof(wn));
        snprintf(name, sizeof(name), "%s/%s", l.cqs[p.cq].name, wn);
        json_array_append_new(wls, json_pack("{s:s,s:f,s:f,s:f,s:i}", "name", name, "submitted",
                                             1.0, "lastAdmitted", p.t->priority == 200 ? 3.0 : 1.5,
                                             "finished", 10.0, "preemptions",
                                             p.t->priority == 50 ? 1 : 0));
    }
    doc = json_pack("{s:o,s:{s:[{s:f}]}}", "workloads", wls, "overall", "utilization",
                    "utilization", 0.5);
    r.l = &l;
    ck_assert_int_eq(scale_result_from_sim(&r, doc, &msg), ERR_OK);
    ck_assert(fabs(r.cls[2].avg_admit_s - 2.0) < 1e-9);
    ck_assert(fabs(r.cls[0].avg_admit_s - 0.5) < 1e-9);
    ck_assert_uint_eq(r.evictions, 48);
    ck_assert(fabs(r.wall_s - 9.0) < 1e-9);
    ck_assert(fabs(r.cq_usage_pct - 50.0) < 1e-9);
    ck_assert_uint_eq(r.finished, 80);
    json_array_remove(wls, 0);
    ck_assert_int_eq(scale_result_from_sim(&r, doc, &msg), ERR_PARSE);
    json_decref(doc);
    scale_layout_fini(&l);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("scale_check");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_baseline_shape);
    tcase_add_test(tc, test_large_scale_and_prefix);
    tcase_add_test(tc, test_clean_history_passes);
    tcase_add_test(tc, test_cohort_overcommit_fails);
    tcase_add_test(tc, test_cluster_queue_overcommit_fails);
    tcase_add_test(tc, test_double_admission_fails);
    tcase_add_test(tc, test_order_and_gaps);
    tcase_add_test(tc, test_relist_checks_only_limits);
    tcase_add_test(tc, test_record_parse);
    tcase_add_test(tc, test_trace_round_trip);
    tcase_add_test(tc, test_metrics_parse_and_diff);
    tcase_add_test(tc, test_kueue_figures);
    tcase_add_test(tc, test_partial_run_figures);
    tcase_add_test(tc, test_sim_summary_figures);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
