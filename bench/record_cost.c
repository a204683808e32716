/* record_cost -- what the operator holds per Workload: its typed record (lib/ctrl/records.c) and
 * its informer cache entry (lib/kube/informer.c), measured by the heap's own count.
 *
 *   record_cost [N]
 *
 * Decodes N (default 20,000) Workloads of bench/scale.sh's shape -- as the API server sends them,
 * managedFields included -- pending, admitted and finished, each through an informer cache whose
 * codec is the operator's (decode, then ctrl_wl_strip() as the change handler does once the
 * engine is fed, and ctrl_wl_retire() of a finished one), and prints the heap bytes per object
 * (glibc mallinfo2(): the allocator's own chunk sizes, so malloc's overhead and rounding are
 * counted) and the share of the record and of the cache's entry, key and map. docs/performance.md
 * (stops 28 and 29). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/records.h"
#include "kube/informer_int.h"

#include <jansson.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t heap_used(void)
{
    struct mallinfo2 mi = mallinfo2();

    return mi.uordblks + mi.hblkhd;
}

/* The codec of the operator's Workload informer, stripped at once (the change handler strips
 * every record once it has fed the engine, and retires a finished one: ctrl_wl_retire()). */
static void *codec_decode(json_t *obj, void *data)
{
    ctrl_wl_t *w = ctrl_record_decode(data, obj);

    if (w != NULL) {
        ctrl_wl_strip(data, w);
        ctrl_wl_retire(data, w);
    }
    return w;
}

static void codec_free(void *value, void *data)
{
    ctrl_record_free(data, value);
}

typedef enum { ST_PENDING, ST_ADMITTED, ST_FINISHED } state_t;

