/* test_convert -- convert_object(): Kueue's v1beta1 <-> v1beta2 cases, field by field, round trips,
 * errors and allocation failures. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/convert.h"
#include "util/alloc.h"

/* test_convert links with -Wl,--wrap=malloc,calloc,realloc (test/convert.cmake) for lib/model's
 * own allocations; main() routes jansson's through the same counter. */
#include "oom_wrap.h"
#include "squote.h"

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The cases follow Kueue's own conversion tests (apis/kueue/v1beta1/<kind>_conversion_test.go and
 * pkg/util/tas/tas_assignment_test.go), translated to JSON. Expected objects are compared as
 * compact JSON text, so key order is checked too: renamed fields keep their position.
 */

/* ---- helpers -------------------------------------------------------------------------------- */

static char *dump(const json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT);
    ck_assert_ptr_nonnull(s);
    return s;
}

/* Notes collected as "path: text" lines. */
typedef struct notes_s {
    char text[4096];
} notes_t;

static void on_note(void *ctx, const char *path, const char *text)
{
    notes_t *n = ctx;
    size_t len = strlen(n->text);

    snprintf(n->text + len, sizeof(n->text) - len, "%s: %s\n", path, text);
}

static notes_t notes;
static const convert_opts_t opts = {.note = on_note, .ctx = &notes};

#define CQ1 "'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'ClusterQueue','metadata':{'name':'cq'}"
#define CQ2 "'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue','metadata':{'name':'cq'}"
#define LQ1                         \
    "'apiVersion':'kueue.x-k8s.io/" \
    "v1beta1','kind':'LocalQueue','metadata':{'name':'lq','namespace':'ns'}"
#define LQ2                         \
    "'apiVersion':'kueue.x-k8s.io/" \
    "v1beta2','kind':'LocalQueue','metadata':{'name':'lq','namespace':'ns'}"
#define WL1                         \
    "'apiVersion':'kueue.x-k8s.io/" \
    "v1beta1','kind':'Workload','metadata':{'name':'wl','namespace':'ns'}"
#define WL2                         \
    "'apiVersion':'kueue.x-k8s.io/" \
    "v1beta2','kind':'Workload','metadata':{'name':'wl','namespace':'ns'}"
#define HOST "kubernetes.io/hostname"

/* Convert `in` to `to` and compare with `want` (both single-quoted JSON texts). */
static void expect(const char *in, const char *to, const char *want)
{
    json_t *src = squote_json(in), *exp = squote_json(want), *out = NULL;
    err_msg_t msg = {{0}};
    char *got_s, *want_s, *src_before = dump(src);
    err_t rc = convert_object(src, to, &opts, &out, &msg);

    ck_assert_msg(rc == ERR_OK, "convert failed (%s): %s", err_str(rc), msg.text);
    got_s = dump(out);
    want_s = dump(exp);
    ck_assert_msg(strcmp(got_s, want_s) == 0, "\n got: %s\nwant: %s", got_s, want_s);
    {
        char *src_after = dump(src); /* the input is not modified */
        ck_assert_str_eq(src_after, src_before);
        free(src_after);
    }
    free(src_before);
    free(got_s);
    free(want_s);
    json_decref(src);
    json_decref(exp);
    json_decref(out);
}

/* Expect a failure with `code` whose message contains `needle`. */
static void expect_fail(const char *in, const char *to, err_t code, const char *needle)
{
    json_t *src = squote_json(in), *out = NULL;
    err_msg_t msg = {{0}};
    err_t rc = convert_object(src, to, &opts, &out, &msg);

    ck_assert_msg(rc == code, "got %s (%s), want %s", err_str(rc), msg.text, err_str(code));
    ck_assert_ptr_null(out);
    ck_assert_msg(strstr(msg.text, needle) != NULL, "message \"%s\" lacks \"%s\"", msg.text,
                  needle);
    json_decref(src);
}

/* v1beta1 `in` -> v1beta2 -> v1beta1 gives `in` back (Kueue's round-trip tests; key order may
 * differ where two fields became one and back). */
