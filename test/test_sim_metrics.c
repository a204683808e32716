/* test_sim_metrics -- `sluice sim --metrics`: the shipped examples' runs in the operator's metric
 * names, checked against the run's own record (admissions, waits, GPU-seconds, preemptions,
 * attempts) and the Prometheus text rules the operator's exposition keeps; every family is the
 * operator's own declaration (lib/obs/families.h): name, type, help and labels. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/simmetrics.h"

#include "obs/families.h"
#include "sched/sched.h"
#include "sim/sim.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *text; /* the last exposition (owned) */

/* Run examples/<name>.yaml with the collector; the record is left in *rec. */
static void run(const char *name, sim_rec_t *rec)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char path[1024];
    sim_scenario_t sc;
    sim_options_t opts = {0};
    err_msg_t msg = {{0}};
    sim_metrics_t *m = sim_metrics_new();
    size_t len = 0;
    FILE *f, *out;

    snprintf(path, sizeof(path), "%s/examples/%s.yaml", src ? src : "..", name);
    f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s", path);
    ck_assert_ptr_nonnull(m);
    sim_scenario_init(&sc);
    ck_assert_msg(sim_scenario_load(f, &sc, &msg) == ERR_OK, "%s", msg.text);
    fclose(f);
    sim_rec_init(rec);
    opts.on_instant = sim_metrics_on_instant;
    opts.instant_ud = m;
    ck_assert_msg(sim_run(&sc, &opts, rec, &msg) == ERR_OK, "%s", msg.text);
    free(text);
    text = NULL;
    out = open_memstream(&text, &len);
    ck_assert_int_eq(sim_metrics_write(m, rec, out, &msg), ERR_OK);
    fclose(out);
    sim_metrics_free(m);
    sim_scenario_fini(&sc);
}

/* The value of the series written exactly as `series`, or -1. */
static double value(const char *series)
{
    size_t n = strlen(series);

    for (const char *p = text; p != NULL && *p != '\0';) {
        const char *eol = strchr(p, '\n');
        if (strncmp(p, series, n) == 0 && p[n] == ' ')
            return strtod(p + n + 1, NULL);
        p = eol ? eol + 1 : NULL;
    }
    return -1;
}

/* Sum of every sample of `name` (with any labels). */
static double total(const char *name)
{
    size_t n = strlen(name);
    double sum = 0;

    for (const char *p = text; p != NULL && *p != '\0';) {
        const char *eol = strchr(p, '\n');
        if (strncmp(p, name, n) == 0 && (p[n] == '{' || p[n] == ' ')) {
            const char *sp = eol ? eol : p + strlen(p);
            while (sp > p && sp[-1] != ' ')
                sp--;
            sum += strtod(sp, NULL);
        }
        p = eol ? eol + 1 : NULL;
    }
    return sum;
}

#define R ",replica_role=\"standalone\""

/* Example 2: a steady stream, no preemption: every admission once, the waits as recorded, the
 * GPU-seconds to the unit (32 jobs x 4 GPUs x 1 h in vision, x 2 in nlp). */
START_TEST(quota_change_example)
{
    sim_rec_t rec;
    double wait_vision = 0;
    size_t admitted = 0;

    run("02-quota-change", &rec);
    for (size_t i = 0; i < rec.nwls; i++) {
        const sim_wl_rec_t *w = &rec.wls[i];
        admitted += w->first_admit >= 0;
        if (w->first_admit >= 0 && strcmp(rec.holders[w->cq].name, "vision") == 0)
            wait_vision += (double)(w->first_admit - w->submit) / 1000.0;
    }
    ck_assert_double_eq(total("kueue_admitted_workloads_total"), (double)admitted);
    ck_assert_double_eq(total("kueue_quota_reserved_workloads_total"), (double)admitted);
    ck_assert_double_eq(
        value("kueue_admission_wait_time_seconds_sum{cluster_queue=\"vision\",priority_class="
              "\"training\"" R "}"),
        wait_vision);
    ck_assert_ptr_nonnull(strstr(text, "sluice_quota_reserved_resource_seconds_total{namespace="
                                       "\"team-vision\",local_queue=\"default\",cluster_queue="
                                       "\"vision\",flavor=\"a100\",resource=\"nvidia.com/gpu\"} "
                                       "460800\n"));
    ck_assert_double_eq(value("sluice_quota_reserved_resource_seconds_total{namespace=\"team-nlp\","
                              "local_queue=\"default\",cluster_queue=\"nlp\",flavor=\"a100\","
                              "resource=\"nvidia.com/gpu\"}"),
                        230400);
    ck_assert_double_eq(total("kueue_local_queue_admitted_workloads_total"), (double)admitted);
    ck_assert_double_eq(total("kueue_preempted_workloads_total"), 0);
    /* the end of the run: nothing pending or running, the quota back to nominal */
    ck_assert_double_eq(total("kueue_pending_workloads"), 0);
    ck_assert_double_eq(value("kueue_reserving_active_workloads{cluster_queue=\"vision\"" R "}"),
                        0);
    ck_assert_double_eq(value("kueue_cluster_queue_nominal_quota{cohort=\"\",cluster_queue="
                              "\"vision\",flavor=\"a100\",resource=\"nvidia.com/gpu\"" R "}"),
                        8);
    ck_assert_double_eq(value("kueue_cluster_queue_status{cluster_queue=\"vision\",status="
                              "\"active\"" R "}"),
                        1);
    ck_assert(value("kueue_admission_attempts_total{result=\"inadmissible\"" R "}") >= 1);
    ck_assert(value("kueue_admission_attempts_total{result=\"success\"" R "}") >= 1);
    /* Prometheus text: every family typed once, histograms end with +Inf, _sum, _count */
    ck_assert_ptr_nonnull(strstr(text, "# TYPE kueue_admission_wait_time_seconds histogram\n"));
    ck_assert_ptr_nonnull(strstr(text, "le=\"40960\"}"));
    sim_rec_fini(&rec);
}
END_TEST

