/* test_decode -- object_decode() of every supported kind, defaults, v1beta1 mapping, errors. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/jsonx.h"
#include "model/object.h"
#include "model/yaml.h"

/* lib/model calls strdup() too: see the allocation failures below. */
#define OOM_WRAP_STRDUP
#include "oom_wrap.h"
#include "squote.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ----------------------------------------------------------------------------------
 */

static err_t decode(const char *text, object_t *obj, diags_t *d)
{
    json_t *j = squote_json(text);
    err_t rc;

    diags_init(d);
    rc = object_decode(j, obj, d);
    json_decref(j);
    return rc;
}

/* Does `d` hold a diagnostic with exactly this path and message (and severity)? */
static bool has(const diags_t *d, bool warning, const char *path, const char *msg)
{
    for (size_t i = 0; i < d->len; i++)
        if (d->items[i].warning == warning && strcmp(d->items[i].path, path) == 0 &&
            strcmp(d->items[i].message, msg) == 0)
            return true;
    return false;
}

static void dump(const diags_t *d)
{
    for (size_t i = 0; i < d->len; i++)
        fprintf(stderr, "  %s %s: %s\n", d->items[i].warning ? "W" : "E", d->items[i].path,
                d->items[i].message);
}

#define ASSERT_ERR(d, path, msg)                             \
    do {                                                     \
        if (!has(d, false, path, msg)) {                     \
            dump(d);                                         \
            ck_abort_msg("missing error %s: %s", path, msg); \
        }                                                    \
    } while (0)

#define ASSERT_WARN(d, path, msg)                              \
    do {                                                       \
        if (!has(d, true, path, msg)) {                        \
            dump(d);                                           \
            ck_abort_msg("missing warning %s: %s", path, msg); \
        }                                                      \
    } while (0)

/* Decode `text` expecting success without diagnostics of any kind. */
static void decode_ok(const char *text, object_t *obj)
{
    diags_t d;
    err_t rc = decode(text, obj, &d);

    if (rc != ERR_OK || d.len != 0) {
        dump(&d);
        ck_abort_msg("decode failed (%s)", err_str(rc));
    }
    diags_fini(&d);
}

/* Decode `text` expecting ERR_INVALID with exactly one error `path: msg`. */
static void decode_one_error(const char *text, const char *path, const char *msg)
{
    object_t obj;
    diags_t d;
    err_t rc = decode(text, &obj, &d);

    ck_assert_int_eq(rc, ERR_INVALID);
    ck_assert_int_eq(obj.kind, KIND_UNKNOWN); /* zeroed on failure */
    ASSERT_ERR(&d, path, msg);
    if (d.nerrors != 1) {
        dump(&d);
        ck_abort_msg("expected exactly one error, got %zu", d.nerrors);
    }
    diags_fini(&d);
}

static char *fmtq(quantity_t q, char *buf)
{
    return quantity_format(q, buf);
}

#define CQ_HEAD \
    "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue','metadata':{'name':'cq'},"
#define CQ1_HEAD \
    "{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'ClusterQueue','metadata':{'name':'cq'},"
#define RG_OK                                                                         \
    "'resourceGroups':[{'coveredResources':['cpu','memory'],'flavors':[{'name':'f1'," \
    "'resources':[{'name':'cpu','nominalQuota':'10'},{'name':'memory','nominalQuota':'64Gi'}]}]}]"

/* ---- ClusterQueue -------------------------------------------------------------------------------
 */

START_TEST(cq_full)
{
    object_t obj;
    char buf[QUANTITY_STR_MAX];
    const cluster_queue_t *cq;

    decode_ok(CQ_HEAD "'spec':{'cohortName':'team','queueingStrategy':'StrictFIFO',"
                      "'namespaceSelector':{'matchLabels':{'team':'a'},'matchExpressions':"
                      "[{'key':'env','operator':'In','values':['prod','dev']}]},"
                      "'flavorFungibility':{'whenCanBorrow':'TryNextFlavor','whenCanPreempt':"
                      "'MayStopSearch','preference':'PreemptionOverBorrowing'},"
                      "'preemption':{'reclaimWithinCohort':'Any','withinClusterQueue':"
                      "'LowerOrNewerEqualPriority','borrowWithinCohort':{'policy':'LowerPriority',"
                      "'maxPriorityThreshold':100}},'stopPolicy':'HoldAndDrain',"
                      "'fairSharing':{'weight':'2'},"
                      "'resourceGroups':[{'coveredResources':['cpu','nvidia.com/gpu'],'flavors':["
                      "{'name':'a100','resources':[{'name':'cpu','nominalQuota':64,"
                      "'borrowingLimit':'8','lendingLimit':'4'},{'name':'nvidia.com/gpu',"
                      "'nominalQuota':'8'}]},{'name':'h100','resources':[{'name':'cpu',"
                      "'nominalQuota':'1500m'},{'name':'nvidia.com/gpu','nominalQuota':2}]}]}]},"
                      "'status':{'pendingWorkloads':3}}",
              &obj);
    ck_assert_int_eq(obj.kind, KIND_CLUSTER_QUEUE);
    ck_assert_str_eq(obj.api_version, "kueue.x-k8s.io/v1beta2");
    cq = &obj.u.cq;
    ck_assert_str_eq(cq->meta.name, "cq");
    ck_assert_ptr_null(cq->meta.namespace);
    ck_assert_str_eq(cq->cohort, "team");
    ck_assert_int_eq(cq->queueing, QUEUEING_STRICT_FIFO);
    ck_assert(cq->namespace_selector.present);
    ck_assert_str_eq(kv_list_get(&cq->namespace_selector.match_labels, "team"), "a");
    ck_assert_uint_eq(cq->namespace_selector.nexprs, 1);
    ck_assert_int_eq(cq->namespace_selector.exprs[0].op, SELECTOR_OP_IN);
    ck_assert_uint_eq(cq->namespace_selector.exprs[0].nvalues, 2);
    ck_assert_str_eq(cq->namespace_selector.exprs[0].values[1], "dev");
    ck_assert_int_eq(cq->when_can_borrow, FUNGIBILITY_TRY_NEXT_FLAVOR);
    ck_assert_int_eq(cq->when_can_preempt, FUNGIBILITY_MAY_STOP_SEARCH);
    ck_assert_int_eq(cq->preference, FUNGIBILITY_PREF_PREEMPTION_OVER_BORROWING);
    ck_assert_int_eq(cq->reclaim_within_cohort, PREEMPT_ANY);
    ck_assert_int_eq(cq->within_cluster_queue, PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY);
    ck_assert_int_eq(cq->borrow_within_cohort, PREEMPT_LOWER_PRIORITY);
    ck_assert(cq->has_max_priority_threshold);
    ck_assert_int_eq(cq->max_priority_threshold, 100);
    ck_assert_int_eq(cq->stop_policy, STOP_POLICY_HOLD_AND_DRAIN);
    ck_assert(cq->has_fair_weight);
    ck_assert_str_eq(fmtq(cq->fair_weight, buf), "2");
    ck_assert_uint_eq(cq->ngroups, 1);
    ck_assert_uint_eq(cq->groups[0].ncovered, 2);
    ck_assert_str_eq(cq->groups[0].covered[1], "nvidia.com/gpu");
    ck_assert_uint_eq(cq->groups[0].nflavors, 2);
    ck_assert_str_eq(cq->groups[0].flavors[0].name, "a100");
    ck_assert_uint_eq(cq->groups[0].flavors[0].nresources, 2);
    ck_assert_str_eq(fmtq(cq->groups[0].flavors[0].resources[0].nominal, buf), "64");
    ck_assert(cq->groups[0].flavors[0].resources[0].has_borrowing_limit);
    ck_assert(cq->groups[0].flavors[0].resources[0].has_lending_limit);
    ck_assert_str_eq(fmtq(cq->groups[0].flavors[0].resources[0].lending_limit, buf), "4");
    ck_assert(!cq->groups[0].flavors[0].resources[1].has_borrowing_limit);
    ck_assert_str_eq(fmtq(cq->groups[0].flavors[1].resources[0].nominal, buf), "1500m");
    object_fini(&obj);
    ck_assert_int_eq(obj.kind, KIND_UNKNOWN);
}
END_TEST

START_TEST(cq_defaults)
{
    object_t obj;
    const cluster_queue_t *cq;

    decode_ok(CQ_HEAD "'spec':{" RG_OK "}}", &obj);
    cq = &obj.u.cq;
    ck_assert_ptr_null(cq->cohort);
    ck_assert_int_eq(cq->queueing, QUEUEING_BEST_EFFORT_FIFO);
    ck_assert(!cq->namespace_selector.present); /* nil selector: no namespace */
    ck_assert_int_eq(cq->when_can_borrow, FUNGIBILITY_MAY_STOP_SEARCH);
    ck_assert_int_eq(cq->when_can_preempt, FUNGIBILITY_TRY_NEXT_FLAVOR);
    ck_assert_int_eq(cq->preference, FUNGIBILITY_PREF_UNSET);
    ck_assert_int_eq(cq->reclaim_within_cohort, PREEMPT_NEVER);
    ck_assert_int_eq(cq->within_cluster_queue, PREEMPT_NEVER);
    ck_assert_int_eq(cq->borrow_within_cohort, PREEMPT_NEVER);
    ck_assert_int_eq(cq->stop_policy, STOP_POLICY_NONE);
    ck_assert(!cq->has_fair_weight);
    object_fini(&obj);

    /* An empty selector selects every namespace; an empty cohort name is no cohort. */
    decode_ok(CQ_HEAD "'spec':{'namespaceSelector':{},'cohortName':''}}", &obj);
    ck_assert(obj.u.cq.namespace_selector.present);
    ck_assert_uint_eq(obj.u.cq.namespace_selector.nexprs, 0);
    ck_assert_ptr_null(obj.u.cq.cohort);
    object_fini(&obj);
}
END_TEST

START_TEST(cq_v1beta1)
{
    object_t obj;
    diags_t d;

    ck_assert_int_eq(decode(CQ1_HEAD "'spec':{'cohort':'team','flavorFungibility':{"
                                     "'whenCanBorrow':'Borrow','whenCanPreempt':'Preempt'},"
                                     "'admissionChecks':['prov']," RG_OK "}}",
                            &obj, &d),
                     ERR_OK);
    ck_assert_uint_eq(d.nerrors, 0);
    ASSERT_WARN(&d, "apiVersion",
                "kueue.x-k8s.io/v1beta1 is deprecated; use kueue.x-k8s.io/v1beta2");
    ck_assert_str_eq(obj.api_version, "kueue.x-k8s.io/v1beta1");
    ck_assert_str_eq(obj.u.cq.cohort, "team");
    ck_assert_int_eq(obj.u.cq.when_can_borrow, FUNGIBILITY_MAY_STOP_SEARCH);
    ck_assert_int_eq(obj.u.cq.when_can_preempt, FUNGIBILITY_MAY_STOP_SEARCH);
    ck_assert_uint_eq(obj.u.cq.nadmission_checks, 1);
    ck_assert_str_eq(obj.u.cq.admission_checks[0], "prov");
    ck_assert_uint_eq(obj.u.cq.groups[0].nflavors, 1);
    object_fini(&obj);
    diags_fini(&d);

    /* The old names are unknown in v1beta2, the new one in v1beta1. */
    decode_one_error(CQ_HEAD "'spec':{'cohort':'team'}}", "spec.cohort",
                     "unknown field \"cohort\"");
    decode_one_error(CQ_HEAD "'spec':{'flavorFungibility':{'whenCanBorrow':'Borrow'}}}",
                     "spec.flavorFungibility.whenCanBorrow",
                     "Unsupported value: \"Borrow\": supported values: \"MayStopSearch\", "
                     "\"TryNextFlavor\"");
    ck_assert_int_eq(decode(CQ1_HEAD "'spec':{'cohortName':'x'}}", &obj, &d), ERR_INVALID);
    ASSERT_ERR(&d, "spec.cohortName", "unknown field \"cohortName\"");
    diags_fini(&d);
}
END_TEST

