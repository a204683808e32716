/* test_requests -- per-pod requests (limits default, init containers, sidecars, overhead,
 * pod-level resources), totals, overflow. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/object.h"
#include "model/requests.h"
#include "squote.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A Job whose spec.template.spec is `podspec` (single quotes for double), decoded. */
static void job_with(const char *podspec, const char *extra, object_t *obj)
{
    char text[4096];
    json_t *j;
    diags_t d;

    snprintf(text, sizeof(text),
             "{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j'},'spec':{%s"
             "'template':{'spec':%s}}}",
             extra ? extra : "", podspec);
    j = squote_json(text);
    diags_init(&d);
    if (object_decode(j, obj, &d) != ERR_OK) {
        for (size_t i = 0; i < d.len; i++)
            fprintf(stderr, "%s: %s\n", d.items[i].path, d.items[i].message);
        ck_abort_msg("job did not decode");
    }
    diags_fini(&d);
    json_decref(j);
}

/* "cpu=1500m memory=3Gi" rendering of a list, for compact assertions. */
static const char *render(const resource_list_t *l, char *buf, size_t size)
{
    size_t n = 0;
    char q[QUANTITY_STR_MAX];

    buf[0] = '\0';
    for (size_t i = 0; i < l->len; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s=%s", i ? " " : "", l->items[i].name,
                              quantity_format(l->items[i].value, q));
    return buf;
}

static void expect_pod(const char *podspec, const char *want)
{
    object_t obj;
    resource_list_t out = {0};
    char buf[512];

    job_with(podspec, NULL, &obj);
    ck_assert_int_eq(requests_pod(&obj.u.job.spec, &out, NULL), ERR_OK);
    ck_assert_str_eq(render(&out, buf, sizeof(buf)), want);
    resource_list_fini(&out);
    object_fini(&obj);
}

/* GPU-hours count devices: GPU resources by name, not the bytes of a GPU-memory resource. */
START_TEST(gpu_resources)
{
    ck_assert(requests_resource_is_gpu("nvidia.com/gpu"));
    ck_assert(requests_resource_is_gpu("amd.com/GPU"));
    ck_assert(requests_resource_is_gpu("gpu.intel.com/i915"));
    ck_assert(requests_resource_is_gpu("nvidia.com/gpu.shared"));
    ck_assert(!requests_resource_is_gpu("example.com/gpu-memory"));
    ck_assert(!requests_resource_is_gpu("example.com/memory-gpu"));
    ck_assert(!requests_resource_is_gpu("cpu"));
    ck_assert(!requests_resource_is_gpu("gp"));
    ck_assert(!requests_resource_is_gpu(""));
}
END_TEST

START_TEST(containers_and_limits)
{
    /* A missing request defaults to the limit; an explicit request wins over the limit. */
    expect_pod("{'containers':[{'name':'a','resources':{'requests':{'cpu':'1'},'limits':{"
               "'cpu':'2','memory':'2Gi'}}},{'name':'b','resources':{'requests':{'cpu':'500m',"
               "'memory':'1Gi'}}}]}",
               "cpu=1500m memory=3Gi");
    expect_pod("{'containers':[{'name':'a'}]}", "");
    expect_pod("{'containers':[{'name':'a','resources':{'limits':{'nvidia.com/gpu':8}}}]}",
               "nvidia.com/gpu=8");
}
END_TEST

START_TEST(init_containers)
{
    /* Init containers run one at a time: max(sum of containers, largest init). */
    expect_pod("{'initContainers':[{'name':'i1','resources':{'requests':{'cpu':'4'}}},"
               "{'name':'i2','resources':{'requests':{'cpu':'2','memory':'8Gi'}}}],"
               "'containers':[{'name':'a','resources':{'requests':{'cpu':'1','memory':'1Gi'}}},"
               "{'name':'b','resources':{'requests':{'cpu':'1','memory':'1Gi'}}}]}",
               "cpu=4 memory=8Gi");
}
END_TEST

