/* test_ctrl_records -- the typed records the operator's cache keeps: what is decoded, what is
 * dropped (stripped once fed; a finished one retired), the JSON view the status writers read,
 * template digests. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/records.h"

#include "ctrl/podset.h"
#include "ctrl/wlstatus.h"
#include "util/intern.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static const ctrl_record_kind_t wl_kind = {.api_version = "kueue.x-k8s.io/v1beta2",
                                           .kind = "Workload"};
static const ctrl_record_kind_t cq_kind = {.api_version = "kueue.x-k8s.io/v1beta2",
                                           .kind = "ClusterQueue"};
static const ctrl_record_kind_t rf_kind = {.api_version = "kueue.x-k8s.io/v1beta2",
                                           .kind = "ResourceFlavor"};
static const ctrl_record_kind_t ns_kind = {.api_version = "v1", .kind = "Namespace"};
static const ctrl_record_kind_t topo_kind = {.api_version = "kueue.x-k8s.io/v1beta2",
                                             .kind = "Topology"};

/* A Workload as a LIST item sends it (no apiVersion or kind), admitted, with managedFields. */
static const char wl_json[] =
    "{\"metadata\":{\"name\":\"job-train-1a2b3\",\"namespace\":\"team-a\",\"uid\":\"u-1\","
    "\"resourceVersion\":\"42\",\"generation\":2,\"creationTimestamp\":\"2026-01-01T00:00:00Z\","
    "\"labels\":{\"kueue.x-k8s.io/job-uid\":\"j-1\"},\"annotations\":{\"a\":\"b\"},"
    "\"finalizers\":[\"kueue.x-k8s.io/resource-in-use\"],"
    "\"managedFields\":[{\"manager\":\"x\",\"operation\":\"Update\"}],"
    "\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"train\","
    "\"uid\":\"j-1\",\"controller\":true}]},"
    "\"spec\":{\"queueName\":\"lq\",\"podSets\":[{\"name\":\"main\",\"count\":2,\"template\":{"
    "\"metadata\":{\"labels\":{\"app\":\"x\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
    "\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}]},"
    "\"status\":{\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\",\"reason\":"
    "\"QuotaReserved\",\"message\":\"Quota reserved in ClusterQueue cq\","
    "\"lastTransitionTime\":\"2026-01-01T00:01:00Z\",\"observedGeneration\":2},"
    "{\"type\":\"Admitted\",\"status\":\"True\",\"reason\":\"Admitted\",\"message\":\"ok\","
    "\"lastTransitionTime\":\"2026-01-01T00:01:00Z\"}],"
    "\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{\"name\":\"main\","
    "\"flavors\":{\"cpu\":\"default\"},\"resourceUsage\":{\"cpu\":\"2\"},\"count\":2}]},"
    "\"requeueState\":{\"count\":3,\"requeueAt\":\"2026-01-01T00:05:00Z\"},"
    "\"unhealthyNodes\":[{\"name\":\"n1\"}]}}";