START_TEST(cq_errors)
{
    decode_one_error(CQ_HEAD "'spec':{'queueingStrategy':'Foo'}}", "spec.queueingStrategy",
                     "Unsupported value: \"Foo\": supported values: \"BestEffortFIFO\", "
                     "\"StrictFIFO\"");
    decode_one_error(CQ_HEAD "'spec':{'foo':1}}", "spec.foo", "unknown field \"foo\"");
    decode_one_error(CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':['cpu'],'flavors':["
                             "{'name':'a','resources':[{'name':'cpu','nominalQuota':'1'}]},"
                             "{'name':'b','resources':[{'name':'cpu','nominalQuota':'12x'}]}]}]}}",
                     "spec.resourceGroups[0].flavors[1].resources[0].nominalQuota",
                     "invalid quantity \"12x\"");
    decode_one_error(CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':['cpu'],'flavors':["
                             "{'name':'a','resources':[{'name':'cpu'}]}]}]}}",
                     "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
                     "Required value");
    decode_one_error(CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':['cpu'],'flavors':["
                             "{'resources':[{'name':'cpu','nominalQuota':1}]}]}]}}",
                     "spec.resourceGroups[0].flavors[0].name", "Required value");
    decode_one_error(CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':'cpu','flavors':["
                             "{'name':'a','resources':[{'name':'cpu','nominalQuota':1}]}]}]}}",
                     "spec.resourceGroups[0].coveredResources",
                     "must be of type array, got string");
    decode_one_error(CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':[],'flavors':["
                             "{'name':'a','resources':[{'name':'cpu','nominalQuota':1}]}]}]}}",
                     "spec.resourceGroups[0].coveredResources",
                     "Required value: must have at least 1 item");
    decode_one_error(CQ_HEAD "'spec':{'preemption':{'reclaimWithinCohort':"
                             "'LowerOrNewerEqualPriority'}}}",
                     "spec.preemption.reclaimWithinCohort",
                     "Unsupported value: \"LowerOrNewerEqualPriority\": supported values: "
                     "\"Never\", \"LowerPriority\", \"Any\"");
    decode_one_error(CQ_HEAD "'spec':{'preemption':{'borrowWithinCohort':{'policy':'Any'}}}}",
                     "spec.preemption.borrowWithinCohort.policy",
                     "Unsupported value: \"Any\": supported values: \"Never\", \"LowerPriority\"");
    decode_one_error(CQ_HEAD "'spec':{'preemption':{'borrowWithinCohort':{"
                             "'maxPriorityThreshold':3000000000}}}}",
                     "spec.preemption.borrowWithinCohort.maxPriorityThreshold",
                     "Invalid value: 3000000000: must be a 32-bit integer");
    decode_one_error(CQ_HEAD "'spec':{'namespaceSelector':{'matchExpressions':[{'key':'a',"
                             "'operator':'Gt','values':['1']}]}}}",
                     "spec.namespaceSelector.matchExpressions[0].operator",
                     "Unsupported value: \"Gt\": supported values: \"In\", \"NotIn\", "
                     "\"Exists\", \"DoesNotExist\"");
    decode_one_error(CQ_HEAD "'spec':{'fairSharing':{'weight':true}}}", "spec.fairSharing.weight",
                     "must be a quantity (string or number), got boolean");
    decode_one_error(CQ_HEAD "'spec':[]}", "spec", "must be of type object, got array");
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue','spec':{}}",
                     "metadata.name", "Required value");
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue',"
                     "'metadata':{'name':5}}",
                     "metadata.name", "must be of type string, got integer");
}
END_TEST

START_TEST(cq_sizes)
{
    /* 17 resource groups: beyond the CRD's MaxItems of 16. */
    char text[8192];
    size_t n = (size_t)snprintf(text, sizeof(text), CQ_HEAD "'spec':{'resourceGroups':[");
    for (int i = 0; i < 17; i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "%s{}", i ? "," : "");
    snprintf(text + n, sizeof(text) - n, "]}}");
    decode_one_error(text, "spec.resourceGroups", "Too many: 17: must have at most 16 items");

    /* 65 flavors in one group. */
    n = (size_t)snprintf(text, sizeof(text),
                         CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':['cpu'],"
                                 "'flavors':[");
    for (int i = 0; i < 65; i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "%s{}", i ? "," : "");
    snprintf(text + n, sizeof(text) - n, "]}]}}");
    decode_one_error(text, "spec.resourceGroups[0].flavors",
                     "Too many: 65: must have at most 64 items");
}
END_TEST

/* ---- ResourceFlavor, Cohort, LocalQueue, WorkloadPriorityClass, Namespace
 * ------------------------ */

START_TEST(flavor)
{
    object_t obj;
    diags_t d;
    const flavor_t *f;

    decode_ok("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':{"
              "'name':'a100','labels':{'tier':'gold'}},'spec':{'nodeLabels':{'gpu':'a100',"
              "'pool':1,'spot':true,'ratio':1.5},'nodeTaints':[{'key':'gpu','value':'true',"
              "'effect':'NoSchedule'}],'tolerations':[{'key':'gpu','operator':'Exists',"
              "'effect':'NoExecute','tolerationSeconds':30},{'key':'a','value':'b'}]}}",
              &obj);
    f = &obj.u.flavor;
    ck_assert_str_eq(f->meta.name, "a100");
    ck_assert_str_eq(kv_list_get(&f->meta.labels, "tier"), "gold");
    ck_assert_uint_eq(f->node_labels.len, 4);
    ck_assert_str_eq(f->node_labels.items[0].key, "gpu"); /* sorted */
    ck_assert_str_eq(kv_list_get(&f->node_labels, "pool"), "1");
    ck_assert_str_eq(kv_list_get(&f->node_labels, "spot"), "true");
    ck_assert_str_eq(kv_list_get(&f->node_labels, "ratio"), "1.5");
    ck_assert_uint_eq(f->ntaints, 1);
    ck_assert_str_eq(f->taints[0].key, "gpu");
    ck_assert_str_eq(f->taints[0].value, "true");
    ck_assert_int_eq(f->taints[0].effect, TAINT_EFFECT_NO_SCHEDULE);
    ck_assert_uint_eq(f->ntolerations, 2);
    ck_assert_int_eq(f->tolerations[0].op, TOLERATION_OP_EXISTS);
    ck_assert_int_eq(f->tolerations[0].effect, TAINT_EFFECT_NO_EXECUTE);
    ck_assert(f->tolerations[0].has_seconds);
    ck_assert_int_eq(f->tolerations[0].seconds, 30);
    ck_assert_int_eq(f->tolerations[1].op, TOLERATION_OP_EQUAL);
    ck_assert_int_eq(f->tolerations[1].effect, TAINT_EFFECT_ANY);
    object_fini(&obj);

    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':"
                     "{'name':'x'},'spec':{'nodeTaints':[{'key':'k','effect':'Sometimes'}]}}",
                     "spec.nodeTaints",
                     "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', "
                     "'NoExecute'");
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':"
                     "{'name':'x'},'spec':{'nodeTaints':[{'key':'k'}]}}",
                     "spec.nodeTaints[0].effect", "Required value");
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':"
                     "{'name':'x'},'spec':{'nodeLabels':{'a':'1','b':'1','c':'1','d':'1','e':'1',"
                     "'f':'1','g':'1','h':'1','i':'1'}}}",
                     "spec.nodeLabels", "Too many: 9: must have at most 8 items");
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':"
                     "{'name':'x'},'spec':{'nodeLabels':{'a':{}}}}",
                     "spec.nodeLabels.a", "must be of type string, got object");
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':"
                     "{'name':'x'},'spec':{'tolerations':[{'key':'a','operator':'Lt'},"
                     "{'key':'b','operator':'Gt'}]}}",
                     "spec.tolerations", "supported toleration values: 'Equal'(default), 'Exists'");
    /* The CRD's CEL rules reject an empty operator or effect (has() is true for ""). */
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':"
                     "{'name':'x'},'spec':{'tolerations':[{'key':'a','operator':''}]}}",
                     "spec.tolerations", "supported toleration values: 'Equal'(default), 'Exists'");
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':"
                     "{'name':'x'},'spec':{'tolerations':[{'key':'a','effect':''}]}}",
                     "spec.tolerations",
                     "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', "
                     "'NoExecute'");
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':"
                     "{'name':'x'},'spec':{'tolerations':[{'key':'a','operator':7}]}}",
                     "spec.tolerations[0].operator", "must be of type string, got integer");

    /* topologyName makes a TAS flavor (no warning); namespace is dropped. */
    ck_assert_int_eq(decode("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor',"
                            "'metadata':{'name':'x','namespace':'ns'},'spec':{'nodeLabels':"
                            "{'a':'b'},'topologyName':'default'}}",
                            &obj, &d),
                     ERR_OK);
    for (size_t i = 0; i < d.len; i++)
        ck_assert_str_ne(d.items[i].path, "spec.topologyName");
    ASSERT_WARN(&d, "metadata.namespace", "ignored: this kind is cluster-scoped");
    ck_assert_ptr_null(obj.u.flavor.meta.namespace);
    ck_assert_str_eq(obj.u.flavor.topology_name, "default");
    object_fini(&obj);
    diags_fini(&d);
}
END_TEST

START_TEST(cohort)
{
    object_t obj;
    diags_t d;

    decode_ok("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Cohort','metadata':{'name':'org'},"
              "'spec':{'parentName':'root','fairSharing':{'weight':'500m'}," RG_OK "}}",
              &obj);
    ck_assert_int_eq(obj.kind, KIND_COHORT);
    ck_assert_str_eq(obj.u.cohort.parent, "root");
    ck_assert(obj.u.cohort.has_fair_weight);
    ck_assert_uint_eq(obj.u.cohort.ngroups, 1);
    ck_assert_uint_eq(obj.u.cohort.groups[0].flavors[0].nresources, 2);
    object_fini(&obj);

    ck_assert_int_eq(decode("{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'Cohort','metadata':"
                            "{'name':'org'},'spec':{'parentName':''}}",
                            &obj, &d),
                     ERR_OK);
    ck_assert_uint_eq(d.nerrors, 0);
    ck_assert_uint_eq(d.len, 1); /* the deprecation warning */
    ck_assert_ptr_null(obj.u.cohort.parent);
    object_fini(&obj);
    diags_fini(&d);
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Cohort','metadata':{'name':"
                     "'org'},'spec':{'cohortName':'x'}}",
                     "spec.cohortName", "unknown field \"cohortName\"");
}
END_TEST

