/* test_job_workload -- Job -> Workload construction, naming and priority resolution. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/job_workload.h"
#include "model/object.h"
#include "squote.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Decode a Job (must be valid) into obj. */
static const job_t *job_from(const char *text, object_t *obj)
{
    json_t *j = squote_json(text);
    diags_t d;

    diags_init(&d);
    if (object_decode(j, obj, &d) != ERR_OK) {
        for (size_t i = 0; i < d.len; i++)
            fprintf(stderr, "%s: %s\n", d.items[i].path, d.items[i].message);
        ck_abort_msg("job did not decode");
    }
    ck_assert_int_eq(obj->kind, KIND_JOB);
    diags_fini(&d);
    json_decref(j);
    return &obj->u.job;
}

START_TEST(name_hash)
{
    char buf[JOB_WORKLOAD_NAME_MAX + 1];
    char big[301], expect[320];

    /* printf 'Job\nbatch\nmyjob\nuid1' | sha1sum -> af4e6078... */
    ck_assert_int_eq(
        job_workload_name("myjob", "uid1", JOB_WORKLOAD_NAME_MAX, buf, sizeof(buf), NULL), ERR_OK);
    ck_assert_str_eq(buf, "job-myjob-af4e6");
    /* No uid hashes an empty one: printf 'Job\nbatch\ntrain\n' | sha1sum -> e5b0e... */
    ck_assert_int_eq(
        job_workload_name("train", NULL, JOB_WORKLOAD_NAME_MAX, buf, sizeof(buf), NULL), ERR_OK);
    ck_assert_str_eq(buf, "job-train-e5b0e");

    /* A 300-byte name: prefix cut to 247 bytes, total 253; hash over the full name. */
    memset(big, 'a', 300);
    big[300] = '\0';
    ck_assert_int_eq(job_workload_name(big, "u", JOB_WORKLOAD_NAME_MAX, buf, sizeof(buf), NULL),
                     ERR_OK);
    ck_assert_uint_eq(strlen(buf), 253);
    snprintf(expect, sizeof(expect), "job-%.243s-fd46f", big);
    ck_assert_str_eq(buf, expect);

    /* Exactly at the limit: "job-" + 243 = 247, not cut. */
    memset(big, 'x', 243);
    big[243] = '\0';
    ck_assert_int_eq(job_workload_name(big, "u", JOB_WORKLOAD_NAME_MAX, buf, sizeof(buf), NULL),
                     ERR_OK);
    snprintf(expect, sizeof(expect), "job-%s-7c3ff", big);
    ck_assert_str_eq(buf, expect);

    /* Short names (63): prefix 57 bytes. */
    memset(big, 'a', 300);
    ck_assert_int_eq(
        job_workload_name(big, "u", JOB_WORKLOAD_NAME_MAX_SHORT, buf, sizeof(buf), NULL), ERR_OK);
    ck_assert_uint_eq(strlen(buf), 63);
    ck_assert_str_eq(buf + 57, "-fd46f");

    ck_assert_int_eq(job_workload_name("x", "u", 253, buf, 100, NULL), ERR_INVALID);
}
END_TEST

#define JOB_TRAIN                                                                               \
    "{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'train','namespace':'ns1',"       \
    "'uid':'U','labels':{'kueue.x-k8s.io/queue-name':'lq-a','kueue.x-k8s.io/priority-class':"   \
    "'high','kueue.x-k8s.io/max-exec-time-seconds':'600'},'annotations':{"                      \
    "'kueue.x-k8s.io/job-min-parallelism':'2','provreq.kueue.x-k8s.io/x':'y','other':'z'}},"    \
    "'spec':{'parallelism':4,'completions':8,'suspend':true,'template':{'metadata':{'labels':{" \
    "'job-name':'train','controller-uid':'U','batch.kubernetes.io/controller-uid':'U',"         \
    "'batch.kubernetes.io/job-name':'train','app':'t'}},'spec':{'containers':[{'name':'c',"     \
    "'image':'busybox','resources':{'requests':{'cpu':'1'},'limits':{'memory':'2Gi'}}}],"       \
    "'restartPolicy':'Never','priorityClassName':'pc-high'}}}}"

