/* test_obs_metrics -- the metrics registry and the Prometheus text format 0.0.4 it renders. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "obs/metrics.h"

#define OOM_WRAP_STRDUP
#include "oom_wrap.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const cq_status[] = {"cluster_queue", "status", NULL};

/* Render `r` into a new string (caller frees). */
static char *render(const metrics_registry_t *r)
{
    metrics_buf_t b = {0};

    ck_assert_int_eq(metrics_render(r, &b), ERR_OK);
    return b.data ? b.data : strdup("");
}

START_TEST(counter_and_gauge_text)
{
    metrics_registry_t *r = metrics_registry_new(0);
    metrics_family_t *c, *g;
    err_msg_t msg = {{0}};
    char *text;

    ck_assert_int_eq(metrics_family_add(r, "kueue_pending_workloads",
                                        "The number of pending workloads, per 'cluster_queue'.\n"
                                        "a \\ backslash",
                                        METRICS_GAUGE, cq_status, NULL, 0, &g, &msg),
                     ERR_OK);
    ck_assert_int_eq(metrics_family_add(r, "kueue_admission_attempts_total", "Attempts.",
                                        METRICS_COUNTER, (const char *const[]){"result", NULL},
                                        NULL, 0, &c, &msg),
                     ERR_OK);
    ck_assert_int_eq(metrics_gauge_set(g, (const char *const[]){"gpu", "active"}, 3), ERR_OK);
    ck_assert_int_eq(metrics_gauge_set(g, (const char *const[]){"gpu", "inadmissible"}, 0), ERR_OK);
    ck_assert_int_eq(metrics_gauge_set(g, (const char *const[]){"gpu", "active"}, 2), ERR_OK);
    ck_assert_int_eq(metrics_counter_add(c, (const char *const[]){"success"}, 1), ERR_OK);
    ck_assert_int_eq(metrics_counter_add(c, (const char *const[]){"success"}, 2.5), ERR_OK);
    text = render(r);
    ck_assert_str_eq(text, "# HELP kueue_pending_workloads The number of pending workloads, per "
                           "'cluster_queue'.\\na \\\\ backslash\n"
                           "# TYPE kueue_pending_workloads gauge\n"
                           "kueue_pending_workloads{cluster_queue=\"gpu\",status=\"active\"} 2\n"
                           "kueue_pending_workloads{cluster_queue=\"gpu\",status=\"inadmissible\"} "
                           "0\n"
                           "# HELP kueue_admission_attempts_total Attempts.\n"
                           "# TYPE kueue_admission_attempts_total counter\n"
                           "kueue_admission_attempts_total{result=\"success\"} 3.5\n");
    free(text);
    metrics_registry_free(r);
}
END_TEST

START_TEST(label_values_escaped)
{
    metrics_registry_t *r = metrics_registry_new(0);
    metrics_family_t *g;
    char *text;

    ck_assert_int_eq(metrics_family_add(r, "m", "h", METRICS_GAUGE,
                                        (const char *const[]){"a", NULL}, NULL, 0, &g, NULL),
                     ERR_OK);
    ck_assert_int_eq(metrics_gauge_set(g, (const char *const[]){"q\"\\\nx"}, 1), ERR_OK);
    ck_assert_int_eq(metrics_gauge_set(g, (const char *const[]){NULL}, 2), ERR_OK);
    text = render(r);
    ck_assert_str_eq(text, "# HELP m h\n# TYPE m gauge\nm{a=\"q\\\"\\\\\\nx\"} 1\nm{a=\"\"} 2\n");
    free(text);
    metrics_registry_free(r);
}
END_TEST