START_TEST(workload_decoded_then_stripped)
{
    json_t *obj = json_loads(wl_json, 0, NULL);
    ctrl_wl_t *w = ctrl_record_decode(&wl_kind, obj);
    json_t *view;

    ck_assert_ptr_nonnull(w);
    ck_assert(w->valid);
    ck_assert_ptr_null(w->invalid);
    ck_assert_str_eq(w->wl.meta.name, "job-train-1a2b3");
    ck_assert_str_eq(w->wl.meta.resource_version, "42");
    ck_assert_uint_eq(ctrl_rv_num(w->wl.meta.resource_version), 42);
    ck_assert(w->finalizer);
    ck_assert_str_eq(w->owner.kind, "Job");
    ck_assert_str_eq(w->owner.name, "train");
    ck_assert_str_eq(w->owner.uid, "j-1");
    ck_assert(w->has_requeue);
    ck_assert_int_eq(w->requeue_count, 3);
    ck_assert_int_eq(w->requeue_at, 1767225900);
    ck_assert(ctrl_wl_reserved(w));
    ck_assert(ctrl_wl_is(w, "Admitted"));
    ck_assert(!ctrl_wl_is(w, "Finished"));
    ck_assert_str_eq(ctrl_wl_cond(w, "QuotaReserved")->message,
                     "Quota reserved in ClusterQueue cq");
    /* Complete until stripped: the engine needs the pod sets' requests. */
    ck_assert_uint_eq(w->wl.npod_sets, 1);
    ck_assert_uint_eq(w->wl.pod_sets[0].spec.ncontainers, 1);
    ck_assert_uint_eq(w->npodsets, 1); /* the reconcilers' copy: name and counts */
    ck_assert_str_eq(w->podsets[0].name, "main");
    ctrl_wl_strip(&wl_kind, w);
    ctrl_wl_strip(&wl_kind, w); /* idempotent */
    ck_assert(w->stripped);
    ck_assert_uint_eq(w->wl.npod_sets, 0); /* lib/model's pod sets: the engine has them */
    ck_assert_ptr_null(w->wl.pod_sets);
    ck_assert_uint_eq(w->wl.meta.labels.len, 0);
    ck_assert_uint_eq(w->wl.meta.annotations.len, 0);
    ck_assert_uint_eq(w->npodsets, 1);
    ck_assert_int_eq(w->podsets[0].count, 2);
    ck_assert(!w->podsets[0].has_min_count);
    ck_assert_str_eq(w->podsets[0].name, "main");
    /* The JSON view carries what the status writers read, and reads back the same. */
    view = ctrl_wl_json(w);
    ck_assert_ptr_nonnull(view);
    ck_assert(wlstatus_reserved(view));
    ck_assert(wlstatus_cond(view, "Admitted"));
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(view, "metadata"), "resourceVersion")),
        "42");
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(view, "metadata"), "generation")), 2);
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(json_object_get(view, "status"), "admission"), "clusterQueue")),
        "cq");
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(json_object_get(view, "status"), "requeueState"), "requeueAt")),
        "2026-01-01T00:05:00Z");
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_array_get(json_object_get(json_object_get(view, "status"), "unhealthyNodes"), 0),
            "name")),
        "n1");
    {
        json_t *c0 = json_array_get(json_object_get(json_object_get(view, "status"), "conditions"),
                                    0),
               *c1 = json_array_get(json_object_get(json_object_get(view, "status"), "conditions"),
                                    1);
        ck_assert_str_eq(json_string_value(json_object_get(c0, "lastTransitionTime")),
                         "2026-01-01T00:01:00Z");
        ck_assert_int_eq(json_integer_value(json_object_get(c0, "observedGeneration")), 2);
        ck_assert_ptr_null(json_object_get(c1, "observedGeneration")); /* absent stays absent */
    }
    json_decref(view);
    ctrl_record_free(&wl_kind, w);
    json_decref(obj);
}
END_TEST

/* Two Workloads of one queue hold one copy of what they repeat -- namespace, queue, the
 * admission's names, the conditions' texts, the owner's kind -- and nothing of it outlives the
 * last record; their own names stay their own. */
START_TEST(workloads_share_repeated_strings)
{
    json_t *o1 = json_loads(wl_json, 0, NULL), *o2 = json_loads(wl_json, 0, NULL);
    ctrl_record_kind_t rk = wl_kind;
    util_intern_t strings;
    ctrl_wl_t *a, *b, *plain;

    util_intern_init(&strings);
    rk.strings = &strings;
    json_object_set_new(json_object_get(o2, "metadata"), "name", json_string("job-train-9z8y7"));
    json_object_set_new(json_object_get(o2, "metadata"), "uid", json_string("u-2"));
    a = ctrl_record_decode(&rk, o1);
    b = ctrl_record_decode(&rk, o2);
    plain = ctrl_record_decode(&wl_kind, o1); /* no table: its own copies */
    ck_assert(plain != NULL && !plain->interned);
    ck_assert_ptr_ne(plain->wl.meta.namespace, a->wl.meta.namespace);
    ctrl_record_free(&wl_kind, plain);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert(a->interned && b->interned);
    ck_assert_ptr_eq(a->wl.meta.namespace, b->wl.meta.namespace);
    ck_assert_ptr_eq(a->wl.queue_name, b->wl.queue_name);
    ck_assert_ptr_eq(a->wl.meta.finalizers[0], b->wl.meta.finalizers[0]);
    ck_assert_ptr_eq(a->wl.pod_sets[0].name, b->wl.pod_sets[0].name);
    ck_assert_ptr_eq(a->podsets[0].name, b->podsets[0].name);
    ck_assert_ptr_eq(a->wl.admission->cluster_queue, b->wl.admission->cluster_queue);
    ck_assert_ptr_eq(a->wl.admission->assignments[0].flavors.items[0].value,
                     b->wl.admission->assignments[0].flavors.items[0].value);
    ck_assert_ptr_eq(ctrl_wl_cond(a, "QuotaReserved")->message,
                     ctrl_wl_cond(b, "QuotaReserved")->message);
    ck_assert_ptr_eq(ctrl_wl_cond(a, "Admitted")->status, ctrl_wl_cond(b, "QuotaReserved")->status);
    ck_assert_ptr_eq(a->owner.kind, b->owner.kind);
    ck_assert_ptr_ne(a->wl.meta.name, b->wl.meta.name);
    ck_assert_str_eq(b->wl.meta.name, "job-train-9z8y7");
    ck_assert_str_eq(a->wl.admission->assignments[0].usage.items[0].name, "cpu");
    ck_assert_str_eq(a->owner.api_version, "batch/v1");
    ctrl_wl_strip(&rk, a);
    ck_assert_str_eq(a->podsets[0].name, "main");
    ck_assert_str_eq(b->wl.pod_sets[0].name, "main"); /* the shared copy stays b's */
    ck_assert_str_eq(ctrl_wl_cond(a, "QuotaReserved")->reason, "QuotaReserved");
    ctrl_record_free(&rk, a);
    ck_assert_str_eq(ctrl_wl_cond(b, "QuotaReserved")->message,
                     "Quota reserved in ClusterQueue cq");
    ck_assert_str_eq(b->wl.meta.namespace, "team-a");
    ctrl_record_free(&rk, b);
    ck_assert_uint_eq(util_intern_count(&strings), 0);
    util_intern_fini(&strings);
    json_decref(o1);
    json_decref(o2);
}
END_TEST