START_TEST(topology)
{
    object_t obj;

    decode_ok("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Topology','metadata':{'name':'dc'},"
              "'spec':{'levels':[{'nodeLabel':'rack'},{'nodeLabel':'kubernetes.io/hostname'}]}}",
              &obj);
    ck_assert_int_eq(obj.kind, KIND_TOPOLOGY);
    ck_assert_uint_eq(obj.u.topology.nlevels, 2);
    ck_assert_str_eq(obj.u.topology.levels[0], "rack");
    ck_assert_str_eq(obj.u.topology.levels[1], "kubernetes.io/hostname");
    object_fini(&obj);
    /* Kueue's CRD does not require spec itself */
    decode_ok("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Topology','metadata':{'name':'dc'}}",
              &obj);
    ck_assert_uint_eq(obj.u.topology.nlevels, 0);
    object_fini(&obj);
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Topology','metadata':{'name':"
                     "'dc'},'spec':{}}",
                     "spec.levels", "Required value");
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Topology','metadata':{'name':"
                     "'dc'},'spec':{'levels':[{'nodeLabel':'rack','label':'x'}]}}",
                     "spec.levels[0].label", "unknown field \"label\"");
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Topology','metadata':{'name':"
                     "'dc'},'spec':{'levels':[]}}",
                     "spec.levels", "Required value: must have at least 1 item");
}
END_TEST

START_TEST(local_queue)
{
    object_t obj;
    diags_t d;

    /* fairSharing is read for admission fair sharing (crosscheck says where it has no effect) */
    ck_assert_int_eq(decode("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue',"
                            "'metadata':{'name':'lq','namespace':'team-a'},'spec':{'clusterQueue':"
                            "'cq','stopPolicy':'Hold','fairSharing':{'weight':3}},'status':"
                            "{'pendingWorkloads':1}}",
                            &obj, &d),
                     ERR_OK);
    ck_assert_uint_eq(d.len, 0);
    diags_fini(&d);
    ck_assert_int_eq(obj.kind, KIND_LOCAL_QUEUE);
    ck_assert(obj.u.lq.has_fair_weight);
    ck_assert(obj.u.lq.fair_weight.nano == 3000000000);
    ck_assert_str_eq(obj.u.lq.meta.namespace, "team-a");
    ck_assert_str_eq(obj.u.lq.cluster_queue, "cq");
    ck_assert_int_eq(obj.u.lq.stop_policy, STOP_POLICY_HOLD);
    ck_assert(obj.u.lq.has_fair_weight);
    object_fini(&obj);
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue','metadata':"
                     "{'name':'lq'},'spec':{}}",
                     "spec.clusterQueue", "Required value");
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue','metadata':"
                     "{'name':'lq'},'spec':{'clusterQueue':'c','stopPolicy':'Pause'}}",
                     "spec.stopPolicy",
                     "Unsupported value: \"Pause\": supported values: \"None\", \"Hold\", "
                     "\"HoldAndDrain\"");
}
END_TEST

START_TEST(admission_check)
{
    object_t obj;

    decode_ok("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'AdmissionCheck','metadata':"
              "{'name':'prov'},'spec':{'controllerName':'kueue.x-k8s.io/provisioning-request',"
              "'parameters':{'apiGroup':'kueue.x-k8s.io','kind':'ProvisioningRequestConfig',"
              "'name':'cfg'}},'status':{'conditions':[{'type':'Active','status':'False',"
              "'reason':'BadConfig','message':'no such config','lastTransitionTime':"
              "'2026-01-01T00:00:00Z'}]}}",
              &obj);
    ck_assert_int_eq(obj.kind, KIND_ADMISSION_CHECK);
    ck_assert_str_eq(obj.u.ac.controller_name, "kueue.x-k8s.io/provisioning-request");
    ck_assert(obj.u.ac.has_parameters);
    ck_assert_str_eq(obj.u.ac.param_kind, "ProvisioningRequestConfig");
    ck_assert_str_eq(obj.u.ac.param_name, "cfg");
    ck_assert_int_eq(obj.u.ac.active, CHECK_ACTIVE_FALSE);
    ck_assert_str_eq(obj.u.ac.active_reason, "BadConfig");
    object_fini(&obj);
    decode_ok("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'AdmissionCheck','metadata':"
              "{'name':'prov'},'spec':{'controllerName':'x'}}",
              &obj);
    ck_assert_int_eq(obj.u.ac.active, CHECK_ACTIVE_UNSET);
    ck_assert(!obj.u.ac.has_parameters);
    object_fini(&obj);
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'AdmissionCheck',"
                     "'metadata':{'name':'prov'},'spec':{}}",
                     "spec.controllerName", "Required value");
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'AdmissionCheck',"
                     "'metadata':{'name':'prov'},'spec':{'controllerName':'x',"
                     "'retryDelayMinutes':15}}",
                     "spec.retryDelayMinutes", "unknown field \"retryDelayMinutes\"");
}
END_TEST

START_TEST(wpc_and_namespace)
{
    object_t obj;

    decode_ok("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'WorkloadPriorityClass','metadata':"
              "{'name':'high'},'value':1000,'description':'important'}",
              &obj);
    ck_assert_int_eq(obj.kind, KIND_WORKLOAD_PRIORITY_CLASS);
    ck_assert_int_eq(obj.u.wpc.value, 1000);
    ck_assert_str_eq(obj.u.wpc.description, "important");
    object_fini(&obj);
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'WorkloadPriorityClass',"
                     "'metadata':{'name':'high'}}",
                     "value", "Required value");
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'WorkloadPriorityClass',"
                     "'metadata':{'name':'high'},'value':'10'}",
                     "value", "must be of type integer, got string");
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'WorkloadPriorityClass',"
                     "'metadata':{'name':'high'},'value':1.5}",
                     "value", "Invalid value: 1.5: must be a 32-bit integer");

    decode_ok("{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'team-a','labels':"
              "{'kubernetes.io/metadata.name':'team-a','team':'a'},'creationTimestamp':null},"
              "'spec':{'finalizers':['kubernetes']},'status':{'phase':'Active'}}",
              &obj);
    ck_assert_int_eq(obj.kind, KIND_NAMESPACE);
    ck_assert_str_eq(kv_list_get(&obj.u.ns.meta.labels, "team"), "a");
    ck_assert_int_eq(obj.u.ns.meta.creation_time, 0);
    object_fini(&obj);
}
END_TEST

/* ---- object_decode envelope
 * ----------------------------------------------------------------------- */

START_TEST(envelope)
{
    object_t obj;
    diags_t d;

    decode_one_error(
        "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Foo'}", "kind",
        "Unsupported value: \"Foo\": supported values: \"Namespace\", "
        "\"ResourceFlavor\", \"ClusterQueue\", \"LocalQueue\", \"Cohort\", "
        "\"WorkloadPriorityClass\", \"Workload\", \"Topology\", \"PriorityClass\", \"Job\", "
        "\"AdmissionCheck\", \"Configuration\"");
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1alpha1','kind':'ClusterQueue'}", "apiVersion",
                     "Unsupported value: \"kueue.x-k8s.io/v1alpha1\": supported values: "
                     "\"kueue.x-k8s.io/v1beta2\", \"kueue.x-k8s.io/v1beta1\"");
    decode_one_error("{'kind':'ClusterQueue'}", "apiVersion", "Required value");
    decode_one_error("{'apiVersion':'v1'}", "kind", "Required value");
    decode_one_error("[]", "", "must be of type object, got array");
    decode_one_error("{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'x'},'foo':1}",
                     "foo", "unknown field \"foo\"");

    /* Several problems are all reported in one pass. */
    ck_assert_int_eq(
        decode(CQ_HEAD "'spec':{'queueingStrategy':'X','stopPolicy':'Y','foo':1}}", &obj, &d),
        ERR_INVALID);
    ck_assert_uint_eq(d.nerrors, 3);
    diags_fini(&d);
}
END_TEST

/* ---- Workload ----------------------------------------------------------------------------------
 */

#define WL_HEAD                                                                         \
    "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Workload','metadata':{'name':'wl'," \
    "'namespace':'ns','creationTimestamp':'2024-05-01T10:00:00Z'},"
#define WL1_HEAD                                                                        \
    "{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'Workload','metadata':{'name':'wl'," \
    "'namespace':'ns'},"
#define PODSET_MIN "{'template':{'spec':{'containers':[{'name':'c'}]}}}"

