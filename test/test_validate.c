/* test_validate -- every Kueue CEL and webhook rule of lib/model/validate*, YAML to messages. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/object.h"
#include "model/validate.h"
#include "model/yaml.h"

#include <check.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Each case decodes one YAML document (which must decode cleanly, so the case exercises
 * validate.c and not the decoder), validates it and compares the whole output, one
 * "path: message" line per problem in order, with the exact expected text. A passing twin
 * expects "".
 */

/* Kubernetes' messages, as validate.c must print them. */
#define NAME_RE                                                                                 \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " \
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "      \
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define VALUE_RE                                                                                \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or " \
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "          \
    "'my_value',  or '12345', regex used for validation is "                                    \
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
#define SUBDOMAIN_RE                                                                              \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "  \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used " \
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define EFFECTS "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'"

/* ---- helpers ------------------------------------------------------------------------------ */

typedef struct loaded_s {
    json_t *doc;
    size_t n;
} loaded_t;

static err_t on_doc(void *ctx, size_t index, int line, json_t *doc)
{
    loaded_t *l = ctx;

    (void)index;
    (void)line;
    if (l->n++ == 0)
        l->doc = json_incref(doc);
    return ERR_OK;
}

static void decode_yaml(const char *yaml, object_t *obj)
{
    loaded_t l = {NULL, 0};
    err_msg_t msg = {{0}};
    diags_t d;
    err_t rc;

    rc = yaml_load_string(yaml, strlen(yaml), on_doc, &l, &msg);
    ck_assert_msg(rc == ERR_OK, "bad test YAML: %s\n%s", msg.text, yaml);
    ck_assert_uint_eq(l.n, 1);
    diags_init(&d);
    rc = object_decode(l.doc, obj, &d);
    json_decref(l.doc);
    if (rc != ERR_OK || d.nerrors != 0) {
        for (size_t i = 0; i < d.len; i++)
            fprintf(stderr, "  %s: %s\n", d.items[i].path, d.items[i].message);
        ck_abort_msg("test object does not decode:\n%s", yaml);
    }
    diags_fini(&d);
}

/* "path: message\n" per diagnostic (just "message\n" at the root); caller frees. */
static char *render(const diags_t *d)
{
    size_t cap = 1, len = 0;
    char *s;

    for (size_t i = 0; i < d->len; i++)
        cap += strlen(d->items[i].path) + strlen(d->items[i].message) + 16;
    s = malloc(cap);
    ck_assert_ptr_nonnull(s);
    s[0] = '\0';
    for (size_t i = 0; i < d->len; i++)
        len += (size_t)snprintf(s + len, cap - len, "%s%s%s%s\n",
                                d->items[i].warning ? "warning: " : "", d->items[i].path,
                                d->items[i].path[0] ? ": " : "", d->items[i].message);
    return s;
}

static char *check_create(const char *yaml)
{
    object_t o;
    diags_t d;
    char *s;

    decode_yaml(yaml, &o);
    diags_init(&d);
    validate_object(&o, &d);
    ck_assert(!d.oom);
    s = render(&d);
    diags_fini(&d);
    object_fini(&o);
    return s;
}

static bool has_default_queue(void *ctx, const char *ns)
{
    return strcmp(ns, (const char *)ctx) == 0;
}

static char *check_update(const char *old_yaml, const char *new_yaml, const validate_env_t *env)
{
    object_t o, n;
    diags_t d;
    char *s;

    decode_yaml(old_yaml, &o);
    decode_yaml(new_yaml, &n);
    diags_init(&d);
    if (env != NULL)
        validate_update_env(&o, &n, env, &d);
    else
        validate_update(&o, &n, &d);
    ck_assert(!d.oom);
    s = render(&d);
    diags_fini(&d);
    object_fini(&o);
    object_fini(&n);
    return s;
}

#define EXPECT(yaml, want)                                                                        \
    do {                                                                                          \
        char *got_ = check_create(yaml);                                                          \
        ck_assert_msg(strcmp(got_, want) == 0, "for\n%s\nwant:\n%s\ngot:\n%s", yaml, want, got_); \
        free(got_);                                                                               \
    } while (0)

#define EXPECT_UPDATE(old, new, want)                                                         \
    do {                                                                                      \
        char *got_ = check_update(old, new, NULL);                                            \
        ck_assert_msg(strcmp(got_, want) == 0, "for update to\n%s\nwant:\n%s\ngot:\n%s", new, \
                      want, got_);                                                            \
        free(got_);                                                                           \
    } while (0)

/* printf into a rotating set of static buffers, for building YAML inline. */
static const char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

static const char *fmt(const char *f, ...)
{
    static char bufs[64][8192];
    static int next;
    char *b = bufs[next++ % 64];
    va_list ap;

    va_start(ap, f);
    vsnprintf(b, sizeof(bufs[0]), f, ap);
    va_end(ap);
    return b;
}

/* ---- ClusterQueue ---------------------------------------------------------------------------- */

#define CQ "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"

/* A ClusterQueue with `spec_extra` added to spec and one group covering cpu and memory whose
 * flavor f1 has the given cpu resource fields. */
static const char *cq_yaml(const char *spec_extra, const char *cpu_fields)
{
    return fmt(CQ "spec:\n"
                  "  namespaceSelector: {}\n"
                  "%s"
                  "  resourceGroups:\n"
                  "  - coveredResources: [cpu, memory]\n"
                  "    flavors:\n"
                  "    - name: f1\n"
                  "      resources:\n"
                  "      - {name: cpu, nominalQuota: \"10\"%s}\n"
                  "      - {name: memory, nominalQuota: 10Gi}\n",
               spec_extra, cpu_fields);
}

START_TEST(cq_valid)
{
    EXPECT(cq_yaml("", ""), "");
    EXPECT(cq_yaml("  cohortName: co\n", ", borrowingLimit: \"5\", lendingLimit: \"10\""), "");
}
END_TEST

START_TEST(cq_borrowing_limit_without_cohort)
{
    EXPECT(cq_yaml("", ", borrowingLimit: \"5\""),
           "spec: borrowingLimit must be nil when cohort is empty\n"
           "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: must be nil when "
           "cohort is empty\n");
    EXPECT(cq_yaml("  cohortName: co\n", ", borrowingLimit: \"5\""), "");
}
END_TEST

START_TEST(cq_lending_limit_without_cohort)
{
    EXPECT(cq_yaml("", ", lendingLimit: \"5\""),
           "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: must be nil when cohort "
           "is empty\n");
    EXPECT(cq_yaml("  cohortName: co\n", ", lendingLimit: \"5\""), "");
}
END_TEST

START_TEST(cq_lending_limit_above_nominal)
{
    const char *y =
        CQ "spec:\n"
           "  cohortName: co\n"
           "  resourceGroups:\n"
           "  - coveredResources: [nvidia.com/gpu]\n"
           "    flavors:\n"
           "    - name: a100\n"
           "      resources: [{name: nvidia.com/gpu, nominalQuota: 8, lendingLimit: 8}]\n"
           "    - name: h100\n"
           "      resources: [{name: nvidia.com/gpu, nominalQuota: 8, lendingLimit: "
           "9}]\n";
    EXPECT(y, "spec.resourceGroups[0].flavors[1].resources[0].lendingLimit: must be less than or "
              "equal to the nominalQuota\n");
}
END_TEST

START_TEST(cq_negative_quantities)
{
    EXPECT(cq_yaml("  cohortName: co\n", ", borrowingLimit: \"-1\", lendingLimit: -2"),
           "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: must be greater than "
           "or equal to 0\n"
           "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: must be greater than or "
           "equal to 0\n");
    EXPECT(CQ "spec:\n  resourceGroups:\n  - coveredResources: [cpu]\n"
              "    flavors: [{name: f1, resources: [{name: cpu, nominalQuota: -100m}]}]\n",
           "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: must be greater than or "
           "equal to 0\n");
    EXPECT(CQ "spec:\n  resourceGroups:\n  - coveredResources: [cpu]\n"
              "    flavors: [{name: f1, resources: [{name: cpu, nominalQuota: 0}]}]\n",
           "");
}
END_TEST

START_TEST(cq_resource_count_mismatch)
{
    EXPECT(CQ "spec:\n  resourceGroups:\n  - coveredResources: [cpu, memory]\n"
              "    flavors:\n"
              "    - {name: f1, resources: [{name: cpu, nominalQuota: 1}, {name: memory, "
              "nominalQuota: 1Gi}]}\n"
              "    - {name: f2, resources: [{name: cpu, nominalQuota: 1}]}\n",
           "spec.resourceGroups[0]: flavors must have the same number of resources as the "
           "coveredResources\n");
}
END_TEST

START_TEST(cq_resource_name_mismatch)
{
    EXPECT(CQ "spec:\n  resourceGroups:\n  - coveredResources: [cpu, memory]\n"
              "    flavors:\n"
              "    - {name: f1, resources: [{name: memory, nominalQuota: 1}, {name: cpu, "
              "nominalQuota: 1}]}\n",
           "spec.resourceGroups[0].flavors[0].resources[0].name: must match the name in "
           "coveredResources\n"
           "spec.resourceGroups[0].flavors[0].resources[1].name: must match the name in "
           "coveredResources\n");
}
END_TEST

START_TEST(cq_covered_resource_name)
{
    EXPECT(CQ "spec:\n  resourceGroups:\n  - coveredResources: [cpu, -gpu]\n"
              "    flavors:\n"
              "    - {name: f1, resources: [{name: cpu, nominalQuota: 1}, {name: -gpu, "
              "nominalQuota: 1}]}\n",
           "spec.resourceGroups[0].coveredResources[1]: name part " NAME_RE "\n");
    EXPECT(CQ "spec:\n  resourceGroups:\n  - coveredResources: [/gpu]\n"
              "    flavors: [{name: f1, resources: [{name: /gpu, nominalQuota: 1}]}]\n",
           "spec.resourceGroups[0].coveredResources[0]: prefix part must be non-empty\n");
    EXPECT(CQ "spec:\n  resourceGroups:\n  - coveredResources: [Example.com/gpu]\n"
              "    flavors: [{name: f1, resources: [{name: Example.com/gpu, nominalQuota: 1}]}]\n",
           "spec.resourceGroups[0].coveredResources[0]: prefix part " SUBDOMAIN_RE "\n");
    EXPECT(CQ "spec:\n  resourceGroups:\n  - coveredResources: [a/b/c]\n"
              "    flavors: [{name: f1, resources: [{name: a/b/c, nominalQuota: 1}]}]\n",
           "spec.resourceGroups[0].coveredResources[0]: a valid label key " NAME_RE
           " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')\n");
    EXPECT(CQ "spec:\n  resourceGroups:\n  - coveredResources: "
              "[example.com/a-0123456789012345678901234567890123456789012345678901234567890123]\n"
              "    flavors: [{name: f1, resources: [{name: "
              "example.com/a-0123456789012345678901234567890123456789012345678901234567890123, "
              "nominalQuota: 1}]}]\n",
           "spec.resourceGroups[0].coveredResources[0]: name part must be no more than 63 "
           "bytes\n");
    EXPECT(CQ "spec:\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n"
              "    flavors: [{name: f1, resources: [{name: nvidia.com/gpu, nominalQuota: 1}]}]\n",
           "");
}
END_TEST

START_TEST(cq_duplicates_across_groups)
{
    EXPECT(CQ "spec:\n  resourceGroups:\n"
              "  - coveredResources: [cpu]\n"
              "    flavors: [{name: f1, resources: [{name: cpu, nominalQuota: 1}]}]\n"
              "  - coveredResources: [cpu]\n"
              "    flavors: [{name: f2, resources: [{name: cpu, nominalQuota: 1}]}]\n",
           "spec.resourceGroups[1].coveredResources[0]: Duplicate value: \"cpu\"\n");
    EXPECT(CQ "spec:\n  resourceGroups:\n"
              "  - coveredResources: [cpu]\n"
              "    flavors: [{name: f1, resources: [{name: cpu, nominalQuota: 1}]}]\n"
              "  - coveredResources: [memory]\n"
              "    flavors: [{name: f1, resources: [{name: memory, nominalQuota: 1}]}]\n",
           "spec.resourceGroups[1].flavors[0].name: Duplicate value: \"f1\"\n");
    EXPECT(CQ "spec:\n  resourceGroups:\n"
              "  - coveredResources: [cpu]\n"
              "    flavors: [{name: f1, resources: [{name: cpu, nominalQuota: 1}]}]\n"
              "  - coveredResources: [memory]\n"
              "    flavors: [{name: f2, resources: [{name: memory, nominalQuota: 1}]}]\n",
           "");
}
END_TEST

/* x-kubernetes-list-map-keys of the ClusterQueue CRD: the API server reports the second
 * occurrence of a key as a Duplicate of the key object. */
START_TEST(cq_list_map_keys)
{
    EXPECT(CQ "spec:\n  cohortName: co\n  resourceGroups:\n"
              "  - coveredResources: [cpu]\n"
              "    flavors:\n"
              "    - {name: f1, resources: [{name: cpu, nominalQuota: 1}]}\n"
              "    - {name: f1, resources: [{name: cpu, nominalQuota: 2}]}\n"
              "    - {name: f1, resources: [{name: cpu, nominalQuota: 3}]}\n",
           "spec.resourceGroups[0].flavors[1]: Duplicate value: {\"name\":\"f1\"}\n"
           "spec.resourceGroups[0].flavors[1].name: Duplicate value: \"f1\"\n"
           "spec.resourceGroups[0].flavors[2].name: Duplicate value: \"f1\"\n");
    EXPECT(CQ "spec:\n  resourceGroups:\n"
              "  - coveredResources: [cpu, memory]\n"
              "    flavors:\n"
              "    - {name: f1, resources: [{name: cpu, nominalQuota: 1}, {name: cpu, "
              "nominalQuota: 1}]}\n",
           "spec.resourceGroups[0].flavors[0].resources[1]: Duplicate value: {\"name\":\"cpu\"}\n"
           "spec.resourceGroups[0].flavors[0].resources[1].name: must match the name in "
           "coveredResources\n");
    /* Go's encoding/json escapes '<', '>' and '&' in the key. */
    EXPECT(CQ "spec:\n  resourceGroups:\n"
              "  - coveredResources: [cpu]\n"
              "    flavors:\n"
              "    - {name: a&b, resources: [{name: cpu, nominalQuota: 1}]}\n"
              "    - {name: a&b, resources: [{name: cpu, nominalQuota: 1}]}\n",
           "spec.resourceGroups[0].flavors[1]: Duplicate value: {\"name\":\"a\\u0026b\"}\n"
           "spec.resourceGroups[0].flavors[1].name: Duplicate value: \"a&b\"\n");
    EXPECT(cq_yaml("  admissionChecksStrategy:\n    admissionChecks:\n"
                   "    - {name: prov}\n    - {name: prov}\n",
                   ""),
           "spec.admissionChecksStrategy.admissionChecks[1]: Duplicate value: {\"name\":\"prov\"}"
           "\n");
    EXPECT(cq_yaml("  admissionChecksStrategy:\n    admissionChecks:\n"
                   "    - {name: prov, onFlavors: [f1, f1]}\n",
                   ""),
           "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[1]: Duplicate value: "
           "\"f1\"\n");
    EXPECT(cq_yaml("  admissionChecksStrategy:\n    admissionChecks:\n"
                   "    - {name: prov, onFlavors: [f1]}\n    - {name: other}\n",
                   ""),
           "");
}
END_TEST

/* A ClusterQueue with flavors f1 (and f2 when `two`) and one admission check rule. */
static const char *cq_checks_yaml(bool two, const char *on_flavors)
{
    return fmt(CQ "spec:\n"
                  "  admissionChecksStrategy:\n    admissionChecks:\n"
                  "    - {name: prov, onFlavors: %s}\n"
                  "  resourceGroups:\n"
                  "  - coveredResources: [cpu]\n"
                  "    flavors:\n"
                  "    - {name: f1, resources: [{name: cpu, nominalQuota: 1}]}\n"
                  "%s",
               on_flavors,
               two ? "    - {name: f2, resources: [{name: cpu, nominalQuota: 1}]}\n" : "");
}