START_TEST(build_worked_example)
{
    object_t obj;
    const job_t *job = job_from(JOB_TRAIN, &obj);
    workload_t wl;
    char buf[QUANTITY_STR_MAX], name[JOB_WORKLOAD_NAME_MAX + 1];
    const pod_set_t *ps;

    ck_assert_int_eq(job_workload_build(job, &wl, NULL), ERR_OK);
    ck_assert_int_eq(
        job_workload_name("train", "U", JOB_WORKLOAD_NAME_MAX, name, sizeof(name), NULL), ERR_OK);
    ck_assert_str_eq(wl.meta.name, name);
    ck_assert_str_eq(wl.meta.namespace, "ns1");
    ck_assert_uint_eq(wl.meta.nfinalizers, 1);
    ck_assert_str_eq(wl.meta.finalizers[0], "kueue.x-k8s.io/resource-in-use");
    ck_assert_str_eq(kv_list_get(&wl.meta.labels, "kueue.x-k8s.io/job-uid"), "U");
    ck_assert_str_eq(kv_list_get(&wl.meta.annotations, "provreq.kueue.x-k8s.io/x"), "y");
    ck_assert_ptr_null(kv_list_get(&wl.meta.annotations, "other"));
    ck_assert_str_eq(wl.queue_name, "lq-a");
    ck_assert(wl.active);
    ck_assert(wl.has_max_exec_seconds);
    ck_assert_int_eq(wl.max_exec_seconds, 600);
    ck_assert_str_eq(wl.priority_class, "high");
    ck_assert_int_eq(wl.priority_source, PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS);
    ck_assert(!wl.has_priority);
    ck_assert_uint_eq(wl.npod_sets, 1);
    ps = &wl.pod_sets[0];
    ck_assert_str_eq(ps->name, "main");
    ck_assert_int_eq(ps->count, 4);
    ck_assert(ps->has_min_count);
    ck_assert_int_eq(ps->min_count, 2);
    ck_assert_uint_eq(ps->template_labels.len, 2);
    ck_assert_str_eq(kv_list_get(&ps->template_labels, "batch.kubernetes.io/job-name"), "train");
    ck_assert_str_eq(kv_list_get(&ps->template_labels, "app"), "t");
    ck_assert_uint_eq(ps->spec.ncontainers, 1);
    ck_assert_str_eq(ps->spec.priority_class_name, "pc-high");
    /* Per-pod requests: cpu 1, memory defaulted from its limit. */
    ck_assert_uint_eq(ps->pod_requests.len, 2);
    ck_assert_str_eq(quantity_format(*resource_list_get(&ps->pod_requests, "cpu"), buf), "1");
    ck_assert_str_eq(quantity_format(*resource_list_get(&ps->pod_requests, "memory"), buf), "2Gi");
    workload_fini(&wl);
    object_fini(&obj);
}
END_TEST

START_TEST(build_defaults_and_bad_labels)
{
    object_t obj;
    const job_t *job;
    workload_t wl;

    /* No labels; parallelism 3, no completions: count 3. Bad max-exec and min-parallelism are
     * ignored, as Kueue ignores unparsable values. */
    job = job_from("{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j','namespace':'n',"
                   "'labels':{'kueue.x-k8s.io/max-exec-time-seconds':'-5'},'annotations':{"
                   "'kueue.x-k8s.io/job-min-parallelism':'two'}},'spec':{'parallelism':3,"
                   "'template':{'spec':{'containers':[{'name':'c'}]}}}}",
                   &obj);
    ck_assert_int_eq(job_workload_build(job, &wl, NULL), ERR_OK);
    ck_assert_ptr_null(wl.queue_name);
    ck_assert_ptr_null(wl.priority_class);
    ck_assert(!wl.has_max_exec_seconds);
    ck_assert_int_eq(wl.pod_sets[0].count, 3);
    ck_assert(!wl.pod_sets[0].has_min_count);
    ck_assert_uint_eq(wl.meta.labels.len, 0); /* no uid -> no job-uid label */
    ck_assert_uint_eq(wl.pod_sets[0].pod_requests.len, 0);
    workload_fini(&wl);
    object_fini(&obj);

    /* completions smaller than parallelism. */
    job = job_from("{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j'},'spec':{"
                   "'parallelism':5,'completions':2,'template':{'spec':{'containers':[{'name':"
                   "'c'}]}}}}",
                   &obj);
    ck_assert_int_eq(job_workload_build(job, &wl, NULL), ERR_OK);
    ck_assert_int_eq(wl.pod_sets[0].count, 2);
    ck_assert_ptr_null(wl.meta.namespace);
    workload_fini(&wl);
    object_fini(&obj);
}
END_TEST

/* ---- priority lookups over small arrays ---- */

typedef struct env_s {
    workload_priority_class_t *wpcs;
    size_t nwpcs;
    priority_class_t *pcs;
    size_t npcs;
} env_t;

static const workload_priority_class_t *find_wpc(void *ctx, const char *name)
{
    env_t *e = ctx;
    for (size_t i = 0; i < e->nwpcs; i++)
        if (strcmp(e->wpcs[i].meta.name, name) == 0)
            return &e->wpcs[i];
    return NULL;
}

static const priority_class_t *find_pc(void *ctx, const char *name)
{
    env_t *e = ctx;
    for (size_t i = 0; i < e->npcs; i++)
        if (strcmp(e->pcs[i].meta.name, name) == 0)
            return &e->pcs[i];
    return NULL;
}