START_TEST(workload_full)
{
    object_t obj;
    char buf[QUANTITY_STR_MAX];
    const workload_t *wl;
    const pod_set_t *ps;

    decode_ok(WL_HEAD "'spec':{'queueName':'lq','priorityClassRef':{'group':'kueue.x-k8s.io',"
                      "'kind':'WorkloadPriorityClass','name':'high'},'priority':1000,"
                      "'active':false,'maximumExecutionTimeSeconds':3600,'podSets':[{'name':"
                      "'driver','count':1,'template':{'metadata':{'labels':{'app':'x'},"
                      "'annotations':{'a':'b'}},'spec':{'containers':[{'name':'c','image':'i',"
                      "'env':[{'name':'A','value':'1'}],'resources':{'requests':{'cpu':'2'},"
                      "'limits':{'memory':'4Gi'}}}],'nodeSelector':{'pool':'gpu'},'tolerations':"
                      "[{'key':'gpu','operator':'Exists'}],'affinity':{'nodeAffinity':{"
                      "'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':["
                      "{'matchExpressions':[{'key':'zone','operator':'NotIn','values':['z1']},"
                      "{'key':'cores','operator':'Gt','values':['8']}]}]}}},"
                      "'priorityClassName':'pc','volumes':[],'restartPolicy':'Never'}}},"
                      "{'count':4,'minCount':2,'template':{'spec':{'containers':[{'name':'w',"
                      "'resources':{'requests':{'nvidia.com/gpu':'1'}}}]}}}]},"
                      "'status':{'admission':{'clusterQueue':'cq','podSetAssignments':[{'name':"
                      "'driver','flavors':{'cpu':'default'},'resourceUsage':{'cpu':'2'},"
                      "'count':1},{'flavors':{'nvidia.com/gpu':'a100'},'resourceUsage':{"
                      "'nvidia.com/gpu':'4'}}]},'conditions':[{'type':'QuotaReserved','status':"
                      "'True','reason':'QuotaReserved','message':'m','lastTransitionTime':"
                      "'2024-05-01T10:00:05Z'},{'type':'Admitted','status':'True','reason':'x',"
                      "'message':'','lastTransitionTime':'2024-05-01T10:00:10+02:00',"
                      "'observedGeneration':1},{'type':'Finished','status':'False','reason':'r',"
                      "'message':'','lastTransitionTime':'2024-05-01T10:00:00Z'}],"
                      "'accumulatedPastExecutionTimeSeconds':120,'requeueState':{'count':1}}}",
              &obj);
    wl = &obj.u.wl;
    ck_assert_int_eq(obj.kind, KIND_WORKLOAD);
    ck_assert_str_eq(wl->meta.namespace, "ns");
    ck_assert_int_eq(wl->meta.creation_time, 1714557600);
    ck_assert_str_eq(wl->queue_name, "lq");
    ck_assert_int_eq(wl->priority_source, PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS);
    ck_assert_int_eq(wl->priority_kind, PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS);
    ck_assert_str_eq(wl->priority_class, "high");
    ck_assert(wl->has_priority);
    ck_assert_int_eq(wl->priority, 1000);
    ck_assert(!wl->active);
    ck_assert(wl->has_max_exec_seconds);
    ck_assert_int_eq(wl->max_exec_seconds, 3600);
    ck_assert_uint_eq(wl->npod_sets, 2);
    ps = &wl->pod_sets[0];
    ck_assert_str_eq(ps->name, "driver");
    ck_assert_int_eq(ps->count, 1);
    ck_assert_str_eq(kv_list_get(&ps->template_labels, "app"), "x");
    ck_assert_str_eq(kv_list_get(&ps->template_annotations, "a"), "b");
    ck_assert_str_eq(kv_list_get(&ps->spec.node_selector, "pool"), "gpu");
    ck_assert_uint_eq(ps->spec.ntolerations, 1);
    ck_assert_uint_eq(ps->spec.naffinity_terms, 1);
    ck_assert_uint_eq(ps->spec.affinity_terms[0].nexprs, 2);
    ck_assert_int_eq(ps->spec.affinity_terms[0].exprs[1].op, SELECTOR_OP_GT);
    ck_assert_str_eq(ps->spec.priority_class_name, "pc");
    ck_assert_uint_eq(ps->pod_requests.len, 2);
    ck_assert_str_eq(fmtq(*resource_list_get(&ps->pod_requests, "memory"), buf), "4Gi");
    ps = &wl->pod_sets[1];
    ck_assert_str_eq(ps->name, "main"); /* default */
    ck_assert_int_eq(ps->count, 4);
    ck_assert(ps->has_min_count);
    ck_assert_int_eq(ps->min_count, 2);
    ck_assert_str_eq(fmtq(*resource_list_get(&ps->pod_requests, "nvidia.com/gpu"), buf), "1");
    ck_assert_ptr_nonnull(wl->admission);
    ck_assert_str_eq(wl->admission->cluster_queue, "cq");
    ck_assert_uint_eq(wl->admission->nassignments, 2);
    ck_assert_str_eq(wl->admission->assignments[1].name, "main");
    ck_assert(wl->admission->assignments[0].has_count);
    ck_assert(!wl->admission->assignments[1].has_count);
    ck_assert_str_eq(kv_list_get(&wl->admission->assignments[1].flavors, "nvidia.com/gpu"), "a100");
    ck_assert(wl->conditions.quota_reserved);
    ck_assert(wl->conditions.admitted);
    ck_assert(!wl->conditions.finished);
    ck_assert_int_eq(wl->conditions.admitted_time, 1714557600 + 10 - 7200);
    ck_assert_int_eq(wl->accumulated_exec_seconds, 120);
    object_fini(&obj);
}
END_TEST

START_TEST(workload_defaults_v1beta1)
{
    object_t obj;
    diags_t d;

    decode_ok(WL_HEAD "'spec':{'podSets':[" PODSET_MIN "]}}", &obj);
    ck_assert(obj.u.wl.active);
    ck_assert_int_eq(obj.u.wl.priority_source, PRIORITY_SOURCE_NONE);
    ck_assert(!obj.u.wl.has_priority);
    ck_assert_str_eq(obj.u.wl.pod_sets[0].name, "main");
    ck_assert_int_eq(obj.u.wl.pod_sets[0].count, 1);
    ck_assert_ptr_null(obj.u.wl.admission);
    object_fini(&obj);

    ck_assert_int_eq(decode(WL1_HEAD
                            "'spec':{'priorityClassName':'pc','priorityClassSource':"
                            "'scheduling.k8s.io/priorityclass','priority':5,'podSets':[" PODSET_MIN
                            "]},'status':{'accumulatedPastExexcutionTimeSeconds':7}}",
                            &obj, &d),
                     ERR_OK);
    ck_assert_uint_eq(d.nerrors, 0);
    ck_assert_int_eq(obj.u.wl.priority_source, PRIORITY_SOURCE_PRIORITY_CLASS);
    ck_assert_int_eq(obj.u.wl.priority_kind, PRIORITY_SOURCE_PRIORITY_CLASS);
    ck_assert_str_eq(obj.u.wl.priority_class, "pc");
    ck_assert_int_eq(obj.u.wl.accumulated_exec_seconds, 7);
    object_fini(&obj);
    diags_fini(&d);

    ck_assert_int_eq(decode(WL1_HEAD "'spec':{'priorityClassName':'w','priorityClassSource':"
                                     "'kueue.x-k8s.io/workloadpriorityclass','podSets':[" PODSET_MIN
                                     "]}}",
                            &obj, &d),
                     ERR_OK);
    ck_assert_int_eq(obj.u.wl.priority_source, PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS);
    object_fini(&obj);
    diags_fini(&d);

    /* Field names of the other version are unknown. */
    ck_assert_int_eq(decode(WL1_HEAD "'spec':{'priorityClassRef':{},'podSets':[" PODSET_MIN
                                     "]},'status':{'accumulatedPastExecutionTimeSeconds':1}}",
                            &obj, &d),
                     ERR_INVALID);
    ASSERT_ERR(&d, "spec.priorityClassRef", "unknown field \"priorityClassRef\"");
    /* v1beta1 spells it as Kueue's v1beta1 did, which the suggestion names. */
    ASSERT_ERR(&d, "status.accumulatedPastExecutionTimeSeconds",
               "unknown field \"accumulatedPastExecutionTimeSeconds\"; did you mean "
               "\"accumulatedPastExexcutionTimeSeconds\"?");
    diags_fini(&d);
    decode_one_error(WL_HEAD "'spec':{'priorityClassName':'x','podSets':[" PODSET_MIN "]}}",
                     "spec.priorityClassName", "unknown field \"priorityClassName\"");
    decode_one_error(WL1_HEAD "'spec':{'priorityClassSource':'x','podSets':[" PODSET_MIN "]}}",
                     "spec.priorityClassSource",
                     "Unsupported value: \"x\": supported values: "
                     "\"kueue.x-k8s.io/workloadpriorityclass\", "
                     "\"scheduling.k8s.io/priorityclass\", \"\"");
}
END_TEST

START_TEST(workload_errors)
{
    object_t obj;
    diags_t d;
    char text[8192];
    size_t n;

    decode_one_error(WL_HEAD "'spec':{}}", "spec.podSets", "Required value");
    decode_one_error(WL_HEAD "'spec':{'podSets':[]}}", "spec.podSets",
                     "Required value: must have at least 1 item");
    decode_one_error(WL_HEAD "'spec':{'podSets':[{'count':1}]}}", "spec.podSets[0].template",
                     "Required value");
    decode_one_error(WL_HEAD "'spec':{'podSets':[{'template':{'spec':{}}}]}}",
                     "spec.podSets[0].template.spec.containers", "Required value");
    decode_one_error(WL_HEAD "'spec':{'podSets':[{'template':{}}]}}",
                     "spec.podSets[0].template.spec", "Required value");
    decode_one_error(WL_HEAD "'spec':{'podSets':[{'count':'3','template':{'spec':{'containers':"
                             "[{'name':'c'}]}}}]}}",
                     "spec.podSets[0].count", "must be of type integer, got string");
    decode_one_error(WL_HEAD "'spec':{'podSets':[{'count':2147483648,'template':{'spec':{"
                             "'containers':[{'name':'c'}]}}}]}}",
                     "spec.podSets[0].count",
                     "Invalid value: 2147483648: must be a 32-bit integer");
    decode_one_error(WL_HEAD "'spec':{'podSets':[{'template':{'spec':{'containers':[{'name':'c',"
                             "'resurces':{}}]}}}]}}",
                     "spec.podSets[0].template.spec.containers[0].resurces",
                     "unknown field \"resurces\"; did you mean \"resources\"?");
    decode_one_error(WL_HEAD "'spec':{'podSets':[{'template':{'spec':{'containers':[{'name':'c',"
                             "'resources':{'requests':{'cpu':'1x'}}}]}}}]}}",
                     "spec.podSets[0].template.spec.containers[0].resources.requests.cpu",
                     "invalid quantity \"1x\"");
    decode_one_error(WL_HEAD "'spec':{'podSets':[{'template':{'spec':{'containers':[{"
                             "'image':'x'}]}}}]}}",
                     "spec.podSets[0].template.spec.containers[0].name", "Required value");
    decode_one_error(WL_HEAD "'spec':{'podSets':[{'template':{'spec':{'nodeSelectr':{},"
                             "'containers':[{'name':'c'}]}}}]}}",
                     "spec.podSets[0].template.spec.nodeSelectr",
                     "unknown field \"nodeSelectr\"; did you mean \"nodeSelector\"?");
    decode_one_error(WL_HEAD "'spec':{'podSets':[" PODSET_MIN "],'priorityClassRef':{'group':"
                             "'example.com','kind':'PriorityClass','name':'p'}}}",
                     "spec.priorityClassRef.group",
                     "Unsupported value: \"example.com\": supported values: \"kueue.x-k8s.io\", "
                     "\"scheduling.k8s.io\"");
    decode_one_error(WL_HEAD "'spec':{'podSets':[" PODSET_MIN "],'priorityClassRef':{'group':"
                             "'kueue.x-k8s.io','kind':'WorkloadPriorityClass'}}}",
                     "spec.priorityClassRef.name", "Required value");
    decode_one_error(WL_HEAD "'spec':{'podSets':[" PODSET_MIN "]},'status':{'conditions':[{"
                             "'type':'Admitted','status':'Maybe'}]}}",
                     "status.conditions[0].status",
                     "Unsupported value: \"Maybe\": supported values: \"True\", \"False\", "
                     "\"Unknown\"");
    decode_one_error(WL_HEAD "'spec':{'podSets':[" PODSET_MIN "]},'status':{'admission':{"
                             "'podSetAssignments':[]}}}",
                     "status.admission.clusterQueue", "Required value");
    decode_one_error(WL_HEAD "'spec':{'podSets':[" PODSET_MIN "]},'status':{'conditions':[{"
                             "'type':'Admitted','status':'True','lastTransitionTime':'yesterday'"
                             "}]}}",
                     "status.conditions[0].lastTransitionTime",
                     "Invalid value: \"yesterday\": must be an RFC 3339 timestamp");

    /* 19 podsets: beyond MaxPodSets 18. */
    n = (size_t)snprintf(text, sizeof(text), WL_HEAD "'spec':{'podSets':[");
    for (int i = 0; i < 19; i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "%s" PODSET_MIN, i ? "," : "");
    snprintf(text + n, sizeof(text) - n, "]}}");
    decode_one_error(text, "spec.podSets", "Too many: 19: must have at most 18 items");

    /* The group/kind mismatch decodes (validate.c reports it from priority_kind). */
    ck_assert_int_eq(decode(WL_HEAD "'spec':{'podSets':[" PODSET_MIN "],'priority':1,"
                                    "'priorityClassRef':{'group':'scheduling.k8s.io','kind':"
                                    "'WorkloadPriorityClass','name':'p'}}}",
                            &obj, &d),
                     ERR_OK);
    ck_assert_int_eq(obj.u.wl.priority_source, PRIORITY_SOURCE_PRIORITY_CLASS);
    ck_assert_int_eq(obj.u.wl.priority_kind, PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS);
    object_fini(&obj);
    diags_fini(&d);

    /* Known-but-unused Kueue fields are warnings. A topologyRequest is kept as the pod-template
     * annotations Kueue builds it from (the engine reads it), its pod-index fields warned. */
    ck_assert_int_eq(
        decode(WL_HEAD "'spec':{'podSets':[{'topologyRequest':{'required':'rack','unconstrained':"
                       "false,'podSetSliceSize':2,'podSetGroupName':'g','podIndexLabel':'i',"
                       "'podsetSliceRequiredTopologyConstraints':[{'topology':'rack','size':4},"
                       "{'topology':'host','size':2}]},"
                       "'template':{'spec':{'containers':[{'name':'c'}]}}}],"
                       "'preemptionGates':[]}}",
               &obj, &d),
        ERR_OK);
    ASSERT_WARN(&d, "spec.podSets[0].topologyRequest.podIndexLabel",
                "field \"podIndexLabel\" is accepted but not supported by sluice; it has no "
                "effect");
    {
        const kv_list_t *tr = &obj.u.wl.pod_sets[0].topology_request;
        ck_assert(obj.u.wl.pod_sets[0].has_topology_request);
        ck_assert_str_eq(kv_list_get(tr, "kueue.x-k8s.io/podset-required-topology"), "rack");
        ck_assert_str_eq(kv_list_get(tr, "kueue.x-k8s.io/podset-unconstrained-topology"), "false");
        ck_assert_str_eq(kv_list_get(tr, "kueue.x-k8s.io/podset-slice-size"), "2");
        ck_assert_str_eq(kv_list_get(tr, "kueue.x-k8s.io/podset-group-name"), "g");
        ck_assert_str_eq(
            kv_list_get(tr, "kueue.x-k8s.io/podset-slice-required-topology-constraints"),
            "[{\"topology\":\"rack\",\"size\":4},{\"topology\":\"host\",\"size\":2}]");
    }
    ASSERT_WARN(&d, "spec.preemptionGates",
                "field \"preemptionGates\" is accepted but not supported by sluice; it has no "
                "effect");
    object_fini(&obj);
    diags_fini(&d);
}
END_TEST