START_TEST(cq_on_flavors)
{
    EXPECT(cq_checks_yaml(true, "[f2, f9, f1, f0]"),
           "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[1]: "
           "Unsupported value: \"f9\": supported values: \"f1\", \"f2\"\n"
           "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[3]: "
           "Unsupported value: \"f0\": supported values: \"f1\", \"f2\"\n");
    /* A queue without flavors lists no supported values. */
    EXPECT(CQ "spec:\n  admissionChecksStrategy:\n    admissionChecks:\n"
              "    - {name: prov, onFlavors: [f1]}\n",
           "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]: "
           "Unsupported value: \"f1\"\n");
    EXPECT(cq_checks_yaml(true, "[f2, f1]"), "");
    /* Update: an unchanged invalid rule on a queue whose flavors did not change is tolerated
     * (RejectUpdatesToCQWithInvalidOnFlavors is off by default); a changed rule or changed
     * flavors are checked. */
    EXPECT_UPDATE(cq_checks_yaml(true, "[f9]"), cq_checks_yaml(true, "[f9]"), "");
    EXPECT_UPDATE(cq_checks_yaml(true, "[f9]"), cq_checks_yaml(true, "[f9, f1]"),
                  "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]: "
                  "Unsupported value: \"f9\": supported values: \"f1\", \"f2\"\n");
    EXPECT_UPDATE(cq_checks_yaml(true, "[f9]"), cq_checks_yaml(false, "[f9]"),
                  "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]: "
                  "Unsupported value: \"f9\": supported values: \"f1\"\n");
}
END_TEST

START_TEST(cq_fungibility_preference)
{
    EXPECT(cq_yaml("  flavorFungibility: {preference: PreemptionOverBorrowing}\n", ""),
           "spec.flavorFungibility: preference can only be set when both whenCanBorrow and "
           "whenCanPreempt are TryNextFlavor\n"
           "spec.flavorFungibility.preference: preference \"PreemptionOverBorrowing\" requires "
           "both whenCanBorrow and whenCanPreempt to be TryNextFlavor\n");
    EXPECT(cq_yaml("  flavorFungibility: {whenCanBorrow: TryNextFlavor, preference: "
                   "BorrowingOverPreemption}\n",
                   ""),
           "");
    EXPECT(cq_yaml("  flavorFungibility: {whenCanBorrow: MayStopSearch}\n", ""), "");
}
END_TEST

START_TEST(cq_preemption_rule)
{
    /* CRD and webhook state the same rule at the same path: reported once. */
    EXPECT(cq_yaml("  preemption: {reclaimWithinCohort: Never, borrowWithinCohort: {policy: "
                   "LowerPriority}}\n",
                   ""),
           "spec.preemption: reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never\n");
    EXPECT(cq_yaml("  preemption: {reclaimWithinCohort: Any, borrowWithinCohort: {policy: "
                   "LowerPriority}}\n",
                   ""),
           "");
}
END_TEST

START_TEST(cq_namespace_selector)
{
    const char *y = CQ "spec:\n"
                       "  namespaceSelector:\n"
                       "    matchLabels: {team: \"-bad\"}\n"
                       "    matchExpressions:\n"
                       "    - {key: team, operator: In}\n"
                       "    - {key: team, operator: Exists, values: [a]}\n"
                       "    - {key: \"bad key\", operator: NotIn, values: [\"x y\"]}\n";
    EXPECT(y, "spec.namespaceSelector.matchLabels: " VALUE_RE "\n"
              "spec.namespaceSelector.matchExpressions[0].values: Required value: must be "
              "specified when `operator` is 'In' or 'NotIn'\n"
              "spec.namespaceSelector.matchExpressions[1].values: Forbidden: may not be "
              "specified when `operator` is 'Exists' or 'DoesNotExist'\n"
              "spec.namespaceSelector.matchExpressions[2].key: name part " NAME_RE "\n"
              "spec.namespaceSelector.matchExpressions[2].values[0]: " VALUE_RE "\n");
    EXPECT(CQ "spec:\n  namespaceSelector:\n    matchLabels: {team: a}\n"
              "    matchExpressions: [{key: tier, operator: In, values: [gold]}]\n",
           "");
}
END_TEST

START_TEST(cq_fair_sharing_weight)
{
    EXPECT(cq_yaml("  fairSharing: {weight: \"-1\"}\n", ""),
           "spec.fairSharing: must be greater than or equal to 0\n");
    EXPECT(cq_yaml("  fairSharing: {weight: 1n}\n", ""),
           "spec.fairSharing: When not 0, weight must be > 10e-9\n");
    EXPECT(cq_yaml("  fairSharing: {weight: 0}\n", ""), "");
    EXPECT(cq_yaml("  fairSharing: {weight: 2n}\n", ""), "");
}
END_TEST

/* A ClusterQueue of `ngroups` groups, each covering `ncovered` resources with `nflavors`
 * flavors; names are unique so only the totals can fail. */
static char *big_cq(size_t ngroups, size_t ncovered, size_t nflavors)
{
    size_t cap = 4 << 20, len = 0;
    char *s = malloc(cap);

    ck_assert_ptr_nonnull(s);
    len += (size_t)snprintf(s + len, cap - len, CQ "spec:\n  resourceGroups:\n");
    for (size_t g = 0; g < ngroups; g++) {
        len += (size_t)snprintf(s + len, cap - len, "  - coveredResources: [");
        for (size_t r = 0; r < ncovered; r++)
            len += (size_t)snprintf(s + len, cap - len, "%sr%zu-%zu", r ? ", " : "", g, r);
        len += (size_t)snprintf(s + len, cap - len, "]\n    flavors:\n");
        for (size_t f = 0; f < nflavors; f++) {
            len += (size_t)snprintf(s + len, cap - len, "    - name: f%zu-%zu\n      resources: [",
                                    g, f);
            for (size_t r = 0; r < ncovered; r++)
                len += (size_t)snprintf(s + len, cap - len, "%s{name: r%zu-%zu, nominalQuota: 1}",
                                        r ? ", " : "", g, r);
            len += (size_t)snprintf(s + len, cap - len, "]\n");
        }
    }
    ck_assert_uint_lt(len, cap - 1);
    return s;
}

START_TEST(cq_totals)
{
    char *y;

    y = big_cq(16, 1, 17); /* 272 flavors */
    EXPECT(y, "spec.resourceGroups: total number of flavors across all resourceGroups must be ≤ "
              "256, got 272\n");
    free(y);
    y = big_cq(16, 17, 1); /* 272 covered resources */
    EXPECT(y, "spec.resourceGroups: total number of covered resources across all resourceGroups "
              "must be ≤ 256, got 272\n");
    free(y);
    y = big_cq(2, 9, 64); /* 576 combinations in each group */
    EXPECT(y, "spec.resourceGroups[0]: number of flavor-resource combinations in a resourceGroup "
              "must be ≤ 512, got 576\n"
              "spec.resourceGroups[1]: number of flavor-resource combinations in a resourceGroup "
              "must be ≤ 512, got 576\n");
    free(y);
    y = big_cq(16, 16, 16); /* exactly at the limits: 256, 256, 256 */
    EXPECT(y, "");
    free(y);
}
END_TEST

START_TEST(cq_reports_all_violations)
{
    /* Three independent problems, three lines. */
    EXPECT(CQ "spec:\n  cohortName: co\n  resourceGroups:\n  - coveredResources: [cpu, memory]\n"
              "    flavors:\n"
              "    - {name: f1, resources: [{name: cpu, nominalQuota: 1, lendingLimit: 2}, "
              "{name: memory, nominalQuota: -1}]}\n"
              "  fairSharing: {weight: \"-3\"}\n",
           "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: must be less than or "
           "equal to the nominalQuota\n"
           "spec.resourceGroups[0].flavors[0].resources[1].nominalQuota: must be greater than or "
           "equal to 0\n"
           "spec.fairSharing: must be greater than or equal to 0\n");
}
END_TEST

START_TEST(cq_update_runs_create_rules)
{
    EXPECT_UPDATE(cq_yaml("", ""), cq_yaml("", ", lendingLimit: \"5\""),
                  "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: must be nil when "
                  "cohort is empty\n");
    EXPECT_UPDATE(cq_yaml("", ""), cq_yaml("  cohortName: other\n", ""), "");
}
END_TEST

/* ---- Cohort -----------------------------------------------------------------------------------
 */

#define COHORT "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: co}\n"

static const char *cohort_yaml(const char *spec_extra, const char *cpu_fields)
{
    return fmt(COHORT "spec:\n%s"
                      "  resourceGroups:\n"
                      "  - coveredResources: [cpu]\n"
                      "    flavors: [{name: f1, resources: [{name: cpu, nominalQuota: 4%s}]}]\n",
               spec_extra, cpu_fields);
}

START_TEST(cohort_rules)
{
    EXPECT(cohort_yaml("", ", borrowingLimit: 1, lendingLimit: 1"),
           "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: must be nil when "
           "parent is empty\n"
           "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: must be nil when parent "
           "is empty\n");
    /* With a parent, a Cohort may lend more than its nominal quota. */
    EXPECT(cohort_yaml("  parentName: root\n", ", borrowingLimit: 1, lendingLimit: 10"), "");
    EXPECT(cohort_yaml("  fairSharing: {weight: \"-1\"}\n", ""),
           "spec.fairSharing: must be greater than or equal to 0\n");
    EXPECT(COHORT "spec:\n  resourceGroups:\n  - coveredResources: [cpu, memory]\n"
                  "    flavors: [{name: f1, resources: [{name: cpu, nominalQuota: 1}]}]\n",
           "spec.resourceGroups[0]: flavors must have the same number of resources as the "
           "coveredResources\n");
    EXPECT(COHORT "spec:\n  resourceGroups:\n  - coveredResources: [cpu]\n"
                  "    flavors: [{name: f1, resources: [{name: cpu, nominalQuota: \"-1\"}]}]\n",
           "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: must be greater than or "
           "equal to 0\n");
    EXPECT(COHORT "spec:\n  resourceGroups:\n  - coveredResources: [cpu]\n"
                  "    flavors:\n    - {name: f1, resources: [{name: cpu, nominalQuota: 1}]}\n"
                  "    - {name: f1, resources: [{name: cpu, nominalQuota: 1}]}\n",
           "spec.resourceGroups[0].flavors[1]: Duplicate value: {\"name\":\"f1\"}\n"
           "spec.resourceGroups[0].flavors[1].name: Duplicate value: \"f1\"\n");
    EXPECT(cohort_yaml("", ""), "");
}
END_TEST

/* ---- ResourceFlavor -------------------------------------------------------------------------- */

#define TOPOLOGY_PATTERN                                                                           \
    "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-" \
    "9_.]*)?[A-Za-z0-9])$"

#define RF "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: rf}\n"

START_TEST(rf_topology_needs_node_labels)
{
    EXPECT(RF "spec: {topologyName: default}\n",
           "spec: at least one nodeLabel is required when topology is set\n");
    EXPECT(RF "spec: {topologyName: default, nodeLabels: {pool: a}}\n", "");
}
END_TEST

START_TEST(rf_node_labels)
{
    EXPECT(RF "spec: {nodeLabels: {\"bad key\": \"bad value\"}}\n",
           "spec.nodeLabels: name part " NAME_RE "\nspec.nodeLabels: " VALUE_RE "\n");
    EXPECT(RF "spec: {nodeLabels: {cloud.example.com/pool: gpu-a100, empty: \"\"}}\n", "");
}
END_TEST

START_TEST(rf_taints)
{
    EXPECT(RF "spec:\n  nodeTaints:\n"
              "  - {key: \"bad key\", value: \"x y\", effect: NoSchedule}\n",
           "spec.nodeTaints[0].key: name part " NAME_RE "\n"
           "spec.nodeTaints[0].value: " VALUE_RE "\n");
    EXPECT(RF "spec:\n  nodeTaints:\n"
              "  - {key: gpu, value: \"true\", effect: NoSchedule}\n"
              "  - {key: gpu, effect: NoExecute}\n"
              "  - {key: gpu, value: \"false\", effect: NoSchedule}\n"
              "  - {key: spot, effect: NoSchedule}\n"
              "  - {key: spot, effect: NoSchedule}\n",
           "spec.nodeTaints[2]: Duplicate value: {\"key\":\"gpu\",\"value\":\"false\","
           "\"effect\":\"NoSchedule\"}: taints must be unique by key and effect pair\n"
           "spec.nodeTaints[4]: Duplicate value: {\"key\":\"spot\",\"effect\":\"NoSchedule\"}: "
           "taints must be unique by key and effect pair\n");
    EXPECT(RF "spec:\n  nodeTaints: [{key: nvidia.com/gpu, value: present, effect: "
              "NoSchedule}]\n",
           "");
}
END_TEST

START_TEST(rf_taint_effect_required_by_cel)
{
    /* The decoder rejects a missing or unknown effect first; the CEL rule still guards objects
     * built in code (an unset effect). */
    object_t o;
    diags_t d;
    char *got;

    decode_yaml(RF "spec:\n  nodeTaints: [{key: gpu, effect: NoSchedule}]\n", &o);
    o.u.flavor.taints[0].effect = TAINT_EFFECT_ANY;
    diags_init(&d);
    validate_object(&o, &d);
    got = render(&d);
    ck_assert_str_eq(got, "spec.nodeTaints: " EFFECTS "\n");
    free(got);
    diags_fini(&d);
    object_fini(&o);
}
END_TEST

START_TEST(rf_tolerations)
{
    EXPECT(RF "spec:\n  tolerations:\n  - {operator: Equal, value: x}\n",
           "spec.tolerations: operator must be Exists when 'key' is empty, which means 'match "
           "all values and all keys'\n");
    EXPECT(RF "spec:\n  tolerations:\n  - {value: x}\n",
           "spec.tolerations: operator must be Exists when 'key' is empty, which means 'match "
           "all values and all keys'\n");
    EXPECT(RF "spec:\n  tolerations:\n  - {key: a, effect: NoSchedule, tolerationSeconds: 5}\n",
           "spec.tolerations: effect must be 'NoExecute' when 'tolerationSeconds' is set\n");
    EXPECT(RF "spec:\n  tolerations:\n  - {key: a, operator: Exists, value: \"\"}\n",
           "spec.tolerations: a value must be empty when 'operator' is 'Exists'\n");
    EXPECT(RF "spec:\n  tolerations:\n  - {key: \"a b\", operator: Exists}\n",
           "spec.tolerations[0].key: name part " NAME_RE "\n");
    EXPECT(RF "spec:\n  tolerations:\n"
              "  - {operator: Exists}\n"
              "  - {key: a, operator: Equal, value: b, effect: NoExecute, tolerationSeconds: 30}\n"
              "  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n",
           "");
}
END_TEST

START_TEST(rf_topology_immutable)
{
    const char *with = RF "spec: {topologyName: t1, nodeLabels: {pool: a}}\n";
    const char *other = RF "spec: {topologyName: t2, nodeLabels: {pool: a}}\n";
    const char *without = RF "spec: {nodeLabels: {pool: a}}\n";

    EXPECT_UPDATE(with, other, "spec: topologyName is immutable when topologyName is set\n");
    EXPECT_UPDATE(with, without, "spec: topologyName is immutable when topologyName is set\n");
    EXPECT_UPDATE(without, with, "");
    EXPECT_UPDATE(with, with, "");
}
END_TEST

/* ---- Topology ---------------------------------------------------------------------------- */

#define TOPO "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata: {name: default}\n"