static void round_trip(const char *in)
{
    json_t *v1 = squote_json(in), *v2 = NULL, *back = NULL;
    err_msg_t msg = {{0}};
    char *a, *b;

    ck_assert_msg(convert_object(v1, CONVERT_V1BETA2, NULL, &v2, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_msg(convert_object(v2, CONVERT_V1BETA1, NULL, &back, &msg) == ERR_OK, "%s", msg.text);
    a = dump(v1);
    b = dump(back);
    ck_assert_msg(json_equal(v1, back), "\nbefore: %s\n after: %s", a, b);
    free(a);
    free(b);
    json_decref(v1);
    json_decref(v2);
    json_decref(back);
}

static void notes_reset(void)
{
    notes.text[0] = '\0';
}

static void notes_have(const char *needle)
{
    ck_assert_msg(strstr(notes.text, needle) != NULL, "notes lack \"%s\":\n%s", needle, notes.text);
}

/* ---- ClusterQueue --------------------------------------------------------------------------- */

START_TEST(cq_cohort)
{
    /* Kueue "nil cohort", "cohort to cohortName conversion" and back; position kept. */
    expect("{" CQ1 ",'spec':{}}", CONVERT_V1BETA2, "{" CQ2 ",'spec':{}}");
    expect("{" CQ1 ",'spec':{'cohort':''}}", CONVERT_V1BETA2, "{" CQ2 ",'spec':{}}");
    expect("{" CQ1 ",'spec':{'resourceGroups':[],'cohort':'test-cohort','queueingStrategy':"
           "'StrictFIFO'}}",
           CONVERT_V1BETA2,
           "{" CQ2 ",'spec':{'resourceGroups':[],'cohortName':'test-cohort','queueingStrategy':"
           "'StrictFIFO'}}");
    expect("{" CQ2 ",'spec':{'cohortName':'test-cohort','x':1}}", CONVERT_V1BETA1,
           "{" CQ1 ",'spec':{'cohort':'test-cohort','x':1}}");
    expect("{" CQ2 ",'spec':{'cohortName':null}}", CONVERT_V1BETA1, "{" CQ1 ",'spec':{}}");
}
END_TEST

START_TEST(cq_admission_checks)
{
    expect("{" CQ1 ",'spec':{'admissionChecks':['check1','check2'],'stopPolicy':'None'}}",
           CONVERT_V1BETA2,
           "{" CQ2 ",'spec':{'admissionChecksStrategy':{'admissionChecks':[{'name':'check1'},"
           "{'name':'check2'}]},'stopPolicy':'None'}}");
    /* "AdmissionChecksStrategy preserved" (both directions) */
    expect("{" CQ1 ",'spec':{'admissionChecksStrategy':{'admissionChecks':[{'name':'s1',"
           "'onFlavors':['f']},{'name':'s2'}]}}}",
           CONVERT_V1BETA2,
           "{" CQ2 ",'spec':{'admissionChecksStrategy':{'admissionChecks':[{'name':'s1',"
           "'onFlavors':['f']},{'name':'s2'}]}}}");
    expect("{" CQ2 ",'spec':{'admissionChecksStrategy':{'admissionChecks':[{'name':'s1'}]}}}",
           CONVERT_V1BETA1,
           "{" CQ1 ",'spec':{'admissionChecksStrategy':{'admissionChecks':[{'name':'s1'}]}}}");
    /* "empty AdmissionChecks" */
    expect("{" CQ1 ",'spec':{'admissionChecks':[]}}", CONVERT_V1BETA2, "{" CQ2 ",'spec':{}}");
    /* Both set: Kueue's conversion lets admissionChecks overwrite the strategy. */
    notes_reset();
    expect("{" CQ1 ",'spec':{'admissionChecksStrategy':{'admissionChecks':[{'name':'old'}]},"
           "'admissionChecks':['new']}}",
           CONVERT_V1BETA2,
           "{" CQ2 ",'spec':{'admissionChecksStrategy':{'admissionChecks':[{'name':'new'}]}}}");
    notes_have("spec.admissionChecksStrategy: replaced by spec.admissionChecks");
    expect_fail("{" CQ1 ",'spec':{'admissionChecks':'a'}}", CONVERT_V1BETA2, ERR_INVALID,
                "ClusterQueue cq: spec.admissionChecks: must be an array of names");
    expect_fail("{" CQ1 ",'spec':{'admissionChecks':['a',7]}}", CONVERT_V1BETA2, ERR_INVALID,
                "ClusterQueue cq: spec.admissionChecks[1]: must be a string");
}
END_TEST

START_TEST(cq_fungibility)
{
    notes_reset();
    expect("{" CQ1 ",'spec':{'flavorFungibility':{'whenCanBorrow':'Borrow','whenCanPreempt':"
           "'Preempt'}}}",
           CONVERT_V1BETA2,
           "{" CQ2 ",'spec':{'flavorFungibility':{'whenCanBorrow':'MayStopSearch',"
           "'whenCanPreempt':'MayStopSearch'}}}");
    notes_have("spec.flavorFungibility.whenCanBorrow: Borrow -> MayStopSearch");
    notes_have("spec.flavorFungibility.whenCanPreempt: Preempt -> MayStopSearch");
    /* Only the field each value belongs to is mapped; the rest is preserved both ways. */
    expect("{" CQ1 ",'spec':{'flavorFungibility':{'whenCanPreempt':'MayStopSearch',"
           "'whenCanBorrow':'TryNextFlavor','preference':'BorrowingOverPreemption'}}}",
           CONVERT_V1BETA2,
           "{" CQ2 ",'spec':{'flavorFungibility':{'whenCanPreempt':'MayStopSearch',"
           "'whenCanBorrow':'TryNextFlavor','preference':'BorrowingOverPreemption'}}}");
    expect("{" CQ2 ",'spec':{'flavorFungibility':{'whenCanPreempt':'MayStopSearch',"
           "'whenCanBorrow':'TryNextFlavor'}}}",
           CONVERT_V1BETA1,
           "{" CQ1 ",'spec':{'flavorFungibility':{'whenCanPreempt':'MayStopSearch',"
           "'whenCanBorrow':'TryNextFlavor'}}}");
    expect_fail("{" CQ1 ",'spec':{'flavorFungibility':'Borrow'}}", CONVERT_V1BETA2, ERR_INVALID,
                "spec.flavorFungibility: must be an object, got string");
}
END_TEST

START_TEST(cq_complete)
{
    /* Kueue's "complete ClusterQueue with all fields", both directions. */
    notes_reset();
    expect("{" CQ1 ",'spec':{'cohort':'prod-cohort','admissionChecks':['multikueue-check'],"
           "'flavorFungibility':{'whenCanPreempt':'TryNextFlavor','whenCanBorrow':"
           "'MayStopSearch'},'queueingStrategy':'StrictFIFO'},'status':{'fairSharing':{"
           "'weightedShare':100,'admissionFairSharingStatus':{'consumedResources':{'cpu':'10'},"
           "'lastUpdate':'2025-01-01T00:00:00Z'}},'conditions':[{'type':'Active','status':'True',"
           "'reason':'Ready'}],'pendingWorkloads':5,'pendingWorkloadsStatus':{"
           "'clusterQueuePendingWorkload':[],'lastChangeTime':'2025-01-01T00:00:00Z'}}}",
           CONVERT_V1BETA2,
           "{" CQ2 ",'spec':{'cohortName':'prod-cohort','admissionChecksStrategy':{"
           "'admissionChecks':[{'name':'multikueue-check'}]},'flavorFungibility':{"
           "'whenCanPreempt':'TryNextFlavor','whenCanBorrow':'MayStopSearch'},"
           "'queueingStrategy':'StrictFIFO'},'status':{'fairSharing':{'weightedShare':100},"
           "'conditions':[{'type':'Active','status':'True','reason':'Ready'}],"
           "'pendingWorkloads':5}}");
    notes_have("status.pendingWorkloadsStatus: dropped");
    notes_have("status.fairSharing.admissionFairSharingStatus: dropped");
    notes_reset();
    expect("{" CQ2 ",'spec':{'cohortName':'prod-cohort','concurrentAdmissionPolicy':{"
           "'migration':{'mode':'TryPreferredFlavors'}},'queueingStrategy':'StrictFIFO'},"
           "'status':{'fairSharing':{'weightedShare':100},'pendingWorkloads':5}}",
           CONVERT_V1BETA1,
           "{" CQ1 ",'spec':{'cohort':'prod-cohort','queueingStrategy':'StrictFIFO'},"
           "'status':{'fairSharing':{'weightedShare':100},'pendingWorkloads':5}}");
    notes_have("spec.concurrentAdmissionPolicy: dropped");
}
END_TEST

START_TEST(cq_round_trips)
{
    round_trip("{" CQ1 ",'spec':{'cohort':'prod-cohort','flavorFungibility':{'whenCanPreempt':"
               "'TryNextFlavor','whenCanBorrow':'MayStopSearch'},'queueingStrategy':'StrictFIFO'},"
               "'status':{'conditions':[{'type':'Active','status':'True','reason':'Ready'}],"
               "'pendingWorkloads':10}}");
    round_trip("{" CQ1 "}");
    /* Fields sluice does not model, and unknown ones, survive untouched (numbers included). */
    round_trip("{" CQ1 ",'spec':{'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{"
               "'name':'f','resources':[{'name':'cpu','nominalQuota':1.5,'lendingLimit':'1'}]}]}],"
               "'preemption':{'withinClusterQueue':'LowerPriority'},'madeUp':{'deep':[1,true,"
               "null,'x']}},'extra':42}");
}
END_TEST

START_TEST(cq_foreign_fields)
{
    expect_fail("{" CQ1 ",'spec':{'cohort':'a','cohortName':'b'}}", CONVERT_V1BETA2, ERR_INVALID,
                "ClusterQueue cq: spec.cohortName: not a field of "
                "kueue.x-k8s.io/v1beta1");
    expect_fail("{" CQ2 ",'spec':{'cohort':'a'}}", CONVERT_V1BETA1, ERR_INVALID,
                "spec.cohort: not a field of kueue.x-k8s.io/v1beta2");
    expect_fail("{" CQ2 ",'status':{'pendingWorkloadsStatus':{}}}", CONVERT_V1BETA1, ERR_INVALID,
                "status.pendingWorkloadsStatus");
    expect_fail("{" CQ1 ",'spec':7}", CONVERT_V1BETA2, ERR_INVALID,
                "ClusterQueue cq: spec: must be an object, got number");
}
END_TEST

/* ---- LocalQueue ----------------------------------------------------------------------------- */

START_TEST(lq_flavor_usage)
{
    /* "nil FlavorUsage", "empty FlavorUsage", "single FlavorUsage", "multiple ..." */
    expect("{" LQ1 ",'status':{'pendingWorkloads':0}}", CONVERT_V1BETA2,
           "{" LQ2 ",'status':{'pendingWorkloads':0}}");
    expect("{" LQ1 ",'status':{'flavorUsage':[]}}", CONVERT_V1BETA2,
           "{" LQ2 ",'status':{'flavorsUsage':[]}}");
    expect("{" LQ1 ",'status':{'flavorUsage':null}}", CONVERT_V1BETA2, "{" LQ2 ",'status':{}}");
    expect("{" LQ1 ",'status':{'pendingWorkloads':3,'flavorUsage':[{'name':'flavor-1',"
           "'resources':[{'name':'cpu','total':'10'},{'name':'memory','total':'20Gi'}]},{'name':"
           "'flavor-2','resources':[{'name':'cpu','total':'5'}]}],'reservingWorkloads':2,"
           "'admittedWorkloads':1}}",
           CONVERT_V1BETA2,
           "{" LQ2 ",'status':{'pendingWorkloads':3,'flavorsUsage':[{'name':'flavor-1',"
           "'resources':[{'name':'cpu','total':'10'},{'name':'memory','total':'20Gi'}]},{'name':"
           "'flavor-2','resources':[{'name':'cpu','total':'5'}]}],'reservingWorkloads':2,"
           "'admittedWorkloads':1}}");
    expect("{" LQ2 ",'status':{'flavorsUsage':[{'name':'default-flavor','resources':[{'name':"
           "'cpu','total':'10'}]}]}}",
           CONVERT_V1BETA1,
           "{" LQ1 ",'status':{'flavorUsage':[{'name':'default-flavor','resources':[{'name':"
           "'cpu','total':'10'}]}]}}");
}
END_TEST

START_TEST(lq_fair_sharing_and_flavors)
{
    /* "with conditions and status fields": fairSharing (admissionFairSharingStatus included)
     * has the same shape in both versions; v1beta1's deprecated status.flavors is dropped. */
    notes_reset();
    expect("{" LQ1 ",'spec':{'clusterQueue':'cluster-queue-1'},'status':{'fairSharing':{"
           "'weightedShare':100,'admissionFairSharingStatus':{'consumedResources':{'cpu':'10'},"
           "'lastUpdate':'2025-01-01T00:00:00Z'}},'conditions':[{'type':'Active','status':"
           "'True','reason':'Ready'}],'flavorUsage':[{'name':'default-flavor','resources':[{"
           "'name':'cpu','total':'10'}]}],'flavors':[{'name':'default-flavor','resources':["
           "'cpu']}],'pendingWorkloads':5}}",
           CONVERT_V1BETA2,
           "{" LQ2 ",'spec':{'clusterQueue':'cluster-queue-1'},'status':{'fairSharing':{"
           "'weightedShare':100,'admissionFairSharingStatus':{'consumedResources':{'cpu':'10'},"
           "'lastUpdate':'2025-01-01T00:00:00Z'}},'conditions':[{'type':'Active','status':"
           "'True','reason':'Ready'}],'flavorsUsage':[{'name':'default-flavor','resources':[{"
           "'name':'cpu','total':'10'}]}],'pendingWorkloads':5}}");
    notes_have("status.flavors: dropped");
    round_trip("{" LQ1 ",'spec':{'clusterQueue':'cq','stopPolicy':'Hold','fairSharing':{"
               "'weight':'2'}},'status':{'fairSharing':{'weightedShare':7,"
               "'admissionFairSharingStatus':{'consumedResources':{'cpu':'10'},'lastUpdate':"
               "'2025-01-01T00:00:00Z'}},'flavorUsage':[],'flavorsReservation':[]}}");
    expect_fail("{" LQ2 ",'status':{'flavorUsage':[]}}", CONVERT_V1BETA1, ERR_INVALID,
                "LocalQueue ns/lq: status.flavorUsage: not a field of kueue.x-k8s.io/v1beta2");
    expect_fail("{" LQ1 ",'status':{'flavorsUsage':[]}}", CONVERT_V1BETA2, ERR_INVALID,
                "status.flavorsUsage: not a field of kueue.x-k8s.io/v1beta1");
}
END_TEST

/* ---- Workload ------------------------------------------------------------------------------- */

START_TEST(wl_accumulated_time)
{
    expect("{" WL1 ",'status':{'accumulatedPastExexcutionTimeSeconds':null}}", CONVERT_V1BETA2,
           "{" WL2 ",'status':{}}");
    expect("{" WL1 ",'status':{'accumulatedPastExexcutionTimeSeconds':0}}", CONVERT_V1BETA2,
           "{" WL2 ",'status':{'accumulatedPastExecutionTimeSeconds':0}}");
    expect("{" WL1 ",'status':{'conditions':[{'type':'Admitted','status':'True','reason':"
           "'AdmittedByClusterQueue'}],'accumulatedPastExexcutionTimeSeconds':7200}}",
           CONVERT_V1BETA2,
           "{" WL2 ",'status':{'conditions':[{'type':'Admitted','status':'True','reason':"
           "'AdmittedByClusterQueue'}],'accumulatedPastExecutionTimeSeconds':7200}}");
    expect("{" WL2 ",'status':{'accumulatedPastExecutionTimeSeconds':3600,'conditions':[{'type':"
           "'Finished','status':'True','reason':'JobFinished'}]}}",
           CONVERT_V1BETA1,
           "{" WL1 ",'status':{'accumulatedPastExexcutionTimeSeconds':3600,'conditions':[{'type':"
           "'Finished','status':'True','reason':'JobFinished'}]}}");
    round_trip("{" WL1 ",'status':{'accumulatedPastExexcutionTimeSeconds':5400}}");
    round_trip("{" WL1 ",'status':{'accumulatedPastExexcutionTimeSeconds':0}}");
    expect_fail("{" WL1 ",'status':{'accumulatedPastExecutionTimeSeconds':1}}", CONVERT_V1BETA2,
                ERR_INVALID, "status.accumulatedPastExecutionTimeSeconds: not a field");
}
END_TEST

START_TEST(wl_priority_class)
{
    expect("{" WL1 ",'spec':{'priority':100,'priorityClassSource':"
           "'scheduling.k8s.io/priorityclass','priorityClassName':'low','queueName':'q'}}",
           CONVERT_V1BETA2,
           "{" WL2 ",'spec':{'priority':100,'priorityClassRef':{'group':'scheduling.k8s.io',"
           "'kind':'PriorityClass','name':'low'},'queueName':'q'}}");
    expect("{" WL1 ",'spec':{'priorityClassName':'low','priority':100,'priorityClassSource':"
           "'kueue.x-k8s.io/workloadpriorityclass'}}",
           CONVERT_V1BETA2,
           "{" WL2 ",'spec':{'priorityClassRef':{'group':'kueue.x-k8s.io','kind':"
           "'WorkloadPriorityClass','name':'low'},'priority':100}}");
    expect("{" WL2 ",'spec':{'priorityClassRef':{'group':'scheduling.k8s.io','kind':"
           "'PriorityClass','name':'low'},'priority':100}}",
           CONVERT_V1BETA1,
           "{" WL1 ",'spec':{'priorityClassName':'low','priorityClassSource':"
           "'scheduling.k8s.io/priorityclass','priority':100}}");
    expect("{" WL2 ",'spec':{'priority':100,'priorityClassRef':{'group':'kueue.x-k8s.io','kind':"
           "'WorkloadPriorityClass','name':'low'}}}",
           CONVERT_V1BETA1,
           "{" WL1 ",'spec':{'priority':100,'priorityClassName':'low','priorityClassSource':"
           "'kueue.x-k8s.io/workloadpriorityclass'}}");
    /* Source "" (the v1beta1 default): Kueue sets no ref, so the name is lost. */
    notes_reset();
    expect("{" WL1 ",'spec':{'priorityClassName':'orphan','priorityClassSource':'','a':1}}",
           CONVERT_V1BETA2, "{" WL2 ",'spec':{'a':1}}");
    notes_have("spec.priorityClassName: dropped");
    /* A ref v1beta1 cannot express is dropped too. */
    notes_reset();
    expect("{" WL2 ",'spec':{'priorityClassRef':{'group':'example.com','kind':'X','name':'n'}}}",
           CONVERT_V1BETA1, "{" WL1 ",'spec':{}}");
    notes_have("spec.priorityClassRef: dropped");
    round_trip("{" WL1 ",'spec':{'priority':100,'priorityClassSource':"
               "'scheduling.k8s.io/priorityclass','priorityClassName':'low'}}");
    round_trip("{" WL1 ",'spec':{'priorityClassName':'low','priority':100,'priorityClassSource':"
               "'kueue.x-k8s.io/workloadpriorityclass'}}");
    expect_fail("{" WL1 ",'spec':{'priorityClassSource':'example.com/x'}}", CONVERT_V1BETA2,
                ERR_INVALID,
                "Workload ns/wl: spec.priorityClassSource: Unsupported value: \"example.com/x\"");
    expect_fail("{" WL1 ",'spec':{'priorityClassName':3}}", CONVERT_V1BETA2, ERR_INVALID,
                "spec.priorityClassName: must be a string");
    expect_fail("{" WL2 ",'spec':{'priorityClassRef':{'group':1}}}", CONVERT_V1BETA1, ERR_INVALID,
                "spec.priorityClassRef.group: must be a string");
    expect_fail("{" WL1 ",'spec':{'priorityClassRef':{}}}", CONVERT_V1BETA2, ERR_INVALID,
                "spec.priorityClassRef: not a field of kueue.x-k8s.io/v1beta1");
}
END_TEST

START_TEST(wl_v1beta2_only_fields)
{
    notes_reset();
    expect("{" WL2 ",'spec':{'podSets':[{'name':'main','count':1,'topologyRequest':{'required':"
           "'rack','podsetSliceRequiredTopologyConstraints':[{'topology':'block','size':2}]}}],"
           "'preemptionGates':[{'name':'g'}]},'status':{'preemptionGates':[{'name':'g',"
           "'position':'Open','lastTransitionTime':'2025-01-01T00:00:00Z'}]}}",
           CONVERT_V1BETA1,
           "{" WL1 ",'spec':{'podSets':[{'name':'main','count':1,'topologyRequest':{'required':"
           "'rack'}}]},'status':{}}");
    notes_have("spec.preemptionGates: dropped");
    notes_have("spec.podSets[0].topologyRequest.podsetSliceRequiredTopologyConstraints: dropped");
    notes_have("status.preemptionGates: dropped");
    expect_fail("{" WL1 ",'spec':{'podSets':[{'topologyRequest':{"
                "'podsetSliceRequiredTopologyConstraints':[]}}]}}",
                CONVERT_V1BETA2, ERR_INVALID,
                "spec.podSets[0].topologyRequest.podsetSliceRequiredTopologyConstraints: not a "
                "field of kueue.x-k8s.io/v1beta1");
}
END_TEST

/* ---- topology assignments ---------------------------------------------------------------------
 */

#define ADM(ta)                                                                       \
    "'status':{'admission':{'clusterQueue':'cq','podSetAssignments':[{'name':'main'," \
    "'topologyAssignment':" ta "}]}}"

/* A v1beta1 assignment converts to `slices`, and `slices` back to the same domains. */
static void tas_both_ways(const char *levels, const char *domains, const char *slices)
{
    char v1[8192], v2[8192];

    snprintf(v1, sizeof(v1), "{" WL1 "," ADM("{'levels':%s,'domains':%s}") "}", levels, domains);
    if (slices != NULL)
        snprintf(v2, sizeof(v2), "{" WL2 "," ADM("{'levels':%s,'slices':%s}") "}", levels, slices);
    else
        snprintf(v2, sizeof(v2), "{" WL2 "," ADM("{'levels':%s}") "}", levels);
    expect(v1, CONVERT_V1BETA2, v2);
    expect(v2, CONVERT_V1BETA1, v1);
}

/* v1beta2 `slices` decode to `domains` (encodings V1Beta2From does not produce). */
static void tas_one_way(const char *levels, const char *slices, const char *domains)
{
    char v1[8192], v2[8192];

    snprintf(v1, sizeof(v1), "{" WL1 "," ADM("{'levels':%s,'domains':%s}") "}", levels, domains);
    snprintf(v2, sizeof(v2), "{" WL2 "," ADM("{'levels':%s,'slices':%s}") "}", levels, slices);
    expect(v2, CONVERT_V1BETA1, v1);
}

START_TEST(tas_kueue_cases)
{
    /* workload_conversion_test.go "with TopologyAssignment" */
    tas_both_ways("['a','b']",
                  "[{'values':['a1','b1'],'count':10},{'values':['a1','b2'],'count':20}]",
                  "[{'domainCount':2,'valuesPerLevel':[{'universal':'a1'},{'individual':{'prefix':"
                  "'b','roots':['1','2']}}],'podCounts':{'individual':[10,20]}}]");
    /* tas_assignment_test.go bothWaysTestCases */
    tas_both_ways("['a','b']", "[]", NULL);
    tas_both_ways("['a','b']", "[{'values':['a1','b1'],'count':1}]",
                  "[{'domainCount':1,'valuesPerLevel':[{'universal':'a1'},{'universal':'b1'}],"
                  "'podCounts':{'universal':1}}]");
    tas_both_ways("['a','b']",
                  "[{'values':['a1','b1'],'count':1},{'values':['a2','b2'],'count':1}]",
                  "[{'domainCount':2,'valuesPerLevel':[{'individual':{'prefix':'a','roots':['1',"
                  "'2']}},{'individual':{'prefix':'b','roots':['1','2']}}],'podCounts':{"
                  "'universal':1}}]");
    tas_both_ways("['a','b']",
                  "[{'values':['p.a1.s','p.b1.s'],'count':1},{'values':['p.a2.s','p.b2.s'],"
                  "'count':2}]",
                  "[{'domainCount':2,'valuesPerLevel':[{'individual':{'prefix':'p.a','suffix':"
                  "'.s','roots':['1','2']}},{'individual':{'prefix':'p.b','suffix':'.s','roots':"
                  "['1','2']}}],'podCounts':{'individual':[1,2]}}]");
    tas_both_ways("['a','b']", "[{'values':['a1','x'],'count':1},{'values':['a1','y'],'count':2}]",
                  "[{'domainCount':2,'valuesPerLevel':[{'universal':'a1'},{'individual':{'roots':"
                  "['x','y']}}],'podCounts':{'individual':[1,2]}}]");
    tas_both_ways("['a']",
                  "[{'values':['a123'],'count':1},{'values':['a12'],'count':1},{'values':['a1'],"
                  "'count':1},{'values':['a13'],'count':1}]",
                  "[{'domainCount':4,'valuesPerLevel':[{'individual':{'prefix':'a1','roots':["
                  "'23','2','','3']}}],'podCounts':{'universal':1}}]");
    tas_both_ways("['a']",
                  "[{'values':['123b'],'count':1},{'values':['23b'],'count':1},{'values':['3b'],"
                  "'count':1},{'values':['13b'],'count':1}]",
                  "[{'domainCount':4,'valuesPerLevel':[{'individual':{'suffix':'3b','roots':["
                  "'12','2','','1']}}],'podCounts':{'universal':1}}]");
    tas_both_ways("['a']", "[{'values':['abacacada'],'count':1},{'values':['abacada'],'count':1}]",
                  "[{'domainCount':2,'valuesPerLevel':[{'individual':{'prefix':'ab','suffix':"
                  "'acada','roots':['ac','']}}],'podCounts':{'universal':1}}]");
    tas_both_ways("['a']", "[{'values':['ababa'],'count':1},{'values':['aba'],'count':1}]",
                  "[{'domainCount':2,'valuesPerLevel':[{'individual':{'suffix':'aba','roots':["
                  "'ab','']}}],'podCounts':{'universal':1}}]");
    tas_both_ways("['a']", "[{'values':['aba'],'count':1},{'values':['ababa'],'count':1}]",
                  "[{'domainCount':2,'valuesPerLevel':[{'individual':{'suffix':'aba','roots':['',"
                  "'ab']}}],'podCounts':{'universal':1}}]");
    /* oneWayTestCases, and workload_conversion_test.go "multiple slices" */
    tas_one_way("['a','b']",
                "[{'domainCount':1,'podCounts':{'individual':[1]},'valuesPerLevel':[{'individual':"
                "{'roots':['a']}},{'individual':{'roots':['b']}}]},{'domainCount':2,'podCounts':{"
                "'individual':[2,3]},'valuesPerLevel':[{'individual':{'roots':['c','e']}},{"
                "'individual':{'roots':['d','f']}}]}]",
                "[{'values':['a','b'],'count':1},{'values':['c','d'],'count':2},{'values':['e',"
                "'f'],'count':3}]");
    tas_one_way("['a','b']",
                "[{'domainCount':2,'valuesPerLevel':[{'universal':'a1'},{'individual':{'prefix':"
                "'b','roots':['1','2']}}],'podCounts':{'individual':[10,20]}},{'domainCount':2,"
                "'valuesPerLevel':[{'universal':'a2'},{'individual':{'roots':['first','second'],"
                "'suffix':'-in-a2'}}],'podCounts':{'universal':50}}]",
                "[{'values':['a1','b1'],'count':10},{'values':['a1','b2'],'count':20},{'values':["
                "'a2','first-in-a2'],'count':50},{'values':['a2','second-in-a2'],'count':50}]");
    tas_one_way("['a','b']",
                "[{'domainCount':2,'podCounts':{'individual':[2,3]},'valuesPerLevel':[{"
                "'universal':'a1'},{'individual':{'prefix':'b','suffix':'-s','roots':['1','2']}}]},"
                "{'domainCount':2,'podCounts':{'universal':10},'valuesPerLevel':[{'universal':"
                "'a10'},{'universal':'b10'}]}]",
                "[{'values':['a1','b1-s'],'count':2},{'values':['a1','b2-s'],'count':3},{'values':"
                "['a10','b10'],'count':10},{'values':['a10','b10'],'count':10}]");
}
END_TEST

/* A hostname-level v1beta1 assignment of `n` domains named by fmt(i) -> the converted slices. */
static json_t *tas_hosts(size_t n, void (*name)(size_t i, char *buf, size_t size))
{
    json_t *wl = squote_json("{" WL1 "," ADM("{'levels':['" HOST "'],'domains':[]}") "}"),
           *out = NULL;
    json_t *domains = json_object_get(
        json_object_get(
            json_array_get(
                json_object_get(json_object_get(json_object_get(wl, "status"), "admission"),
                                "podSetAssignments"),
                0),
            "topologyAssignment"),
        "domains");
    err_msg_t msg = {{0}};
    json_t *slices;
    char buf[128];

    for (size_t i = 0; i < n; i++) {
        name(i, buf, sizeof(buf));
        json_array_append_new(domains, json_pack("{s:[s],s:i}", "values", buf, "count", 1));
    }
    ck_assert_msg(convert_object(wl, CONVERT_V1BETA2, NULL, &out, &msg) == ERR_OK, "%s", msg.text);
    /* ... and back: the same domains, in order. */
    {
        json_t *back = NULL;
        ck_assert_msg(convert_object(out, CONVERT_V1BETA1, NULL, &back, &msg) == ERR_OK, "%s",
                      msg.text);
        ck_assert(json_equal(back, wl));
        json_decref(back);
    }
    slices = json_incref(json_object_get(
        json_object_get(
            json_array_get(
                json_object_get(json_object_get(json_object_get(out, "status"), "admission"),
                                "podSetAssignments"),
                0),
            "topologyAssignment"),
        "slices"));
    json_decref(out);
    json_decref(wl);
    return slices;
}

static size_t pool_n; /* hostnamePrefixAssignment's domain count */

static void pool_name(size_t i, char *buf, size_t size)
{
    size_t half = pool_n / 2;
    snprintf(buf, size, "pool-%s-node-%05zu", i >= half ? "b" : "a", i >= half ? i - half : i);
}

static void gke_name(size_t i, char *buf, size_t size)
{
    static const char *const n[] = {"gke-c-pool-a-hash1-aa", "gke-c-pool-a-hash1-bb",
                                    "gke-c-pool-b-hash2-cc", "gke-c-pool-b-hash2-dd"};
    snprintf(buf, size, "%s", n[i]);
}

static void backoff_name(size_t i, char *buf, size_t size)
{
    snprintf(buf, size, "a-%s-%04zu", i % 2 ? "y" : "x", i);
}

static void fallback_name(size_t i, char *buf, size_t size)
{
    snprintf(buf, size, "%s-%04zu", i % 2 ? "b-y" : "a-x", i);
}

static void big_name(size_t i, char *buf, size_t size)
{
    snprintf(buf, size, "gke-cluster-pool-%04zu-%08zx-%04zx", i / 100, i / 100, i % 100);
}

static void expect_slices(json_t *slices, const char *want)
{
    json_t *w = squote_json(want);
    char *a = dump(slices), *b = dump(w);

    ck_assert_msg(strcmp(a, b) == 0, "\n got: %s\nwant: %s", a, b);
    free(a);
    free(b);
    json_decref(w);
    json_decref(slices);
}

START_TEST(tas_hostname_prefix)
{
    json_t *s;

    /* "enabled uses smaller single-slice encoding": 4 domains, 2 runs, the single slice is
     * smaller as Go writes it. */
    pool_n = 4;
    expect_slices(tas_hosts(4, pool_name),
                  "[{'domainCount':4,'valuesPerLevel':[{'individual':{'prefix':'pool-','roots':["
                  "'a-node-00000','a-node-00001','b-node-00000','b-node-00001']}}],'podCounts':{"
                  "'universal':1}}]");
    /* "enabled uses smaller hostname-prefix encoding": 20 domains -> the two runs win. */
    pool_n = 20;
    expect_slices(
        tas_hosts(20, pool_name),
        "[{'domainCount':10,'valuesPerLevel':[{'individual':{'prefix':'pool-a-node-0000',"
        "'roots':['0','1','2','3','4','5','6','7','8','9']}}],'podCounts':{'universal':1}},"
        "{'domainCount':10,'valuesPerLevel':[{'individual':{'prefix':'pool-b-node-0000',"
        "'roots':['0','1','2','3','4','5','6','7','8','9']}}],'podCounts':{'universal':1}"
        "}]");
    /* GKE node pools: runs [aa bb] [cc dd], but one slice is smaller. */
    expect_slices(tas_hosts(4, gke_name),
                  "[{'domainCount':4,'valuesPerLevel':[{'individual':{'prefix':'gke-c-pool-',"
                  "'roots':['a-hash1-aa','a-hash1-bb','b-hash2-cc','b-hash2-dd']}}],'podCounts':{"
                  "'universal':1}}]");
    /* Backs off to the shorter prefix "a-" (1001 alternating runs would exceed 1,000 slices). */
    s = tas_hosts(1001, backoff_name);
    ck_assert_uint_eq(json_array_size(s), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(s, 0), "domainCount")),
                     1001);
    json_decref(s);
    /* No depth fits: one run. */
    s = tas_hosts(1001, fallback_name);
    ck_assert_uint_eq(json_array_size(s), 1);
    json_decref(s);
    /* 2,000 pools x 100 nodes: backs off to "gke-cluster-pool-", one run cut into two chunks of
     * 100,000 (more than 100,000 domains: no single-slice comparison). */
    s = tas_hosts(200000, big_name);
    ck_assert_uint_eq(json_array_size(s), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(s, 0), "domainCount")),
                     100000);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(s, 1), "domainCount")),
                     100000);
    json_decref(s);
}
END_TEST