START_TEST(histogram_text)
{
    metrics_registry_t *r = metrics_registry_new(0);
    metrics_family_t *h, *n;
    double b[METRICS_MAX_BUCKETS];
    size_t nb = metrics_kueue_buckets(3, b);
    char *text;

    ck_assert_uint_eq(nb, 3);
    ck_assert(b[0] == 1 && b[1] == 2.5 && b[2] == 5);
    ck_assert_int_eq(metrics_family_add(r, "w_seconds", "Wait.", METRICS_HISTOGRAM,
                                        (const char *const[]){"cluster_queue", NULL}, b, nb, &h,
                                        NULL),
                     ERR_OK);
    ck_assert_int_eq(
        metrics_family_add(r, "unlabelled", "U.", METRICS_HISTOGRAM, NULL, b, 1, &n, NULL), ERR_OK);
    ck_assert_int_eq(metrics_histogram_observe(h, (const char *const[]){"gpu"}, 1), ERR_OK);
    ck_assert_int_eq(metrics_histogram_observe(h, (const char *const[]){"gpu"}, 2), ERR_OK);
    ck_assert_int_eq(metrics_histogram_observe(h, (const char *const[]){"gpu"}, 100), ERR_OK);
    ck_assert_int_eq(metrics_histogram_observe(h, (const char *const[]){"gpu"}, NAN), ERR_INVALID);
    ck_assert_int_eq(metrics_histogram_observe(n, NULL, 0.5), ERR_OK);
    text = render(r);
    ck_assert_str_eq(text, "# HELP w_seconds Wait.\n# TYPE w_seconds histogram\n"
                           "w_seconds_bucket{cluster_queue=\"gpu\",le=\"1\"} 1\n"
                           "w_seconds_bucket{cluster_queue=\"gpu\",le=\"2.5\"} 2\n"
                           "w_seconds_bucket{cluster_queue=\"gpu\",le=\"5\"} 2\n"
                           "w_seconds_bucket{cluster_queue=\"gpu\",le=\"+Inf\"} 3\n"
                           "w_seconds_sum{cluster_queue=\"gpu\"} 103\n"
                           "w_seconds_count{cluster_queue=\"gpu\"} 3\n"
                           "# HELP unlabelled U.\n# TYPE unlabelled histogram\n"
                           "unlabelled_bucket{le=\"1\"} 1\nunlabelled_bucket{le=\"+Inf\"} 1\n"
                           "unlabelled_sum 0.5\nunlabelled_count 1\n");
    free(text);
    metrics_registry_free(r);
}
END_TEST

START_TEST(kueue_layouts)
{
    double b[METRICS_MAX_BUCKETS];

    /* Kueue's exp(16): 1, 2.5, 5, ..., 2.5 * 2^14 = 40960. */
    ck_assert_uint_eq(metrics_kueue_buckets(16, b), 16);
    ck_assert(b[0] == 1 && b[1] == 2.5 && b[15] == 40960);
    ck_assert_uint_eq(metrics_kueue_buckets(14, b), 14);
    ck_assert(b[13] == 10240);
    ck_assert_uint_eq(metrics_default_buckets(b), 11);
    ck_assert(b[0] == 0.005 && b[10] == 10);
}
END_TEST

START_TEST(values_formatted)
{
    char buf[40];

    ck_assert_str_eq(metrics_format_value(0, buf, sizeof(buf)), "0");
    ck_assert_str_eq(metrics_format_value(INFINITY, buf, sizeof(buf)), "+Inf");
    ck_assert_str_eq(metrics_format_value(-INFINITY, buf, sizeof(buf)), "-Inf");
    ck_assert_str_eq(metrics_format_value(NAN, buf, sizeof(buf)), "NaN");
    ck_assert_str_eq(metrics_format_value(0.1, buf, sizeof(buf)), "0.1");
    ck_assert_str_eq(metrics_format_value(3.0e9, buf, sizeof(buf)), "3000000000");
    ck_assert_str_eq(metrics_format_value(9007199254740993.0, buf, sizeof(buf)),
                     "9007199254740992");
    ck_assert(strtod(metrics_format_value(1.0 / 3, buf, sizeof(buf)), NULL) == 1.0 / 3);
}
END_TEST