START_TEST(topology_levels)
{
    EXPECT(TOPO "spec:\n  levels:\n  - nodeLabel: cloud.example.com/rack\n"
                "  - nodeLabel: kubernetes.io/hostname\n",
           "");
    EXPECT(TOPO "spec: {levels: [{nodeLabel: rack}, {nodeLabel: rack}]}\n",
           "spec.levels: must be unique\n");
    EXPECT(TOPO "spec: {levels: [{nodeLabel: kubernetes.io/hostname}, {nodeLabel: rack}]}\n",
           "spec.levels: the kubernetes.io/hostname label can only be used at the lowest level "
           "of topology\n");
    EXPECT(TOPO "spec: {levels: [{nodeLabel: \"\"}, {nodeLabel: \"Bad/rack\"}, "
                "{nodeLabel: \"a/b/c\"}, {nodeLabel: \"-x\"}, {nodeLabel: x.y_Z-1}]}\n",
           "spec.levels[0].nodeLabel: Invalid value: \"\": spec.levels[0].nodeLabel in body "
           "should be at least 1 chars long\n"
           "spec.levels[1].nodeLabel: Invalid value: \"Bad/rack\": spec.levels[1].nodeLabel in "
           "body should match '" TOPOLOGY_PATTERN "'\n"
           "spec.levels[2].nodeLabel: Invalid value: \"a/b/c\": spec.levels[2].nodeLabel in "
           "body should match '" TOPOLOGY_PATTERN "'\n"
           "spec.levels[3].nodeLabel: Invalid value: \"-x\": spec.levels[3].nodeLabel in body "
           "should match '" TOPOLOGY_PATTERN "'\n");
}
END_TEST

START_TEST(topology_levels_mutable_with_hostname_lowest)
{
    const char *rack_host = TOPO "spec: {levels: [{nodeLabel: rack}, "
                                 "{nodeLabel: kubernetes.io/hostname}]}\n";
    const char *block_rack_host = TOPO "spec: {levels: [{nodeLabel: block}, {nodeLabel: rack}, "
                                       "{nodeLabel: kubernetes.io/hostname}]}\n";
    const char *rack = TOPO "spec: {levels: [{nodeLabel: rack}]}\n";
    const char *block = TOPO "spec: {levels: [{nodeLabel: block}]}\n";

    EXPECT_UPDATE(rack_host, block_rack_host, "");
    EXPECT_UPDATE(rack, rack, "");
    EXPECT_UPDATE(rack, block,
                  "spec.levels: levels are mutable only when kubernetes.io/hostname is the lowest "
                  "level both before and after the change\n");
    EXPECT_UPDATE(rack_host, rack,
                  "spec.levels: levels are mutable only when kubernetes.io/hostname is the lowest "
                  "level both before and after the change\n");
}
END_TEST

/* ---- LocalQueue --------------------------------------------------------------------------- */

START_TEST(lq_cluster_queue_immutable)
{
    const char *a = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
                    "metadata: {name: q, namespace: ns}\nspec: {clusterQueue: a}\n";
    const char *b =
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
        "metadata: {name: q, namespace: ns}\nspec: {clusterQueue: b, stopPolicy: Hold}\n";
    const char *a_held = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
                         "metadata: {name: q, namespace: ns}\nspec: {clusterQueue: a, stopPolicy: "
                         "Hold}\n";

    EXPECT(a, "");
    EXPECT_UPDATE(a, b, "spec.clusterQueue: field is immutable\n");
    EXPECT_UPDATE(a, a_held, "");
}
END_TEST

/* ---- AdmissionCheck ---------------------------------------------------------------------- */

#define AC "apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata: {name: prov}\n"

START_TEST(ac_rules)
{
    char long_name[300];
    memset(long_name, 'a', 254);
    long_name[254] = '\0';

    EXPECT(AC "spec: {controllerName: kueue.x-k8s.io/provisioning-request, parameters: "
              "{apiGroup: kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: prov-config}}\n",
           "");
    EXPECT(AC "spec: {controllerName: ''}\n",
           "spec.controllerName: Invalid value: \"\": should be at least 1 chars long\n");
    EXPECT(fmt(AC "spec: {controllerName: %s}\n", long_name),
           "spec.controllerName: Too long: may not be more than 253 bytes\n");
    EXPECT(AC "spec: {controllerName: c, parameters: {apiGroup: Kueue, kind: 1x, name: a.b}}\n",
           "spec.parameters.apiGroup: Invalid value: \"Kueue\": a lowercase RFC 1123 subdomain "
           "must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
           "with an alphanumeric character (e.g. 'example.com', regex used for validation is "
           "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n"
           "spec.parameters.kind: Invalid value: \"1x\": should match "
           "'^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$' and be at most 63 characters\n"
           "spec.parameters.name: Invalid value: \"a.b\": must not contain dots\n");
    EXPECT_UPDATE(AC "spec: {controllerName: a}\n", AC "spec: {controllerName: b}\n",
                  "spec.controllerName: field is immutable\n");
    EXPECT_UPDATE(AC "spec: {controllerName: a}\n", AC "spec: {controllerName: a}\n", "");
}
END_TEST

/* ---- Workload ----------------------------------------------------------------------------- */

#define WL "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"

/* A Workload: metadata extras, spec extras, podSets text, status text. */
static const char *wl_yaml(const char *meta, const char *spec, const char *pod_sets,
                           const char *status)
{
    return fmt(WL "metadata: {name: wl, namespace: ns%s}\n"
                  "spec:\n  queueName: lq\n%s"
                  "  podSets:\n%s"
                  "%s",
               meta, spec, pod_sets, status);
}

#define PS_MAIN(count, extra)                                                             \
    "  - name: main\n    count: " #count "\n" extra                                       \
    "    template: {spec: {containers: [{name: c, image: i, resources: {requests: {cpu: " \
    "\"1\"}}}]}}\n"

#define RESERVED(assignments)                                                         \
    "status:\n  conditions:\n"                                                        \
    "  - {type: QuotaReserved, status: \"True\", reason: QuotaReserved, message: m, " \
    "lastTransitionTime: \"2024-01-01T00:00:00Z\"}\n"                                 \
    "  admission:\n    clusterQueue: cq\n    podSetAssignments:\n" assignments

#define ADMITTED(assignments)                                                         \
    "status:\n  conditions:\n"                                                        \
    "  - {type: QuotaReserved, status: \"True\", reason: QuotaReserved, message: m, " \
    "lastTransitionTime: \"2024-01-01T00:00:00Z\"}\n"                                 \
    "  - {type: Admitted, status: \"True\", reason: Admitted, message: m, "           \
    "lastTransitionTime: \"2024-01-01T00:00:00Z\"}\n"                                 \
    "  admission:\n    clusterQueue: cq\n    podSetAssignments:\n" assignments

#define MAIN_ASSIGNMENT \
    "    - {name: main, flavors: {cpu: f1}, resourceUsage: {cpu: \"2\"}, count: 2}\n"

START_TEST(wl_valid)
{
    EXPECT(wl_yaml("", "", PS_MAIN(2, ""), ""), "");
    EXPECT(wl_yaml("", "", PS_MAIN(2, ""), RESERVED(MAIN_ASSIGNMENT)), "");
}
END_TEST

START_TEST(wl_priority_rules)
{
    EXPECT(wl_yaml("",
                   "  priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, "
                   "name: high}\n",
                   PS_MAIN(1, ""), ""),
           "spec: priority should not be nil when priorityClassRef is set\n");
    EXPECT(wl_yaml("",
                   "  priority: 5\n  priorityClassRef: {group: scheduling.k8s.io, kind: "
                   "WorkloadPriorityClass, name: high}\n",
                   PS_MAIN(1, ""), ""),
           "spec.priorityClassRef: only the PriorityClass kind is allowed for the "
           "scheduling.k8s.io group\n");
    EXPECT(wl_yaml("",
                   "  priority: 5\n  priorityClassRef: {group: kueue.x-k8s.io, kind: "
                   "PriorityClass, name: high}\n",
                   PS_MAIN(1, ""), ""),
           "spec.priorityClassRef: only the WorkloadPriorityClass kind is allowed for the "
           "kueue.x-k8s.io group\n");
    EXPECT(wl_yaml("",
                   "  priority: 5\n  priorityClassRef: {group: scheduling.k8s.io, kind: "
                   "PriorityClass, name: high}\n",
                   PS_MAIN(1, ""), ""),
           "");
}
END_TEST

START_TEST(wl_min_count)
{
    EXPECT(wl_yaml("", "", PS_MAIN(2, "    minCount: 3\n"), ""),
           "spec.podSets[0]: minCount should be positive and less or equal to count\n");
    EXPECT(wl_yaml("", "", PS_MAIN(2, "    minCount: 2\n"), ""), "");
    EXPECT(wl_yaml("", "",
                   PS_MAIN(2, "    minCount: 1\n") "  - name: workers\n    count: 4\n    minCount: "
                                                   "2\n    template: {spec: {containers: [{name: "
                                                   "c, image: i}]}}\n",
                   ""),
           "spec.podSets: at most one podSet can use minCount\n");
    EXPECT(wl_yaml(", annotations: {kueue.x-k8s.io/elastic-job: \"true\"}", "",
                   PS_MAIN(2, "    minCount: 1\n"), ""),
           "spec.podSets: partial admission and elastic job cannot be used together\n");
    EXPECT(wl_yaml(", annotations: {kueue.x-k8s.io/elastic-job: \"true\"}", "", PS_MAIN(2, ""), ""),
           "");
}
END_TEST

START_TEST(wl_pod_template)
{
    const char *ps = "  - name: main\n    count: 1\n"
                     "    template:\n"
                     "      metadata:\n"
                     "        labels: {\"a b\": ok}\n"
                     "        annotations: {\"-x\": v, Example.com/Key: v}\n"
                     "      spec:\n"
                     "        initContainers:\n"
                     "        - {name: init, image: i, resources: {requests: {pods: \"1\"}}}\n"
                     "        containers:\n"
                     "        - name: c\n"
                     "          image: i\n"
                     "          resources: {requests: {cpu: \"-1\"}, limits: {pods: \"1\", "
                     "memory: -1Gi}}\n";

    EXPECT(wl_yaml("", "", ps, ""),
           "spec.podSets[0].template.metadata.labels: name part " NAME_RE "\n"
           "spec.podSets[0].template.metadata.annotations: name part " NAME_RE "\n"
           "spec.podSets[0].template.spec.initContainers[0].resources.requests[pods]: the key "
           "is reserved for internal kueue use\n"
           "spec.podSets[0].template.spec.containers[0].resources.requests[cpu]: must be "
           "greater than or equal to 0\n"
           "spec.podSets[0].template.spec.containers[0].resources.limits[memory]: must be "
           "greater than or equal to 0\n"
           "spec.podSets[0].template.spec.containers[0].resources.limits[pods]: the key is "
           "reserved for internal kueue use\n");
}
END_TEST

START_TEST(wl_admission)
{
    EXPECT(wl_yaml("", "", PS_MAIN(2, ""),
                   "status:\n  conditions:\n"
                   "  - {type: QuotaReserved, status: \"True\", reason: QuotaReserved, message: "
                   "m, lastTransitionTime: \"2024-01-01T00:00:00Z\"}\n"),
           "status.admission: Required value: must be set while the QuotaReserved condition is "
           "true\n");
    EXPECT(wl_yaml("", "", PS_MAIN(2, ""),
                   RESERVED("    - {name: other, flavors: {cpu: f1}, resourceUsage: {cpu: "
                            "\"2\"}, count: 2}\n")),
           "status.admission.podSetAssignments[0].name: Not found: \"other\"\n");
    EXPECT(wl_yaml("", "", PS_MAIN(2, ""), RESERVED(MAIN_ASSIGNMENT MAIN_ASSIGNMENT)),
           "status.admission.podSetAssignments[1]: Duplicate value: {\"name\":\"main\"}\n"
           "podSetAssignments must have the same number of podSets as the spec\n");
    EXPECT(wl_yaml("", "", PS_MAIN(2, ""),
                   RESERVED("    - {name: main, flavors: {cpu: f1, memory: f1}, resourceUsage: "
                            "{cpu: 3m, memory: \"3\"}, count: 2}\n")),
           "status.admission.podSetAssignments[0].resourceUsage[cpu]: is not a multiple of 2\n"
           "status.admission.podSetAssignments[0].resourceUsage[memory]: is not a multiple of "
           "2\n");
    /* CPU is compared in milli-units: 3 CPUs over 2 pods is 1500m each. */
    EXPECT(wl_yaml("", "", PS_MAIN(2, ""),
                   RESERVED("    - {name: main, flavors: {cpu: f1}, resourceUsage: {cpu: \"3\"}, "
                            "count: 2}\n")),
           "");
    /* Not reserved: the admission is not checked. */
    EXPECT(wl_yaml("", "", PS_MAIN(2, ""),
                   "status:\n  admission:\n    clusterQueue: cq\n    podSetAssignments:\n"
                   "    - {name: other, resourceUsage: {memory: \"3\"}, count: 2}\n"),
           "");
}
END_TEST

START_TEST(wl_update_quota_reserved)
{
    const char *base = wl_yaml("", "", PS_MAIN(2, ""), RESERVED(MAIN_ASSIGNMENT));
    const char *wpc = "  priority: 5\n  priorityClassRef: {group: kueue.x-k8s.io, kind: "
                      "WorkloadPriorityClass, name: high}\n";
    const char *wpc2 = "  priority: 5\n  priorityClassRef: {group: kueue.x-k8s.io, kind: "
                       "WorkloadPriorityClass, name: low}\n";
    const char *pc = "  priority: 5\n  priorityClassRef: {group: scheduling.k8s.io, kind: "
                     "PriorityClass, name: high}\n";
    const char *pc2 = "  priority: 5\n  priorityClassRef: {group: scheduling.k8s.io, kind: "
                      "PriorityClass, name: low}\n";
    const char *pending = wl_yaml("", "", PS_MAIN(2, ""), "");

    EXPECT_UPDATE(base, wl_yaml("", wpc, PS_MAIN(2, ""), RESERVED(MAIN_ASSIGNMENT)),
                  "priorityClassRef is immutable while workload quota reserved\n");
    EXPECT_UPDATE(wl_yaml("", wpc, PS_MAIN(2, ""), RESERVED(MAIN_ASSIGNMENT)),
                  wl_yaml("", pc, PS_MAIN(2, ""), RESERVED(MAIN_ASSIGNMENT)),
                  "priorityClassRef.group is immutable while workload quota reserved\n"
                  "priorityClassRef.kind is immutable while workload quota reserved\n");
    EXPECT_UPDATE(wl_yaml("", pc, PS_MAIN(2, ""), RESERVED(MAIN_ASSIGNMENT)),
                  wl_yaml("", pc2, PS_MAIN(2, ""), RESERVED(MAIN_ASSIGNMENT)),
                  "priorityClassRef.name is immutable for scheduling.k8s.io/priorityclass while "
                  "workload quota reserved\n");
    /* A WorkloadPriorityClass may be swapped for another. */
    EXPECT_UPDATE(wl_yaml("", wpc, PS_MAIN(2, ""), RESERVED(MAIN_ASSIGNMENT)),
                  wl_yaml("", wpc2, PS_MAIN(2, ""), RESERVED(MAIN_ASSIGNMENT)), "");
    EXPECT_UPDATE(base, fmt("%s", base) /* same */, "");
    /* queueName */
    EXPECT_UPDATE(base,
                  fmt(WL "metadata: {name: wl, namespace: ns}\nspec:\n  queueName: other\n"
                         "  podSets:\n" PS_MAIN(2, "") RESERVED(MAIN_ASSIGNMENT)),
                  "queueName is immutable while workload quota reserved\n");
    EXPECT_UPDATE(pending,
                  fmt(WL "metadata: {name: wl, namespace: ns}\nspec:\n  queueName: other\n"
                         "  podSets:\n" PS_MAIN(2, "")),
                  "");
    /* podSets */
    EXPECT_UPDATE(base,
                  wl_yaml("", "", PS_MAIN(3, ""),
                          RESERVED("    - {name: main, flavors: {cpu: f1}, resourceUsage: {cpu: "
                                   "\"3\"}, count: 3}\n")),
                  "spec.podSets.0: field is immutable\nstatus.admission: field is immutable\n");
    EXPECT_UPDATE(pending, wl_yaml("", "", PS_MAIN(3, ""), ""), "");
    /* Admission may be set and unset but not changed. */
    EXPECT_UPDATE(pending, base, "");
    EXPECT_UPDATE(base, pending, "");
    /* Reserved without admission stays acceptable on update (it must converge). */
    EXPECT_UPDATE(wl_yaml("", "", PS_MAIN(2, ""),
                          "status:\n  conditions:\n  - {type: QuotaReserved, status: \"True\", "
                          "reason: r, message: m, lastTransitionTime: \"2024-01-01T00:00:00Z\"}\n"),
                  wl_yaml("", "", PS_MAIN(2, ""),
                          "status:\n  conditions:\n  - {type: QuotaReserved, status: \"True\", "
                          "reason: r, message: m, lastTransitionTime: \"2024-01-01T00:00:00Z\"}\n"),
                  "");
}
END_TEST

