/* test_decode -- object_decode() of every supported kind, defaults, v1beta1 mapping, errors. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/jsonx.h"
#include "model/object.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---------------------------------------------------------------------------------- */

/* JSON written with single quotes for readability; turned into real JSON here. */
static json_t *load(const char *text)
{
    char *s = strdup(text);
    json_error_t e;
    json_t *j;

    ck_assert_ptr_nonnull(s);
    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    j = json_loads(s, 0, &e);
    if (j == NULL)
        ck_abort_msg("bad test JSON: %s: %s", e.text, s);
    free(s);
    return j;
}

static err_t decode(const char *text, object_t *obj, diags_t *d)
{
    json_t *j = load(text);
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

#define ASSERT_ERR(d, path, msg)                                                                   \
    do {                                                                                           \
        if (!has(d, false, path, msg)) {                                                           \
            dump(d);                                                                               \
            ck_abort_msg("missing error %s: %s", path, msg);                                       \
        }                                                                                          \
    } while (0)

#define ASSERT_WARN(d, path, msg)                                                                  \
    do {                                                                                           \
        if (!has(d, true, path, msg)) {                                                            \
            dump(d);                                                                               \
            ck_abort_msg("missing warning %s: %s", path, msg);                                     \
        }                                                                                          \
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

#define CQ_HEAD "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue','metadata':{'name':'cq'},"
#define CQ1_HEAD "{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'ClusterQueue','metadata':{'name':'cq'},"
#define RG_OK                                                                                      \
    "'resourceGroups':[{'coveredResources':['cpu','memory'],'flavors':[{'name':'f1',"           \
    "'resources':[{'name':'cpu','nominalQuota':'10'},{'name':'memory','nominalQuota':'64Gi'}]}]}]"

/* ---- ClusterQueue ------------------------------------------------------------------------------- */

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
    ASSERT_WARN(&d, "spec.admissionChecks",
                "field \"admissionChecks\" is accepted but not supported by sluice; it has no "
                "effect");
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

/* ---- ResourceFlavor, Cohort, LocalQueue, WorkloadPriorityClass, Namespace ------------------------ */

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
                     "spec.nodeTaints[0].effect",
                     "Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", "
                     "\"PreferNoSchedule\", \"NoExecute\"");
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
                     "{'name':'x'},'spec':{'tolerations':[{'operator':'Lt'}]}}",
                     "spec.tolerations[0].operator",
                     "Unsupported value: \"Lt\": supported values: \"Equal\", \"Exists\", \"\"");

    /* topologyName is a known Kueue field sluice does not act on; namespace is dropped. */
    ck_assert_int_eq(decode("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor',"
                            "'metadata':{'name':'x','namespace':'ns'},'spec':{'nodeLabels':"
                            "{'a':'b'},'topologyName':'default'}}",
                            &obj, &d),
                     ERR_OK);
    ASSERT_WARN(&d, "spec.topologyName",
                "field \"topologyName\" is accepted but not supported by sluice; it has no effect");
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

START_TEST(local_queue)
{
    object_t obj;

    decode_ok("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue','metadata':{'name':"
              "'lq','namespace':'team-a'},'spec':{'clusterQueue':'cq','stopPolicy':'Hold',"
              "'fairSharing':{'weight':3}},'status':{'pendingWorkloads':1}}",
              &obj);
    ck_assert_int_eq(obj.kind, KIND_LOCAL_QUEUE);
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

/* ---- object_decode envelope ----------------------------------------------------------------------- */

START_TEST(envelope)
{
    object_t obj;
    diags_t d;

    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Foo'}", "kind",
                     "Unsupported value: \"Foo\": supported values: \"Namespace\", "
                     "\"ResourceFlavor\", \"ClusterQueue\", \"LocalQueue\", \"Cohort\", "
                     "\"WorkloadPriorityClass\", \"Workload\", \"PriorityClass\", \"Job\", "
                     "\"Configuration\"");
    decode_one_error("{'apiVersion':'kueue.x-k8s.io/v1alpha1','kind':'ClusterQueue'}",
                     "apiVersion",
                     "Unsupported value: \"kueue.x-k8s.io/v1alpha1\": supported values: "
                     "\"kueue.x-k8s.io/v1beta2\", \"kueue.x-k8s.io/v1beta1\"");
    decode_one_error("{'kind':'ClusterQueue'}", "apiVersion", "Required value");
    decode_one_error("{'apiVersion':'v1'}", "kind", "Required value");
    decode_one_error("[]", "", "must be of type object, got array");
    decode_one_error("{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'x'},'foo':1}",
                     "foo", "unknown field \"foo\"");

    /* Several problems are all reported in one pass. */
    ck_assert_int_eq(decode(CQ_HEAD "'spec':{'queueingStrategy':'X','stopPolicy':'Y','foo':1}}",
                            &obj, &d),
                     ERR_INVALID);
    ck_assert_uint_eq(d.nerrors, 3);
    diags_fini(&d);
}
END_TEST

static Suite *decode_suite(void)
{
    Suite *s = suite_create("decode");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, cq_full);
    tcase_add_test(tc, cq_defaults);
    tcase_add_test(tc, cq_v1beta1);
    tcase_add_test(tc, cq_errors);
    tcase_add_test(tc, cq_sizes);
    tcase_add_test(tc, flavor);
    tcase_add_test(tc, cohort);
    tcase_add_test(tc, local_queue);
    tcase_add_test(tc, wpc_and_namespace);
    tcase_add_test(tc, envelope);
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