static const priority_class_t *pc_at(void *ctx, size_t i)
{
    env_t *e = ctx;
    return i < e->npcs ? &e->pcs[i] : NULL;
}

START_TEST(priority_order)
{
    char high[] = "high", pc_high[] = "pc-high", def_a[] = "default-a", def_b[] = "default-b",
         other[] = "other";
    workload_priority_class_t wpcs[1] = {{.meta = {.name = high}, .value = 1000}};
    priority_class_t pcs[3] = {
        {.meta = {.name = pc_high}, .value = 500},
        {.meta = {.name = def_a}, .value = 50, .global_default = true},
        {.meta = {.name = def_b}, .value = 10, .global_default = true},
    };
    env_t env = {wpcs, 1, pcs, 3};
    job_priority_lookup_t lk = {&env, find_wpc, find_pc, pc_at};
    object_t obj;
    const job_t *job = job_from(JOB_TRAIN, &obj);
    workload_t wl;
    err_msg_t msg;

    /* (1) the WPC label wins over the template's priorityClassName. */
    ck_assert_int_eq(job_workload_build(job, &wl, NULL), ERR_OK);
    ck_assert_int_eq(job_workload_priority(job, &lk, &wl, NULL), ERR_OK);
    ck_assert_int_eq(wl.priority_source, PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS);
    ck_assert_str_eq(wl.priority_class, "high");
    ck_assert(wl.has_priority);
    ck_assert_int_eq(wl.priority, 1000);

    /* A missing WPC is an error and leaves the workload untouched. */
    env.nwpcs = 0;
    wl.has_priority = false;
    ck_assert_int_eq(job_workload_priority(job, &lk, &wl, &msg), ERR_NOT_FOUND);
    ck_assert_str_eq(msg.text, "WorkloadPriorityClass.kueue.x-k8s.io \"high\" not found");
    ck_assert(!wl.has_priority);
    workload_fini(&wl);
    object_fini(&obj);

    /* (2) no label: the template's PriorityClass. */
    job = job_from("{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j'},'spec':{"
                   "'template':{'spec':{'priorityClassName':'pc-high','containers':[{'name':"
                   "'c'}]}}}}",
                   &obj);
    ck_assert_int_eq(job_workload_build(job, &wl, NULL), ERR_OK);
    ck_assert_int_eq(job_workload_priority(job, &lk, &wl, NULL), ERR_OK);
    ck_assert_int_eq(wl.priority_source, PRIORITY_SOURCE_PRIORITY_CLASS);
    ck_assert_str_eq(wl.priority_class, "pc-high");
    ck_assert_int_eq(wl.priority, 500);
    env.npcs = 2; /* pc "default-b" gone; "pc-high" still there */
    pcs[0].meta.name = other;
    ck_assert_int_eq(job_workload_priority(job, &lk, &wl, &msg), ERR_NOT_FOUND);
    ck_assert_str_eq(msg.text, "priorityclasses.scheduling.k8s.io \"pc-high\" not found");
    pcs[0].meta.name = pc_high;
    env.npcs = 3;
    workload_fini(&wl);
    object_fini(&obj);

    /* (3) nothing named: the lowest-valued globalDefault PriorityClass. */
    job = job_from("{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j'},'spec':{"
                   "'template':{'spec':{'containers':[{'name':'c'}]}}}}",
                   &obj);
    ck_assert_int_eq(job_workload_build(job, &wl, NULL), ERR_OK);
    ck_assert_int_eq(job_workload_priority(job, &lk, &wl, NULL), ERR_OK);
    ck_assert_int_eq(wl.priority_source, PRIORITY_SOURCE_PRIORITY_CLASS);
    ck_assert_str_eq(wl.priority_class, "default-b");
    ck_assert_int_eq(wl.priority, 10);

    /* (4) no global default: no class, priority 0. */
    pcs[1].global_default = pcs[2].global_default = false;
    ck_assert_int_eq(job_workload_priority(job, &lk, &wl, NULL), ERR_OK);
    ck_assert_int_eq(wl.priority_source, PRIORITY_SOURCE_NONE);
    ck_assert_ptr_null(wl.priority_class);
    ck_assert(wl.has_priority);
    ck_assert_int_eq(wl.priority, 0);
    /* No lookups at all behaves the same. */
    ck_assert_int_eq(job_workload_priority(job, NULL, &wl, NULL), ERR_OK);
    ck_assert_int_eq(wl.priority, 0);
    workload_fini(&wl);
    object_fini(&obj);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("job_workload");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, name_hash);
    tcase_add_test(tc, build_worked_example);
    tcase_add_test(tc, build_defaults_and_bad_labels);
    tcase_add_test(tc, priority_order);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