/* wl_json, Finished, with an admission check and reclaimable pods. */
static json_t *finished_json(const char *name, const char *uid)
{
    json_t *o = json_loads(wl_json, 0, NULL), *st = json_object_get(o, "status");

    json_object_set_new(json_object_get(o, "metadata"), "name", json_string(name));
    json_object_set_new(json_object_get(o, "metadata"), "uid", json_string(uid));
    json_array_append_new(json_object_get(st, "conditions"),
                          json_pack("{s:s,s:s,s:s,s:s,s:s}", "type", "Finished", "status", "True",
                                    "reason", "Succeeded", "message", "done", "lastTransitionTime",
                                    "2026-01-01T00:09:00Z"));
    json_object_set_new(st, "admissionChecks",
                        json_pack("[{s:s,s:s,s:s,s:s}]", "name", "prov", "state", "Ready",
                                  "message", "", "lastTransitionTime", "2026-01-01T00:01:00Z"));
    json_object_set_new(st, "reclaimablePods",
                        json_pack("[{s:s,s:i}]", "name", "main", "count", 1));
    return o;
}

/* A finished record, once fed, keeps what the readers of a finished Workload read and nothing
 * else: ctrl_wl_reserved() and ctrl_wl_on_hold() answer as before, ctrl_wl_json() refuses, the
 * shared strings it gave back are gone with the last reference (a sibling keeps its own). */
START_TEST(finished_workload_retired)
{
    json_t *o1 = finished_json("job-train-1a2b3", "u-1"), *o2 = finished_json("job-b", "u-2");
    json_t *live = json_loads(wl_json, 0, NULL);
    ctrl_record_kind_t rk = wl_kind;
    util_intern_t strings;
    ctrl_wl_t *a, *b, *l, *plain;

    util_intern_init(&strings);
    rk.strings = &strings;
    a = ctrl_record_decode(&rk, o1);
    b = ctrl_record_decode(&rk, o2);
    l = ctrl_record_decode(&rk, live);
    plain = ctrl_record_decode(&wl_kind, o1); /* its own copies */
    ck_assert(a != NULL && b != NULL && l != NULL && plain != NULL);
    ck_assert(a->interned && !plain->interned);
    ck_assert(ctrl_wl_reserved(a) && !ctrl_wl_on_hold(a));
    /* Not finished: a no-op (stripping stays ctrl_wl_strip()'s). */
    ctrl_wl_retire(&rk, l);
    ck_assert(!l->retired && !l->stripped);
    ck_assert_ptr_nonnull(l->wl.admission);
    ctrl_wl_retire(&rk, a);
    ctrl_wl_retire(&rk, a); /* idempotent */
    ctrl_wl_retire(&wl_kind, plain);
    for (int k = 0; k < 2; k++) {
        const ctrl_wl_t *r = k == 0 ? a : plain;
        ck_assert(r->retired && r->stripped && r->valid);
        ck_assert_uint_eq(r->wl.npod_sets, 0);
        ck_assert_ptr_null(r->wl.pod_sets);
        ck_assert_uint_eq(r->npodsets, 0);
        ck_assert_ptr_null(r->podsets);
        ck_assert_ptr_null(r->wl.admission);
        ck_assert_uint_eq(r->wl.nreclaimable_pods, 0);
        ck_assert_uint_eq(r->wl.nstatus_conditions, 1);
        ck_assert_str_eq(ctrl_wl_cond(r, "Finished")->reason, "Succeeded");
        ck_assert(ctrl_wl_is(r, "Finished"));
        ck_assert_ptr_null(ctrl_wl_cond(r, "QuotaReserved"));
        ck_assert(ctrl_wl_reserved(r)); /* as before the retire */
        ck_assert(!ctrl_wl_on_hold(r));
        ck_assert_ptr_null(ctrl_wl_json(r)); /* no status is built from it */
        /* What the finish, delete, restart and ProvisioningRequest paths read stays. */
        ck_assert(r->wl.conditions.finished && r->wl.conditions.admitted);
        ck_assert_str_eq(r->wl.meta.name, "job-train-1a2b3");
        ck_assert_str_eq(r->wl.meta.namespace, "team-a");
        ck_assert_str_eq(r->wl.meta.uid, "u-1");
        ck_assert_str_eq(r->wl.meta.resource_version, "42");
        ck_assert_int_eq(r->wl.meta.generation, 2);
        ck_assert_uint_eq(r->wl.meta.nfinalizers, 1);
        ck_assert(r->finalizer);
        ck_assert_str_eq(r->wl.queue_name, "lq");
        ck_assert_str_eq(r->owner.kind, "Job");
        ck_assert_str_eq(r->owner.uid, "j-1");
        ck_assert_uint_eq(r->wl.ncheck_states, 1);
        ck_assert_str_eq(r->wl.check_states[0].name, "prov");
        ck_assert_int_eq(r->requeue_count, 3);
    }
    /* b shares what a gave back: still whole. */
    ck_assert_str_eq(b->wl.admission->cluster_queue, "cq");
    ck_assert_str_eq(b->wl.pod_sets[0].name, "main");
    ck_assert_str_eq(b->podsets[0].name, "main");
    ck_assert_str_eq(ctrl_wl_cond(b, "QuotaReserved")->message,
                     "Quota reserved in ClusterQueue cq");
    ctrl_wl_retire(&rk, b);
    ck_assert_str_eq(l->wl.admission->assignments[0].flavors.items[0].value, "default");
    ctrl_record_free(&rk, a);
    ctrl_record_free(&rk, b);
    ctrl_record_free(&wl_kind, plain);
    ck_assert_str_eq(ctrl_wl_cond(l, "Admitted")->message, "ok");
    ctrl_record_free(&rk, l);
    ck_assert_uint_eq(util_intern_count(&strings), 0);
    util_intern_fini(&strings);
    json_decref(o1);
    json_decref(o2);
    json_decref(live);
}
END_TEST