/* The status fields validate.c reads: conditions as written, reclaimablePods, admissionChecks with
 * podSetUpdates, clusterName / nominatedClusterNames; and the ClusterQueue's onFlavors. */
START_TEST(workload_status)
{
    object_t obj;
    const workload_t *wl;
    const admission_check_state_t *cs;
    const pod_set_update_t *u;
    diags_t d;

    decode_ok(WL_HEAD "'spec':{'podSets':[" PODSET_MIN "]},'status':{'conditions':[{'type':"
                      "'QuotaReserved','status':'True','reason':'QuotaReserved','message':'m',"
                      "'observedGeneration':3,'lastTransitionTime':'2024-05-01T10:00:00Z'},"
                      "{'type':'Custom','status':'Unknown'}],'reclaimablePods':[{'name':'main',"
                      "'count':1}],'admissionChecks':[{'name':'prov','state':'Ready','message':"
                      "'','lastTransitionTime':'2024-05-01T10:00:00Z','retryCount':2,"
                      "'requeueAfterSeconds':0,'podSetUpdates':[{'name':'main','labels':{'a':'b'},"
                      "'annotations':{'c':'d'},'nodeSelector':{'zone':'z1'},'tolerations':[{'key':"
                      "'gpu','operator':'Exists','effect':'NoSchedule'}]}]}],'clusterName':'w1',"
                      "'nominatedClusterNames':['w1','w2'],'requeueState':{'count':1},"
                      "'unhealthyNodes':[{'name':'n1'},{'name':'n2'}]}}",
              &obj);
    wl = &obj.u.wl;
    ck_assert_uint_eq(wl->nstatus_conditions, 2);
    ck_assert_str_eq(wl->status_conditions[0].type, "QuotaReserved");
    ck_assert_str_eq(wl->status_conditions[0].status, "True");
    ck_assert_str_eq(wl->status_conditions[0].reason, "QuotaReserved");
    ck_assert_str_eq(wl->status_conditions[0].message, "m");
    ck_assert(wl->status_conditions[0].has_transition_time);
    ck_assert_int_eq(wl->status_conditions[0].transition_time, 1714557600);
    ck_assert_int_eq(wl->status_conditions[0].observed_generation, 3);
    ck_assert_str_eq(wl->status_conditions[1].status, "Unknown");
    ck_assert_ptr_null(wl->status_conditions[1].reason);
    ck_assert(!wl->status_conditions[1].has_transition_time);
    ck_assert(wl->conditions.quota_reserved);
    ck_assert_uint_eq(wl->nreclaimable_pods, 1);
    ck_assert_str_eq(wl->reclaimable_pods[0].name, "main");
    ck_assert_int_eq(wl->reclaimable_pods[0].count, 1);
    ck_assert_uint_eq(wl->ncheck_states, 1);
    cs = &wl->check_states[0];
    ck_assert_str_eq(cs->name, "prov");
    ck_assert_int_eq(cs->state, CHECK_STATE_READY);
    ck_assert_str_eq(cs->message, "");
    ck_assert_uint_eq(cs->nupdates, 1);
    u = &cs->updates[0];
    ck_assert_str_eq(u->name, "main");
    ck_assert_str_eq(kv_list_get(&u->labels, "a"), "b");
    ck_assert_str_eq(kv_list_get(&u->annotations, "c"), "d");
    ck_assert_str_eq(kv_list_get(&u->node_selector, "zone"), "z1");
    ck_assert_uint_eq(u->ntolerations, 1);
    ck_assert_int_eq(u->tolerations[0].op, TOLERATION_OP_EXISTS);
    ck_assert_str_eq(wl->cluster_name, "w1");
    ck_assert_uint_eq(wl->nnominated_clusters, 2);
    ck_assert_str_eq(wl->nominated_clusters[1], "w2");
    ck_assert_uint_eq(wl->nunhealthy_nodes, 2);
    ck_assert_str_eq(wl->unhealthy_nodes[0], "n1");
    ck_assert_str_eq(wl->unhealthy_nodes[1], "n2");
    object_fini(&obj);

    /* status.unhealthyNodes: a name each, at most 8 (the CRD's maxItems) */
    decode_one_error(WL_HEAD "'spec':{'podSets':[" PODSET_MIN "]},'status':{'unhealthyNodes':"
                             "[{}]}}",
                     "status.unhealthyNodes[0].name", "Required value");
    decode_one_error(WL_HEAD "'spec':{'podSets':[" PODSET_MIN "]},'status':{'unhealthyNodes':"
                             "[{'name':'a'},{'name':'b'},{'name':'c'},{'name':'d'},{'name':'e'},"
                             "{'name':'f'},{'name':'g'},{'name':'h'},{'name':'i'}]}}",
                     "status.unhealthyNodes", "Too many: 9: must have at most 8 items");

    /* A repeated condition type does not override the first (Kueue's FindStatusCondition). */
    decode_ok(WL_HEAD "'spec':{'podSets':[" PODSET_MIN "]},'status':{'conditions':[{'type':"
                      "'QuotaReserved','status':'True'},{'type':'QuotaReserved','status':"
                      "'False'}]}}",
              &obj);
    ck_assert(obj.u.wl.conditions.quota_reserved);
    ck_assert_uint_eq(obj.u.wl.nstatus_conditions, 2);
    object_fini(&obj);

    decode_one_error(
        WL_HEAD "'spec':{'podSets':[" PODSET_MIN "]},'status':{'reclaimablePods':"
                "[{'name':'main','count':-1}]}}",
        "status.reclaimablePods[0].count",
        "status.reclaimablePods[0].count in body should be greater than or equal to 0");
    decode_one_error(WL_HEAD "'spec':{'podSets':[" PODSET_MIN "]},'status':{'reclaimablePods':"
                             "[{'name':'main'}]}}",
                     "status.reclaimablePods[0].count", "Required value");
    decode_one_error(WL_HEAD "'spec':{'podSets':[" PODSET_MIN "]},'status':{'admissionChecks':"
                             "[{'name':'c','state':'Done'}]}}",
                     "status.admissionChecks[0].state",
                     "Unsupported value: \"Done\": supported values: \"Pending\", \"Ready\", "
                     "\"Retry\", \"Rejected\"");
    decode_one_error(WL_HEAD "'spec':{'podSets':[" PODSET_MIN "]},'status':{'admissionChecks':"
                             "[{'name':'c'}]}}",
                     "status.admissionChecks[0].state", "Required value");
    decode_one_error(WL_HEAD "'spec':{'podSets':[" PODSET_MIN "]},'status':{'admissionChecks':"
                             "[{'name':'c','state':'Ready','podSetUpdates':[{'name':'main',"
                             "'tolerations':[{'key':'a','operator':'In'}]}]}]}}",
                     "status.admissionChecks[0].podSetUpdates[0].tolerations",
                     "supported toleration values: 'Equal'(default), 'Exists'");
    decode_one_error(WL_HEAD "'spec':{'podSets':[" PODSET_MIN "]},'status':{'admissionChecks':"
                             "[{'name':'c','state':'Ready','podSetUpdates':[{'labels':{}}]}]}}",
                     "status.admissionChecks[0].podSetUpdates[0].name", "Required value");
    decode_one_error(WL_HEAD "'spec':{'podSets':[" PODSET_MIN "]},'status':{'conditions':"
                             "[{'type':'A','status':'Yes'}]}}",
                     "status.conditions[0].status",
                     "Unsupported value: \"Yes\": supported values: \"True\", \"False\", "
                     "\"Unknown\"");
    decode_one_error(WL_HEAD "'spec':{'podSets':[" PODSET_MIN "]},'status':{'clusterName':5}}",
                     "status.clusterName", "must be of type string, got integer");

    ck_assert_int_eq(decode(CQ_HEAD "'spec':{" RG_OK ",'admissionChecksStrategy':{"
                                    "'admissionChecks':[{'name':'prov','onFlavors':['f1','f2']},"
                                    "{'name':'other'}]}}}",
                            &obj, &d),
                     ERR_OK);
    ck_assert_uint_eq(d.nerrors, 0);
    diags_fini(&d);
    ck_assert_uint_eq(obj.u.cq.ncheck_rules, 2);
    ck_assert_str_eq(obj.u.cq.check_rules[0].name, "prov");
    ck_assert_uint_eq(obj.u.cq.check_rules[0].non_flavors, 2);
    ck_assert_str_eq(obj.u.cq.check_rules[0].on_flavors[1], "f2");
    ck_assert_uint_eq(obj.u.cq.check_rules[1].non_flavors, 0);
    ck_assert_uint_eq(obj.u.cq.nadmission_checks, 2);
    ck_assert_str_eq(obj.u.cq.admission_checks[1], "other");
    object_fini(&obj);
}
END_TEST