START_TEST(wl_update_podsets_count_changes)
{
    const char *base = wl_yaml("", "", PS_MAIN(2, ""), RESERVED(MAIN_ASSIGNMENT));
    const char *two = wl_yaml("", "",
                              PS_MAIN(2, "") "  - name: b\n    count: 1\n    template: {spec: "
                                             "{containers: [{name: c, image: i}]}}\n",
                              RESERVED(MAIN_ASSIGNMENT));

    EXPECT_UPDATE(base, two,
                  "podSetAssignments must have the same number of podSets as the spec\n"
                  "spec.podSets: field is immutable\n");
}
END_TEST

START_TEST(wl_update_max_exec_time)
{
    const char *a = wl_yaml("", "  maximumExecutionTimeSeconds: 60\n", PS_MAIN(2, ""),
                            ADMITTED(MAIN_ASSIGNMENT));
    const char *b = wl_yaml("", "  maximumExecutionTimeSeconds: 120\n", PS_MAIN(2, ""),
                            ADMITTED(MAIN_ASSIGNMENT));
    const char *b_reserved = wl_yaml("", "  maximumExecutionTimeSeconds: 120\n", PS_MAIN(2, ""),
                                     RESERVED(MAIN_ASSIGNMENT));

    EXPECT_UPDATE(a, b, "maximumExecutionTimeSeconds is immutable while workload quota reserved\n");
    /* Kueue's rule reads the Admitted condition of both versions. */
    EXPECT_UPDATE(a, b_reserved, "");
}
END_TEST

/* ---- Workload status --------------------------------------------------------------------- */

#define COND(type, status, rest) \
    "  - {type: " type ", status: \"" status "\", message: m" rest "}\n"
#define TS ", lastTransitionTime: \"2024-01-01T00:00:00Z\""
#define CONDITION_REASON_RE                                                                     \
    "a condition reason must start with alphabetic character, optionally followed by a string " \
    "of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' "  \
    "(e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or "                 \
    "'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')"

static const char *wl_status(const char *status)
{
    return wl_yaml("", "", PS_MAIN(2, ""), fmt("status:\n%s", status));
}

START_TEST(wl_list_map_keys)
{
    /* A podSet without a name defaults to "main" before the API server compares keys. */
    EXPECT(wl_yaml("", "",
                   PS_MAIN(1, "") "  - count: 1\n    template: {spec: {containers: [{name: c, "
                                  "image: i}]}}\n",
                   ""),
           "spec.podSets[1]: Duplicate value: {\"name\":\"main\"}\n");
    EXPECT(wl_status("  reclaimablePods: [{name: main, count: 1}, {name: main, count: 1}]\n"),
           "status.reclaimablePods[1]: Duplicate value: {\"name\":\"main\"}\n");
    EXPECT(wl_status("  admissionChecks:\n"
                     "  - {name: prov, state: Pending, message: \"\"" TS "}\n"
                     "  - {name: prov, state: Ready, message: \"\"" TS "}\n"),
           "status.admissionChecks[1]: Duplicate value: {\"name\":\"prov\"}\n");
    EXPECT(wl_yaml("", "",
                   PS_MAIN(1, "") "  - name: b\n    count: 1\n    template: {spec: {containers: "
                                  "[{name: c, image: i}]}}\n",
                   "status:\n  reclaimablePods: [{name: main, count: 1}, {name: b, count: 0}]\n"),
           "");
}
END_TEST

START_TEST(wl_conditions)
{
    /* Kubernetes' ValidateConditions: duplicates are also a list-map key violation. */
    EXPECT(wl_status("  conditions:\n" COND("Custom", "True", ", reason: R" TS)
                         COND("Custom", "False", ", reason: R" TS)),
           "status.conditions[1]: Duplicate value: {\"type\":\"Custom\"}\n"
           "status.conditions[1].type: Duplicate value: \"Custom\"\n");
    EXPECT(wl_status("  conditions:\n" COND("\"bad type\"", "True", ", reason: R" TS)),
           "status.conditions[0].type: name part " NAME_RE "\n");
    EXPECT(wl_status("  conditions:\n" COND("Custom", "True",
                                            ", reason: R" TS ", observedGeneration: -1")),
           "status.conditions[0].observedGeneration: must be greater than or equal to zero\n");
    EXPECT(wl_status("  conditions:\n" COND("Custom", "True", ", reason: R")),
           "status.conditions[0].lastTransitionTime: Required value: must be set\n");
    EXPECT(wl_status("  conditions:\n" COND("Custom", "True",
                                            ", reason: R, lastTransitionTime: "
                                            "\"0001-01-01T00:00:00Z\"")),
           "status.conditions[0].lastTransitionTime: Required value: must be set\n");
    EXPECT(wl_status("  conditions:\n" COND("Custom", "True", TS)),
           "status.conditions[0].reason: Required value: must be set\n");
    EXPECT(wl_status("  conditions:\n" COND("Custom", "True", ", reason: \"\"" TS)),
           "status.conditions[0].reason: Required value: must be set\n");
    EXPECT(wl_status("  conditions:\n" COND("Custom", "True", ", reason: \"A,\"" TS)),
           "status.conditions[0].reason: " CONDITION_REASON_RE "\n");
    EXPECT(wl_status("  conditions:\n" COND("Custom", "True", ", reason: 1abc" TS)),
           "status.conditions[0].reason: " CONDITION_REASON_RE "\n");
    EXPECT(wl_status(fmt("  conditions:\n" COND("Custom", "True", ", reason: A%01024d" TS), 0)),
           "status.conditions[0].reason: Too long: may not be more than 1024 bytes\n");
    EXPECT(wl_status("  conditions:\n" COND("example.com/Custom", "Unknown",
                                            ", reason: \"Reason_A,B:c_\", observedGeneration: 2" TS)
                         COND("Other", "False", ", reason: X" TS)),
           "");
}
END_TEST

/* Rules that the decoder's schema checks make unreachable from YAML still hold for objects built
 * in code: a status outside the enum, a message over 32 KiB. */
START_TEST(wl_conditions_built_in_code)
{
    object_t o;
    diags_t d;
    char *got, *long_msg = malloc(32 * 1024 + 2);

    ck_assert_ptr_nonnull(long_msg);
    memset(long_msg, 'm', 32 * 1024 + 1);
    long_msg[32 * 1024 + 1] = '\0';
    decode_yaml(wl_status("  conditions:\n" COND("Custom", "True", ", reason: R" TS)), &o);
    free(o.u.wl.status_conditions[0].status);
    o.u.wl.status_conditions[0].status = strdup("Maybe");
    free(o.u.wl.status_conditions[0].message);
    o.u.wl.status_conditions[0].message = long_msg;
    diags_init(&d);
    validate_object(&o, &d);
    got = render(&d);
    ck_assert_str_eq(got, "status.conditions[0].status: Unsupported value: \"Maybe\": supported "
                          "values: \"False\", \"True\", \"Unknown\"\n"
                          "status.conditions[0].message: Too long: may not be more than 32768 "
                          "bytes\n");
    free(got);
    diags_fini(&d);
    long_msg[32 * 1024] = '\0'; /* exactly the limit */
    free(o.u.wl.status_conditions[0].status);
    o.u.wl.status_conditions[0].status = strdup("False");
    diags_init(&d);
    validate_object(&o, &d);
    ck_assert_uint_eq(d.len, 0);
    diags_fini(&d);
    object_fini(&o);
}
END_TEST

#define TWO_PODSETS                                                              \
    PS_MAIN(2, "")                                                               \
    "  - name: aux\n    count: 1\n    template: {spec: {containers: [{name: c, " \
    "image: i}]}}\n"

START_TEST(wl_reclaimable_pods)
{
    /* Unknown names list the podSets in spec order; counts are bounded by the podSet's. */
    EXPECT(wl_yaml("", "", TWO_PODSETS,
                   "status:\n  reclaimablePods: [{name: zz, count: 1}, {name: main, count: 3}, "
                   "{name: aux, count: 1}]\n"),
           "status.reclaimablePods[zz].name: Unsupported value: \"zz\": supported values: "
           "\"main\", \"aux\"\n"
           "status.reclaimablePods[main].count: should be less or equal to 2\n");
    EXPECT(wl_yaml("", "", TWO_PODSETS,
                   "status:\n  reclaimablePods: [{name: main, count: 2}, {name: aux, count: 1}]\n"),
           "");
}
END_TEST

#define ASSIGN2(count) \
    "    - {name: main, flavors: {cpu: f1}, resourceUsage: {cpu: \"2\"}, count: " #count "}\n"

START_TEST(wl_reclaimable_pods_update)
{
    const char *elastic = ", annotations: {kueue.x-k8s.io/elastic-job: \"true\"}";
    const char *r2 =
        wl_yaml("", "", PS_MAIN(2, ""),
                RESERVED(MAIN_ASSIGNMENT) "  reclaimablePods: [{name: main, count: 2}]\n");
    const char *r1 =
        wl_yaml("", "", PS_MAIN(2, ""),
                RESERVED(MAIN_ASSIGNMENT) "  reclaimablePods: [{name: main, count: 1}]\n");
    const char *none = wl_yaml("", "", PS_MAIN(2, ""), RESERVED(MAIN_ASSIGNMENT));
    const char *pending1 =
        wl_yaml("", "", PS_MAIN(2, ""), "status:\n  reclaimablePods: [{name: main, count: 1}]\n");

    EXPECT_UPDATE(r2, r1, "status.reclaimablePods[main].count: cannot be less than 2\n");
    EXPECT_UPDATE(r2, none, "status.reclaimablePods[main]: Required value: cannot be removed\n");
    EXPECT_UPDATE(r1, r2, "");
    EXPECT_UPDATE(none, r1, "");
    /* Only while both versions reserve quota. */
    EXPECT_UPDATE(r2, pending1, "");
    /* An elastic workload scaled down below its admitted count may lower or drop the count of
     * that podSet, and keep an unchanged count above the new size. */
    EXPECT_UPDATE(wl_yaml(elastic, "", PS_MAIN(4, ""),
                          RESERVED(ASSIGN2(4)) "  reclaimablePods: [{name: main, count: 3}]\n"),
                  wl_yaml(elastic, "", PS_MAIN(2, ""),
                          RESERVED(ASSIGN2(4)) "  reclaimablePods: [{name: main, count: 3}]\n"),
                  "");
    EXPECT_UPDATE(wl_yaml(elastic, "", PS_MAIN(4, ""),
                          RESERVED(ASSIGN2(4)) "  reclaimablePods: [{name: main, count: 3}]\n"),
                  wl_yaml(elastic, "", PS_MAIN(2, ""), RESERVED(ASSIGN2(4))), "");
    EXPECT_UPDATE(wl_yaml(elastic, "", PS_MAIN(4, ""),
                          RESERVED(ASSIGN2(4)) "  reclaimablePods: [{name: main, count: 1}]\n"),
                  wl_yaml(elastic, "", PS_MAIN(2, ""),
                          RESERVED(ASSIGN2(4)) "  reclaimablePods: [{name: main, count: 3}]\n"),
                  "status.reclaimablePods[main].count: should be less or equal to 2\n");
}
END_TEST

/* status.admissionChecks with one check `state` holding `updates` (podSetUpdates items). */
static const char *wl_checks(const char *state, const char *updates)
{
    return wl_yaml("", "", TWO_PODSETS,
                   fmt("status:\n  admissionChecks:\n"
                       "  - name: prov\n    state: %s\n    message: \"\"\n"
                       "    lastTransitionTime: \"2024-01-01T00:00:00Z\"\n"
                       "    podSetUpdates:\n%s",
                       state, updates));
}

START_TEST(wl_pod_set_updates)
{
    EXPECT(wl_checks("Ready", "    - name: zz\n"
                              "      labels: {\"a b\": ok}\n"
                              "      annotations: {\"-x\": v}\n"
                              "      nodeSelector: {zone: \"a b\"}\n"
                              "      tolerations: [{key: \"k k\", operator: Exists}]\n"),
           "status.admissionChecks[0].podSetUpdates[0].name: Unsupported value: \"zz\": "
           "supported values: \"aux\", \"main\"\n"
           "status.admissionChecks[0].podSetUpdates[0].tolerations[0].key: name part " NAME_RE "\n"
           "status.admissionChecks[0].podSetUpdates[0].annotations: name part " NAME_RE "\n"
           "status.admissionChecks[0].podSetUpdates[0].nodeSelector: " VALUE_RE "\n"
           "status.admissionChecks[0].podSetUpdates[0].labels: name part " NAME_RE "\n");
    /* The CRD's toleration rules, at the list's path. */
    EXPECT(wl_checks("Ready", "    - name: main\n"
                              "      tolerations:\n"
                              "      - {value: x}\n"
                              "      - {key: a, effect: NoSchedule, tolerationSeconds: 5}\n"
                              "      - {key: b, operator: Exists, value: \"\"}\n"),
           "status.admissionChecks[0].podSetUpdates[0].tolerations: operator must be Exists when "
           "'key' is empty, which means 'match all values and all keys'\n"
           "status.admissionChecks[0].podSetUpdates[0].tolerations: effect must be 'NoExecute' "
           "when 'tolerationSeconds' is set\n"
           "status.admissionChecks[0].podSetUpdates[0].tolerations: a value must be empty when "
           "'operator' is 'Exists'\n");
    EXPECT(wl_checks("Ready", "    - name: main\n"
                              "      labels: {team: a}\n"
                              "      annotations: {example.com/note: \"free text\"}\n"
                              "      nodeSelector: {cloud.example.com/zone: z1}\n"
                              "      tolerations: [{key: gpu, operator: Exists, effect: "
                              "NoSchedule}]\n"
                              "    - name: aux\n"),
           "");
}
END_TEST

START_TEST(wl_pod_set_updates_immutable)
{
    const char *a = "    - {name: main, labels: {x: \"1\"}}\n";
    const char *b = "    - {name: main, labels: {x: \"2\"}}\n";

    EXPECT_UPDATE(wl_checks("Ready", a), wl_checks("Ready", b),
                  "status.admissionChecks[0].podSetUpdates: field is immutable\n");
    EXPECT_UPDATE(wl_checks("Pending", a), wl_checks("Ready", b), "");
    EXPECT_UPDATE(wl_checks("Ready", a), wl_checks("Retry", b), "");
    EXPECT_UPDATE(wl_checks("Ready", a), wl_checks("Ready", a), "");
}
END_TEST

START_TEST(wl_cluster_name)
{
    const char *nominated = wl_status("  nominatedClusterNames: [w1, w2]\n");
    const char *w1 = wl_status("  clusterName: w1\n");
    const char *w3 = wl_status("  clusterName: w3\n");

    EXPECT(wl_status("  clusterName: w1\n  nominatedClusterNames: [w1]\n"),
           "status: clusterName and nominatedClusterNames are mutually exclusive\n");
    EXPECT(wl_status("  clusterName: w1\n  nominatedClusterNames: []\n"), "");
    EXPECT_UPDATE(w1, w3, "status: clusterName is immutable once set\n");
    EXPECT_UPDATE(nominated, w3,
                  "status.clusterName: when setting clusterName it must be one of the "
                  "nominatedClusterNames\n");
    EXPECT_UPDATE(nominated, w1, "");
    EXPECT_UPDATE(w1, wl_status(""), "");
    /* An elastic replacement may set any cluster. */
    EXPECT_UPDATE(nominated,
                  wl_yaml(", annotations: {kueue.x-k8s.io/workload-slice-replacement-for: "
                          "ns/old}",
                          "", PS_MAIN(2, ""), "status:\n  clusterName: w3\n"),
                  "");
}
END_TEST