/* Workload `i` of the shape in state `st`, as a LIST item or watch event carries it. */
static json_t *workload(size_t i, state_t st)
{
    char name[64], ns[32], uid[64], rv[24];
    const char *cls = i % 3 == 0 ? "small" : i % 3 == 1 ? "medium" : "large";
    json_t *o, *conds;

    snprintf(ns, sizeof(ns), "cq-%zu-%zu-cohort-%zu", i % 6, i % 100, i % 10);
    snprintf(name, sizeof(name), "%s-%zu-%zu-%zu", cls, i % 7, i % 13, i);
    snprintf(uid, sizeof(uid), "%08zx-1b2c-4d5e-8f90-%012zx", i, i * 7919);
    snprintf(rv, sizeof(rv), "%zu", 100000 + i * 3 + (size_t)st);
    o = json_pack("{s:{s:s,s:s,s:s,s:s,s:i,s:s,s:{s:s,s:s},s:[{s:s,s:s,s:s,s:s,s:s,s:{}}]},"
                  "s:{s:s,s:i,s:b,s:[{s:s,s:i,s:{s:{},s:{s:s,s:[{s:s,s:{s:{s:s}}}]}}}]}}",
                  "metadata", "name", name, "namespace", ns, "uid", uid, "resourceVersion", rv,
                  "generation", 1, "creationTimestamp", "2026-12-03T10:00:00Z", "labels",
                  "scale/runtime-ms", "200", "scale/class", cls, "managedFields", "manager",
                  "scale_runner", "operation", "Update", "apiVersion", "kueue.x-k8s.io/v1beta2",
                  "time", "2026-12-03T10:00:00Z", "fieldsType", "FieldsV1", "fieldsV1", "spec",
                  "queueName", ns, "priority", 100, "active", 1, "podSets", "name", "main", "count",
                  1, "template", "metadata", "spec", "restartPolicy", "Never", "containers", "name",
                  "c", "resources", "requests", "cpu", "1");
    if (o == NULL || st == ST_PENDING)
        return o;
    conds = json_pack("[{s:s,s:s,s:s,s:s,s:s,s:i},{s:s,s:s,s:s,s:s,s:s,s:i}]", "type",
                      "QuotaReserved", "status", "True", "reason", "QuotaReserved", "message",
                      "Quota reserved in ClusterQueue cq-0-3-cohort-1", "lastTransitionTime",
                      "2026-12-03T10:00:01Z", "observedGeneration", 1, "type", "Admitted", "status",
                      "True", "reason", "Admitted", "message", "The workload is admitted",
                      "lastTransitionTime", "2026-12-03T10:00:01Z", "observedGeneration", 1);
    if (st == ST_FINISHED)
        json_array_append_new(conds, json_pack("{s:s,s:s,s:s,s:s,s:s,s:i}", "type", "Finished",
                                               "status", "True", "reason", "ByTest", "message",
                                               "By test runner", "lastTransitionTime",
                                               "2026-12-03T10:00:02Z", "observedGeneration", 1));
    json_object_set_new(o, "status",
                        json_pack("{s:o,s:{s:s,s:[{s:s,s:{s:s},s:{s:s},s:i}]}}", "conditions",
                                  conds, "admission", "clusterQueue", ns, "podSetAssignments",
                                  "name", "main", "flavors", "cpu", "default-flavor",
                                  "resourceUsage", "cpu", "1", "count", 1));
    json_object_set_new(json_object_get(o, "metadata"), "finalizers",
                        json_pack("[s]", "kueue.x-k8s.io/resource-in-use"));
    return o;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
    static const char *names[] = {"pending", "admitted", "finished"};
    util_intern_t strings; /* as the operator's: its Workloads share their repeated strings */
    ctrl_record_kind_t wl_kind = {"kueue.x-k8s.io/v1beta2", "Workload", NULL, NULL, NULL, &strings};
    kube_codec_t codec = {codec_decode, codec_free, &wl_kind};

    if (n == 0) {
        fprintf(stderr, "usage: record_cost [N > 0]\n");
        return 2;
    }
    printf("sizeof ctrl_wl_t %zu, workload_t %zu, pod_set_t %zu, condition_t %zu, "
           "kube__entry_t %zu\n",
           sizeof(ctrl_wl_t), sizeof(workload_t), sizeof(pod_set_t), sizeof(condition_t),
           sizeof(kube__entry_t));
    printf("%-9s %10s %10s %10s\n", "state", "record", "cache", "total");
    for (int st = ST_PENDING; st <= ST_FINISHED; st++) {
        kube__cache_t cache;
        ctrl_wl_t **recs = calloc(n, sizeof(*recs));
        size_t before, mid, after;
        err_msg_t msg;

        if (recs == NULL)
            return 1;
        util_intern_init(&strings); /* each state from an empty table */
        /* The record alone. */
        before = heap_used();
        for (size_t i = 0; i < n; i++) {
            json_t *o = workload(i, (state_t)st);
            recs[i] = codec_decode(o, &wl_kind);
            json_decref(o);
            if (recs[i] == NULL)
                return 1;
        }
        mid = heap_used();
        for (size_t i = 0; i < n; i++)
            codec_free(recs[i], &wl_kind);
        free(recs);
        /* The record in the informer's cache: entry, key, map slots. */
        kube__cache_init(&cache, &codec, NULL, NULL, NULL);
        malloc_trim(0);
        size_t base = heap_used();
        for (size_t i = 0; i < n; i++) {
            json_t *o = workload(i, (state_t)st);
            if (kube__cache_apply(&cache, KUBE_EVENT_ADDED, o, &msg) != ERR_OK) {
                fprintf(stderr, "%s\n", msg.text);
                return 1;
            }
            json_decref(o);
        }
        after = heap_used();
        kube__cache_fini(&cache);
        util_intern_fini(&strings);
        double rec = (double)(mid - before) / (double)n;
        double tot = (double)(after - base) / (double)n;
        printf("%-9s %10.1f %10.1f %10.1f\n", names[st], rec, tot - rec, tot);
    }
    return 0;
}