START_TEST(registration_refused)
{
    metrics_registry_t *r = metrics_registry_new(0);
    err_msg_t msg = {{0}};
    double up[] = {1, 1}, fin[] = {1, INFINITY};

    ck_assert_int_eq(metrics_family_add(r, "a-b", "", METRICS_GAUGE, NULL, NULL, 0, NULL, &msg),
                     ERR_INVALID);
    ck_assert_int_eq(metrics_family_add(r, "9a", "", METRICS_GAUGE, NULL, NULL, 0, NULL, &msg),
                     ERR_INVALID);
    ck_assert_int_eq(metrics_family_add(r, "a", "", METRICS_GAUGE,
                                        (const char *const[]){"__x", NULL}, NULL, 0, NULL, &msg),
                     ERR_INVALID);
    ck_assert_int_eq(metrics_family_add(r, "a", "", METRICS_GAUGE,
                                        (const char *const[]){"x:y", NULL}, NULL, 0, NULL, &msg),
                     ERR_INVALID);
    ck_assert_int_eq(metrics_family_add(r, "a", "", METRICS_GAUGE,
                                        (const char *const[]){"x", "x", NULL}, NULL, 0, NULL, &msg),
                     ERR_INVALID);
    ck_assert_int_eq(metrics_family_add(r, "h", "", METRICS_HISTOGRAM,
                                        (const char *const[]){"le", NULL}, up, 1, NULL, &msg),
                     ERR_INVALID);
    ck_assert_int_eq(metrics_family_add(r, "h", "", METRICS_HISTOGRAM, NULL, up, 2, NULL, &msg),
                     ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(msg.text, "strictly increasing"));
    ck_assert_int_eq(metrics_family_add(r, "h", "", METRICS_HISTOGRAM, NULL, fin, 2, NULL, &msg),
                     ERR_INVALID);
    ck_assert_int_eq(metrics_family_add(r, "h", "", METRICS_HISTOGRAM, NULL, NULL, 0, NULL, &msg),
                     ERR_INVALID);
    ck_assert_int_eq(metrics_family_add(r, "g", "", METRICS_GAUGE, NULL, up, 1, NULL, &msg),
                     ERR_INVALID);
    ck_assert_int_eq(metrics_family_add(r, "ns:a_b", "", METRICS_GAUGE, NULL, NULL, 0, NULL, &msg),
                     ERR_OK);
    ck_assert_int_eq(metrics_family_add(r, "ns:a_b", "", METRICS_GAUGE, NULL, NULL, 0, NULL, &msg),
                     ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(msg.text, "registered twice"));
    metrics_registry_free(r);
}
END_TEST

START_TEST(wrong_type_refused)
{
    metrics_registry_t *r = metrics_registry_new(0);
    metrics_family_t *c, *g;
    double v = -1;

    metrics_family_add(r, "c", "", METRICS_COUNTER, NULL, NULL, 0, &c, NULL);
    metrics_family_add(r, "g", "", METRICS_GAUGE, NULL, NULL, 0, &g, NULL);
    ck_assert_int_eq(metrics_counter_add(c, NULL, -1), ERR_INVALID);
    ck_assert_int_eq(metrics_counter_add(c, NULL, NAN), ERR_INVALID);
    ck_assert_int_eq(metrics_gauge_set(c, NULL, 1), ERR_INVALID);
    ck_assert_int_eq(metrics_counter_add(g, NULL, 1), ERR_INVALID);
    ck_assert_int_eq(metrics_histogram_observe(g, NULL, 1), ERR_INVALID);
    ck_assert(!metrics_value(c, NULL, &v));
    ck_assert_int_eq(metrics_gauge_add(g, NULL, 2), ERR_OK);
    ck_assert_int_eq(metrics_gauge_add(g, NULL, -0.5), ERR_OK);
    ck_assert(metrics_value(g, NULL, &v) && v == 1.5);
    metrics_registry_free(r);
}
END_TEST