START_TEST(wl_pod_level_resources)
{
    const char *ps = "  - name: main\n    count: 1\n"
                     "    template:\n"
                     "      spec:\n"
                     "        containers: [{name: c, image: i}]\n"
                     "        resources: {requests: {pods: \"1\", cpu: \"-1\"}, limits: {memory: "
                     "-1Gi}}\n";

    EXPECT(wl_yaml("", "", ps, ""),
           "spec.podSets[0].template.spec.resources.requests[cpu]: must be greater than or equal "
           "to 0\n"
           "spec.podSets[0].template.spec.resources.requests[pods]: the key is reserved for "
           "internal kueue use\n"
           "spec.podSets[0].template.spec.resources.limits[memory]: must be greater than or "
           "equal to 0\n");
    EXPECT(wl_yaml("", "",
                   "  - name: main\n    count: 1\n    template:\n      spec:\n"
                   "        containers: [{name: c, image: i}]\n"
                   "        resources: {requests: {cpu: \"1\"}, limits: {memory: 1Gi}}\n",
                   ""),
           "");
}
END_TEST

/* ---- Job ---------------------------------------------------------------------------------- */

static const char *job_yaml(const char *labels, const char *annotations, const char *spec)
{
    return fmt("apiVersion: batch/v1\nkind: Job\n"
               "metadata: {name: j, namespace: ns, labels: {%s}, annotations: {%s}}\n"
               "spec: {%s%stemplate: {spec: {restartPolicy: Never, containers: [{name: c, image: "
               "i}]}}}\n",
               labels, annotations, spec, spec[0] ? ", " : "");
}

/* Kueue's ValidateTASPodSetRequest on a Job's template annotations (issue 17). */
static const char *tas_job(const char *ann, int parallelism)
{
    return fmt("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns}\n"
               "spec: {parallelism: %d, template: {metadata: {annotations: {%s}}, spec: "
               "{restartPolicy: Never, containers: [{name: c, image: i}]}}}\n",
               parallelism, ann);
}

#define TAS_ANN "spec.template.metadata.annotations"

START_TEST(topology_annotations_validated)
{
    EXPECT(tas_job("kueue.x-k8s.io/podset-required-topology: rack, "
                   "kueue.x-k8s.io/podset-unconstrained-topology: maybe",
                   2),
           TAS_ANN ": Invalid value: must not contain more than one topology annotation: "
                   "[\"kueue.x-k8s.io/podset-required-topology\", "
                   "\"kueue.x-k8s.io/podset-preferred-topology\", "
                   "\"kueue.x-k8s.io/podset-unconstrained-topology\"]\n" TAS_ANN
                   "[kueue.x-k8s.io/podset-unconstrained-topology]: Invalid value: \"maybe\": "
                   "must be a boolean value\n");
    EXPECT(tas_job("kueue.x-k8s.io/podset-slice-required-topology: rack, "
                   "kueue.x-k8s.io/podset-slice-size: \"3\"",
                   2),
           TAS_ANN "[kueue.x-k8s.io/podset-slice-size]: Invalid value: \"3\": must not be greater "
                   "than pod set count 2\n");
    EXPECT(tas_job("kueue.x-k8s.io/podset-slice-size: \"0\", kueue.x-k8s.io/podset-group-name: "
                   "\"12\"",
                   2),
           TAS_ANN "[kueue.x-k8s.io/podset-group-name]: Invalid value: \"12\": must not be a "
                   "number\n" TAS_ANN "[kueue.x-k8s.io/podset-group-name]: Forbidden: may not be "
                   "set when 'kueue.x-k8s.io/podset-slice-size' is specified\n" TAS_ANN
                   "[kueue.x-k8s.io/podset-group-name]: Forbidden: may not be set when neither "
                   "'kueue.x-k8s.io/podset-preferred-topology' nor "
                   "'kueue.x-k8s.io/podset-required-topology' is specified\n" TAS_ANN
                   "[kueue.x-k8s.io/podset-slice-size]: Invalid value: \"0\": must be greater than "
                   "or equal to 1\n" TAS_ANN "[kueue.x-k8s.io/podset-slice-size]: Forbidden: may "
                   "not be set when 'kueue.x-k8s.io/podset-slice-required-topology' is not "
                   "specified\n");
    EXPECT(tas_job("kueue.x-k8s.io/podset-preferred-topology: \"bad key!\"", 1),
           TAS_ANN "[kueue.x-k8s.io/podset-preferred-topology]: name part " NAME_RE "\n");
}
END_TEST

/* Topology-aware scheduling acts on its pod-template annotations (lib/sched/tas.c), podset
 * groups included: no warning. A Workload's group that breaks Kueue's grouping rules (which
 * Kueue's Workload webhook does not check) is warned with what the engine does with it. */
#define GWL(ps) WL "metadata: {name: wl, namespace: ns}\nspec:\n  queueName: lq\n  podSets:\n" ps
#define GPS(name, count, ann)                                                                 \
    "  - name: " name "\n    count: " #count "\n    template: {metadata: {annotations: {" ann \
    "}}, spec: {containers: [{name: c, image: i}]}}\n"
#define GRACK   "kueue.x-k8s.io/podset-required-topology: rack, kueue.x-k8s.io/podset-group-name: g"
#define GANN(i) "spec.podSets[" #i "].template.metadata.annotations"
START_TEST(topology_annotations_warned)
{
    EXPECT("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns}\n"
           "spec: {template: {metadata: {annotations: {kueue.x-k8s.io/podset-required-topology: "
           "rack}}, spec: {restartPolicy: Never, containers: [{name: c, image: i}]}}}\n",
           "");
    /* a leader of 1 and its workers asking for the same rack: a group, placed together */
    EXPECT(GWL(GPS("leader", 1, GRACK) GPS("workers", 4, GRACK)), "");
    /* one pod set alone in its group */
    EXPECT(GWL(GPS("main", 1, GRACK)),
           "warning: " GANN(
               0) "[kueue.x-k8s.io/podset-group-name]: Invalid value: \"g\": can "
                  "only define groups of exactly 2 pod sets, got: 1 pod set(s); the group has no "
                  "effect: its pod sets are placed one by one\n");
    /* no pod set of 1, and the topologies differ */
    EXPECT(
        GWL(GPS("a", 2, GRACK) GPS("b", 3,
                                   "kueue.x-k8s.io/podset-preferred-topology: rack, "
                                   "kueue.x-k8s.io/podset-group-name: g")),
        "warning: " GANN(
            0) "[kueue.x-k8s.io/podset-group-name]: Invalid value: \"g\": can "
               "only define groups where at least one pod set has only 1 replica, got: 2 "
               "replica(s) "
               "and 3 replica(s) in the group; the group has no effect: its pod sets are placed "
               "one "
               "by one\n"
               "warning: " GANN(
                   1) "[kueue.x-k8s.io/podset-group-name]: Invalid value: \"g\": can "
                      "only define groups where at least one pod set has only 1 replica, got: 2 "
                      "replica(s) "
                      "and 3 replica(s) in the group; the group has no effect: its pod sets are "
                      "placed one "
                      "by one\n"
                      "warning: " GANN(
                          0) ": Invalid value: must specify "
                             "'kueue.x-k8s.io/podset-required-topology' or "
                             "'kueue.x-k8s.io/podset-preferred-topology' topology consistent with "
                             "'" GANN(1) "' in "
                                         "group 'g'; the group is placed by its workers' topology "
                                         "request\n"
                                         "warning: " GANN(
                                             1) ": Invalid value: must specify "
                                                "'kueue.x-k8s.io/podset-required-topology' or "
                                                "'kueue.x-k8s.io/podset-preferred-topology' "
                                                "topology consistent with '" GANN(
                                                    0) "' in "
                                                       "group 'g'; the group is placed by its "
                                                       "workers' topology request\n");
    /* a group name without required / preferred is no group (Kueue's request builder) */
    EXPECT(GWL(GPS("main", 1, "kueue.x-k8s.io/podset-group-name: g")), "");
}
END_TEST

/* Kueue's rules for podset-slice-required-topology-constraints (TASMultiLayerTopology, on by
 * default since Kueue 0.19): errors on a Job, warnings on a Workload's template. */
#define LAYERS      "kueue.x-k8s.io/podset-slice-required-topology-constraints"
#define LAYERS_PATH TAS_ANN "[" LAYERS "]"
START_TEST(topology_layers_validated)
{
    /* two layers, each size dividing the one above: fine */
    EXPECT(tas_job(LAYERS ": '[{\"topology\": \"rack\", \"size\": 4}, {\"topology\": "
                          "\"kubernetes.io/hostname\", \"size\": 2}]', "
                          "kueue.x-k8s.io/podset-required-topology: block",
                   8),
           "");
    /* not JSON */
    EXPECT(tas_job(LAYERS ": '[{\"topology\": '", 8),
           LAYERS_PATH ": Invalid value: \"[{\\\"topology\\\": \": must be a valid JSON "
                       "array: unexpected token near end of file\n");
    /* Go's type errors */
    EXPECT(tas_job(LAYERS ": '[{\"topology\": \"rack\", \"size\": \"4\"}]'", 8),
           LAYERS_PATH ": Invalid value: \"[{\\\"topology\\\": \\\"rack\\\", "
                       "\\\"size\\\": \\\"4\\\"}]\": must be a valid JSON array: json: "
                       "cannot unmarshal string into Go struct field "
                       "PodsetSliceRequiredTopologyConstraint.size of type int32\n");
    EXPECT(tas_job(LAYERS ": '{}'", 8),
           LAYERS_PATH ": Invalid value: \"{}\": must be a valid JSON array: json: cannot "
                       "unmarshal object into Go value of type "
                       "[]v1beta2.PodsetSliceRequiredTopologyConstraint\n");
    /* 0 or more than 3 layers */
    EXPECT(tas_job(LAYERS ": '[]'", 8),
           LAYERS_PATH ": Invalid value: \"[]\": topology "
                       "constraints must contain between 1 and 3 entries\n");
    EXPECT(tas_job(LAYERS ": '[{\"topology\":\"a\",\"size\":8},{\"topology\":\"b\","
                          "\"size\":4},{\"topology\":\"c\",\"size\":2},{\"topology\":\"d\","
                          "\"size\":1}]'",
                   8),
           LAYERS_PATH ": Invalid value: "
                       "\"[{\\\"topology\\\":\\\"a\\\",\\\"size\\\":8},{\\\"topology\\\":"
                       "\\\"b\\\",\\\"size\\\":4},{\\\"topology\\\":\\\"c\\\",\\\"size\\\":"
                       "2},{\\\"topology\\\":\\\"d\\\",\\\"size\\\":1}]\": topology "
                       "constraints must contain between 1 and 3 entries\n");
    /* entries: label names, sizes, no level twice, each size dividing the one above, the
     * first at most the pod count */
    EXPECT(tas_job(LAYERS ": '[{\"topology\": \"rack\", \"size\": 12}, {\"topology\": "
                          "\"bad key!\", \"size\": 5}, {\"topology\": \"rack\", \"size\": 0}]'",
                   8),
           LAYERS_PATH
           "[1].topology: name part " NAME_RE "\n" LAYERS_PATH
           "[2].size: Invalid value: 0: must be greater than or equal to 1\n" LAYERS_PATH
           "[2].topology: Duplicate value: \"rack (also at index 0)\"\n" LAYERS_PATH
           "[1].size: Invalid value: 5: must evenly divide the parent layer size "
           "12\n" LAYERS_PATH ": Invalid value: 12: must not be greater than pod set count 8\n");
    /* not with the single-layer pair nor a podset group */
    EXPECT(tas_job(LAYERS ": '[{\"topology\": \"rack\", \"size\": 2}]', "
                          "kueue.x-k8s.io/podset-slice-required-topology: rack, "
                          "kueue.x-k8s.io/podset-slice-size: \"2\", "
                          "kueue.x-k8s.io/podset-required-topology: rack, "
                          "kueue.x-k8s.io/podset-group-name: g",
                   8),
           TAS_ANN "[kueue.x-k8s.io/podset-group-name]: Forbidden: may not be set when "
                   "'kueue.x-k8s.io/podset-slice-size' is specified\n" TAS_ANN
                   "[kueue.x-k8s.io/podset-group-name]: Forbidden: may not be set when "
                   "'kueue.x-k8s.io/podset-slice-required-topology' is specified\n" LAYERS_PATH
                   ": Forbidden: may not be set when "
                   "'kueue.x-k8s.io/podset-slice-required-topology' is specified\n" LAYERS_PATH
                   ": Forbidden: may not be set when 'kueue.x-k8s.io/podset-slice-size' is "
                   "specified\n" TAS_ANN "[kueue.x-k8s.io/podset-group-name]: Forbidden: may "
                   "not be set when '" LAYERS "' is specified\n");
    /* a Workload's template: warnings; one the engine cannot read says it has no effect */
    EXPECT(GWL(GPS("main", 4,
                   LAYERS ": '[{\"topology\": \"rack\", \"size\": 4}, "
                          "{\"topology\": \"host\", \"size\": 3}]'")),
           "warning: " GANN(0) "[" LAYERS "][1].size: Invalid value: 3: must evenly divide the "
                               "parent layer size 4\n");
    EXPECT(GWL(GPS("main", 4, LAYERS ": '[]'")),
           "warning: " GANN(0) "[" LAYERS "]: Invalid value: \"[]\": topology constraints must "
                               "contain between 1 and 3 entries; the annotation has no effect\n");
}
END_TEST

/* A Workload's topologyRequest: Kueue's Workload webhook checks the slice sizes
 * (validateTASSliceSize, TASValidateWorkloadSliceSize on since Kueue 0.20). */
#define TRPS(tr)                                                                       \
    "  - name: main\n    count: 4\n    topologyRequest: " tr "\n    template: {spec: " \
    "{containers: [{name: c, image: i}]}}\n"
#define TRP "spec.podSets[0].topologyRequest."
START_TEST(topology_request_slice_sizes)
{
    EXPECT(GWL(TRPS("{required: rack, podsetSliceRequiredTopologyConstraints: [{topology: rack, "
                    "size: 4}, {topology: host, size: 2}]}")),
           "");
    EXPECT(GWL(TRPS("{podSetSliceRequiredTopology: rack}")),
           TRP "podSetSliceSize: Required value: must be set when podSetSliceRequiredTopology is "
               "specified\n");
    EXPECT(GWL(TRPS("{podSetSliceRequiredTopology: rack, podSetSliceSize: 0}")),
           TRP "podSetSliceSize: Invalid value: 0: must be greater than 0\n");
    EXPECT(GWL(TRPS("{podSetSliceSize: 2}")),
           TRP "podSetSliceSize: Forbidden: may not be set when podSetSliceRequiredTopology is not "
               "specified\n");
    EXPECT(GWL(TRPS("{podsetSliceRequiredTopologyConstraints: [{topology: rack, size: 4}, "
                    "{topology: host, size: -2}]}")),
           TRP "podsetSliceRequiredTopologyConstraints[1].size: Invalid value: -2: must be greater "
               "than 0\n");
}
END_TEST

#define Q    "kueue.x-k8s.io/queue-name"
#define MINP "kueue.x-k8s.io/job-min-parallelism"
#define SYNC "kueue.x-k8s.io/job-completions-equal-parallelism"

START_TEST(job_labels)
{
    EXPECT(job_yaml(Q ": Team_A", "", ""), "metadata.labels[" Q "]: " SUBDOMAIN_RE "\n");
    EXPECT(job_yaml("kueue.x-k8s.io/prebuilt-workload-name: Wl", "", ""),
           "metadata.labels[kueue.x-k8s.io/prebuilt-workload-name]: " SUBDOMAIN_RE "\n");
    EXPECT(job_yaml("kueue.x-k8s.io/max-exec-time-seconds: abc", "", ""),
           "metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]: strconv.Atoi: parsing "
           "\"abc\": invalid syntax\n");
    EXPECT(job_yaml("kueue.x-k8s.io/max-exec-time-seconds: \"0\"", "", ""),
           "metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]: should be greater than 0\n");
    EXPECT(job_yaml("kueue.x-k8s.io/max-exec-time-seconds: \"99999999999999999999\"", "", ""),
           "metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]: strconv.Atoi: parsing "
           "\"99999999999999999999\": value out of range\n");
    EXPECT(job_yaml(Q ": team-a, kueue.x-k8s.io/max-exec-time-seconds: \"3600\"", "", ""), "");
}
END_TEST

