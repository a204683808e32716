/* test_sim_events -- the JSON Lines event writer: key order, exact times, escaping. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/events.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Run the writer into memory and return what it wrote (caller frees). */
typedef struct sink_s {
    char *buf;
    size_t len;
    FILE *f;
    sim_events_t ev;
} sink_t;

static void sink_open(sink_t *s)
{
    s->buf = NULL;
    s->len = 0;
    s->f = open_memstream(&s->buf, &s->len);
    ck_assert_ptr_nonnull(s->f);
    sim_events_init(&s->ev, s->f);
}

static char *sink_close(sink_t *s)
{
    err_msg_t msg;
    ck_assert_int_eq(sim_events_finish(&s->ev, &msg), ERR_OK);
    fclose(s->f);
    return s->buf;
}

START_TEST(test_events_every_kind_in_contract_order)
{
    sink_t s;
    /* types.h fields are mutable char *: give them writable storage. */
    char cpu[] = "cpu", gpu[] = "nvidia.com/gpu", def[] = "default", h100[] = "h100",
         spot[] = "spot", mainps[] = "main", auxps[] = "aux", cqa[] = "cq-a";
    kv_t main_flavors[] = {{cpu, def}, {gpu, h100}};
    kv_t aux_flavors[] = {{cpu, spot}};
    pod_set_assignment_t psa[] = {
        {.name = mainps, .flavors = {main_flavors, 2}},
        {.name = auxps, .flavors = {aux_flavors, 1}},
    };
    admission_t adm = {.cluster_queue = cqa, .assignments = psa, .nassignments = 2};
    char *out;

    sink_open(&s);
    sim_events_admitted(&s.ev, 0, "team-a/train", "cq-a", &adm, false);
    sim_events_admitted(&s.ev, 1500, "team-b/x", "cq-b", &adm, true);
    sim_events_preempted(&s.ev, 250, "team-a/train", "cq-a", "team-c/urgent",
                         "InCohortReclamation");
    sim_events_finished(&s.ev, 3600000, "team-b/x", "cq-b");
    sim_events_deactivated(&s.ev, 60001, "team-a/train", "cq-a", "MaximumExecutionTimeExceeded");
    sim_events_deleted(&s.ev, 10, "team-d/y", "");
    sim_events_deleted(&s.ev, 10, "team-d/z", NULL);
    sim_events_evicted(&s.ev, 20, "team-e/w", "cq-e", "LocalQueueStopped");
    ck_assert_uint_eq(s.ev.count, 8);
    out = sink_close(&s);
    ck_assert_str_eq(
        out,
        "{\"time\":0,\"event\":\"Admitted\",\"workload\":\"team-a/"
        "train\",\"clusterQueue\":\"cq-a\","
        "\"flavors\":{\"main\":{\"cpu\":\"default\",\"nvidia.com/gpu\":\"h100\"},\"aux\":{\"cpu\":"
        "\"spot\"}},\"borrowing\":false}\n"
        "{\"time\":1.5,\"event\":\"Admitted\",\"workload\":\"team-b/x\",\"clusterQueue\":\"cq-b\","
        "\"flavors\":{\"main\":{\"cpu\":\"default\",\"nvidia.com/gpu\":\"h100\"},\"aux\":{\"cpu\":"
        "\"spot\"}},\"borrowing\":true}\n"
        "{\"time\":0.25,\"event\":\"Preempted\",\"workload\":\"team-a/train\",\"clusterQueue\":"
        "\"cq-a\",\"preemptor\":\"team-c/urgent\",\"reason\":\"InCohortReclamation\"}\n"
        "{\"time\":3600,\"event\":\"Finished\",\"workload\":\"team-b/"
        "x\",\"clusterQueue\":\"cq-b\"}\n"
        "{\"time\":60.001,\"event\":\"Deactivated\",\"workload\":\"team-a/train\",\"clusterQueue\":"
        "\"cq-a\",\"reason\":\"MaximumExecutionTimeExceeded\"}\n"
        "{\"time\":0.01,\"event\":\"Deleted\",\"workload\":\"team-d/y\",\"clusterQueue\":\"\"}\n"
        "{\"time\":0.01,\"event\":\"Deleted\",\"workload\":\"team-d/z\",\"clusterQueue\":\"\"}\n"
        "{\"time\":0.02,\"event\":\"Evicted\",\"workload\":\"team-e/w\",\"clusterQueue\":"
        "\"cq-e\",\"reason\":\"LocalQueueStopped\"}\n");
    free(out);
}
END_TEST

START_TEST(test_events_escape_strings)
{
    sink_t s;
    char *out;

    sink_open(&s);
    sim_events_finished(&s.ev, 1, "ns/\"q\\\n\t\x01\xc3\xa9", "cq");
    out = sink_close(&s);
    ck_assert_str_eq(out, "{\"time\":0.001,\"event\":\"Finished\",\"workload\":\"ns/\\\"q\\\\\\n\\t"
                          "\\u0001\xc3\xa9\",\"clusterQueue\":\"cq\"}\n");
    free(out);
}
END_TEST

START_TEST(test_events_admitted_without_assignments)
{
    sink_t s;
    char *out;

    sink_open(&s);
    sim_events_admitted(&s.ev, 2000, "a/b", "cq", NULL, false);
    out = sink_close(&s);
    ck_assert_str_eq(out,
                     "{\"time\":2,\"event\":\"Admitted\",\"workload\":\"a/b\",\"clusterQueue\":"
                     "\"cq\",\"flavors\":{},\"borrowing\":false}\n");
    free(out);
}
END_TEST

START_TEST(test_events_null_sink_counts_only)
{
    sim_events_t ev;
    err_msg_t msg;

    sim_events_init(&ev, NULL);
    sim_events_finished(&ev, 1, "a/b", "cq");
    sim_events_deleted(&ev, 1, "a/b", "cq");
    ck_assert_uint_eq(ev.count, 2);
    ck_assert_int_eq(sim_events_finish(&ev, &msg), ERR_OK);
}
END_TEST

START_TEST(test_events_write_failure_is_reported)
{
    sim_events_t ev;
    err_msg_t msg;
    FILE *f = fopen("/dev/full", "w");

    if (f == NULL)
        return; /* no /dev/full on this system: nothing to check */
    sim_events_init(&ev, f);
    for (int i = 0; i < 1000; i++)
        sim_events_finished(&ev, i, "some-namespace/some-workload-name", "cq");
    ck_assert_int_eq(sim_events_finish(&ev, &msg), ERR_IO);
    ck_assert_ptr_nonnull(strstr(msg.text, "writing events"));
    fclose(f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim_events");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_events_every_kind_in_contract_order);
    tcase_add_test(tc, test_events_escape_strings);
    tcase_add_test(tc, test_events_admitted_without_assignments);
    tcase_add_test(tc, test_events_null_sink_counts_only);
    tcase_add_test(tc, test_events_write_failure_is_reported);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