/* Example 1: preemptions by reclamation: counted by reason and preempting ClusterQueue, their
 * evictions by the victim's; totals equal the record's. */
START_TEST(gpu_platform_example)
{
    sim_rec_t rec;

    run("01-gpu-platform", &rec);
    ck_assert_uint_gt(rec.npreemptions, 0);
    ck_assert_double_eq(total("kueue_preempted_workloads_total"), (double)rec.npreemptions);
    ck_assert_double_eq(total("kueue_evicted_workloads_total"), (double)rec.npreemptions);
    ck_assert_ptr_nonnull(strstr(text, "kueue_preempted_workloads_total{preempting_cluster_queue="
                                       "\"training\",reason=\"InCohortReclamation\"" R "}"));
    sim_rec_fini(&rec);
}
END_TEST

/* The HELP text of `d` as the exposition escapes it. */
static void escaped_help(const families_def_t *d, char *buf, size_t n)
{
    size_t o = 0;

    for (const char *p = d->help; *p != '\0' && o + 3 < n; p++) {
        if (*p == '\n' || *p == '\\') {
            buf[o++] = '\\';
            buf[o++] = *p == '\n' ? 'n' : '\\';
        } else {
            buf[o++] = *p;
        }
    }
    buf[o] = '\0';
}

/* The sample after its name `rest` ("{a="x",b="y"} 1" or "_bucket{...}" or " 1") carries the
 * labels `d` declares, in order (a histogram's series add "le"). */
static void sample_labels(const families_def_t *d, const char *rest)
{
    size_t k = 0;

    if (d->type == METRICS_HISTOGRAM) {
        if (strncmp(rest, "_bucket", 7) == 0)
            rest += 7;
        else if (strncmp(rest, "_sum", 4) == 0)
            rest += 4;
        else if (strncmp(rest, "_count", 6) == 0)
            rest += 6;
    }
    if (*rest != '{') {
        ck_assert_msg(*rest != ' ' || d->labels == NULL || d->labels[0] == NULL,
                      "%s: a sample without labels", d->name);
        return;
    }
    rest++;
    while (*rest != '}' && *rest != '\0') {
        size_t n = strcspn(rest, "=");
        if (!(d->type == METRICS_HISTOGRAM && n == 2 && strncmp(rest, "le", 2) == 0)) {
            ck_assert_msg(d->labels != NULL && d->labels[k] != NULL && strlen(d->labels[k]) == n &&
                              strncmp(rest, d->labels[k], n) == 0,
                          "%s: label %.*s is not the operator's label %zu", d->name, (int)n, rest,
                          k);
            k++;
        }
        rest += n + 2; /* =" */
        while (*rest != '"' && *rest != '\0')
            rest += *rest == '\\' && rest[1] != '\0' ? 2 : 1;
        rest += *rest == '"';
        rest += *rest == ',';
    }
    ck_assert_msg(d->labels == NULL || d->labels[k] == NULL, "%s: label %s missing", d->name,
                  d->labels[k]);
}

/* Every family the simulator writes is one the operator declares, with the same type, help and
 * label names: one table (lib/obs/families.h) for both, so a name cannot drift. (Before, the
 * simulator declared its own: 9 HELP texts differed from the operator's.) */
START_TEST(families_are_the_operators)
{
    static const char *const types[] = {"counter", "gauge", "histogram"};
    sim_rec_t rec;
    size_t families = 0;
    char help[4096], line[4200];

    run("01-gpu-platform", &rec);
    for (const char *p = text; p != NULL && *p != '\0';) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (strncmp(p, "# TYPE ", 7) == 0) {
            const families_def_t *d = NULL;
            size_t nlen = strcspn(p + 7, " ");
            for (int id = 0; id < FAM__COUNT; id++) {
                const families_def_t *e = families_def((families_id_t)id);
                if (strlen(e->name) == nlen && strncmp(e->name, p + 7, nlen) == 0)
                    d = e;
            }
            ck_assert_msg(d != NULL, "%.*s: not an operator family", (int)len, p);
            families++;
            /* TYPE matches; HELP (the line before) is the operator's text. */
            ck_assert_msg(strncmp(p + 7 + nlen + 1, types[d->type], strlen(types[d->type])) == 0,
                          "%.*s", (int)len, p);
            escaped_help(d, help, sizeof(help));
            snprintf(line, sizeof(line), "# HELP %s %s\n# TYPE %s", d->name, help, d->name);
            ck_assert_msg(strstr(text, line) != NULL, "%s: HELP differs from the operator's",
                          d->name);
            /* Each sample of the family names exactly the declared labels, in order. */
            for (const char *q = strstr(text, d->name); q != NULL; q = strstr(q + 1, d->name))
                if (q[-1] == '\n')
                    sample_labels(d, q + strlen(d->name));
        }
        p = eol ? eol + 1 : NULL;
    }
    ck_assert_uint_eq(families, 19);
    sim_rec_fini(&rec);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sim_metrics");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, quota_change_example);
    tcase_add_test(tc, gpu_platform_example);
    tcase_add_test(tc, families_are_the_operators);
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
    free(text);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