START_TEST(job_min_parallelism)
{
    EXPECT(job_yaml("", MINP ": x", "parallelism: 3"),
           "metadata.annotations[" MINP "]: strconv.Atoi: parsing \"x\": invalid syntax\n");
    EXPECT(job_yaml("", MINP ": \"3\"", "parallelism: 3"),
           "metadata.annotations[" MINP "]: should be between 0 and 2\n");
    EXPECT(job_yaml("", MINP ": \"0\"", "parallelism: 3"),
           "metadata.annotations[" MINP "]: should be between 0 and 2\n");
    /* The pod count is min(parallelism, completions). */
    EXPECT(job_yaml("", MINP ": \"2\"", "parallelism: 3, completions: 2"),
           "metadata.annotations[" MINP "]: should be between 0 and 1\n");
    EXPECT(job_yaml("", MINP ": \"2\", kueue.x-k8s.io/elastic-job: \"true\"", "parallelism: 3"),
           "metadata.annotations[" MINP "]: partial admission and elastic job cannot be used "
           "together\n");
    EXPECT(job_yaml("", MINP ": \"2\"", "parallelism: 3"), "");
}
END_TEST

START_TEST(job_completions_equal_parallelism)
{
    EXPECT(job_yaml("", SYNC ": maybe", "completionMode: Indexed"),
           "metadata.annotations[" SYNC "]: strconv.ParseBool: parsing \"maybe\": invalid "
           "syntax\n");
    EXPECT(job_yaml("", SYNC ": \"true\"", "parallelism: 2, completions: 2"),
           "metadata.annotations[" SYNC "]: should not be enabled for NonIndexed jobs\n");
    EXPECT(
        job_yaml("", SYNC ": \"true\"", "completionMode: Indexed, parallelism: 2, completions: 4"),
        "spec.completions: should be equal to parallelism when " SYNC " annotation is true\n");
    EXPECT(
        job_yaml("", SYNC ": \"true\"", "completionMode: Indexed, parallelism: 4, completions: 4"),
        "");
    EXPECT(job_yaml("", SYNC ": \"false\"", "parallelism: 2, completions: 4"), "");
}
END_TEST

START_TEST(job_update_queue_name)
{
    validate_env_t env = {.default_queue_exists = has_default_queue, .ctx = (void *)"ns"};
    char *got;

    EXPECT_UPDATE(job_yaml(Q ": a", "", "suspend: false"), job_yaml(Q ": b", "", "suspend: false"),
                  "metadata.labels[" Q "]: field is immutable\n");
    EXPECT_UPDATE(job_yaml(Q ": a", "", "suspend: true"), job_yaml(Q ": b", "", "suspend: true"),
                  "");
    /* Suspended with the stopping annotation still counts as running. */
    EXPECT_UPDATE(job_yaml(Q ": a", "", "suspend: true"),
                  job_yaml(Q ": b", "kueue.x-k8s.io/stopping: \"true\"", "suspend: true"),
                  "metadata.labels[" Q "]: field is immutable\n");
    got = check_update(job_yaml(Q ": a", "", "suspend: true"), job_yaml("", "", "suspend: true"),
                       &env);
    ck_assert_str_eq(got, "metadata.labels[" Q "]: queue-name must not be empty in namespace "
                          "with default queue\n");
    free(got);
    env.ctx = (void *)"elsewhere";
    got = check_update(job_yaml(Q ": a", "", "suspend: true"), job_yaml("", "", "suspend: true"),
                       &env);
    ck_assert_str_eq(got, "");
    free(got);
}
END_TEST

START_TEST(job_update_immutable_labels)
{
    const char *pw = "kueue.x-k8s.io/prebuilt-workload-name";
    const char *met = "kueue.x-k8s.io/max-exec-time-seconds";

    EXPECT_UPDATE(job_yaml(fmt("%s: a", pw), "", "suspend: false"),
                  job_yaml(fmt("%s: b", pw), "", "suspend: false"),
                  "metadata.labels[kueue.x-k8s.io/prebuilt-workload-name]: field is immutable\n");
    EXPECT_UPDATE(job_yaml(fmt("%s: a", pw), "", "suspend: true"),
                  job_yaml(fmt("%s: b", pw), "", "suspend: true"), "");
    EXPECT_UPDATE(job_yaml(fmt("%s: \"60\"", met), "", "suspend: true"),
                  job_yaml(fmt("%s: \"90\"", met), "", "suspend: false"),
                  "metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]: field is immutable\n");
    EXPECT_UPDATE(job_yaml(fmt("%s: \"60\"", met), "", "suspend: true"),
                  job_yaml(fmt("%s: \"90\"", met), "", "suspend: true"), "");
}
END_TEST

START_TEST(job_update_priority_class)
{
    const char *pc = "kueue.x-k8s.io/priority-class";

    EXPECT_UPDATE(job_yaml("", "", "suspend: false"),
                  job_yaml(fmt("%s: high", pc), "", "suspend: false"),
                  "metadata.labels[kueue.x-k8s.io/priority-class]: WorkloadPriorityClass cannot "
                  "be added to a non-suspended workload\n");
    EXPECT_UPDATE(job_yaml("", "", "suspend: true"),
                  job_yaml(fmt("%s: high", pc), "", "suspend: true"), "");
    EXPECT_UPDATE(job_yaml(fmt("%s: high", pc), "", "suspend: true"),
                  job_yaml("", "", "suspend: true"),
                  "metadata.labels[kueue.x-k8s.io/priority-class]: WorkloadPriorityClass cannot "
                  "be removed from a workload\n");
    EXPECT_UPDATE(job_yaml(fmt("%s: high", pc), "", "suspend: false"),
                  job_yaml(fmt("%s: low", pc), "", "suspend: false"), "");
}
END_TEST

START_TEST(job_update_partial_admission)
{
    EXPECT_UPDATE(job_yaml("", MINP ": \"1\"", "suspend: false, parallelism: 3"),
                  job_yaml("", MINP ": \"1\"", "suspend: false, parallelism: 2"),
                  "spec.parallelism: Forbidden: cannot change when partial admission is enabled "
                  "and the job is not suspended\n");
    EXPECT_UPDATE(job_yaml("", MINP ": \"1\"", "suspend: true, parallelism: 3"),
                  job_yaml("", MINP ": \"1\"", "suspend: true, parallelism: 2"), "");
    /* An unchanged invalid min-parallelism is not re-reported on update... */
    EXPECT_UPDATE(job_yaml("", MINP ": \"5\"", "suspend: true, parallelism: 3"),
                  job_yaml("", MINP ": \"5\"", "suspend: true, parallelism: 3"), "");
    /* ...a changed one is. */
    EXPECT_UPDATE(job_yaml("", MINP ": \"1\"", "suspend: true, parallelism: 3"),
                  job_yaml("", MINP ": \"5\"", "suspend: true, parallelism: 3"),
                  "metadata.annotations[" MINP "]: should be between 0 and 2\n");
    EXPECT_UPDATE(
        job_yaml("", SYNC ": \"false\"",
                 "suspend: false, completionMode: Indexed, parallelism: 2, completions: 2"),
        job_yaml("", SYNC ": \"true\"",
                 "suspend: false, completionMode: Indexed, parallelism: 2, completions: 2"),
        "metadata.annotations[" SYNC "]: Forbidden: field is immutable while the job is "
        "not suspended\n");
    EXPECT_UPDATE(job_yaml("", "", "suspend: false"),
                  job_yaml("", "kueue.x-k8s.io/elastic-job: \"true\"", "suspend: false"),
                  "metadata.annotations[kueue.x-k8s.io/elastic-job]: field is immutable\n");
}
END_TEST

/* ---- kueue.x-k8s.io/admission-gated-by ---------------------------------------------------- */

#define GATED      "kueue.x-k8s.io/admission-gated-by"
#define GATED_PATH "metadata.annotations[" GATED "]: "

/* ---- objects of the other job integration kinds (KIND_INTEGRATION) -------------------- */

/* lib/model reads only their envelope and metadata (lib/jobs' kindobj builds the rest). */
static void decode_integration(const char *yaml, bool suspended, object_t *obj)
{
    loaded_t l = {NULL, 0};
    err_msg_t msg = {{0}};
    const char *kind, *av, *slash;
    char group[128];
    diags_t d;
    err_t rc;

    rc = yaml_load_string(yaml, strlen(yaml), on_doc, &l, &msg);
    ck_assert_msg(rc == ERR_OK, "bad test YAML: %s\n%s", msg.text, yaml);
    av = json_string_value(json_object_get(l.doc, "apiVersion"));
    kind = json_string_value(json_object_get(l.doc, "kind"));
    slash = strchr(av, '/');
    snprintf(group, sizeof(group), "%.*s", slash ? (int)(slash - av) : 0, av);
    diags_init(&d);
    rc = object_decode_integration(l.doc, group, kind, obj, &d);
    ck_assert_msg(rc == ERR_OK && d.nerrors == 0, "test object does not decode:\n%s", yaml);
    ck_assert_int_eq(obj->kind, KIND_INTEGRATION);
    ck_assert_str_eq(object_kind_name(obj), kind);
    json_decref(l.doc);
    obj->u.integ.suspended = suspended;
    /* As lib/jobs' kindobj marks them. */
    kind = object_kind_name(obj);
    obj->u.integ.serving = strcmp(kind, "Deployment") == 0 || strcmp(kind, "StatefulSet") == 0 ||
                           strcmp(kind, "LeaderWorkerSet") == 0;
    diags_fini(&d);
}

static char *check_integration(const char *old_yaml, bool old_susp, const char *yaml, bool susp)
{
    object_t o, n;
    diags_t d;
    char *s;

    decode_integration(yaml, susp, &n);
    diags_init(&d);
    if (old_yaml != NULL) {
        decode_integration(old_yaml, old_susp, &o);
        validate_update(&o, &n, &d);
        object_fini(&o);
    } else {
        validate_object(&n, &d);
    }
    ck_assert(!d.oom);
    s = render(&d);
    diags_fini(&d);
    object_fini(&n);
    return s;
}

static const char *kind_yaml(const char *api_version, const char *kind, const char *labels,
                             const char *annotations)
{
    return fmt("apiVersion: %s\nkind: %s\n"
               "metadata: {name: x, namespace: ns, labels: {%s}, annotations: {%s}}\n"
               "spec: {anything: [1, 2]}\n",
               api_version, kind, labels, annotations);
}

#define EXPECT_KIND(old, old_susp, yaml, susp, want)                                              \
    do {                                                                                          \
        char *got_ = check_integration(old, old_susp, yaml, susp);                                \
        ck_assert_msg(strcmp(got_, want) == 0, "for\n%s\nwant:\n%s\ngot:\n%s", yaml, want, got_); \
        free(got_);                                                                               \
    } while (0)

#define JS "jobset.x-k8s.io/v1alpha2", "JobSet"
#define PW "kueue.x-k8s.io/prebuilt-workload-name"
#define EJ "kueue.x-k8s.io/elastic-job"

/* jobframework.ValidateJobOnCreate, the same for every kind: the labels, plus the prebuilt
 * workload and elastic-job support of the kind. */
START_TEST(integration_labels)
{
    EXPECT_KIND(NULL, true, kind_yaml(JS, Q ": team-a", ""), true, "");
    EXPECT_KIND(NULL, true, kind_yaml(JS, Q ": Team_A", ""), true,
                "metadata.labels[" Q "]: " SUBDOMAIN_RE "\n");
    EXPECT_KIND(NULL, true, kind_yaml(JS, "kueue.x-k8s.io/max-exec-time-seconds: \"-5\"", ""), true,
                "metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]: should be greater than "
                "0\n");
    /* JobSet runs with a prebuilt Workload, JAXJob does not, Pod does. */
    EXPECT_KIND(NULL, true, kind_yaml(JS, PW ": wl", ""), true, "");
    EXPECT_KIND(NULL, true, kind_yaml("kubeflow.org/v1", "JAXJob", PW ": wl", ""), true,
                "metadata.labels[" PW "]: Forbidden: Is not supported for \"kubeflow.org/v1, "
                "Kind=JAXJob\"\n");
    EXPECT_KIND(NULL, true, kind_yaml("v1", "Pod", PW ": wl", ""), true, "");
    EXPECT_KIND(NULL, true, kind_yaml("kubeflow.org/v1", "JAXJob", PW ": Wl", ""), true,
                "metadata.labels[" PW "]: " SUBDOMAIN_RE "\n"
                "metadata.labels[" PW "]: Forbidden: Is not supported for \"kubeflow.org/v1, "
                "Kind=JAXJob\"\n");
    /* Only the Ray kinds (and Job) may be elastic. */
    EXPECT_KIND(NULL, true, kind_yaml("ray.io/v1", "RayCluster", "", EJ ": \"true\""), true, "");
    EXPECT_KIND(NULL, true, kind_yaml(JS, "", EJ ": \"true\""), true,
                "metadata.annotations[" EJ "]: Forbidden: elastic job is not supported for "
                "\"jobset.x-k8s.io/v1alpha2, Kind=JobSet\"\n");
}
END_TEST

/* The serving owners' webhooks check only the queue name, the elastic-job annotation and the
 * gates: a prebuilt workload or a maximum execution time is not their business. */
#define LWS "leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"
START_TEST(integration_serving)
{
    EXPECT_KIND(NULL, true,
                kind_yaml(LWS, PW ": Wl, kueue.x-k8s.io/max-exec-time-seconds: \"0\"", ""), true,
                "");
    EXPECT_KIND(NULL, true, kind_yaml(LWS, Q ": Team_A", ""), true,
                "metadata.labels[" Q "]: " SUBDOMAIN_RE "\n");
    EXPECT_KIND(NULL, true, kind_yaml("apps/v1", "Deployment", "", EJ ": \"true\""), true,
                "metadata.annotations[" EJ "]: Forbidden: elastic job is not supported for "
                "\"apps/v1, Kind=Deployment\"\n");
    /* Suspended = no replica ready: the queue may change then, but never be removed. */
    EXPECT_KIND(kind_yaml(LWS, Q ": a", ""), true, kind_yaml(LWS, Q ": b", ""), true, "");
    EXPECT_KIND(kind_yaml(LWS, Q ": a", ""), false, kind_yaml(LWS, Q ": b", ""), false,
                "metadata.labels[" Q "]: field is immutable\n");
    EXPECT_KIND(kind_yaml(LWS, Q ": a", ""), true, kind_yaml(LWS, "", ""), true,
                "metadata.labels[" Q "]: field is immutable\n");
    EXPECT_KIND(kind_yaml(LWS, "", ""), false,
                kind_yaml(LWS, "kueue.x-k8s.io/priority-class: high", ""), false,
                "metadata.labels[kueue.x-k8s.io/priority-class]: WorkloadPriorityClass cannot be "
                "added to a non-suspended workload\n");
}
END_TEST

/* A plain Pod: Kueue's pod webhook on create and update (validateManagedLabel,
 * validatePodGroupMetadata, the immutable group name, unretriable stays unretriable). */