START_TEST(tas_not_hostname)
{
    /* Without a hostname level there are no runs: one slice ("rack-a", "rack-b"). */
    tas_both_ways("['cloud.example.com/rack']",
                  "[{'values':['rack-a'],'count':1},{'values':['rack-b'],'count':2}]",
                  "[{'domainCount':2,'valuesPerLevel':[{'individual':{'prefix':'rack-','roots':["
                  "'a','b']}}],'podCounts':{'individual':[1,2]}}]");
    /* Multi-byte characters: the common prefix stops at a character boundary. */
    tas_both_ways("['a']", "[{'values':['x\\u00e9'],'count':1},{'values':['x\\u00e8'],'count':1}]",
                  "[{'domainCount':2,'valuesPerLevel':[{'individual':{'prefix':'x','roots':["
                  "'\\u00e9','\\u00e8']}}],'podCounts':{'universal':1}}]");
}
END_TEST

START_TEST(tas_errors)
{
    expect_fail("{" WL1 "," ADM("{'levels':['a','b'],'domains':[{'values':['x'],'count':1}]}") "}",
                CONVERT_V1BETA2, ERR_INVALID,
                "Workload ns/wl: status.admission.podSetAssignments[0].topologyAssignment."
                "domains[0].values: has 1 values for 2 levels");
    expect_fail("{" WL1 "," ADM("{'levels':['a'],'domains':[{'values':['x'],'count':'1'}]}") "}",
                CONVERT_V1BETA2, ERR_INVALID, "domains[0].count: must be an int32");
    expect_fail("{" WL1 "," ADM("{'levels':['a'],'domains':[{'values':[1],'count':1}]}") "}",
                CONVERT_V1BETA2, ERR_INVALID, "domains[0].values[0]: must be a string");
    expect_fail("{" WL1 "," ADM("{'levels':'a','domains':[]}") "}", CONVERT_V1BETA2, ERR_INVALID,
                "topologyAssignment.levels: must be an array");
    expect_fail("{" WL1 "," ADM("{'levels':['a'],'slices':[]}") "}", CONVERT_V1BETA2, ERR_INVALID,
                "topologyAssignment.slices: not a field of kueue.x-k8s.io/v1beta1");
    expect_fail("{" WL1 "," ADM("{'levels':['" HOST "'],'domains':[{'values':['"
                                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa']"
                                ",'count':1}]}") "}",
                CONVERT_V1BETA2, ERR_INVALID, "a kubernetes.io/hostname value of 64 characters");
    expect_fail("{" WL2
                "," ADM("{'levels':['a','b'],'slices':[{'domainCount':1,"
                        "'valuesPerLevel':[{'universal':'x'}],'podCounts':{'universal':1}}]}") "}",
                CONVERT_V1BETA1, ERR_INVALID,
                "topologyAssignment.slices[0].valuesPerLevel: valuesPerLevel must have the same "
                "length as the number of levels");
    expect_fail(
        "{" WL2 "," ADM("{'levels':['a'],'slices':[{'domainCount':2,"
                        "'valuesPerLevel':[{'individual':{'roots':['x']}}],"
                        "'podCounts':{'universal':1}}]}") "}",
        CONVERT_V1BETA1, ERR_INVALID,
        "slices[0].valuesPerLevel[0].individual: roots must be an array of domainCount (2)");
    expect_fail(
        "{" WL2 "," ADM("{'levels':['a'],'slices':[{'domainCount':1,"
                        "'valuesPerLevel':[{'universal':'x','individual':{'roots':['x']}}],"
                        "'podCounts':{'universal':1}}]}") "}",
        CONVERT_V1BETA1, ERR_INVALID,
        "valuesPerLevel[0]: exactly one of the fields in [universal individual] must be set");
    expect_fail("{" WL2 "," ADM("{'levels':['a'],'slices':[{'domainCount':2,"
                                "'valuesPerLevel':[{'universal':'x'}],"
                                "'podCounts':{'individual':[1]}}]}") "}",
                CONVERT_V1BETA1, ERR_INVALID,
                "slices[0].podCounts: podCounts.individual must have length equal to domainCount");
    expect_fail("{" WL2 "," ADM("{'levels':['a'],'slices':[{'domainCount':1,"
                                "'valuesPerLevel':[{'universal':'x'}]}]}") "}",
                CONVERT_V1BETA1, ERR_INVALID, "slices[0].podCounts: must be an object");
    expect_fail("{" WL2 "," ADM("{'levels':['a'],'slices':[{'domainCount':-1}]}") "}",
                CONVERT_V1BETA1, ERR_INVALID, "slices[0].domainCount: must be an int32");
    expect_fail("{" WL2 "," ADM("{'levels':['a'],'domains':[]}") "}", CONVERT_V1BETA1, ERR_INVALID,
                "topologyAssignment.domains: not a field of kueue.x-k8s.io/v1beta2");
    expect_fail("{" WL2 ",'status':{'admission':{'podSetAssignments':{}}}}", CONVERT_V1BETA1,
                ERR_INVALID, "status.admission.podSetAssignments: must be an array");
    /* A tiny review cannot ask for billions of domains. */
    expect_fail("{" WL2
                "," ADM("{'levels':['a'],'slices':[{'domainCount':2000000000,"
                        "'valuesPerLevel':[{'universal':'x'}],'podCounts':{'universal':1}}]}") "}",
                CONVERT_V1BETA1, ERR_INVALID,
                "would expand to more domains than allowed (200000 per object");
}
END_TEST