/* ---- Job, PriorityClass, Configuration
 * ------------------------------------------------------------- */

START_TEST(job)
{
    object_t obj;
    const job_t *j;

    decode_ok("{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'train','namespace':'ml',"
              "'uid':'u-1','generation':2,'labels':{'kueue.x-k8s.io/queue-name':'lq'},"
              "'annotations':{'kueue.x-k8s.io/job-min-parallelism':'2'}},'spec':{'parallelism':4,"
              "'completions':8,'suspend':true,'backoffLimit':3,'completionMode':'Indexed',"
              "'template':{'metadata':{'labels':{'app':'train'},'annotations':{'x':'y'}},"
              "'spec':{'restartPolicy':'Never','initContainers':[{'name':'side','restartPolicy':"
              "'Always','image':'s'}],'containers':[{'name':'c','image':'img','command':['a'],"
              "'resources':{'limits':{'nvidia.com/gpu':1}}}]}}},'status':{'active':2,"
              "'succeeded':1,'failed':3,'startTime':'2024-01-01T00:00:00Z','conditions':[{"
              "'type':'Complete','status':'True','lastProbeTime':'2024-01-01T00:00:00Z'},{"
              "'type':'Failed','status':'False'}]}}",
              &obj);
    j = &obj.u.job;
    ck_assert_int_eq(obj.kind, KIND_JOB);
    ck_assert_str_eq(j->meta.uid, "u-1");
    ck_assert_int_eq(j->meta.generation, 2);
    ck_assert_int_eq(j->parallelism, 4);
    ck_assert(j->has_completions);
    ck_assert_int_eq(j->completions, 8);
    ck_assert(j->suspend);
    ck_assert(j->indexed);
    ck_assert_str_eq(kv_list_get(&j->template_labels, "app"), "train");
    ck_assert_str_eq(kv_list_get(&j->template_annotations, "x"), "y");
    ck_assert_uint_eq(j->spec.ninit_containers, 1);
    ck_assert(j->spec.init_containers[0].restartable);
    ck_assert_uint_eq(j->spec.containers[0].limits.len, 1);
    ck_assert_int_eq(j->active, 2);
    ck_assert_int_eq(j->succeeded, 1);
    ck_assert_int_eq(j->failed, 3);
    ck_assert(j->complete);
    ck_assert(!j->failed_cond);
    object_fini(&obj);

    decode_one_error("{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j'},'spec':{}}",
                     "spec.template", "Required value");
    decode_one_error("{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j'},'spec':{"
                     "'suspend':'yes','template':{'spec':{'containers':[{'name':'c'}]}}}}",
                     "spec.suspend", "must be of type boolean, got string");
    decode_one_error("{'apiVersion':'batch/v2','kind':'Job'}", "apiVersion",
                     "Unsupported value: \"batch/v2\": supported values: \"batch/v1\"; did you "
                     "mean \"batch/v1\"?");
    /* generateName stands in for name. */
    decode_ok("{'apiVersion':'batch/v1','kind':'Job','metadata':{'generateName':'j-'},'spec':{"
              "'template':{'spec':{'containers':[{'name':'c'}]}}}}",
              &obj);
    ck_assert_ptr_null(obj.u.job.meta.name);
    ck_assert_str_eq(obj.u.job.meta.generate_name, "j-");
    object_fini(&obj);
}
END_TEST

START_TEST(priority_class)
{
    object_t obj;

    decode_ok("{'apiVersion':'scheduling.k8s.io/v1','kind':'PriorityClass','metadata':{'name':"
              "'high'},'value':100000,'globalDefault':true,'description':'d',"
              "'preemptionPolicy':'Never'}",
              &obj);
    ck_assert_int_eq(obj.kind, KIND_PRIORITY_CLASS);
    ck_assert_int_eq(obj.u.pc.value, 100000);
    ck_assert(obj.u.pc.global_default);
    object_fini(&obj);
    decode_one_error("{'apiVersion':'scheduling.k8s.io/v1','kind':'PriorityClass','metadata':{"
                     "'name':'x'}}",
                     "value", "Required value");
    decode_one_error("{'apiVersion':'scheduling.k8s.io/v1','kind':'PriorityClass','metadata':{"
                     "'name':'x'},'value':1,'preemptionPolicy':'Always'}",
                     "preemptionPolicy",
                     "Unsupported value: \"Always\": supported values: \"PreemptLowerPriority\", "
                     "\"Never\"");
}
END_TEST

START_TEST(configuration)
{
    object_t obj;
    diags_t d;
    const configuration_t *c;

    ck_assert_int_eq(decode("{'apiVersion':'config.kueue.x-k8s.io/v1beta2','kind':"
                            "'Configuration','namespace':'sys','manageJobsWithoutQueueName':true,"
                            "'fairSharing':{'preemptionStrategies':['LessThanInitialShare']},"
                            "'integrations':{'frameworks':['batch/job']},'waitForPodsReady':{}}",
                            &obj, &d),
                     ERR_OK);
    ck_assert_uint_eq(d.nerrors, 0);
    /* integrations is read by `sluice run` (the simulator warns it has no effect there, from
     * run_only), waitForPodsReady by both: no warning while decoding */
    ck_assert_uint_eq(d.len, 0);
    c = &obj.u.config;
    ck_assert_uint_eq(c->nrun_only, 1);
    ck_assert_str_eq(c->run_only[0], "integrations");
    ck_assert(c->pods_ready.enabled);
    ck_assert_uint_eq(c->pods_ready.timeout_ms, 1800000);
    ck_assert(c->fair_sharing);
    ck_assert_uint_eq(c->nstrategies, 1);
    ck_assert_int_eq(c->strategies[0], FS_STRATEGY_LESS_THAN_INITIAL_SHARE);
    ck_assert(c->manage_jobs_without_queue_name);
    /* Default managedJobsNamespaceSelector: name NotIn [kube-system, <namespace>]. */
    ck_assert(c->managed_jobs_namespace_selector.present);
    ck_assert_uint_eq(c->managed_jobs_namespace_selector.nexprs, 1);
    ck_assert_str_eq(c->managed_jobs_namespace_selector.exprs[0].key,
                     "kubernetes.io/metadata.name");
    ck_assert_int_eq(c->managed_jobs_namespace_selector.exprs[0].op, SELECTOR_OP_NOT_IN);
    ck_assert_str_eq(c->managed_jobs_namespace_selector.exprs[0].values[1], "sys");
    object_fini(&obj);
    diags_fini(&d);

    decode_ok("{'apiVersion':'config.kueue.x-k8s.io/v1beta2','kind':'Configuration',"
              "'managedJobsNamespaceSelector':{'matchLabels':{'managed':'yes'}}}",
              &obj);
    ck_assert(!obj.u.config.fair_sharing);
    ck_assert_uint_eq(obj.u.config.nstrategies, 0);
    ck_assert_str_eq(
        kv_list_get(&obj.u.config.managed_jobs_namespace_selector.match_labels, "managed"), "yes");
    object_fini(&obj);

    /* v1beta1: fairSharing.enable decides. */
    ck_assert_int_eq(decode("{'apiVersion':'config.kueue.x-k8s.io/v1beta1','kind':"
                            "'Configuration','fairSharing':{'enable':false}}",
                            &obj, &d),
                     ERR_OK);
    ck_assert(!obj.u.config.fair_sharing);
    object_fini(&obj);
    diags_fini(&d);
    ck_assert_int_eq(decode("{'apiVersion':'config.kueue.x-k8s.io/v1beta1','kind':"
                            "'Configuration','fairSharing':{'enable':true}}",
                            &obj, &d),
                     ERR_OK);
    ck_assert(obj.u.config.fair_sharing);
    object_fini(&obj);
    diags_fini(&d);

    decode_one_error("{'apiVersion':'config.kueue.x-k8s.io/v1beta2','kind':'Configuration',"
                     "'fairSharing':{'enable':true}}",
                     "fairSharing.enable", "unknown field \"enable\"");
    decode_one_error("{'apiVersion':'config.kueue.x-k8s.io/v1beta2','kind':'Configuration',"
                     "'fairSharing':{'preemptionStrategies':['Fair']}}",
                     "fairSharing.preemptionStrategies[0]",
                     "Unsupported value: \"Fair\": supported values: "
                     "\"LessThanOrEqualToFinalShare\", \"LessThanInitialShare\"");
    decode_one_error("{'apiVersion':'config.kueue.x-k8s.io/v1beta2','kind':'Configuration',"
                     "'manageJobsWithoutQueueName':'true'}",
                     "manageJobsWithoutQueueName", "must be of type boolean, got string");
    decode_one_error("{'apiVersion':'config.kueue.x-k8s.io/v1beta2','kind':'Configuration',"
                     "'bogus':1}",
                     "bogus", "unknown field \"bogus\"");
}
END_TEST

/* ---- jsonx: Go float formatting, times, paths
 * ---------------------------------------------------------- */

START_TEST(go_floats)
{
    static const struct {
        double f;
        const char *want;
    } cases[] = {
        {1.5, "1.5"},
        {1.0, "1"},
        {0.1, "0.1"},
        {100000, "100000"},
        {123456, "123456"},
        {1e6, "1e+06"},
        {1234567, "1.234567e+06"},
        {0.0001, "0.0001"},
        {0.00001, "1e-05"},
        {-2.5, "-2.5"},
        {0.0, "0"},
        {1e21, "1e+21"},
        {3.14159, "3.14159"},
        {1.5e-7, "1.5e-07"},
        {123.456, "123.456"},
        {0.3, "0.3"},
        {2.0 / 3.0, "0.6666666666666666"},
        {1e100, "1e+100"},
    };
    char buf[64];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ck_assert_str_eq(jsonx_format_go_float(cases[i].f, buf, sizeof(buf)), cases[i].want);
}
END_TEST