/* A Workload on hold (QuotaReserved=False OnHold, no admission) that is Finished: retired, it is
 * still on hold and holds no quota; an invalid record is never retired. */
START_TEST(retired_on_hold_and_invalid)
{
    json_t *o = finished_json("held", "u-3"), *st = json_object_get(o, "status");
    json_t *bad = json_pack("{s:{s:s,s:s,s:s},s:{s:i},s:{s:[{s:s,s:s}]}}", "metadata", "name",
                            "bad", "namespace", "ns", "resourceVersion", "7", "spec", "podSets", 3,
                            "status", "conditions", "type", "Finished", "status", "True");
    ctrl_wl_t *w, *inv;

    json_object_del(st, "admission");
    json_object_set_new(json_array_get(json_object_get(st, "conditions"), 0), "status",
                        json_string("False"));
    json_object_set_new(json_array_get(json_object_get(st, "conditions"), 0), "reason",
                        json_string("OnHold"));
    w = ctrl_record_decode(&wl_kind, o);
    inv = ctrl_record_decode(&wl_kind, bad);
    ck_assert(w != NULL && inv != NULL && !inv->valid);
    ck_assert(ctrl_wl_on_hold(w) && !ctrl_wl_reserved(w));
    ctrl_wl_retire(&wl_kind, w);
    ck_assert(w->retired);
    ck_assert(ctrl_wl_on_hold(w) && !ctrl_wl_reserved(w));
    ck_assert_ptr_null(ctrl_wl_cond(w, "QuotaReserved"));
    ctrl_wl_retire(&wl_kind, inv);
    ck_assert(!inv->retired);
    ck_assert_str_eq(inv->wl.meta.name, "bad");
    ctrl_record_free(&wl_kind, w);
    ctrl_record_free(&wl_kind, inv);
    json_decref(o);
    json_decref(bad);
}
END_TEST