#define POD        "v1", "Pod"
#define GN         "kueue.x-k8s.io/pod-group-name"
#define GTC        "kueue.x-k8s.io/pod-group-total-count"
#define RIG        "kueue.x-k8s.io/retriable-in-group"
#define BOTH_GROUP "both the '" GTC "' annotation and the '" GN "' label should be set"
START_TEST(integration_pod)
{
    EXPECT_KIND(NULL, true, kind_yaml(POD, GN ": g", GTC ": \"3\""), true, "");
    EXPECT_KIND(NULL, true, kind_yaml(POD, "kueue.x-k8s.io/managed: \"true\"", ""), true, "");
    EXPECT_KIND(NULL, true, kind_yaml(POD, "kueue.x-k8s.io/managed: \"false\"", ""), true,
                "metadata.labels[kueue.x-k8s.io/managed]: Forbidden: managed label value can "
                "only be 'true'\n");
    EXPECT_KIND(NULL, true, kind_yaml(POD, "", GTC ": \"3\""), true,
                "metadata.labels[" GN "]: Required value: " BOTH_GROUP "\n");
    EXPECT_KIND(NULL, true, kind_yaml(POD, GN ": \"\"", GTC ": \"3\""), true,
                "metadata.labels[" GN "]: Required value: " BOTH_GROUP "\n");
    EXPECT_KIND(NULL, true, kind_yaml(POD, GN ": g", ""), true,
                "metadata.annotations[" GTC "]: Required value: " BOTH_GROUP "\n");
    EXPECT_KIND(NULL, true, kind_yaml(POD, GN ": G_1", GTC ": \"1\""), true,
                "metadata.labels[" GN "]: " SUBDOMAIN_RE "\n");
    EXPECT_KIND(NULL, true, kind_yaml(POD, GN ": g", GTC ": \"3x\""), true,
                "metadata.annotations[" GTC "]: strconv.Atoi: parsing \"3x\": invalid syntax\n");
    EXPECT_KIND(NULL, true, kind_yaml(POD, GN ": g", GTC ": \"-2\""), true,
                "metadata.annotations[" GTC "]: incorrect annotation value '" GTC
                "=-2': group total count should be greater than zero\n");
    /* The group name may be an annotation of the same name (WorkloadIdentifierAnnotations):
     * it wins over the label, and errors name it. */
    EXPECT_KIND(NULL, true, kind_yaml(POD, GN ": Bad_Label", GN ": g, " GTC ": \"2\""), true, "");
    EXPECT_KIND(NULL, true, kind_yaml(POD, "", GN ": g"), true,
                "metadata.annotations[" GTC "]: Required value: both the '" GTC
                "' annotation and the '" GN "' annotation should be set\n");
    EXPECT_KIND(NULL, true, kind_yaml(POD, "", GN ": G_1, " GTC ": \"1\""), true,
                "metadata.annotations[" GN "]: " SUBDOMAIN_RE "\n");
    /* A prebuilt Workload of a Pod of a group is the group's. */
    EXPECT_KIND(NULL, true, kind_yaml(POD, GN ": g, " PW ": g", GTC ": \"2\""), true, "");
    EXPECT_KIND(NULL, true, kind_yaml(POD, GN ": g, " PW ": other", GTC ": \"2\""), true,
                "metadata.labels[" PW "]: prebuilt workload and pod group should be equal\n");
    EXPECT_KIND(NULL, true, kind_yaml(POD, GN ": g, " PW ": g", GTC ": \"2\", " PW ": other"), true,
                "metadata.annotations[" PW "]: prebuilt workload and pod group should be "
                "equal\n");
    /* Not a Pod: the pod webhook's rules do not apply. */
    EXPECT_KIND(NULL, true, kind_yaml(JS, "", GTC ": \"x\""), true, "");
    /* Updates: the group name is immutable once set (it may be set later); an unretriable Pod
     * of a group stays unretriable. */
    EXPECT_KIND(kind_yaml(POD, GN ": g", GTC ": \"3\""), true,
                kind_yaml(POD, GN ": h", GTC ": \"3\""), true,
                "metadata.labels[" GN "]: field is immutable\n");
    EXPECT_KIND(kind_yaml(POD, "", ""), true, kind_yaml(POD, GN ": h", GTC ": \"3\""), true, "");
    EXPECT_KIND(kind_yaml(POD, "", GN ": g, " GTC ": \"3\""), true,
                kind_yaml(POD, "", GN ": h, " GTC ": \"3\""), true,
                "metadata.annotations[" GN "]: field is immutable\n");
    EXPECT_KIND(kind_yaml(POD, GN ": g", GTC ": \"3\", " RIG ": \"false\""), true,
                kind_yaml(POD, GN ": g", GTC ": \"3\", " RIG ": \"true\""), true,
                "metadata.annotations[" RIG "]: Forbidden: unretriable pod group can't be "
                "converted to retriable\n");
    EXPECT_KIND(kind_yaml(POD, GN ": g", GTC ": \"3\""), true,
                kind_yaml(POD, GN ": g", GTC ": \"3\", " RIG ": \"false\""), true, "");
}
END_TEST

/* A managed serving owner's shape on update (what lib/jobs' kindobj fills in: sizes, status
 * replicas, template shapes), set by hand here: update_shape OLD_SIZE NEW_SIZE STATUS_REPLICAS
 * OLD_SHAPE NEW_SHAPE for a queue-named StatefulSet. */
static bool wl_left; /* what the cluster says of the StatefulSet's Workload (update_shape) */
static char wl_asked[128];

static bool serving_workload_left(void *ctx, const char *ns, const char *name, const char *uid)
{
    (void)ctx;
    (void)uid;
    snprintf(wl_asked, sizeof(wl_asked), "%s/%s", ns ? ns : "", name);
    return wl_left;
}

static char *update_shape(int32_t os, int32_t ns, int32_t sr, const char *osh, const char *nsh)
{
    object_t o, n;
    diags_t d;
    char *out;
    validate_env_t env = {.serving_workload_left = serving_workload_left};

    decode_integration(kind_yaml("apps/v1", "StatefulSet", Q ": a", ""), true, &o);
    decode_integration(kind_yaml("apps/v1", "StatefulSet", Q ": a", ""), true, &n);
    o.u.integ.group_size = os;
    n.u.integ.group_size = ns;
    n.u.integ.status_replicas = sr;
    snprintf(o.u.integ.template_shapes[1], sizeof(o.u.integ.template_shapes[1]), "%s", osh);
    snprintf(n.u.integ.template_shapes[1], sizeof(n.u.integ.template_shapes[1]), "%s", nsh);
    diags_init(&d);
    ck_assert_int_eq(validate_update_env(&o, &n, &env, &d), ERR_OK);
    out = render(&d);
    diags_fini(&d);
    object_fini(&o);
    object_fini(&n);
    return out;
}

#define EXPECT_SHAPE(os, ns, sr, osh, nsh, want)                                   \
    do {                                                                           \
        char *got_ = update_shape(os, ns, sr, osh, nsh);                           \
        ck_assert_msg(strcmp(got_, want) == 0, "want:\n%s\ngot:\n%s", want, got_); \
        free(got_);                                                                \
    } while (0)

START_TEST(integration_serving_shape)
{
    EXPECT_SHAPE(2, 2, 0, "a1b2c3d4", "a1b2c3d4", "");
    EXPECT_SHAPE(2, 3, 0, "a1b2c3d4", "a1b2c3d4", "spec.replicas: field is immutable\n");
    EXPECT_SHAPE(2, 0, 2, "a1b2c3d4", "a1b2c3d4", "");
    EXPECT_SHAPE(0, 2, 0, "a1b2c3d4", "a1b2c3d4", "");
    EXPECT_SHAPE(0, 2, 1, "a1b2c3d4", "a1b2c3d4",
                 "spec.replicas: Forbidden: scaling down is still in progress\n");
    EXPECT_SHAPE(2, 2, 0, "a1b2c3d4", "ffffffff", "spec.template.spec: field is immutable\n");
    /* Kueue: a scale-up from 0 while the Workload of the scale-down exists and is not on hold. */
    wl_left = true;
    wl_asked[0] = '\0';
    EXPECT_SHAPE(0, 2, 0, "a1b2c3d4", "a1b2c3d4",
                 "spec.replicas: Forbidden: workload from previous scale-down is still being "
                 "deleted\n");
    ck_assert_str_ne(wl_asked, "");
    EXPECT_SHAPE(2, 0, 0, "a1b2c3d4", "a1b2c3d4", ""); /* the scale-down itself is allowed */
    EXPECT_SHAPE(0, 2, 1, "a1b2c3d4", "a1b2c3d4",
                 "spec.replicas: Forbidden: scaling down is still in progress\n");
    wl_left = false;
}
END_TEST

/* jobframework.ValidateJobOnUpdate, with the kind's own notion of suspended. */
START_TEST(integration_update)
{
    const char *a = kind_yaml(JS, Q ": team-a", ""), *b = kind_yaml(JS, Q ": team-b", "");

    EXPECT_KIND(a, true, b, true, "");
    EXPECT_KIND(a, false, b, false, "metadata.labels[" Q "]: field is immutable\n");
    EXPECT_KIND(kind_yaml(JS, "kueue.x-k8s.io/priority-class: high", ""), true,
                kind_yaml(JS, "", ""), true,
                "metadata.labels[kueue.x-k8s.io/priority-class]: WorkloadPriorityClass cannot be "
                "removed from a workload\n");
    EXPECT_KIND(kind_yaml(JS, "", ""), false,
                kind_yaml(JS, "kueue.x-k8s.io/priority-class: high", ""), false,
                "metadata.labels[kueue.x-k8s.io/priority-class]: WorkloadPriorityClass cannot be "
                "added to a non-suspended workload\n");
    /* Another kind of the same name is not an update of it. */
    EXPECT_KIND(kind_yaml("kubeflow.org/v1", "PyTorchJob", Q ": team-a", ""), false, b, false, "");
}
END_TEST

START_TEST(admission_gated_by)
{
    EXPECT(job_yaml("", GATED ": \"example.com/a, example.com/b\"", ""), "");
    EXPECT(job_yaml("", GATED ": \"example.com/a,,example.com/a\"", ""), GATED_PATH
           "cannot contain empty gate names\n" GATED_PATH "duplicate gate name: example.com/a\n");
    EXPECT(job_yaml("", GATED ": \"nohost, /x, example.com/\"", ""),
           GATED_PATH "must be a domain-prefixed path (such as \"acme.io/foo\")\n");
    EXPECT(job_yaml("", GATED ": \"Example.com/x\"", ""), GATED_PATH SUBDOMAIN_RE "\n");
    EXPECT(job_yaml("", GATED ": \"example.com/a b\"", ""),
           GATED_PATH "Invalid path (regex used for validation is "
                      "'[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')\n");
    EXPECT(job_yaml("",
                    GATED ": \"example.com/"
                          "0123456789012345678901234567890123456789012345678901234567890\"",
                    ""),
           GATED_PATH "Too long: may not be more than 63 bytes\n");
    /* The same rules on a Workload. */
    EXPECT(wl_yaml(", annotations: {" GATED ": \"x\"}", "", PS_MAIN(1, ""), ""),
           GATED_PATH "must be a domain-prefixed path (such as \"acme.io/foo\")\n");

    /* Updates may only remove gates. */
    EXPECT_UPDATE(job_yaml("", "", ""), job_yaml("", GATED ": example.com/a", ""),
                  GATED_PATH "Forbidden: cannot add admission gate after creation\n");
    EXPECT_UPDATE(job_yaml("", GATED ": example.com/a", ""),
                  job_yaml("", GATED ": \"example.com/a,example.com/b\"", ""),
                  GATED_PATH "Forbidden: can only remove gates, not add new ones\n");
    EXPECT_UPDATE(job_yaml("", GATED ": \"example.com/a,example.com/b\"", ""),
                  job_yaml("", GATED ": example.com/b", ""), "");
    EXPECT_UPDATE(job_yaml("", GATED ": example.com/a", ""), job_yaml("", "", ""), "");
    EXPECT_UPDATE(wl_yaml("", "", PS_MAIN(1, ""), ""),
                  wl_yaml(", annotations: {" GATED ": example.com/a}", "", PS_MAIN(1, ""), ""),
                  GATED_PATH "Forbidden: cannot add admission gate after creation\n");
}
END_TEST

/* ---- kinds without rules -------------------------------------------------------------------- */

START_TEST(other_kinds_have_no_rules)
{
    EXPECT("apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: "
           "p}\nvalue: 5\n",
           "");
    EXPECT("apiVersion: v1\nkind: Namespace\nmetadata: {name: ns, labels: {team: a}}\n", "");
    EXPECT("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: p}\nvalue: "
           "5\n",
           "");
}
END_TEST

/* Objects built in code can hold what the decoder never produces: a list-map item without its
 * key, a LabelSelector operator only node selectors have. */
START_TEST(rules_for_objects_built_in_code)
{
    object_t o;
    diags_t d;
    char *got;

    decode_yaml(CQ "spec:\n  namespaceSelector: {matchExpressions: [{key: team, operator: "
                   "Exists}]}\n  resourceGroups:\n"
                   "  - coveredResources: [cpu]\n"
                   "    flavors:\n"
                   "    - {name: f1, resources: [{name: cpu, nominalQuota: 1}]}\n"
                   "    - {name: f2, resources: [{name: cpu, nominalQuota: 1}]}\n",
                &o);
    free(o.u.cq.groups[0].flavors[0].name);
    free(o.u.cq.groups[0].flavors[1].name);
    o.u.cq.groups[0].flavors[0].name = NULL;
    o.u.cq.groups[0].flavors[1].name = NULL;
    o.u.cq.namespace_selector.exprs[0].op = SELECTOR_OP_GT;
    diags_init(&d);
    validate_object(&o, &d);
    got = render(&d);
    ck_assert_str_eq(got, "spec.resourceGroups[0].flavors[1]: Duplicate value: {}\n"
                          "spec.resourceGroups[0].flavors[1].name: Duplicate value: \"\"\n"
                          "spec.namespaceSelector.matchExpressions[0].operator: not a valid "
                          "selector operator\n");
    free(got);
    diags_fini(&d);
    o.u.cq.namespace_selector.exprs[0].op = SELECTOR_OP_DOES_NOT_EXIST;
    o.u.cq.groups[0].flavors[1].name = strdup("f2");
    diags_init(&d);
    validate_object(&o, &d);
    ck_assert_uint_eq(d.len, 0);
    diags_fini(&d);
    object_fini(&o);
}
END_TEST

/* ---- every message of the validate files has a test ---------------------------------------- */

/*
 * "Tests cover every validation rule" is enforced here rather than hoped for: the test reads
 * every lib/model/validate*.c and validate*.h file (validate.c and the per-kind files it
 * dispatches to), takes the message format of every validate__err() call (string literals and
 * the string macros they use), and requires each to match some expected output written in this
 * file (adjacent string literals and this file's string macros joined, as the compiler joins
 * them). A printf conversion in a format matches any text. A message added to any of those files
 * without a case here fails this test. Formats with no literal text ("%s" relaying names.c's
 * messages) are covered by those callers' own cases.
 */

#define SRC_MAX_TOKENS 200000

/* Check records every ck_assert_* as a checkpoint (a write to its pipe); the loops below run
 * hundreds of thousands of times, so they only call into Check on failure. */
#define REQUIRE(cond, ...)             \
    do {                               \
        if (!(cond))                   \
            ck_abort_msg(__VA_ARGS__); \
    } while (0)

typedef enum { TOK_STR, TOK_IDENT, TOK_PUNCT } tok_kind_t;

typedef struct tok_s {
    tok_kind_t kind;
    char *text;           /* owned: unescaped string, identifier, or one punctuation byte */
    bool line_start_hash; /* a '#' that starts a preprocessor line */
} tok_t;

typedef struct toks_s {
    tok_t *v;
    size_t n;
} toks_t;