START_TEST(times)
{
    int64_t t;

    ck_assert(jsonx_parse_time("1970-01-01T00:00:00Z", &t));
    ck_assert_int_eq(t, 0);
    ck_assert(jsonx_parse_time("2024-02-29T12:00:00.123456Z", &t));
    ck_assert_int_eq(t, 1709208000);
    ck_assert(jsonx_parse_time("2024-02-29T12:00:00-01:30", &t));
    ck_assert_int_eq(t, 1709208000 + 5400);
    ck_assert(!jsonx_parse_time("2023-02-29T12:00:00Z", &t));
    ck_assert(!jsonx_parse_time("2024-01-01 00:00:00Z", &t));
    ck_assert(!jsonx_parse_time("2024-01-01T00:00:00", &t));
    ck_assert(!jsonx_parse_time("2024-01-01T24:00:00Z", &t));
    ck_assert(!jsonx_parse_time("2024-01-01T00:00:00Zjunk", &t));
    ck_assert(!jsonx_parse_time("", &t));
}
END_TEST

START_TEST(paths)
{
    jsonx_t jx;
    diags_t d;
    char key[2000];
    size_t m1, m2;

    diags_init(&d);
    jsonx_init(&jx, &d);
    m1 = jsonx_push_key(&jx, "spec");
    m2 = jsonx_push_index(&jx, 3);
    ck_assert_str_eq(jx.path, "spec[3]");
    jsonx_pop(&jx, m2);
    jsonx_pop(&jx, m1);
    ck_assert_str_eq(jx.path, "");
    /* A hostile key longer than the path buffer is cut, and popping restores the parent. */
    memset(key, 'k', sizeof(key) - 1);
    key[sizeof(key) - 1] = '\0';
    m1 = jsonx_push_key(&jx, "spec");
    m2 = jsonx_push_key(&jx, key);
    ck_assert_uint_eq(strlen(jx.path), JSONX_PATH_MAX - 1);
    ck_assert_str_eq(jx.path + JSONX_PATH_MAX - 4, "...");
    jsonx_pop(&jx, m2);
    ck_assert_str_eq(jx.path, "spec");
    jsonx_pop(&jx, m1);
    diags_fini(&d);
}
END_TEST

/* ---- YAML 1.1 scalars through the YAML loader
 * ---------------------------------------------------- */

typedef struct yaml_docs_s {
    object_t objs[4];
    size_t n;
    size_t nerrors;
} yaml_docs_t;

static err_t on_doc(void *ctx, size_t index, int line, json_t *doc)
{
    yaml_docs_t *y = ctx;
    diags_t d;

    (void)index;
    (void)line;
    ck_assert_uint_lt(y->n, 4);
    diags_init(&d);
    if (object_decode(doc, &y->objs[y->n], &d) != ERR_OK) {
        dump(&d);
        y->nerrors += d.nerrors;
    }
    y->n++;
    diags_fini(&d);
    return ERR_OK;
}

START_TEST(yaml_scalars)
{
    static const char text[] =
        "apiVersion: kueue.x-k8s.io/v1beta2\n"
        "kind: ResourceFlavor\n"
        "metadata:\n"
        "  name: a100\n"
        "  labels: {tier: 1, spot: yes, ratio: 1.50, flag: off, quoted: \"007\"}\n"
        "spec:\n"
        "  nodeLabels:\n"
        "    gpu-count: 8\n"
        "    spot: true\n"
        "    gen: 3.0\n"
        "---\n"
        "# a comment-only document in between is skipped\n"
        "---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\n"
        "kind: ClusterQueue\n"
        "metadata: {name: cq}\n"
        "spec:\n"
        "  namespaceSelector: {}\n"
        "  resourceGroups:\n"
        "  - coveredResources: [cpu, memory]\n"
        "    flavors:\n"
        "    - name: a100\n"
        "      resources:\n"
        "      - {name: cpu, nominalQuota: 1.5}\n"
        "      - {name: memory, nominalQuota: 64Gi, lendingLimit: 0}\n";
    yaml_docs_t y;
    err_msg_t msg;
    char buf[QUANTITY_STR_MAX];
    const flavor_t *f;
    const resource_quota_t *q;

    memset(&y, 0, sizeof(y));
    ck_assert_int_eq(yaml_load_string(text, strlen(text), on_doc, &y, &msg), ERR_OK);
    ck_assert_uint_eq(y.n, 2);
    ck_assert_uint_eq(y.nerrors, 0);
    f = &y.objs[0].u.flavor;
    ck_assert_str_eq(kv_list_get(&f->meta.labels, "tier"), "1");
    ck_assert_str_eq(kv_list_get(&f->meta.labels, "spot"), "true"); /* YAML 1.1 yes */
    ck_assert_str_eq(kv_list_get(&f->meta.labels, "ratio"), "1.5");
    ck_assert_str_eq(kv_list_get(&f->meta.labels, "flag"), "false");
    ck_assert_str_eq(kv_list_get(&f->meta.labels, "quoted"), "007");
    ck_assert_str_eq(kv_list_get(&f->node_labels, "gpu-count"), "8");
    ck_assert_str_eq(kv_list_get(&f->node_labels, "spot"), "true");
    ck_assert_str_eq(kv_list_get(&f->node_labels, "gen"), "3");
    q = y.objs[1].u.cq.groups[0].flavors[0].resources;
    ck_assert_str_eq(quantity_format(q[0].nominal, buf), "1500m");
    ck_assert_str_eq(quantity_format(q[1].nominal, buf), "64Gi");
    ck_assert(q[1].has_lending_limit);
    ck_assert_int_eq(quantity_sign(q[1].lending_limit), 0);
    for (size_t i = 0; i < y.n; i++)
        object_fini(&y.objs[i]);
}
END_TEST

/* ---- more error paths, table-driven
 * ------------------------------------------------------------------ */

START_TEST(error_table)
{
    static const struct {
        const char *json, *path, *msg;
    } cases[] = {
        {CQ_HEAD "'spec':{'namespaceSelector':{'matchExpressions':[{'operator':'Exists'}]}}}",
         "spec.namespaceSelector.matchExpressions[0].key", "Required value"},
        {CQ_HEAD "'spec':{'namespaceSelector':{'matchExpressions':[{'key':'a'}]}}}",
         "spec.namespaceSelector.matchExpressions[0].operator", "Required value"},
        {CQ_HEAD "'spec':{'namespaceSelector':{'matchExpressions':[{'key':'a','operator':'In',"
                 "'values':'x'}]}}}",
         "spec.namespaceSelector.matchExpressions[0].values", "must be of type array, got string"},
        {CQ_HEAD "'spec':{'namespaceSelector':{'matchLabel':{}}}}",
         "spec.namespaceSelector.matchLabel",
         "unknown field \"matchLabel\"; did you mean \"matchLabels\"?"},
        {CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':['cpu'],'flavors':[]}]}}",
         "spec.resourceGroups[0].flavors", "Required value: must have at least 1 item"},
        {CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'f',"
                 "'resources':[]}]}]}}",
         "spec.resourceGroups[0].flavors[0].resources",
         "Required value: must have at least 1 item"},
        {CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'f'}]}"
                 "]}}",
         "spec.resourceGroups[0].flavors[0].resources", "Required value"},
        {CQ_HEAD "'spec':{'resourceGroups':[{'flavors':[{'name':'f','resources':[{'name':'cpu',"
                 "'nominalQuota':1}]}]}]}}",
         "spec.resourceGroups[0].coveredResources", "Required value"},
        {CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':[1],'flavors':[{'name':'f',"
                 "'resources':[{'name':'cpu','nominalQuota':1}]}]}]}}",
         "spec.resourceGroups[0].coveredResources[0]", "must be of type string, got integer"},
        {CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'f',"
                 "'resources':[{'name':'cpu','nominalQuota':'1','lendingLimit':'-'}]}]}]}}",
         "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit", "invalid quantity \"-\""},
        {CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'f',"
                 "'resources':[{'name':'cpu','nominalQuota':'1','extra':1}]}]}]}}",
         "spec.resourceGroups[0].flavors[0].resources[0].extra", "unknown field \"extra\""},
        {CQ_HEAD "'spec':{'admissionChecksStrategy':{'admissionChecks':[{'onFlavors':[]}]}}}",
         "spec.admissionChecksStrategy.admissionChecks[0].name", "Required value"},
        {CQ_HEAD "'spec':{'flavorFungibility':{'preference':'Cheapest'}}}",
         "spec.flavorFungibility.preference",
         "Unsupported value: \"Cheapest\": supported values: \"BorrowingOverPreemption\", "
         "\"PreemptionOverBorrowing\""},
        {CQ_HEAD "'spec':{'stopPolicy':true}}", "spec.stopPolicy",
         "must be of type string, got boolean"},
        {"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue','metadata':{'name':'cq',"
         "'creationTimestamp':'2024-13-01T00:00:00Z'}}",
         "metadata.creationTimestamp",
         "Invalid value: \"2024-13-01T00:00:00Z\": must be an RFC 3339 timestamp"},
        {"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue','metadata':{'name':'cq',"
         "'labels':{'a':null}}}",
         "metadata.labels.a", "must be of type string, got null"},
        {"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue','metadata':{'name':'cq',"
         "'finalizers':'x'}}",
         "metadata.finalizers", "must be of type array, got string"},
        {"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue','metadata':{'name':'cq',"
         "'nam':'x'}}",
         "metadata.nam", "unknown field \"nam\"; did you mean \"name\"?"},
        {"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue','metadata':{'name':''}}",
         "metadata.name", "Required value"},
        {"{'apiVersion':3,'kind':'ClusterQueue'}", "apiVersion",
         "must be of type string, got integer"},
        {"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':{'name':"
         "'f'},'spec':{'nodeTaints':[{'effect':'NoSchedule'}]}}",
         "spec.nodeTaints[0].key", "Required value"},
        {"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':{'name':"
         "'f'},'spec':{'tolerations':[{'key':'a','operator':'Exists','tolerationSeconds':'30'}]"
         "}}",
         "spec.tolerations[0].tolerationSeconds", "must be of type integer, got string"},
        {"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':{'name':"
         "'f'},'spec':{'tolerations':[{},{},{},{},{},{},{},{},{}]}}",
         "spec.tolerations", "Too many: 9: must have at most 8 items"},
        {"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':{'name':"
         "'f'},'spec':{'nodeTaints':[{'key':'a','effect':'NoSchedule','tainted':1}]}}",
         "spec.nodeTaints[0].tainted", "unknown field \"tainted\""},
        {"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue','metadata':{'name':'q'}}",
         "spec", "Required value"},
        {"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue','metadata':{'name':'q'},"
         "'spec':{'clusterQueue':'c','fairSharing':{'weight':'x'}}}",
         "spec.fairSharing.weight", "invalid quantity \"x\""},
        {"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Cohort','metadata':{'name':'c'},"
         "'spec':{'fairSharing':{'wieght':1}}}",
         "spec.fairSharing.wieght", "unknown field \"wieght\"; did you mean \"weight\"?"},
        {"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Cohort','metadata':{'name':'c'},"
         "'status':[]}",
         "status", "must be of type object, got array"},
        {WL_HEAD "'spec':{'podSets':[{'template':{'spec':{'containers':[{'name':'c'}],"
                 "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{"
                 "'nodeSelectorTerms':[{'matchExpressions':[{'key':'k','operator':'Gte'}]}]}}}}}"
                 "}]}}",
         "spec.podSets[0].template.spec.affinity.nodeAffinity."
         "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]"
         ".operator",
         "Unsupported value: \"Gte\": supported values: \"In\", \"NotIn\", \"Exists\", "
         "\"DoesNotExist\", \"Gt\", \"Lt\""},
        {WL_HEAD "'spec':{'podSets':[{'template':{'metadata':{'labels':[]},'spec':{'containers':"
                 "[{'name':'c'}]}}}]}}",
         "spec.podSets[0].template.metadata.labels", "must be of type object, got array"},
        {WL_HEAD "'spec':{'podSets':[{'template':{'metadata':{'lables':{}},'spec':{'containers':"
                 "[{'name':'c'}]}}}]}}",
         "spec.podSets[0].template.metadata.lables",
         "unknown field \"lables\"; did you mean \"labels\"?"},
        {WL_HEAD "'spec':{'podSets':[{'template':{'spec':{'containers':[{'name':'c',"
                 "'restartPolicy':'Sometimes'}]}}}]}}",
         "spec.podSets[0].template.spec.containers[0].restartPolicy",
         "Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", "
         "\"Never\""},
        {WL_HEAD "'spec':{'podSets':[{'template':{'spec':{'containers':[{'name':'c',"
                 "'resources':{'request':{}}}]}}}]}}",
         "spec.podSets[0].template.spec.containers[0].resources.request",
         "unknown field \"request\"; did you mean \"requests\"?"},
        {WL_HEAD "'spec':{'podSets':[" PODSET_MIN "],'active':'yes'}}", "spec.active",
         "must be of type boolean, got string"},
        {WL_HEAD "'spec':{'podSets':[" PODSET_MIN "]},'status':{'admission':{'clusterQueue':'c',"
                 "'podSetAssignments':[{'resourceUsage':{'cpu':'1q'}}]}}}",
         "status.admission.podSetAssignments[0].resourceUsage.cpu", "invalid quantity \"1q\""},
        {WL_HEAD "'spec':{'podSets':[" PODSET_MIN "]},'status':{'conditions':[{'status':'True'}]}}",
         "status.conditions[0].type", "Required value"},
        {WL_HEAD "'spec':{'podSets':[" PODSET_MIN "]},'status':{'bogus':1}}", "status.bogus",
         "unknown field \"bogus\""},
        {"{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j'},'spec':{'template':{"
         "'spec':{'containers':[{'name':'c'}]}},'completionMode':'Random'}}",
         "spec.completionMode",
         "Unsupported value: \"Random\": supported values: \"NonIndexed\", \"Indexed\""},
        {"{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j'},'spec':{'template':{"
         "'spec':{'containers':[{'name':'c'}]}}},'status':{'active':'1'}}",
         "status.active", "must be of type integer, got string"},
        {"{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j'},'spec':{'template':{"
         "'spec':{'containers':[{'name':'c'}]}},'paralelism':2}}",
         "spec.paralelism", "unknown field \"paralelism\"; did you mean \"parallelism\"?"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        decode_one_error(cases[i].json, cases[i].path, cases[i].msg);
}
END_TEST