START_TEST(undecodable_objects_keep_their_name)
{
    json_t *obj = json_pack("{s:{s:s,s:s,s:s},s:{s:i}}", "metadata", "name", "bad", "namespace",
                            "ns", "resourceVersion", "7", "spec", "podSets", 3);
    ctrl_wl_t *w = ctrl_record_decode(&wl_kind, obj);
    ctrl_qobj_t *q;

    ck_assert_ptr_nonnull(w);
    ck_assert(!w->valid);
    ck_assert_ptr_nonnull(strstr(w->invalid, "spec.podSets"));
    ck_assert_str_eq(w->wl.meta.name, "bad");
    ck_assert_str_eq(w->wl.meta.resource_version, "7");
    ck_assert(!ctrl_wl_reserved(w));
    ctrl_record_free(&wl_kind, w);
    json_decref(obj);
    obj = json_pack("{s:{s:s},s:{s:s}}", "metadata", "name", "q", "spec", "queueingStrategy",
                    "Wrong");
    q = ctrl_record_decode(&cq_kind, obj);
    ck_assert_ptr_nonnull(q);
    ck_assert(!q->valid);
    ck_assert_ptr_nonnull(strstr(q->invalid, "spec.queueingStrategy"));
    ctrl_record_free(&cq_kind, q);
    json_decref(obj);
    /* An unknown field is something newer than sluice, not something wrong. */
    obj = json_pack("{s:{s:s},s:{s:s,s:i}}", "metadata", "name", "q", "spec", "queueingStrategy",
                    "StrictFIFO", "fieldFromTheFuture", 1);
    q = ctrl_record_decode(&cq_kind, obj);
    ck_assert(q->valid);
    ck_assert_int_eq(q->obj.u.cq.queueing, QUEUEING_STRICT_FIFO);
    ck_assert_ptr_nonnull(q->keep); /* an empty status */
    ctrl_record_free(&cq_kind, q);
    json_decref(obj);
}
END_TEST

START_TEST(queue_side_keeps_what_is_written_back)
{
    json_t *obj = json_pack("{s:{s:s},s:{s:{s:s},s:[{s:s,s:s,s:s}],s:[{s:s,s:s,s:s}]}}", "metadata",
                            "name", "a100", "spec", "nodeLabels", "pool", "a100", "nodeTaints",
                            "key", "gpu", "value", "a100", "effect", "NoSchedule", "tolerations",
                            "key", "gpu", "operator", "Exists", "effect", "NoSchedule");
    ctrl_qobj_t *q = ctrl_record_decode(&rf_kind, obj);

    ck_assert(q->valid);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(q->keep, "nodeLabels"), "pool")), "a100");
    ck_assert_uint_eq(json_array_size(json_object_get(q->keep, "tolerations")), 1);
    ck_assert_ptr_null(json_object_get(q->keep, "nodeTaints"));
    ctrl_record_free(&rf_kind, q);
    json_decref(obj);
    /* A namespace from a server before 1.21 gets the name label selectors rely on. */
    obj = json_pack("{s:{s:s}}", "metadata", "name", "team-a");
    q = ctrl_record_decode(&ns_kind, obj);
    ck_assert_str_eq(kv_list_get(&q->obj.u.ns.meta.labels, "kubernetes.io/metadata.name"),
                     "team-a");
    ctrl_record_free(&ns_kind, q);
    json_decref(obj);
}
END_TEST

/* Settings sluice does not act on are carried with the record, for sluice run's log; a
 * flavor's topologyName is acted on (topology-aware scheduling) and not among them. */
START_TEST(queue_side_records_no_effect_settings)
{
    json_t *obj = json_pack("{s:{s:s},s:{s:[],s:{}}}", "metadata", "name", "cq", "spec",
                            "resourceGroups", "concurrentAdmissionPolicy");
    ctrl_qobj_t *q = ctrl_record_decode(&cq_kind, obj);

    ck_assert(q->valid);
    ck_assert_str_eq(q->no_effect,
                     "spec.concurrentAdmissionPolicy: field \"concurrentAdmissionPolicy\" is "
                     "accepted but not supported by sluice; it has no effect");
    ctrl_record_free(&cq_kind, q);
    json_decref(obj);
    obj = json_pack("{s:{s:s},s:{s:{s:s},s:s}}", "metadata", "name", "a100", "spec", "nodeLabels",
                    "pool", "gpu", "topologyName", "default");
    q = ctrl_record_decode(&rf_kind, obj);
    ck_assert(q->valid);
    ck_assert_ptr_null(q->no_effect);
    ck_assert_str_eq(q->obj.u.flavor.topology_name, "default");
    ctrl_record_free(&rf_kind, q);
    json_decref(obj);
    obj = json_pack("{s:{s:s}}", "metadata", "name", "plain");
    q = ctrl_record_decode(&rf_kind, obj);
    ck_assert(q->valid);
    ck_assert_ptr_null(q->no_effect);
    ctrl_record_free(&rf_kind, q);
    json_decref(obj);
}
END_TEST

/* The operator's Topology records (CTRL_TOPOLOGY): the levels decoded as the simulator's, a
 * Topology that does not decode kept invalid with the field named (logged, not fed). */