/* The cardinality policy: past max_series, new tuples share the overflow series; totals stay. */
START_TEST(cardinality_bounded)
{
    metrics_registry_t *r = metrics_registry_new(3);
    metrics_family_t *c, *g;
    char name[16], *text;
    double v = 0;

    metrics_family_add(r, "c_total", "", METRICS_COUNTER, (const char *const[]){"lq", NULL}, NULL,
                       0, &c, NULL);
    metrics_family_add(r, "g", "", METRICS_GAUGE, (const char *const[]){"lq", NULL}, NULL, 0, &g,
                       NULL);
    for (int i = 0; i < 10; i++) {
        const char *vals[] = {name};
        snprintf(name, sizeof(name), "q%d", i);
        ck_assert_int_eq(metrics_counter_add(c, vals, 1), ERR_OK);
        ck_assert_int_eq(metrics_gauge_set(g, vals, 2), ERR_OK);
    }
    ck_assert_int_eq(metrics_counter_add(c, (const char *const[]){"q0"}, 1), ERR_OK);
    ck_assert_uint_eq(metrics_family_len(c), 4);
    ck_assert(metrics_value(c, (const char *const[]){"q0"}, &v) && v == 2);
    ck_assert(metrics_value(c, (const char *const[]){METRICS_OVERFLOW}, &v) && v == 7);
    ck_assert(metrics_value(g, (const char *const[]){METRICS_OVERFLOW}, &v) && v == 14);
    text = render(r);
    ck_assert_ptr_nonnull(strstr(text, "c_total{lq=\"__overflow__\"} 7\n"));
    ck_assert_ptr_nonnull(strstr(text,
                                 "# TYPE sluice_metrics_series_overflow_total counter\n"
                                 "sluice_metrics_series_overflow_total{metric=\"c_total\"} 7\n"
                                 "sluice_metrics_series_overflow_total{metric=\"g\"} 7\n"));
    free(text);
    /* A scrape-time family starts over. */
    metrics_family_clear(g);
    ck_assert_uint_eq(metrics_family_len(g), 0);
    ck_assert(!metrics_value(g, (const char *const[]){"q1"}, &v));
    ck_assert_int_eq(metrics_gauge_set(g, (const char *const[]){"q9"}, 5), ERR_OK);
    ck_assert(metrics_value(g, (const char *const[]){"q9"}, &v) && v == 5);
    text = render(r);
    ck_assert_ptr_null(strstr(text, "metric=\"g\""));
    ck_assert_ptr_nonnull(strstr(text, "g{lq=\"q9\"} 5\n"));
    free(text);
    metrics_registry_free(r);
}
END_TEST

/* Long label values take the heap path of the series key; values never fake a split. */
START_TEST(keys_unambiguous)
{
    metrics_registry_t *r = metrics_registry_new(0);
    metrics_family_t *g;
    char *big = malloc(2000);
    double v = 0;

    memset(big, 'x', 1999);
    big[1999] = '\0';
    metrics_family_add(r, "g", "", METRICS_GAUGE, (const char *const[]){"a", "b", NULL}, NULL, 0,
                       &g, NULL);
    metrics_gauge_set(g, (const char *const[]){"1:x", ""}, 1);
    metrics_gauge_set(g, (const char *const[]){"", "1:x"}, 2);
    metrics_gauge_set(g, (const char *const[]){big, big}, 3);
    ck_assert_uint_eq(metrics_family_len(g), 3);
    ck_assert(metrics_value(g, (const char *const[]){"1:x", ""}, &v) && v == 1);
    ck_assert(metrics_value(g, (const char *const[]){big, big}, &v) && v == 3);
    free(big);
    metrics_registry_free(r);
}
END_TEST

/* Every allocation of registration, observation and rendering fails in turn: ERR_NOMEM, no
 * leak, and the registry keeps working. */
START_TEST(out_of_memory)
{
    for (long n = 1;; n++) {
        metrics_registry_t *r;
        metrics_family_t *h = NULL, *g = NULL;
        metrics_buf_t b = {0};
        double bk[] = {1, 2};
        err_t rc = ERR_OK;
        long made;

        oom_fail_at(n);
        r = metrics_registry_new(2);
        if (r != NULL) {
            rc = metrics_family_add(r, "h", "help", METRICS_HISTOGRAM,
                                    (const char *const[]){"x", NULL}, bk, 2, &h, NULL);
            if (rc == ERR_OK)
                rc = metrics_family_add(r, "g", "help", METRICS_GAUGE,
                                        (const char *const[]){"x", "y", NULL}, NULL, 0, &g, NULL);
            for (int i = 0; rc == ERR_OK && i < 4; i++) {
                const char *v[] = {i % 2 ? "a" : "b", "c"};
                rc = metrics_histogram_observe(h, v, i);
                if (rc == ERR_OK)
                    rc = metrics_gauge_set(g, (const char *const[]){i < 3 ? v[0] : "d", "e"}, i);
            }
            if (rc == ERR_OK)
                rc = metrics_render(r, &b);
        }
        made = oom_count();
        oom_fail_at(0);
        metrics_buf_fini(&b);
        metrics_registry_free(r);
        if (made < n) {
            ck_assert_int_eq(rc, ERR_OK);
            break;
        }
        ck_assert(r == NULL || rc == ERR_NOMEM);
    }
}
END_TEST