START_TEST(tas_domain_budget)
{
    /* The budget is per object, across podSetAssignments. */
    json_t *wl = squote_json(
               "{" WL2 ",'status':{'admission':{'podSetAssignments':[{'topologyAssignment':"
               "{'levels':['a'],'slices':[{'domainCount':3,'valuesPerLevel':[{'individual':{"
               "'roots':['1','2','3']}}],'podCounts':{'universal':1}}]}},{'topologyAssignment':"
               "{'levels':['a'],'slices':[{'domainCount':2,'valuesPerLevel':[{'individual':{"
               "'roots':['1','2']}}],'podCounts':{'universal':1}}]}}]}}}"),
           *out = NULL;
    size_t budget = 4;
    convert_opts_t o = {.budget = &budget};
    err_msg_t msg = {{0}};

    ck_assert_int_eq(convert_object(wl, CONVERT_V1BETA1, &o, &out, &msg), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(msg.text, "podSetAssignments[1].topologyAssignment.slices[0]."
                                           "domainCount: the topology assignments would expand "
                                           "to more domains than allowed (200000 per object; 1 "
                                           "left)"));
    budget = 5;
    ck_assert_int_eq(convert_object(wl, CONVERT_V1BETA1, &o, &out, &msg), ERR_OK);
    ck_assert_uint_eq(budget, 0); /* shared by the next object of the same request */
    json_decref(out);
    ck_assert_int_eq(convert_object(wl, CONVERT_V1BETA1, &o, &out, &msg), ERR_INVALID);
    json_decref(wl);
}
END_TEST