START_TEST(topology_records)
{
    json_t *obj =
        json_pack("{s:{s:s},s:{s:[{s:s},{s:s}]}}", "metadata", "name", "dc", "spec", "levels",
                  "nodeLabel", "cloud.example.com/rack", "nodeLabel", "kubernetes.io/hostname");
    ctrl_qobj_t *q = ctrl_record_decode(&topo_kind, obj);

    ck_assert(q->valid);
    ck_assert_int_eq(q->obj.kind, KIND_TOPOLOGY);
    ck_assert_str_eq(q->obj.u.topology.meta.name, "dc");
    ck_assert_uint_eq(q->obj.u.topology.nlevels, 2);
    ck_assert_str_eq(q->obj.u.topology.levels[0], "cloud.example.com/rack");
    ck_assert_str_eq(q->obj.u.topology.levels[1], "kubernetes.io/hostname");
    ck_assert_ptr_null(q->no_effect);
    ck_assert(ctrl_qobj_feeds_engine(NULL, q));
    ctrl_record_free(&topo_kind, q);
    json_decref(obj);
    /* levels of the wrong type (the CRD's schema refuses it; a record never trusts it) */
    obj = json_pack("{s:{s:s},s:{s:s}}", "metadata", "name", "bad", "spec", "levels", "rack");
    q = ctrl_record_decode(&topo_kind, obj);
    ck_assert(!q->valid);
    ck_assert_ptr_nonnull(strstr(q->invalid, "spec.levels"));
    ctrl_record_free(&topo_kind, q);
    json_decref(obj);
}
END_TEST

/* A ClusterQueue record at `generation`, with status text `pending`, labels {"tier": tier}. */
static ctrl_qobj_t *cq_record(int generation, int pending, const char *tier)
{
    json_t *obj = json_pack("{s:{s:s,s:i,s:{s:s}},s:{s:[{s:[s],s:[{s:s,s:[{s:s,s:i}]}]}]},s:{s:i}}",
                            "metadata", "name", "gpu", "generation", generation, "labels", "tier",
                            tier, "spec", "resourceGroups", "coveredResources", "cpu", "flavors",
                            "name", "default", "resources", "name", "cpu", "nominalQuota", 4,
                            "status", "pendingWorkloads", pending);
    ctrl_qobj_t *q = ctrl_record_decode(&cq_kind, obj);

    ck_assert_ptr_nonnull(q);
    ck_assert_msg(q->valid, "%s", q->invalid ? q->invalid : "");
    json_decref(obj);
    return q;
}

START_TEST(status_only_updates_do_not_feed_the_engine)
{
    ctrl_qobj_t *a = cq_record(3, 0, "gold"), *status = cq_record(3, 7, "gold"),
                *spec = cq_record(4, 7, "gold"), *label = cq_record(3, 0, "silver");
    json_t *rf = json_pack("{s:{s:s}}", "metadata", "name", "a100");
    ctrl_qobj_t *f1 = ctrl_record_decode(&rf_kind, rf), *f2 = ctrl_record_decode(&rf_kind, rf);

    ck_assert(!ctrl_qobj_feeds_engine(a, status)); /* our own status write, echoed */
    ck_assert(ctrl_qobj_feeds_engine(a, spec));    /* a spec change bumps the generation */
    ck_assert(ctrl_qobj_feeds_engine(a, label));
    ck_assert(ctrl_qobj_feeds_engine(NULL, a)); /* added */
    ck_assert(ctrl_qobj_feeds_engine(a, NULL)); /* deleted */
    ck_assert(ctrl_qobj_feeds_engine(f1, f2));  /* no status subresource: always */
    ctrl_record_free(&rf_kind, f1);
    ctrl_record_free(&rf_kind, f2);
    json_decref(rf);
    ctrl_record_free(&cq_kind, a);
    ctrl_record_free(&cq_kind, status);
    ctrl_record_free(&cq_kind, spec);
    ctrl_record_free(&cq_kind, label);
}
END_TEST

/* A Job whose template is `tmpl` (JSON text), suspended or not, with status. */
static json_t *job_with(const char *tmpl, bool suspend)
{
    json_t *t = json_loads(tmpl, 0, NULL);

    ck_assert_ptr_nonnull(t);
    return json_pack("{s:{s:s,s:s,s:s,s:s,s:{s:s},s:{s:s},s:[{s:s,s:s,s:s,s:s,s:b}]},"
                     "s:{s:b,s:i,s:i,s:o},s:{s:i,s:i,s:s,s:[{s:s,s:s,s:s}]}}",
                     "metadata", "name", "train", "namespace", "team-a", "uid", "j-1",
                     "resourceVersion", "9", "labels", "kueue.x-k8s.io/queue-name", "lq",
                     "annotations", "kueue.x-k8s.io/job-min-parallelism", "1", "ownerReferences",
                     "apiVersion", "jobset.x-k8s.io/v1alpha2", "kind", "JobSet", "name", "js",
                     "uid", "s-1", "controller", 1, "spec", "suspend", suspend, "parallelism", 2,
                     "completions", 2, "template", t, "status", "ready", 1, "active", 1,
                     "startTime", "2026-01-01T00:00:00Z", "conditions", "type", "Complete",
                     "status", "True", "message", "all done");
}