/* Quota integrated over time adds up exactly: 0.1 cpu (10^8 nano) for 1 ms, 3 times, is 0.0003
 * cpu-seconds, not 0.00030000000000000003; a year of 8 Ei bytes still fits. */
START_TEST(exact_counter)
{
    metrics_registry_t *r = metrics_registry_new(0);
    metrics_family_t *c, *g;
    err_msg_t msg = {{0}};
    const char *const v[] = {"cpu"};
    char *text, buf[64];
    double d = 0;

    ck_assert_int_eq(metrics_family_add(r, "sluice_x_seconds_total", "X.", METRICS_COUNTER,
                                        (const char *const[]){"resource", NULL}, NULL, 0, &c, &msg),
                     ERR_OK);
    ck_assert_int_eq(metrics_family_add(r, "g", "G.", METRICS_GAUGE, NULL, NULL, 0, &g, &msg),
                     ERR_OK);
    ck_assert_int_eq(metrics_family_set_exact(g, 12), ERR_INVALID);
    ck_assert_int_eq(metrics_family_set_exact(c, 19), ERR_INVALID);
    ck_assert_int_eq(metrics_family_set_exact(c, 12), ERR_OK);
    ck_assert_int_eq(metrics_counter_add(c, v, 1), ERR_INVALID);
    ck_assert_int_eq(metrics_counter_add_exact(g, NULL, 1), ERR_INVALID);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(metrics_counter_add_exact(c, v, (metrics_exact_t)100000000 * 1), ERR_OK);
    ck_assert(metrics_value(c, v, &d));
    ck_assert(fabs(d - 0.0003) < 1e-15);
    ck_assert_int_eq(metrics_family_set_exact(c, 9), ERR_INVALID); /* has series */
    text = render(r);
    ck_assert_ptr_nonnull(strstr(text, "sluice_x_seconds_total{resource=\"cpu\"} 0.0003\n"));
    free(text);
    /* 9597.853 cpu-seconds as 5000 ms steps of odd amounts, exactly. */
    metrics_family_clear(c);
    for (int i = 0; i < 1000; i++)
        metrics_counter_add_exact(c, v, (metrics_exact_t)1919570600 * 5000);
    text = render(r);
    ck_assert_ptr_nonnull(strstr(text, "{resource=\"cpu\"} 9597.853\n"));
    free(text);
    ck_assert_str_eq(metrics_format_exact(0, 12, buf, sizeof(buf)), "0");
    ck_assert_str_eq(metrics_format_exact(1000000000000ULL * 42, 12, buf, sizeof(buf)), "42");
    ck_assert_str_eq(metrics_format_exact(1, 12, buf, sizeof(buf)), "0.000000000001");
    /* 8 Ei bytes (9.2e18 x 10^9 nano) for a year (3.15e10 ms): 2.9e26 byte-seconds */
    ck_assert_str_eq(metrics_format_exact((metrics_exact_t)9223372036854775807ULL * 1000000000ULL *
                                              31536000007ULL,
                                          12, buf, sizeof(buf)),
                     "290868260618815814107535430.649");
    metrics_registry_free(r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("obs_metrics");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, counter_and_gauge_text);
    tcase_add_test(tc, label_values_escaped);
    tcase_add_test(tc, histogram_text);
    tcase_add_test(tc, kueue_layouts);
    tcase_add_test(tc, values_formatted);
    tcase_add_test(tc, registration_refused);
    tcase_add_test(tc, wrong_type_refused);
    tcase_add_test(tc, cardinality_bounded);
    tcase_add_test(tc, keys_unambiguous);
    tcase_add_test(tc, out_of_memory);
    tcase_add_test(tc, exact_counter);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