START_TEST(sidecars)
{
    /* s1 (sidecar), i1 (runs with s1), s2 (sidecar declared after i1), containers c.
     *   containers + sidecars = 1 + 1 + 1 = 3
     *   init phase: s1 alone 1; i1 + s1 = 3 + 1 = 4; s1 + s2 = 2  -> max 4
     *   pod = max(3, 4) = 4 */
    expect_pod("{'initContainers':[{'name':'s1','restartPolicy':'Always','resources':{"
               "'requests':{'cpu':'1'}}},{'name':'i1','resources':{'requests':{'cpu':'3'}}},"
               "{'name':'s2','restartPolicy':'Always','resources':{'requests':{'cpu':'1'}}}],"
               "'containers':[{'name':'c','resources':{'requests':{'cpu':'1'}}}]}",
               "cpu=4");
    /* Sidecars make the steady state the larger phase. */
    expect_pod("{'initContainers':[{'name':'s1','restartPolicy':'Always','resources':{"
               "'limits':{'memory':'1Gi'}}},{'name':'i1','resources':{'requests':{"
               "'memory':'1Gi'}}}],'containers':[{'name':'c','resources':{'requests':{"
               "'memory':'4Gi'}}}]}",
               "memory=5Gi");
    /* restartPolicy on a regular container does not make it a sidecar. */
    expect_pod("{'containers':[{'name':'c','restartPolicy':'Always','resources':{'requests':{"
               "'cpu':'1'}}}]}",
               "cpu=1");
}
END_TEST

START_TEST(overhead_and_pod_level)
{
    expect_pod("{'overhead':{'cpu':'250m','memory':'64Mi'},'containers':[{'name':'c',"
               "'resources':{'requests':{'cpu':'1'}}}]}",
               "cpu=1250m memory=64Mi");
    /* Pod-level resources replace cpu/memory (limits default requests), not other resources;
     * overhead still adds on top. */
    expect_pod("{'resources':{'requests':{'cpu':'8'},'limits':{'memory':'16Gi',"
               "'nvidia.com/gpu':'4'}},'overhead':{'cpu':'1'},'containers':[{'name':'c',"
               "'resources':{'requests':{'cpu':'1','memory':'1Gi','nvidia.com/gpu':'2'}}}]}",
               "cpu=9 memory=16Gi nvidia.com/gpu=2");
}
END_TEST

START_TEST(job_totals)
{
    object_t obj;
    resource_list_t per = {0}, total = {0};
    char buf[256];

    /* reference §3.9: parallelism 4, completions 8, cpu 1 + memory limit 2Gi. */
    job_with("{'containers':[{'name':'c','resources':{'requests':{'cpu':'1'},'limits':{"
             "'memory':'2Gi'}}}]}",
             "'parallelism':4,'completions':8,", &obj);
    ck_assert_int_eq(requests_job_count(&obj.u.job), 4);
    ck_assert_int_eq(requests_job(&obj.u.job, &per, &total, NULL), ERR_OK);
    ck_assert_str_eq(render(&per, buf, sizeof(buf)), "cpu=1 memory=2Gi");
    ck_assert_str_eq(render(&total, buf, sizeof(buf)), "cpu=4 memory=8Gi");
    resource_list_fini(&per);
    resource_list_fini(&total);
    object_fini(&obj);

    job_with("{'containers':[{'name':'c','resources':{'requests':{'cpu':'1'}}}]}",
             "'parallelism':10,'completions':3,", &obj);
    ck_assert_int_eq(requests_job_count(&obj.u.job), 3);
    ck_assert_int_eq(requests_job(&obj.u.job, NULL, &total, NULL), ERR_OK);
    ck_assert_str_eq(render(&total, buf, sizeof(buf)), "cpu=3");
    resource_list_fini(&total);
    object_fini(&obj);

    /* Defaults: no parallelism/completions -> 1 pod. */
    job_with("{'containers':[{'name':'c','resources':{'requests':{'cpu':'1'}}}]}", NULL, &obj);
    ck_assert_int_eq(obj.u.job.parallelism, 1);
    ck_assert(obj.u.job.has_completions);
    ck_assert_int_eq(obj.u.job.completions, 1);
    ck_assert_int_eq(requests_job_count(&obj.u.job), 1);
    object_fini(&obj);
    /* parallelism set, completions unset: completions stays unset (work queue). */
    job_with("{'containers':[{'name':'c'}]}", "'parallelism':6,", &obj);
    ck_assert(!obj.u.job.has_completions);
    ck_assert_int_eq(requests_job_count(&obj.u.job), 6);
    object_fini(&obj);
    /* parallelism 0 (a paused job) -> 0 pods, zero totals. */
    job_with("{'containers':[{'name':'c','resources':{'requests':{'cpu':'1'}}}]}",
             "'parallelism':0,", &obj);
    ck_assert_int_eq(requests_job_count(&obj.u.job), 0);
    ck_assert_int_eq(requests_job(&obj.u.job, NULL, &total, NULL), ERR_OK);
    ck_assert_str_eq(render(&total, buf, sizeof(buf)), "cpu=0");
    resource_list_fini(&total);
    object_fini(&obj);
}
END_TEST