/* ---- other kinds, dispatch --------------------------------------------------------------------
 */

START_TEST(other_kinds)
{
    notes_reset();
    expect("{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'Cohort','metadata':{'name':'c'},"
           "'spec':{'parentName':'root'},'status':{'fairSharing':{'weightedShare':1,"
           "'admissionFairSharingStatus':{'consumedResources':{},'lastUpdate':"
           "'2025-01-01T00:00:00Z'}}}}",
           CONVERT_V1BETA2,
           "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Cohort','metadata':{'name':'c'},"
           "'spec':{'parentName':'root'},'status':{'fairSharing':{'weightedShare':1}}}");
    notes_have("status.fairSharing.admissionFairSharingStatus: dropped");
    expect("{'kind':'ResourceFlavor','apiVersion':'kueue.x-k8s.io/v1beta1','metadata':{'name':"
           "'f'},'spec':{'nodeLabels':{'a':'b'}}}",
           CONVERT_V1BETA2,
           "{'kind':'ResourceFlavor','apiVersion':'kueue.x-k8s.io/v1beta2','metadata':{'name':"
           "'f'},'spec':{'nodeLabels':{'a':'b'}}}");
    expect("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'WorkloadPriorityClass','metadata':{"
           "'name':'p'},'value':10,'description':'d'}",
           CONVERT_V1BETA1,
           "{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'WorkloadPriorityClass','metadata':{"
           "'name':'p'},'value':10,'description':'d'}");
    /* Same version: an unchanged copy (the API server may send objects already converted). */
    expect("{" CQ2 ",'spec':{'cohortName':'x'}}", CONVERT_V1BETA2,
           "{" CQ2 ",'spec':{'cohortName':"
           "'x'}}");
    expect_fail("{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'AdmissionCheck'}", CONVERT_V1BETA2,
                ERR_UNSUPPORTED, "kind \"AdmissionCheck\"");
    expect_fail("{'apiVersion':'batch/v1','kind':'Job'}", CONVERT_V1BETA2, ERR_UNSUPPORTED,
                "apiVersion \"batch/v1\" is not converted");
    expect_fail("{" CQ1 "}", "kueue.x-k8s.io/v1", ERR_UNSUPPORTED, "cannot convert to");
    expect_fail("[1]", CONVERT_V1BETA2, ERR_INVALID, "not a JSON object");
    ck_assert(convert_supported(CONVERT_V1BETA1, "Workload"));
    ck_assert(convert_supported(CONVERT_V1BETA2, "ResourceFlavor"));
    ck_assert(!convert_supported(CONVERT_V1BETA1, "Topology"));
    ck_assert(!convert_supported("kueue.x-k8s.io/v1alpha1", "Workload"));
    ck_assert(!convert_supported(NULL, "Workload"));
}
END_TEST