START_TEST(job_decoded_without_its_template)
{
    json_t *obj = job_with("{\"metadata\":{\"labels\":{\"job-name\":\"train\",\"app\":\"x\"}},"
                           "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}",
                           true);
    ctrl_record_kind_t rk = {
        .api_version = "batch/v1", .kind = "Job", .job = jobs_kind_named("batch/job")};
    ctrl_job_t *j;

    ck_assert_ptr_nonnull(rk.job);
    j = ctrl_record_decode(&rk, obj);
    ck_assert_ptr_nonnull(j);
    ck_assert_msg(j->valid, "%s", j->invalid ? j->invalid : "");
    ck_assert_str_eq(j->meta.name, "train");
    ck_assert_str_eq(j->meta.namespace, "team-a");
    ck_assert_str_eq(j->meta.uid, "j-1");
    ck_assert_str_eq(j->meta.resource_version, "9");
    ck_assert(j->suspended);
    ck_assert(j->active);
    ck_assert(!j->pods_ready); /* 1 ready of 2 */
    ck_assert(j->has_start_time);
    ck_assert_int_eq(j->phase, JOBS_SUCCEEDED);
    ck_assert_str_eq(j->message, "all done");
    ck_assert_str_eq(j->owner.kind, "JobSet");
    ck_assert_str_eq(j->queue_name, "lq");
    ck_assert_ptr_null(j->priority);
    /* The template is read for the counts and the digest, and not kept. */
    ck_assert_uint_eq(j->npod_sets, 1);
    ck_assert_int_eq(j->counts[0], 2);
    ck_assert_uint_eq(j->meta.labels.len, 0);
    ck_assert_uint_ne(j->digest, 0);
    ctrl_record_free(&rk, j);
    json_decref(obj);
}
END_TEST

/* Issue 17: settings that have no effect never pass silently in `sluice run` either: a
 * Workload's are recorded for the log as a queue object's are (a job's pod templates are checked
 * by its webhook). A podset group is placed by the engine (no warning); a Workload's group of
 * one pod set has no effect. */
START_TEST(workloads_record_no_effect_settings)
{
    json_t *wl;
    ctrl_wl_t *w;

    wl = json_loads(wl_json, 0, NULL);
    w = ctrl_record_decode(&wl_kind, wl);
    ck_assert_ptr_null(w->no_effect);
    ctrl_record_free(&wl_kind, w);
    ck_assert_int_eq(
        json_object_set_new(
            json_object_get(
                json_object_get(
                    json_array_get(json_object_get(json_object_get(wl, "spec"), "podSets"), 0),
                    "template"),
                "metadata"),
            "annotations",
            json_pack("{s:s,s:s}", "kueue.x-k8s.io/podset-preferred-topology", "rack",
                      "kueue.x-k8s.io/podset-group-name", "g")),
        0);
    w = ctrl_record_decode(&wl_kind, wl);
    ck_assert(w->valid);
    ck_assert_str_eq(w->no_effect,
                     "spec.podSets[0].template.metadata.annotations[kueue.x-k8s.io/"
                     "podset-group-name]: Invalid value: \"g\": can only define groups of "
                     "exactly 2 pod sets, got: 1 pod set(s); the group has no effect: its pod "
                     "sets are placed one by one");
    ctrl_record_free(&wl_kind, w);
    json_decref(wl);
}
END_TEST