START_TEST(overflow)
{
    object_t obj;
    resource_list_t out = {0}, total = {0};
    err_msg_t msg;

    job_with("{'containers':[{'name':'a','resources':{'requests':{'cpu':'5e26'}}},{'name':'b',"
             "'resources':{'requests':{'cpu':'6e26'}}}]}",
             NULL, &obj);
    ck_assert_int_eq(requests_pod(&obj.u.job.spec, &out, &msg), ERR_OVERFLOW);
    ck_assert_str_eq(msg.text, "resource cpu: requests overflow");
    ck_assert_uint_eq(out.len, 0); /* untouched */
    object_fini(&obj);

    job_with("{'containers':[{'name':'a','resources':{'requests':{'memory':'1E'}}}]}", NULL, &obj);
    ck_assert_int_eq(requests_pod(&obj.u.job.spec, &out, NULL), ERR_OK);
    ck_assert_int_eq(requests_total(&out, 2000000000, &total, &msg), ERR_OVERFLOW);
    ck_assert_str_eq(msg.text, "resource memory: requests overflow for 2000000000 pods");
    ck_assert_int_eq(requests_total(&out, -1, &total, NULL), ERR_INVALID);
    ck_assert_int_eq(requests_total(&out, 1000, &total, NULL), ERR_OK);
    resource_list_fini(&total);
    resource_list_fini(&out);
    object_fini(&obj);
}
END_TEST

START_TEST(list_ops)
{
    resource_list_t a = {0}, b = {0};
    char buf[256];

    resource_list_t one = {0};
    resource_t items[2];
    char cpu[] = "cpu", gpu[] = "gpu";

    items[0].name = cpu;
    items[0].value = quantity_from_milli(500);
    items[1].name = gpu;
    items[1].value = quantity_from_int(2, QUANTITY_DECIMAL_SI);
    one.items = items;
    one.len = 2;
    ck_assert_int_eq(requests_add(&a, &one, NULL), ERR_OK);
    ck_assert_int_eq(requests_add(&a, &one, NULL), ERR_OK);
    ck_assert_str_eq(render(&a, buf, sizeof(buf)), "cpu=1 gpu=4");
    items[1].value = quantity_from_int(7, QUANTITY_DECIMAL_SI);
    ck_assert_int_eq(requests_max(&a, &one, NULL), ERR_OK);
    ck_assert_str_eq(render(&a, buf, sizeof(buf)), "cpu=1 gpu=7");
    ck_assert_int_eq(resource_list_copy(&b, &a), ERR_OK);
    ck_assert_str_eq(render(&b, buf, sizeof(buf)), "cpu=1 gpu=7");
    ck_assert_ptr_null(resource_list_get(&b, "memory"));
    resource_list_fini(&a);
    resource_list_fini(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("requests");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, gpu_resources);
    tcase_add_test(tc, containers_and_limits);
    tcase_add_test(tc, init_containers);
    tcase_add_test(tc, sidecars);
    tcase_add_test(tc, overhead_and_pod_level);
    tcase_add_test(tc, job_totals);
    tcase_add_test(tc, overflow);
    tcase_add_test(tc, list_ops);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