START_TEST(metadata_and_nul)
{
    /* metadata is never touched; strings with NUL bytes survive (the API server may send them). */
    json_error_t e;
    json_t *in = json_loads("{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"ClusterQueue\","
                            "\"metadata\":{\"name\":\"cq\",\"annotations\":{\"a\":\"x\\u0000y\"},"
                            "\"resourceVersion\":\"7\",\"uid\":\"u\"},\"spec\":{\"cohort\":"
                            "\"c\\u0000d\"}}",
                            JSON_ALLOW_NUL, &e),
           *out = NULL;
    err_msg_t msg;

    ck_assert_ptr_nonnull(in);
    ck_assert_int_eq(convert_object(in, CONVERT_V1BETA2, NULL, &out, &msg), ERR_OK);
    ck_assert(json_equal(json_object_get(in, "metadata"), json_object_get(out, "metadata")));
    ck_assert_uint_eq(
        json_string_length(json_object_get(json_object_get(out, "spec"), "cohortName")), 3);
    json_decref(in);
    json_decref(out);
    /* A NUL-extended "Borrow" is not "Borrow". */
    in = json_loads("{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"ClusterQueue\","
                    "\"spec\":{\"flavorFungibility\":{\"whenCanBorrow\":\"Borrow\\u0000\"}}}",
                    JSON_ALLOW_NUL, &e);
    ck_assert_int_eq(convert_object(in, CONVERT_V1BETA2, NULL, &out, &msg), ERR_OK);
    ck_assert_uint_eq(
        json_string_length(json_object_get(
            json_object_get(json_object_get(out, "spec"), "flavorFungibility"), "whenCanBorrow")),
        7);
    json_decref(in);
    json_decref(out);
}
END_TEST