START_TEST(jobset_decoded_through_its_kind)
{
    /* Two replicated Jobs of 2 x 4 pods: two pod sets of 8; its digest equals that of a
     * Workload holding the same templates (restored), and not once one is started. */
    json_t *obj = json_loads(
        "{\"metadata\":{\"name\":\"js\",\"namespace\":\"ns\",\"uid\":\"u\","
        "\"resourceVersion\":\"5\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\","
        "\"kueue.x-k8s.io/priority-class\":\"high\"}},\"spec\":{\"suspend\":true,"
        "\"replicatedJobs\":[{\"name\":\"driver\",\"replicas\":2,\"template\":{\"spec\":{"
        "\"parallelism\":4,\"completions\":4,\"template\":{\"metadata\":{\"labels\":{\"a\":"
        "\"1\"}},\"spec\":{\"containers\":[]}}}}},{\"name\":\"workers\",\"replicas\":2,"
        "\"template\":{\"spec\":{\"parallelism\":4,\"completions\":4,\"template\":{\"spec\":{"
        "\"containers\":[]}}}}}]},\"status\":{\"replicatedJobsStatus\":[{\"name\":\"driver\","
        "\"active\":0}]}}",
        0, NULL);
    json_t *podsets = json_loads(
        "[{\"name\":\"driver\",\"count\":8,\"template\":{\"metadata\":{\"labels\":{\"a\":"
        "\"1\"}},\"spec\":{\"containers\":[]}}},{\"name\":\"workers\",\"count\":8,"
        "\"template\":{\"spec\":{\"containers\":[]}}}]",
        0, NULL);
    json_t *bad = json_loads("{\"metadata\":{\"name\":\"x\",\"namespace\":\"ns\"},"
                             "\"spec\":{\"suspend\":true}}",
                             0, NULL);
    ctrl_record_kind_t rk = {.api_version = "jobset.x-k8s.io/v1alpha2",
                             .kind = "JobSet",
                             .job = jobs_kind_named("jobset.x-k8s.io/jobset")};
    ctrl_job_t *j;

    ck_assert_ptr_nonnull(rk.job);
    j = ctrl_record_decode(&rk, obj);
    ck_assert_ptr_nonnull(j);
    ck_assert_msg(j->valid, "%s", j->invalid ? j->invalid : "");
    ck_assert(j->suspended);
    ck_assert(!j->active);
    ck_assert_int_eq(j->phase, JOBS_RUNNING);
    ck_assert_ptr_null(j->message);
    ck_assert_str_eq(j->priority, "high");
    ck_assert_uint_eq(j->npod_sets, 2);
    ck_assert_int_eq(j->counts[0], 8);
    ck_assert_int_eq(j->counts[1], 8);
    ck_assert_uint_eq(j->digest, jobs_podsets_digest(podsets));
    ctrl_record_free(&rk, j);

    /* No replicated Job: kept (deletes stay exact) but marked, with the field path. */
    j = ctrl_record_decode(&rk, bad);
    ck_assert_ptr_nonnull(j);
    ck_assert(!j->valid);
    ck_assert_str_eq(j->meta.name, "x");
    ck_assert_ptr_nonnull(strstr(j->invalid, "spec.replicatedJobs"));
    ctrl_record_free(&rk, j);
    json_decref(obj);
    json_decref(podsets);
    json_decref(bad);
}
END_TEST

START_TEST(template_digests_say_restored_or_not)
{
    /* The Workload's pod set, and the Job's template as it was, as started, as restored. */
    json_t *ps = json_loads("{\"metadata\":{\"labels\":{\"app\":\"x\"}},\"spec\":{"
                            "\"nodeSelector\":{},\"containers\":[]}}",
                            0, NULL);
    json_t *same = json_loads("{\"metadata\":{\"labels\":{\"app\":\"x\",\"job-name\":\"train\","
                              "\"controller-uid\":\"u\"}},\"spec\":{\"containers\":[{\"name\":"
                              "\"c\"}],\"tolerations\":[]}}",
                              0, NULL);
    json_t *started = json_loads(
        "{\"metadata\":{\"labels\":{\"app\":\"x\",\"kueue.x-k8s.io/podset\":\"main\"},"
        "\"annotations\":{\"kueue.x-k8s.io/workload\":\"w\"}},\"spec\":{\"nodeSelector\":"
        "{\"pool\":\"a100\"}}}",
        0, NULL);

    /* Controller labels, empty maps and lists, and containers do not count. */
    ck_assert_uint_eq(podset_digest(ps), podset_digest(same));
    ck_assert_uint_ne(podset_digest(ps), podset_digest(started));
    /* Key order does not count either. */
    {
        json_t *a = json_loads("{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"}}}", 0, NULL);
        json_t *b = json_loads("{\"metadata\":{\"labels\":{\"b\":\"2\",\"a\":\"1\"}}}", 0, NULL);
        ck_assert_uint_eq(podset_digest(a), podset_digest(b));
        json_decref(a);
        json_decref(b);
    }
    json_decref(ps);
    json_decref(same);
    json_decref(started);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ctrl_records");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, workload_decoded_then_stripped);
    tcase_add_test(tc, workloads_share_repeated_strings);
    tcase_add_test(tc, finished_workload_retired);
    tcase_add_test(tc, retired_on_hold_and_invalid);
    tcase_add_test(tc, undecodable_objects_keep_their_name);
    tcase_add_test(tc, queue_side_keeps_what_is_written_back);
    tcase_add_test(tc, queue_side_records_no_effect_settings);
    tcase_add_test(tc, topology_records);
    tcase_add_test(tc, status_only_updates_do_not_feed_the_engine);
    tcase_add_test(tc, job_decoded_without_its_template);
    tcase_add_test(tc, jobset_decoded_through_its_kind);
    tcase_add_test(tc, workloads_record_no_effect_settings);
    tcase_add_test(tc, template_digests_say_restored_or_not);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