static char *read_source(const char *rel)
{
    const char *dir = getenv("SLUICE_SOURCE_DIR");
    char path[4096];
    FILE *f;
    long len;
    char *buf;

    ck_assert_msg(dir != NULL, "SLUICE_SOURCE_DIR is not set (run through ctest)");
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    len = ftell(f);
    ck_assert_int_ge(len, 0);
    rewind(f);
    buf = malloc((size_t)len + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
    buf[len] = '\0';
    fclose(f);
    return buf;
}

static void tok_push(toks_t *t, tok_kind_t kind, const char *text, size_t len, bool hash)
{
    REQUIRE(t->n < SRC_MAX_TOKENS, "too many tokens");
    t->v[t->n].kind = kind;
    t->v[t->n].text = strndup(text, len);
    REQUIRE(t->v[t->n].text != NULL, "out of memory");
    t->v[t->n].line_start_hash = hash;
    t->n++;
}

/* A small C tokenizer: comments dropped, string literals unescaped (the escapes our sources
 * use), line continuations inside #define joined. */
static void tokenize(const char *src, toks_t *t)
{
    const char *p = src;
    bool line_start = true;

    t->v = calloc(SRC_MAX_TOKENS, sizeof(*t->v));
    ck_assert_ptr_nonnull(t->v);
    t->n = 0;
    while (*p != '\0') {
        if (*p == '\n') {
            line_start = true;
            p++;
        } else if (*p == '\\' && p[1] == '\n') {
            p += 2;
        } else if (*p == ' ' || *p == '\t' || *p == '\r') {
            p++;
        } else if (p[0] == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            REQUIRE(end != NULL, "unterminated comment");
            p = end + 2;
        } else if (p[0] == '/' && p[1] == '/') {
            while (*p != '\0' && *p != '\n')
                p++;
        } else if (*p == '"' || *p == '\'') {
            char quote_ch = *p++, *buf;
            size_t n = 0, span = 0;
            while (p[span] != '\0' && p[span] != quote_ch)
                span += p[span] == '\\' && p[span + 1] != '\0' ? 2 : 1;
            buf = malloc(span + 1);
            REQUIRE(buf != NULL, "out of memory");
            while (*p != quote_ch) {
                REQUIRE(*p != '\0', "unterminated literal");
                if (*p == '\\') {
                    p++;
                    switch (*p) {
                    case 'n':
                        buf[n++] = '\n';
                        break;
                    case 't':
                        buf[n++] = '\t';
                        break;
                    case '0':
                        buf[n++] = '\0';
                        break;
                    default:
                        buf[n++] = *p; /* \\ \" \' */
                        break;
                    }
                    p++;
                } else {
                    buf[n++] = *p++;
                }
            }
            p++;
            if (quote_ch == '"')
                tok_push(t, TOK_STR, buf, n, false);
            else
                tok_push(t, TOK_PUNCT, "'", 1, false);
            free(buf);
            line_start = false;
        } else if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
                   (*p >= '0' && *p <= '9')) {
            const char *start = p;
            while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
                   (*p >= '0' && *p <= '9'))
                p++;
            tok_push(t, TOK_IDENT, start, (size_t)(p - start), false);
            line_start = false;
        } else {
            tok_push(t, TOK_PUNCT, p, 1, line_start && *p == '#');
            line_start = false;
            p++;
        }
    }
}

static void toks_free(toks_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].text);
    free(t->v);
}

typedef struct str_macro_s {
    const char *name; /* borrowed from the tokens */
    char *value;      /* owned */
} str_macro_t;

typedef struct str_macros_s {
    str_macro_t v[512];
    size_t n;
} str_macros_t;

static const char *macro_value(const str_macros_t *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->v[i].name, name) == 0)
            return m->v[i].value;
    return NULL;
}

/* Join the run of string literals and string macros starting at token *i; NULL when token *i
 * starts no such run. *i is left after the run. Caller frees. */
static char *join_strings(const toks_t *t, size_t *i, const str_macros_t *m)
{
    size_t cap = 1, len = 0;
    char *out = NULL;

    for (; *i < t->n; (*i)++) {
        const tok_t *k = &t->v[*i];
        const char *piece = NULL;
        if (k->kind == TOK_STR)
            piece = k->text;
        else if (k->kind == TOK_IDENT)
            piece = macro_value(m, k->text);
        if (piece == NULL)
            break;
        cap += strlen(piece);
        out = realloc(out, cap);
        REQUIRE(out != NULL, "out of memory");
        memcpy(out + len, piece, strlen(piece) + 1);
        len += strlen(piece);
    }
    return out;
}

/* Object-like #define NAME <string literals / string macros only>. */
static void collect_macros(const toks_t *t, str_macros_t *m)
{
    m->n = 0;
    for (size_t i = 0; i + 2 < t->n; i++) {
        size_t j;
        char *value;
        if (!t->v[i].line_start_hash || strcmp(t->v[i + 1].text, "define") != 0 ||
            t->v[i + 2].kind != TOK_IDENT)
            continue;
        j = i + 3;
        if (j < t->n && strcmp(t->v[j].text, "(") == 0)
            continue; /* function-like */
        value = join_strings(t, &j, m);
        if (value == NULL)
            continue;
        REQUIRE(m->n < sizeof(m->v) / sizeof(m->v[0]), "too many macros");
        m->v[m->n].name = t->v[i + 2].text;
        m->v[m->n].value = value;
        m->n++;
    }
}

static void macros_free(str_macros_t *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].value);
}

/* Does `text` contain the format `fmt` with each printf conversion matching any text? Literal
 * pieces are matched in order, leftmost first, which is exact for this kind of pattern. */
static bool format_found_in(const char *fmt_s, const char *text)
{
    char piece[4096];
    const char *pos = text;
    size_t n = 0;

    for (const char *f = fmt_s;; f++) {
        bool conversion = *f == '%' && f[1] != '%';
        if (*f == '\0' || conversion) {
            piece[n] = '\0';
            if (n > 0) {
                const char *hit = strstr(pos, piece);
                if (hit == NULL)
                    return false;
                pos = hit + n;
            }
            n = 0;
            if (*f == '\0')
                return true;
            f++;
            while (strchr("-+ #0123456789.*hlzjt", *f) != NULL)
                f++;
            continue;
        }
        if (*f == '%')
            f++; /* "%%" */
        REQUIRE(n < sizeof(piece) - 1, "format too long");
        piece[n++] = *f;
    }
}

/* Literal text of a format (conversions removed), to skip formats that have none. */
static bool format_has_text(const char *fmt_s)
{
    for (const char *f = fmt_s; *f != '\0'; f++) {
        if (*f == '%' && f[1] != '%') {
            f++;
            while (strchr("-+ #0123456789.*hlzjt", *f) != NULL)
                f++;
            continue;
        }
        return true;
    }
    return false;
}

/* The message formats of the validate files: third argument of validate__err(d, path, fmt, ...);
 * the fixed "Unsupported value: " of validate__err_not_supported(). */
static size_t collect_formats(const toks_t *t, const str_macros_t *m, char **out, size_t cap)
{
    size_t n = 0;

    for (size_t i = 0; i + 1 < t->n; i++) {
        size_t j;
        int depth = 0, commas = 0;

        if (t->v[i].kind != TOK_IDENT || strcmp(t->v[i + 1].text, "(") != 0)
            continue;
        if (strcmp(t->v[i].text, "validate__err_not_supported") == 0 && i > 0 &&
            strcmp(t->v[i - 1].text, "void") != 0) {
            REQUIRE(n < cap, "too many formats");
            out[n] = strdup("Unsupported value: ");
            REQUIRE(out[n] != NULL, "out of memory");
            n++;
            continue;
        }
        if (strcmp(t->v[i].text, "validate__err") != 0)
            continue;
        /* Skip the declaration and definition ("void validate__err(diags_t *d, ..."). */
        if (strcmp(t->v[i + 2].text, "diags_t") == 0)
            continue;
        for (j = i + 1; j < t->n; j++) {
            const char *x = t->v[j].text;
            if (strcmp(x, "(") == 0)
                depth++;
            else if (strcmp(x, ")") == 0 && --depth == 0)
                break;
            else if (strcmp(x, ",") == 0 && depth == 1 && ++commas == 2) {
                size_t k = j + 1;
                char *f = join_strings(t, &k, m);
                REQUIRE(f != NULL, "validate__err() near token %zu (%s) has no literal format", k,
                        t->v[k].text);
                REQUIRE(n < cap, "too many formats");
                out[n++] = f;
                break;
            }
        }
    }
    return n;
}

/* Headers before .c files, each group in name order (readdir's order is the file system's). */
static int cmp_source_name(const void *pa, const void *pb)
{
    const char *a = *(char *const *)pa, *b = *(char *const *)pb;
    bool ha = a[strlen(a) - 1] == 'h', hb = b[strlen(b) - 1] == 'h';

    if (ha != hb)
        return ha ? -1 : 1;
    return strcmp(a, b);
}

/* Every lib/model/validate*.c and validate*.h, concatenated (header first, so that its string
 * macros are known to the files that use them). Caller frees. */
static char *read_validate_sources(void)
{
    const char *dir = getenv("SLUICE_SOURCE_DIR");
    char path[4096], *names[32], *all = NULL;
    size_t nnames = 0, len = 0;
    struct dirent *e;
    DIR *dp;

    ck_assert_msg(dir != NULL, "SLUICE_SOURCE_DIR is not set (run through ctest)");
    snprintf(path, sizeof(path), "%s/lib/model", dir);
    dp = opendir(path);
    ck_assert_msg(dp != NULL, "cannot open %s", path);
    while ((e = readdir(dp)) != NULL) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "validate", 8) != 0 || n < 3 ||
            (strcmp(e->d_name + n - 2, ".c") != 0 && strcmp(e->d_name + n - 2, ".h") != 0))
            continue;
        ck_assert_uint_lt(nnames, sizeof(names) / sizeof(names[0]));
        names[nnames] = strdup(e->d_name);
        ck_assert_ptr_nonnull(names[nnames]);
        nnames++;
    }
    closedir(dp);
    /* Headers first: validate_int.h defines string macros that other macros and the .c files use.
     */
    qsort(names, nnames, sizeof(names[0]), cmp_source_name);
    /* validate.c, validate.h, validate_int.h and the per-kind files at least. */
    ck_assert_uint_ge(nnames, 6);
    for (size_t i = 0; i < nnames; i++) {
        char rel[512], *src;
        size_t n;
        snprintf(rel, sizeof(rel), "lib/model/%s", names[i]);
        src = read_source(rel);
        n = strlen(src);
        all = realloc(all, len + n + 2);
        ck_assert_ptr_nonnull(all);
        memcpy(all + len, src, n);
        all[len + n] = '\n';
        len += n + 1;
        all[len] = '\0';
        free(src);
        free(names[i]);
    }
    return all;
}

START_TEST(every_message_has_a_test)
{
    char *vsrc = read_validate_sources();
    char *tsrc = read_source("test/test_validate.c");
    toks_t vt, tt;
    str_macros_t vm, tm;
    char *formats[512];
    char **groups;
    size_t nformats, ngroups = 0, missing = 0, checked = 0;

    tokenize(vsrc, &vt);
    tokenize(tsrc, &tt);
    collect_macros(&vt, &vm);
    collect_macros(&tt, &tm);
    nformats = collect_formats(&vt, &vm, formats, sizeof(formats) / sizeof(formats[0]));
    groups = calloc(tt.n + 1, sizeof(*groups));
    ck_assert_ptr_nonnull(groups);
    for (size_t i = 0; i < tt.n;) {
        char *g = join_strings(&tt, &i, &tm);
        if (g != NULL)
            groups[ngroups++] = g;
        else
            i++;
    }

    /* The extraction works: the validate files have far more than 80 validate__err() calls, and
     * a message that no case expects is not found. */
    ck_assert_uint_gt(nformats, 80);
    ck_assert(!format_found_in("no test expects this message %d", "no test expects this"));
    ck_assert(format_found_in("is not a multiple of %d", "x: is not a multiple of 2\n"));
    for (size_t f = 0; f < nformats; f++) {
        bool found = false;
        if (!format_has_text(formats[f]))
            continue;
        checked++;
        for (size_t g = 0; g < ngroups && !found; g++)
            found = format_found_in(formats[f], groups[g]);
        if (!found) {
            fprintf(stderr, "validate message without a test case: \"%s\"\n", formats[f]);
            missing++;
        }
    }
    ck_assert_uint_gt(checked, 70);
    ck_assert_msg(missing == 0, "%zu validate messages have no test case (listed above)", missing);

    for (size_t f = 0; f < nformats; f++)
        free(formats[f]);
    for (size_t g = 0; g < ngroups; g++)
        free(groups[g]);
    free(groups);
    macros_free(&vm);
    macros_free(&tm);
    toks_free(&vt);
    toks_free(&tt);
    free(vsrc);
    free(tsrc);
}
END_TEST

static Suite *validate_suite(void)
{
    Suite *s = suite_create("validate");
    TCase *cq = tcase_create("cluster_queue");
    TCase *other = tcase_create("flavor_cohort_queue");
    TCase *wl = tcase_create("workload");
    TCase *job = tcase_create("job");
    TCase *coverage = tcase_create("coverage");

    tcase_set_timeout(cq, 60);
    tcase_add_test(cq, cq_valid);
    tcase_add_test(cq, cq_borrowing_limit_without_cohort);
    tcase_add_test(cq, cq_lending_limit_without_cohort);
    tcase_add_test(cq, cq_lending_limit_above_nominal);
    tcase_add_test(cq, cq_negative_quantities);
    tcase_add_test(cq, cq_resource_count_mismatch);
    tcase_add_test(cq, cq_resource_name_mismatch);
    tcase_add_test(cq, cq_covered_resource_name);
    tcase_add_test(cq, cq_duplicates_across_groups);
    tcase_add_test(cq, cq_list_map_keys);
    tcase_add_test(cq, cq_on_flavors);
    tcase_add_test(cq, cq_fungibility_preference);
    tcase_add_test(cq, cq_preemption_rule);
    tcase_add_test(cq, cq_namespace_selector);
    tcase_add_test(cq, cq_fair_sharing_weight);
    tcase_add_test(cq, cq_totals);
    tcase_add_test(cq, cq_reports_all_violations);
    tcase_add_test(cq, cq_update_runs_create_rules);
    /* Reads two source files; generous for loaded CI machines and sanitizer builds. */
    tcase_set_timeout(coverage, 60);
    tcase_add_test(coverage, every_message_has_a_test);
    suite_add_tcase(s, coverage);
    suite_add_tcase(s, cq);

    tcase_add_test(other, cohort_rules);
    tcase_add_test(other, rf_topology_needs_node_labels);
    tcase_add_test(other, rf_node_labels);
    tcase_add_test(other, rf_taints);
    tcase_add_test(other, rf_taint_effect_required_by_cel);
    tcase_add_test(other, rf_tolerations);
    tcase_add_test(other, rf_topology_immutable);
    tcase_add_test(other, topology_levels);
    tcase_add_test(other, topology_annotations_validated);
    tcase_add_test(other, topology_levels_mutable_with_hostname_lowest);
    tcase_add_test(other, lq_cluster_queue_immutable);
    tcase_add_test(other, ac_rules);
    tcase_add_test(other, other_kinds_have_no_rules);
    tcase_add_test(cq, rules_for_objects_built_in_code);
    suite_add_tcase(s, other);

    tcase_add_test(wl, wl_valid);
    tcase_add_test(wl, wl_priority_rules);
    tcase_add_test(wl, wl_min_count);
    tcase_add_test(wl, wl_pod_template);
    tcase_add_test(wl, wl_admission);
    tcase_add_test(wl, wl_update_quota_reserved);
    tcase_add_test(wl, wl_update_podsets_count_changes);
    tcase_add_test(wl, wl_update_max_exec_time);
    tcase_add_test(wl, wl_list_map_keys);
    tcase_add_test(wl, wl_conditions);
    tcase_add_test(wl, wl_conditions_built_in_code);
    tcase_add_test(wl, wl_reclaimable_pods);
    tcase_add_test(wl, wl_reclaimable_pods_update);
    tcase_add_test(wl, wl_pod_set_updates);
    tcase_add_test(wl, wl_pod_set_updates_immutable);
    tcase_add_test(wl, wl_cluster_name);
    tcase_add_test(wl, wl_pod_level_resources);
    suite_add_tcase(s, wl);

    tcase_add_test(job, job_labels);
    tcase_add_test(job, job_min_parallelism);
    tcase_add_test(job, job_completions_equal_parallelism);
    tcase_add_test(job, job_update_queue_name);
    tcase_add_test(job, job_update_immutable_labels);
    tcase_add_test(job, job_update_priority_class);
    tcase_add_test(job, job_update_partial_admission);
    tcase_add_test(job, admission_gated_by);
    tcase_add_test(job, integration_labels);
    tcase_add_test(job, integration_update);
    tcase_add_test(job, integration_serving);
    tcase_add_test(job, integration_pod);
    tcase_add_test(job, topology_annotations_warned);
    tcase_add_test(job, topology_layers_validated);
    tcase_add_test(job, topology_request_slice_sizes);
    tcase_add_test(job, integration_serving_shape);
    suite_add_tcase(s, job);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(validate_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