/* ---- allocation failures ----------------------------------------------------------------------
 */

/* Fail each allocation of converting `text` to `to` in turn: ERR_NOMEM, nothing produced, the
 * input intact and (ASan) nothing leaked; then it succeeds. Returns the allocation count. */
static long convert_every_oom(const char *text, const char *to)
{
    json_t *in = squote_json(text);
    char *before = dump(in);
    long n;

    for (n = 1;; n++) {
        json_t *out = NULL;
        err_msg_t msg = {{0}};
        err_t rc;
        char *after;
        long made;

        oom_fail_at(n);
        rc = convert_object(in, to, &opts, &out, &msg);
        made = oom_count();
        oom_fail_at(0);
        after = dump(in);
        ck_assert_str_eq(after, before);
        free(after);
        if (made < n) {
            ck_assert_msg(rc == ERR_OK, "%s", msg.text);
            json_decref(out);
            break;
        }
        ck_assert_msg(rc == ERR_NOMEM, "allocation %ld failed: got %s (%s)", n, err_str(rc),
                      msg.text);
        ck_assert_ptr_null(out);
    }
    free(before);
    json_decref(in);
    return n - 1;
}

START_TEST(allocation_failures)
{
    static const struct {
        const char *text, *to;
    } cases[] = {
        {"{" CQ1 ",'spec':{'cohort':'c','admissionChecks':['a','b'],'flavorFungibility':{"
         "'whenCanBorrow':'Borrow','whenCanPreempt':'Preempt'}},'status':{'pendingWorkloadsStatus'"
         ":{},'fairSharing':{'weightedShare':1,'admissionFairSharingStatus':{}}}}",
         CONVERT_V1BETA2},
        {"{" CQ2 ",'spec':{'cohortName':'c','concurrentAdmissionPolicy':{}}}", CONVERT_V1BETA1},
        {"{" LQ1 ",'status':{'flavorUsage':[{'name':'f'}],'flavors':[]}}", CONVERT_V1BETA2},
        {"{" LQ2 ",'status':{'flavorsUsage':[{'name':'f'}]}}", CONVERT_V1BETA1},
        {"{" WL1 ",'spec':{'priorityClassName':'p','priorityClassSource':"
         "'kueue.x-k8s.io/workloadpriorityclass'},'status':{'accumulatedPastExexcutionTimeSeconds':"
         "1,'admission':{'podSetAssignments':[{'topologyAssignment':{'levels':['r','" HOST "'],"
         "'domains':[{'values':['r1','pool-a-n-1'],'count':1},{'values':['r1','pool-a-n-2'],"
         "'count':2},{'values':['r2','pool-b-n-1'],'count':2}]}}]}}}",
         CONVERT_V1BETA2},
        {"{" WL2 ",'spec':{'priorityClassRef':{'group':'scheduling.k8s.io','kind':'PriorityClass',"
         "'name':'p'},'preemptionGates':[]},'status':{'accumulatedPastExecutionTimeSeconds':1,"
         "'admission':{'podSetAssignments':[{'topologyAssignment':{'levels':['r','h'],'slices':[{"
         "'domainCount':2,'valuesPerLevel':[{'universal':'r1'},{'individual':{'prefix':'n-',"
         "'suffix':'.x','roots':['1','2']}}],'podCounts':{'individual':[1,2]}}]}}]}}}",
         CONVERT_V1BETA1},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ck_assert_int_gt(convert_every_oom(cases[i].text, cases[i].to), 5);
}
END_TEST

static Suite *convert_suite(void)
{
    Suite *s = suite_create("convert");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, cq_cohort);
    tcase_add_test(tc, cq_admission_checks);
    tcase_add_test(tc, cq_fungibility);
    tcase_add_test(tc, cq_complete);
    tcase_add_test(tc, cq_round_trips);
    tcase_add_test(tc, cq_foreign_fields);
    tcase_add_test(tc, lq_flavor_usage);
    tcase_add_test(tc, lq_fair_sharing_and_flavors);
    tcase_add_test(tc, wl_accumulated_time);
    tcase_add_test(tc, wl_priority_class);
    tcase_add_test(tc, wl_v1beta2_only_fields);
    tcase_add_test(tc, tas_kueue_cases);
    tcase_add_test(tc, tas_hostname_prefix);
    tcase_add_test(tc, tas_not_hostname);
    tcase_add_test(tc, tas_errors);
    tcase_add_test(tc, tas_domain_budget);
    tcase_add_test(tc, other_kinds);
    tcase_add_test(tc, metadata_and_nul);
    tcase_add_test(tc, allocation_failures);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;

    util_alloc_install();
    sr = srunner_create(convert_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