START_TEST(quantity_overflow_and_numbers)
{
    object_t obj;
    char buf[QUANTITY_STR_MAX];

    decode_one_error(CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':['cpu'],'flavors':["
                             "{'name':'f','resources':[{'name':'cpu','nominalQuota':'1e40'}]}]}]}}",
                     "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
                     "invalid quantity \"1e40\": value out of range");
    /* JSON numbers are quantities, formatted the Go way first. */
    decode_ok(CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':['cpu','memory'],'flavors':["
                      "{'name':'f','resources':[{'name':'cpu','nominalQuota':0.25},{'name':"
                      "'memory','nominalQuota':1e9}]}]}]}}",
              &obj);
    ck_assert_str_eq(fmtq(obj.u.cq.groups[0].flavors[0].resources[0].nominal, buf), "250m");
    ck_assert_int_eq(quantity_cmp(obj.u.cq.groups[0].flavors[0].resources[1].nominal,
                                  quantity_from_int(1000000000, QUANTITY_DECIMAL_SI)),
                     0);
    object_fini(&obj);
}
END_TEST

/* ---- allocation failures -----------------------------------------------------------------
 *
 * test_decode links with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup (see
 * test/decode.cmake), so every allocation lib/model makes goes through test/oom_wrap.h. With
 * oom_fail_at(n) the n-th allocation after arming fails; object_decode() must then return
 * ERR_NOMEM with `obj` zeroed and nothing leaked (ASan checks the leaks).
 */

/* Fail each allocation of decoding `text` in turn, then decode it with none failing (ERR_OK).
 * Returns how many allocations the whole decode makes. */
static long decode_every_oom(const char *text)
{
    json_t *j = squote_json(text);
    long n;

    for (n = 1;; n++) {
        object_t obj;
        diags_t d;
        err_t rc;
        long made;

        diags_init(&d);
        oom_fail_at(n);
        rc = object_decode(j, &obj, &d);
        made = oom_count();
        oom_fail_at(0);
        if (made < n) {
            if (rc != ERR_OK)
                dump(&d);
            ck_assert_int_eq(rc, ERR_OK);
            object_fini(&obj);
            diags_fini(&d);
            break;
        }
        ck_assert_msg(rc == ERR_NOMEM, "allocation %ld of %s failed: got %s", n, text, err_str(rc));
        ck_assert_int_eq(obj.kind, KIND_UNKNOWN);
        ck_assert_ptr_null(obj.api_version);
        diags_fini(&d);
    }
    json_decref(j);
    return n - 1;
}

START_TEST(allocation_failures)
{
    static const char *const docs[] = {
        (CQ_HEAD "'spec':{'cohortName':'team','namespaceSelector':{'matchLabels':{'team':'a'},"
                 "'matchExpressions':[{'key':'env','operator':'In','values':['prod','dev']}]},"
                 "'fairSharing':{'weight':'2'},'admissionChecksStrategy':{'admissionChecks':["
                 "{'name':'prov','onFlavors':['a100']},{'name':'quota'}]},"
                 "'resourceGroups':[{'coveredResources':['cpu','nvidia.com/gpu'],'flavors':["
                 "{'name':'a100','resources':[{'name':'cpu','nominalQuota':64},{'name':"
                 "'nvidia.com/gpu','nominalQuota':'8'}]},{'name':'h100','resources':[{'name':"
                 "'cpu','nominalQuota':'1500m'},{'name':'nvidia.com/gpu','nominalQuota':2}]}]}]}}"),
        ("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor','metadata':{'name':'a',"
         "'labels':{'t':'g'},'finalizers':['x']},'spec':{'nodeLabels':{'gpu':'a100','n':1},"
         "'nodeTaints':[{'key':'gpu','value':'true','effect':'NoSchedule'}],'tolerations':["
         "{'key':'gpu','operator':'Exists','effect':'NoExecute'},{'key':'a','value':'b'}]}}"),
        ("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Cohort','metadata':{'name':'c'},'spec':{"
         "'parentName':'root'," RG_OK "}}"),
        (WL_HEAD
         "'spec':{'queueName':'lq','podSets':[{'name':'a','count':2,'template':{"
         "'metadata':{'labels':{'l':'v'},'annotations':{'k':'v'}},'spec':{'initContainers':"
         "[{'name':'i','resources':{'requests':{'cpu':'1'}}}],'containers':[{'name':'c',"
         "'resources':{'requests':{'cpu':'2','memory':'1Gi'},'limits':{'nvidia.com/gpu':"
         "1}}}],'overhead':{'cpu':'100m'},'nodeSelector':{'zone':'z1'},'tolerations':[{"
         "'key':'gpu','operator':'Exists'}],'affinity':{'nodeAffinity':{"
         "'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':[{"
         "'matchExpressions':[{'key':'gpu','operator':'In','values':['a100']}]}]}}}}}}," PODSET_MIN
         "]},'status':{'admission':{'clusterQueue':'cq','podSetAssignments':"
         "[{'name':'a','flavors':{'cpu':'f'},'resourceUsage':{'cpu':'4'},'count':2}]},"
         "'conditions':[{'type':'QuotaReserved','status':'True','reason':'R','message':"
         "'m','lastTransitionTime':'2024-05-01T10:00:00Z'}],'reclaimablePods':[{'name':"
         "'a','count':1}],'admissionChecks':[{'name':'prov','state':'Ready','podSetUpdates'"
         ":[{'name':'a','labels':{'a':'b'},'nodeSelector':{'z':'1'},'tolerations':[{'key':"
         "'g','operator':'Exists'}]}]}],'clusterName':'w1','nominatedClusterNames':['w1']}}"),
        ("{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'j','namespace':'ml'},'spec':{"
         "'template':{'spec':{'containers':[{'name':'c','resources':{'limits':{'cpu':1}}}]}}},"
         "'status':{'conditions':[{'type':'Complete','status':'True'}]}}"),
        ("{'apiVersion':'config.kueue.x-k8s.io/v1beta2','kind':'Configuration','namespace':'kq',"
         "'fairSharing':{'preemptionStrategies':['LessThanInitialShare']},"
         "'resources':{'excludeResourcePrefixes':['example.com/rdma'],'transformations':["
         "{'input':'nvidia.com/mig-1g.10gb','strategy':'Replace','multiplyBy':'a',"
         "'outputs':{'example.com/gpu-memory':'10Gi','s':1}},{'input':'example.com/rdma'}]}}"),
    };

    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
        ck_assert_int_gt(decode_every_oom(docs[i]), 5);
}
END_TEST

static Suite *decode_suite(void)
{
    Suite *s = suite_create("decode");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, cq_full);
    tcase_add_test(tc, topology);
    tcase_add_test(tc, cq_defaults);
    tcase_add_test(tc, cq_v1beta1);
    tcase_add_test(tc, cq_errors);
    tcase_add_test(tc, cq_sizes);
    tcase_add_test(tc, flavor);
    tcase_add_test(tc, cohort);
    tcase_add_test(tc, local_queue);
    tcase_add_test(tc, wpc_and_namespace);
    tcase_add_test(tc, admission_check);
    tcase_add_test(tc, envelope);
    tcase_add_test(tc, workload_full);
    tcase_add_test(tc, workload_defaults_v1beta1);
    tcase_add_test(tc, workload_errors);
    tcase_add_test(tc, workload_status);
    tcase_add_test(tc, job);
    tcase_add_test(tc, priority_class);
    tcase_add_test(tc, configuration);
    tcase_add_test(tc, go_floats);
    tcase_add_test(tc, times);
    tcase_add_test(tc, paths);
    tcase_add_test(tc, yaml_scalars);
    tcase_add_test(tc, error_table);
    tcase_add_test(tc, quantity_overflow_and_numbers);
    tcase_add_test(tc, allocation_failures);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(decode_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
