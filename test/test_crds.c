/* test_crds -- the shipped CRDs are structural and accepted, and every example validates. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "crd_schema.h"

#include "model/yaml.h"
#include "util/util.h"

#include <check.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------ */
/* Fixtures                                                                                   */
/* ------------------------------------------------------------------------------------------ */

static const char *source_dir(void)
{
    const char *dir = getenv("SLUICE_SOURCE_DIR");

    ck_assert_msg(dir != NULL && dir[0] != '\0', "SLUICE_SOURCE_DIR is not set (run via ctest)");
    return dir;
}

static void load_crds(crd_set_t *set)
{
    char dir[1024];
    err_msg_t msg = {{0}};

    snprintf(dir, sizeof(dir), "%s/crds", source_dir());
    memset(set, 0, sizeof(*set));
    ck_assert_msg(crd_set_load_dir(set, dir, &msg) == ERR_OK, "%s", msg.text);
}

static void print_diags(const char *what, const diags_t *d)
{
    for (size_t i = 0; i < d->len; i++)
        fprintf(stderr, "%s: %s: %s\n", what, d->items[i].path, d->items[i].message);
}

/* True when some diagnostic's "path: message" contains `needle`. */
static bool diags_have(const diags_t *d, const char *needle)
{
    for (size_t i = 0; i < d->len; i++) {
        char line[2048];
        snprintf(line, sizeof(line), "%s: %s", d->items[i].path, d->items[i].message);
        if (strstr(line, needle) != NULL)
            return true;
    }
    return false;
}

static json_t *parse(const char *text)
{
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);

    ck_assert_msg(j != NULL, "bad test JSON at line %d: %s", jerr.line, jerr.text);
    return j;
}

/* Structural check of `schema_json`; asserts that an error containing `needle` is reported. */
static void expect_schema_error(const char *schema_json, const char *needle)
{
    json_t *s = parse(schema_json);
    diags_t d;

    diags_init(&d);
    crd_schema_check(s, "openAPIV3Schema", &d);
    if (!diags_have(&d, needle))
        print_diags("got", &d);
    ck_assert_msg(diags_have(&d, needle), "expected \"%s\" for %s", needle, schema_json);
    diags_fini(&d);
    json_decref(s);
}

/* Validation of `obj_json` against the schema of `kind` v1beta2 in the shipped CRDs; asserts
 * that it fails with `needle` (or passes when `needle` is NULL). */
static void expect_object(const crd_set_t *set, const char *obj_json, const char *needle)
{
    json_t *obj = parse(obj_json);
    diags_t d;

    diags_init(&d);
    ck_assert(crd_set_validate_object(set, obj, &d));
    if (needle == NULL) {
        print_diags("unexpected", &d);
        ck_assert_msg(d.len == 0, "expected %s to be valid", obj_json);
    } else {
        if (!diags_have(&d, needle))
            print_diags("got", &d);
        ck_assert_msg(diags_have(&d, needle), "expected \"%s\" for %s", needle, obj_json);
    }
    diags_fini(&d);
    json_decref(obj);
}

/* ------------------------------------------------------------------------------------------ */
/* The shipped CRDs                                                                           */
/* ------------------------------------------------------------------------------------------ */

START_TEST(test_crds_are_accepted_and_structural)
{
    crd_set_t set;
    const json_t *crd;
    size_t i;

    load_crds(&set);
    ck_assert_uint_eq(json_array_size(set.crds), 9);
    json_array_foreach(set.crds, i, crd)
    {
        diags_t d;
        const char *file = json_string_value(json_array_get(set.files, i));
        diags_init(&d);
        crd_check(crd, &d);
        print_diags(file, &d);
        ck_assert_msg(d.len == 0, "%s: %zu problems", file, d.len);
        diags_fini(&d);
    }
    crd_set_fini(&set);
}
END_TEST

START_TEST(test_crds_one_file_per_kind)
{
    static const struct {
        const char *plural, *kind, *scope, *shorts, *versions;
        bool status;
    } want[] = {
        {"resourceflavors", "ResourceFlavor", "Cluster", "flavor,flavors,rf", "v1beta2,v1beta1",
         false},
        {"admissionchecks", "AdmissionCheck", "Cluster", "ac", "v1beta2,v1beta1", true},
        {"clusterqueues", "ClusterQueue", "Cluster", "cq", "v1beta2,v1beta1", true},
        {"localqueues", "LocalQueue", "Namespaced", "queue,queues,lq", "v1beta2,v1beta1", true},
        {"cohorts", "Cohort", "Cluster", "co", "v1beta2,v1beta1", true},
        {"workloadpriorityclasses", "WorkloadPriorityClass", "Cluster", "wpc", "v1beta2,v1beta1",
         false},
        {"workloads", "Workload", "Namespaced", "kwl,kueueworkload,kueueworkloads",
         "v1beta2,v1beta1", true},
        {"topologies", "Topology", "Cluster", "topo", "v1beta2,v1beta1", false},
        {"provisioningrequestconfigs", "ProvisioningRequestConfig", "Cluster", "prc",
         "v1beta2,v1beta1", false},
    };
    crd_set_t set;

    load_crds(&set);
    for (size_t k = 0; k < ARRAY_SIZE(want); k++) {
        const json_t *crd = crd_set_find(&set, "kueue.x-k8s.io", want[k].kind), *v;
        const json_t *spec = json_object_get(crd, "spec");
        char file[512], got[256] = "";
        size_t i, idx = 0;

        ck_assert_msg(crd != NULL, "no CRD for %s", want[k].kind);
        json_array_foreach(set.crds, i, v) if (v == crd) idx = i;
        snprintf(file, sizeof(file), "/crds/kueue.x-k8s.io_%s.yaml", want[k].plural);
        ck_assert_ptr_nonnull(strstr(json_string_value(json_array_get(set.files, idx)), file));
        ck_assert_str_eq(json_string_value(json_object_get(spec, "scope")), want[k].scope);
        json_array_foreach(json_object_get(json_object_get(spec, "names"), "shortNames"), i, v)
        {
            strcat(got, i ? "," : "");
            strcat(got, json_string_value(v));
        }
        ck_assert_str_eq(got, want[k].shorts);
        got[0] = '\0';
        json_array_foreach(json_object_get(spec, "versions"), i, v)
        {
            const json_t *sub = json_object_get(v, "subresources");
            strcat(got, i ? "," : "");
            strcat(got, json_string_value(json_object_get(v, "name")));
            ck_assert(json_is_true(json_object_get(v, "served")));
            /* v1beta2 is the storage version; v1beta1 is deprecated with Kueue's warning. */
            if (strcmp(json_string_value(json_object_get(v, "name")), "v1beta2") == 0) {
                ck_assert(json_is_true(json_object_get(v, "storage")));
            } else {
                ck_assert(json_is_false(json_object_get(v, "storage")));
                ck_assert(json_is_true(json_object_get(v, "deprecated")));
                ck_assert_str_eq(json_string_value(json_object_get(v, "deprecationWarning")),
                                 "This version is deprecated. Use v1beta2 instead.");
            }
            ck_assert_int_eq(json_object_get(sub, "status") != NULL, want[k].status);
        }
        ck_assert_str_eq(got, want[k].versions);
    }
    crd_set_fini(&set);
}
END_TEST

START_TEST(test_crds_printer_columns_as_kueue)
{
    static const struct {
        const char *kind, *columns;
    } want[] = {
        {"ClusterQueue", "Cohort=.spec.cohortName;Strategy=.spec.queueingStrategy/1;"
                         "Pending Workloads=.status.pendingWorkloads;"
                         "Admitted Workloads=.status.admittedWorkloads/1;"},
        {"LocalQueue", "ClusterQueue=.spec.clusterQueue;Pending Workloads=.status.pendingWorkloads;"
                       "Admitted Workloads=.status.admittedWorkloads;"},
        {"WorkloadPriorityClass", "Value=.value;"},
        {"Workload", "Queue=.spec.queueName;Reserved in=.status.admission.clusterQueue;"
                     "Admitted=.status.conditions[?(@.type=='Admitted')].status;"
                     "Finished=.status.conditions[?(@.type=='Finished')].status;"
                     "Age=.metadata.creationTimestamp;"},
        {"ResourceFlavor", ""},
        {"Cohort", ""},
        {"Topology", ""},
    };
    crd_set_t set;

    load_crds(&set);
    for (size_t k = 0; k < ARRAY_SIZE(want) * 2; k++) {
        /* The second round reads v1beta1, whose columns use its own paths (.spec.cohort). */
        const json_t *crd = crd_set_find(&set, "kueue.x-k8s.io", want[k % ARRAY_SIZE(want)].kind);
        const json_t *ver = json_array_get(
            json_object_get(json_object_get(crd, "spec"), "versions"), k / ARRAY_SIZE(want));
        const char *expect = want[k % ARRAY_SIZE(want)].columns;
        const json_t *col;
        char got[1024] = "";
        size_t i;

        json_array_foreach(json_object_get(ver, "additionalPrinterColumns"), i, col)
        {
            char one[256];
            const json_t *prio = json_object_get(col, "priority");
            snprintf(one, sizeof(one), "%s=%s%s;", json_string_value(json_object_get(col, "name")),
                     json_string_value(json_object_get(col, "jsonPath")),
                     prio && json_integer_value(prio) == 1 ? "/1" : "");
            strcat(got, one);
        }
        if (k >= ARRAY_SIZE(want) && strcmp(want[k - ARRAY_SIZE(want)].kind, "ClusterQueue") == 0)
            expect = "Cohort=.spec.cohort;Strategy=.spec.queueingStrategy/1;"
                     "Pending Workloads=.status.pendingWorkloads;"
                     "Admitted Workloads=.status.admittedWorkloads/1;";
        ck_assert_str_eq(got, expect);
    }
    crd_set_fini(&set);
}
END_TEST

/* ClusterQueue, LocalQueue and Workload serve v1beta1 through sluice's conversion webhook (Kueue
 * converts the same three, and Cohort); v1beta1 carries Kueue's v1beta1 field names. */
START_TEST(test_crds_conversion_webhook)
{
    static const struct {
        const char *kind, *v1beta1_fields, *absent;
    } want[] = {
        {"ClusterQueue",
         "spec.cohort spec.admissionChecks status.pendingWorkloadsStatus "
         "status.fairSharing.admissionFairSharingStatus",
         "spec.cohortName spec.concurrentAdmissionPolicy"},
        {"LocalQueue", "status.flavorUsage status.flavors status.fairSharing",
         "status.flavorsUsage"},
        {"Workload",
         "spec.priorityClassName spec.priorityClassSource "
         "status.accumulatedPastExexcutionTimeSeconds status.admission",
         "spec.priorityClassRef spec.preemptionGates status.preemptionGates "
         "status.accumulatedPastExecutionTimeSeconds"},
    };
    static const char *const none[] = {"ResourceFlavor", "Cohort", "WorkloadPriorityClass",
                                       "Topology"};
    crd_set_t set;

    load_crds(&set);
    for (size_t k = 0; k < ARRAY_SIZE(want); k++) {
        const json_t *crd = crd_set_find(&set, "kueue.x-k8s.io", want[k].kind);
        const json_t *conv = json_object_get(json_object_get(crd, "spec"), "conversion");
        const json_t *wh = json_object_get(conv, "webhook");
        const json_t *svc = json_object_get(json_object_get(wh, "clientConfig"), "service");
        const json_t *v1 = crd_version_schema(crd, "v1beta1");
        char buf[512], *tok, *save;
        ck_assert_str_eq(json_string_value(json_object_get(conv, "strategy")), "Webhook");
        ck_assert_str_eq(
            json_string_value(json_array_get(json_object_get(wh, "conversionReviewVersions"), 0)),
            "v1");
        ck_assert_str_eq(json_string_value(json_object_get(svc, "name")), "sluice-webhook-service");
        ck_assert_str_eq(json_string_value(json_object_get(svc, "namespace")), "sluice-system");
        ck_assert_str_eq(json_string_value(json_object_get(svc, "path")), "/convert");
        ck_assert_int_eq(json_integer_value(json_object_get(svc, "port")), 443);
        ck_assert_ptr_nonnull(v1);
        for (int present = 1; present >= 0; present--) {
            snprintf(buf, sizeof(buf), "%s", present ? want[k].v1beta1_fields : want[k].absent);
            for (tok = strtok_r(buf, " ", &save); tok != NULL; tok = strtok_r(NULL, " ", &save)) {
                const json_t *node = v1;
                char field[128], *f, *fs;
                snprintf(field, sizeof(field), "%s", tok);
                for (f = strtok_r(field, ".", &fs); f != NULL && node != NULL;
                     f = strtok_r(NULL, ".", &fs))
                    node = json_object_get(json_object_get(node, "properties"), f);
                ck_assert_msg((node != NULL) == present, "%s v1beta1 %s: %s", want[k].kind, tok,
                              present ? "missing" : "present");
            }
        }
    }
    for (size_t k = 0; k < ARRAY_SIZE(none); k++)
        ck_assert_ptr_null(json_object_get(
            json_object_get(crd_set_find(&set, "kueue.x-k8s.io", none[k]), "spec"), "conversion"));
    crd_set_fini(&set);
}
END_TEST

/* The schema carries the defaults, enums and CEL messages Kueue's has. */
START_TEST(test_crds_defaults_and_cel_messages)
{
    crd_set_t set;
    const json_t *cq, *spec, *wl, *pod_sets;
    char *dump;

    load_crds(&set);
    cq = crd_version_schema(crd_set_find(&set, "kueue.x-k8s.io", "ClusterQueue"), "v1beta2");
    spec = json_object_get(json_object_get(cq, "properties"), "spec");
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(json_object_get(spec, "properties"), "queueingStrategy"), "default")),
        "BestEffortFIFO");
    dump = json_dumps(cq, JSON_COMPACT);
    ck_assert_ptr_nonnull(strstr(dump, "borrowingLimit must be nil when cohort is empty"));
    ck_assert_ptr_nonnull(
        strstr(dump, "flavors must have the same number of resources as the coveredResources"));
    ck_assert_ptr_nonnull(
        strstr(dump, "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never"));
    ck_assert_ptr_nonnull(strstr(dump, "preference can only be set when both whenCanBorrow and "
                                       "whenCanPreempt are TryNextFlavor"));
    free(dump);
    wl = crd_version_schema(crd_set_find(&set, "kueue.x-k8s.io", "Workload"), "v1beta2");
    pod_sets = json_object_get(
        json_object_get(json_object_get(json_object_get(wl, "properties"), "spec"), "properties"),
        "podSets");
    ck_assert_int_eq(json_integer_value(json_object_get(pod_sets, "maxItems")), 18);
    dump = json_dumps(wl, JSON_COMPACT);
    ck_assert_ptr_nonnull(strstr(dump, "minCount should be positive and less or equal to count"));
    ck_assert_ptr_nonnull(strstr(dump, "priority should not be nil when priorityClassRef is set"));
    ck_assert_ptr_nonnull(
        strstr(dump, "podSetAssignments must have the same number of podSets as the spec"));
    free(dump);
    crd_set_fini(&set);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Shipped examples                                                                           */
/* ------------------------------------------------------------------------------------------ */

START_TEST(test_examples_validate_against_crds)
{
    crd_set_t set;
    diags_t d;
    crd_scan_stats_t stats = {0, 0, 0};
    err_msg_t msg = {{0}};
    char dir[1024];

    load_crds(&set);
    diags_init(&d);
    snprintf(dir, sizeof(dir), "%s/examples", source_dir());
    ck_assert_msg(crd_set_validate_tree(&set, dir, &d, &stats, &msg) == ERR_OK, "%s", msg.text);
    print_diags("example", &d);
    fprintf(stderr, "crds: examples: %zu files, %zu documents, %zu objects checked against CRDs\n",
            stats.files, stats.documents, stats.checked);
    ck_assert_msg(d.len == 0, "%zu example problems", d.len);
    ck_assert(!d.oom);
    /* examples/ ships a whole platform (issue 2): a scan that checks nothing is a broken scan. */
    ck_assert_uint_gt(stats.checked, 0);
    diags_fini(&d);
    crd_set_fini(&set);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* The checker catches non-structural schemas                                                 */
/* ------------------------------------------------------------------------------------------ */

#define ROOT(props) "{\"type\":\"object\",\"properties\":{" props "}}"

START_TEST(test_schema_rejects_non_structural)
{
    expect_schema_error(ROOT("\"spec\":{\"description\":\"no type\"}"),
                        "properties[spec].type: Required value: must not be empty for specified "
                        "object fields");
    expect_schema_error("{\"properties\":{}}",
                        "type: Required value: must not be empty at the root");
    expect_schema_error("{\"type\":\"array\",\"items\":{\"type\":\"string\"}}",
                        "must be object at the root");
    expect_schema_error(ROOT("\"a\":{\"type\":\"array\",\"items\":{}}"),
                        "items.type: Required value: must not be empty for specified array items");
    expect_schema_error(ROOT("\"a\":{\"type\":\"array\"}"),
                        "items: Required value: must be specified");
    expect_schema_error(
        ROOT("\"a\":{\"type\":\"object\",\"properties\":{\"b\":{\"type\":\"string\"}},"
             "\"additionalProperties\":{\"type\":\"string\"}}"),
        "additionalProperties and properties are mutual exclusive");
    expect_schema_error(ROOT("\"a\":{\"type\":\"object\",\"additionalProperties\":false}"),
                        "additionalProperties: false is not structural");
    expect_schema_error("{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}}",
                        "must not be used at the root");
    expect_schema_error(ROOT("\"a\":{\"type\":\"string\",\"anyOf\":[{\"type\":\"string\"},"
                             "{\"maxLength\":3}]}"),
                        "anyOf[0].type: Forbidden: must be empty to be structural");
    expect_schema_error(
        ROOT("\"a\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"string\"}},"
             "\"oneOf\":[{\"properties\":{\"y\":{\"maxLength\":1}}}]}"),
        "structural completeness");
    expect_schema_error(ROOT("\"a\":{\"type\":\"string\",\"not\":{\"description\":\"d\"}}"),
                        "not.description: Forbidden");
    expect_schema_error(ROOT("\"metadata\":{\"type\":\"object\",\"properties\":{\"labels\":"
                             "{\"type\":\"object\"}}}"),
                        "must not specify anything other than name and generateName");
    expect_schema_error(ROOT("\"q\":{\"type\":\"string\",\"x-kubernetes-int-or-string\":true}"),
                        "must be empty if x-kubernetes-int-or-string is true");
    expect_schema_error(ROOT("\"q\":{\"x-kubernetes-int-or-string\":true,"
                             "\"x-kubernetes-preserve-unknown-fields\":true}"),
                        "must be false if x-kubernetes-int-or-string is true");
    expect_schema_error(
        ROOT("\"a\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":false}"),
        "must be true or undefined");
    expect_schema_error(ROOT("\"a\":{\"type\":\"string\",\"maxlength\":3}"),
                        "properties[a].maxlength: unknown field");
    expect_schema_error(ROOT("\"a\":{\"$ref\":\"#/definitions/x\"}"), "$ref is not supported");
    expect_schema_error(ROOT("\"a\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
                             "\"uniqueItems\":true}"),
                        "uniqueItems cannot be set to true");
    expect_schema_error(ROOT("\"a\":{\"type\":\"array\",\"items\":[{\"type\":\"string\"}]}"),
                        "items: Invalid value: \"array\": must be an object");
    expect_schema_error(ROOT("\"a\":{\"type\":\"string\",\"properties\":{}}"),
                        "properties: Forbidden: only allowed for type object");
    expect_schema_error(ROOT("\"a\":{\"type\":\"object\",\"required\":[\"b\"],\"properties\":"
                             "{\"c\":{\"type\":\"string\"}}}"),
                        "required field is not declared in properties");
    expect_schema_error(ROOT("\"a\":{\"type\":\"string\",\"minLength\":5,\"maxLength\":2}"),
                        "minLength: Invalid value: 5: must not be greater than maxLength");
}
END_TEST

START_TEST(test_schema_rejects_bad_defaults_enums_and_lists)
{
    expect_schema_error(
        ROOT("\"a\":{\"type\":\"string\",\"enum\":[\"A\",\"B\"],\"default\":\"C\"}"),
        "properties[a].default: Unsupported value: \"C\"");
    expect_schema_error(ROOT("\"a\":{\"type\":\"integer\",\"minimum\":1,\"default\":0}"),
                        "default: Invalid value: 0: should be greater than or equal to 1");
    expect_schema_error(ROOT("\"a\":{\"type\":\"object\",\"default\":{\"x\":1},\"properties\":"
                             "{\"y\":{\"type\":\"integer\"}}}"),
                        "default.x: unknown field");
    expect_schema_error(ROOT("\"a\":{\"type\":\"string\",\"enum\":[\"A\",1]}"),
                        "enum[1]: Invalid value: \"integer\": must be of type string");
    expect_schema_error(ROOT("\"metadata\":{\"type\":\"object\",\"default\":{}}"),
                        "Forbidden: must not be set inside metadata");
    expect_schema_error(
        ROOT("\"a\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
             "\"x-kubernetes-list-map-keys\":[\"name\"],\"items\":{\"type\":\"object\","
             "\"properties\":{\"name\":{\"type\":\"string\"}}}}"),
        "map keys must be required or have a default");
    expect_schema_error(ROOT("\"a\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
                             "\"items\":{\"type\":\"object\"}}"),
                        "must not be empty if x-kubernetes-list-type is map");
    expect_schema_error(
        ROOT("\"a\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
             "\"x-kubernetes-list-map-keys\":[\"n\"],\"items\":{\"type\":\"object\","
             "\"required\":[\"n\"],\"properties\":{\"n\":{\"type\":\"object\"}}}}"),
        "must be a scalar property");
    expect_schema_error(ROOT("\"a\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"set\","
                             "\"items\":{\"type\":\"object\"}}"),
                        "items of a set must be scalars or atomic");
    expect_schema_error(ROOT("\"a\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"bag\","
                             "\"items\":{\"type\":\"string\"}}"),
                        "Unsupported value: \"bag\"");
    expect_schema_error(ROOT("\"a\":{\"type\":\"string\",\"x-kubernetes-list-type\":\"atomic\"}"),
                        "must only be used if type is array");
    expect_schema_error(ROOT("\"a\":{\"type\":\"array\",\"x-kubernetes-list-map-keys\":[\"n\"],"
                             "\"items\":{\"type\":\"string\"}}"),
                        "must not be set if x-kubernetes-list-type is not map");
    expect_schema_error(ROOT("\"a\":{\"type\":\"string\",\"x-kubernetes-map-type\":\"atomic\"}"),
                        "must only be used if type is object");
    expect_schema_error(ROOT("\"a\":{\"type\":\"string\",\"pattern\":\"^(a\"}"),
                        "must be a valid regular expression");
    expect_schema_error(ROOT("\"a\":{\"type\":\"string\",\"x-kubernetes-validations\":"
                             "[{\"message\":\"m\"}]}"),
                        "x-kubernetes-validations[0].rule: Required value");
    expect_schema_error(ROOT("\"a\":{\"type\":\"string\",\"x-kubernetes-validations\":"
                             "[{\"rule\":\"self != ''\",\"reason\":\"Bad\"}]}"),
                        "x-kubernetes-validations[0].reason: Unsupported value");
}
END_TEST

/* A copy of the shipped ClusterQueue CRD, changed by `edit`, must fail crd_check with `needle`. */
static void expect_crd_error(const crd_set_t *set, const char *kind, void (*edit)(json_t *),
                             const char *needle)
{
    json_t *crd = json_deep_copy(crd_set_find(set, "kueue.x-k8s.io", kind));
    diags_t d;

    ck_assert_ptr_nonnull(crd);
    edit(crd);
    diags_init(&d);
    crd_check(crd, &d);
    if (!diags_have(&d, needle))
        print_diags("got", &d);
    ck_assert_msg(diags_have(&d, needle), "expected \"%s\"", needle);
    diags_fini(&d);
    json_decref(crd);
}

static json_t *first_version(json_t *crd)
{
    return json_array_get(json_object_get(json_object_get(crd, "spec"), "versions"), 0);
}

static void edit_two_storage(json_t *crd)
{
    json_t *v1 = json_deep_copy(first_version(crd));
    json_object_set_new(v1, "name", json_string("v1beta1"));
    json_array_append_new(json_object_get(json_object_get(crd, "spec"), "versions"), v1);
}

/* v1beta1 ClusterQueue spelled the cohort "cohort": serving it without a conversion webhook is
 * exactly the mistake the checker must catch. */
static void edit_v1beta1_renamed_field(json_t *crd)
{
    json_t *v1 = json_deep_copy(first_version(crd));
    json_t *props = json_object_get(
        json_object_get(
            json_object_get(json_object_get(json_object_get(v1, "schema"), "openAPIV3Schema"),
                            "properties"),
            "spec"),
        "properties");
    json_object_set(props, "cohort", json_object_get(props, "cohortName"));
    json_object_del(props, "cohortName");
    json_object_set_new(v1, "name", json_string("v1beta1"));
    json_object_set_new(v1, "storage", json_false());
    json_array_append_new(json_object_get(json_object_get(crd, "spec"), "versions"), v1);
    json_object_del(json_object_get(crd, "spec"), "conversion");
}

/* The conversion stanza, broken in the ways the API server refuses. */
static json_t *conversion_of(json_t *crd)
{
    return json_object_get(json_object_get(crd, "spec"), "conversion");
}

static json_t *client_config_of(json_t *crd)
{
    return json_object_get(json_object_get(conversion_of(crd), "webhook"), "clientConfig");
}

static void edit_conversion_bad_strategy(json_t *crd)
{
    json_object_set_new(conversion_of(crd), "strategy", json_string("Magic"));
}

static void edit_conversion_none_with_webhook(json_t *crd)
{
    json_object_set_new(conversion_of(crd), "strategy", json_string("None"));
}

static void edit_conversion_no_v1(json_t *crd)
{
    json_object_set_new(json_object_get(conversion_of(crd), "webhook"), "conversionReviewVersions",
                        json_pack("[s]", "v2"));
}

static void edit_conversion_url_and_service(json_t *crd)
{
    json_object_set_new(client_config_of(crd), "url", json_string("https://127.0.0.1/convert"));
}

static void edit_conversion_http_url(json_t *crd)
{
    json_object_del(client_config_of(crd), "service");
    json_object_set_new(client_config_of(crd), "url", json_string("http://127.0.0.1/convert"));
}

static void edit_conversion_bad_service(json_t *crd)
{
    json_t *svc = json_object_get(client_config_of(crd), "service");
    json_object_set_new(svc, "path", json_string("convert"));
    json_object_set_new(svc, "port", json_integer(0));
}

static void edit_bad_column(json_t *crd)
{
    json_t *col =
        json_array_get(json_object_get(first_version(crd), "additionalPrinterColumns"), 0);
    json_object_set_new(col, "jsonPath", json_string(".spec.cohort"));
}

static void edit_bad_name(json_t *crd)
{
    json_object_set_new(json_object_get(crd, "metadata"), "name", json_string("cq.kueue.x-k8s.io"));
}

static void edit_bad_status(json_t *crd)
{
    json_object_set_new(json_object_get(first_version(crd), "subresources"), "status",
                        json_pack("{s:b}", "enabled", 1));
}

static void edit_nonstructural_deep(json_t *crd)
{
    json_t *schema =
        json_object_get(json_object_get(first_version(crd), "schema"), "openAPIV3Schema");
    json_t *rg = json_object_get(
        json_object_get(json_object_get(json_object_get(schema, "properties"), "spec"),
                        "properties"),
        "resourceGroups");
    json_object_del(json_object_get(rg, "items"), "type");
}

START_TEST(test_crd_check_catches_mistakes)
{
    crd_set_t set;

    load_crds(&set);
    expect_crd_error(&set, "ClusterQueue", edit_two_storage,
                     "must have exactly one version marked as storage version (found 2)");
    expect_crd_error(&set, "ClusterQueue", edit_v1beta1_renamed_field,
                     "served versions v1beta2 and v1beta1 have different schemas but conversion "
                     "is None");
    expect_crd_error(&set, "Workload", edit_conversion_bad_strategy,
                     "spec.conversion.strategy: Unsupported value");
    expect_crd_error(&set, "Workload", edit_conversion_none_with_webhook,
                     "spec.conversion.webhook: Forbidden: should be empty if conversion strategy "
                     "is None");
    expect_crd_error(&set, "LocalQueue", edit_conversion_no_v1,
                     "conversionReviewVersions: Invalid value: must include at least one of v1");
    expect_crd_error(&set, "LocalQueue", edit_conversion_url_and_service,
                     "clientConfig: Required value: exactly one of url or service is required");
    expect_crd_error(&set, "LocalQueue", edit_conversion_http_url,
                     "clientConfig.url: Invalid value: \"http://127.0.0.1/convert\": must be an "
                     "https URL");
    expect_crd_error(&set, "ClusterQueue", edit_conversion_bad_service,
                     "service.path: Invalid value: \"convert\": must start with a '/'");
    expect_crd_error(&set, "ClusterQueue", edit_conversion_bad_service,
                     "service.port: Invalid value: port is not valid");
    expect_crd_error(&set, "ClusterQueue", edit_bad_column,
                     "jsonPath: Invalid value: \".spec.cohort\": does not resolve");
    expect_crd_error(&set, "ClusterQueue", edit_bad_name,
                     "metadata.name: Invalid value: must be spec.names.plural");
    expect_crd_error(&set, "ClusterQueue", edit_bad_status, "subresources.status: Invalid value");
    expect_crd_error(&set, "ClusterQueue", edit_nonstructural_deep,
                     "properties[resourceGroups].items.type: Required value: must not be empty for "
                     "specified array items");
    crd_set_fini(&set);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Instances                                                                                  */
/* ------------------------------------------------------------------------------------------ */

#define CQ(spec)                                                                                   \
    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":{\"name\":" \
    "\"team-a\"},\"spec\":" spec "}"
#define RG(flavors)                                                     \
    "{\"resourceGroups\":[{\"coveredResources\":[\"cpu\",\"nvidia.com/" \
    "gpu\"],\"flavors\":[" flavors "]}]}"
#define FLAVOR(name, cpu, gpu)                                                           \
    "{\"name\":\"" name "\",\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":" cpu "}," \
    "{\"name\":\"nvidia.com/gpu\",\"nominalQuota\":" gpu "}]}"

START_TEST(test_instances_valid)
{
    crd_set_t set;

    load_crds(&set);
    expect_object(&set, CQ(RG(FLAVOR("a100", "\"1500m\"", "8"))), NULL);
    expect_object(&set, CQ(RG(FLAVOR("h100.sxm", "\"+1.5e3\"", "\"16\""))), NULL);
    expect_object(&set,
                  CQ("{\"cohortName\":\"research\",\"queueingStrategy\":\"StrictFIFO\","
                     "\"preemption\":{\"reclaimWithinCohort\":\"Any\"},"
                     "\"namespaceSelector\":{},\"fairSharing\":{\"weight\":\"0.5\"}}"),
                  NULL);
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":"
                  "{\"name\":\"job-train-1a2b3\",\"namespace\":\"ml\",\"labels\":{\"kueue.x-k8s.io/"
                  "job-uid\":\"abc\"},\"annotations\":{\"sim.sluice.dev/at\":\"10s\"}},\"spec\":{"
                  "\"queueName\":\"lq-a\",\"priorityClassRef\":{\"group\":\"kueue.x-k8s.io\","
                  "\"kind\":\"WorkloadPriorityClass\",\"name\":\"high\"},\"priority\":1000,"
                  "\"podSets\":[{\"count\":4,\"template\":{\"spec\":{\"containers\":[{\"name\":"
                  "\"c\",\"image\":\"x\",\"env\":[{\"name\":\"A\",\"value\":\"1\"}],\"resources\":"
                  "{\"requests\":{\"cpu\":1},\"limits\":{\"memory\":\"2Gi\"}}}],"
                  "\"restartPolicy\":\"Never\",\"volumes\":[]}}}]}}",
                  NULL);
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"WorkloadPriorityClass\","
                  "\"metadata\":{\"name\":\"high\"},\"value\":1000,\"description\":\"d\"}",
                  NULL);
    /* Kueue's v1beta1 spellings validate against the v1beta1 schemas. */
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"ClusterQueue\","
                  "\"metadata\":{\"name\":\"a\"},\"spec\":{\"cohort\":\"research\","
                  "\"admissionChecks\":[\"prov\"],\"flavorFungibility\":{\"whenCanBorrow\":"
                  "\"Borrow\",\"whenCanPreempt\":\"Preempt\"}},\"status\":{"
                  "\"pendingWorkloadsStatus\":{\"lastChangeTime\":\"2025-01-01T00:00:00Z\"}}}",
                  NULL);
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"LocalQueue\","
                  "\"metadata\":{\"name\":\"q\",\"namespace\":\"ml\"},\"spec\":{"
                  "\"clusterQueue\":\"c\"},\"status\":{\"flavorUsage\":[{\"name\":\"f\","
                  "\"resources\":[{\"name\":\"cpu\",\"total\":\"1\"}]}],\"flavors\":[{"
                  "\"name\":\"f\",\"resources\":[\"cpu\"],\"nodeLabels\":{\"a\":\"b\"}}]}}",
                  NULL);
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Workload\",\"metadata\":"
                  "{\"name\":\"w\",\"namespace\":\"ml\"},\"spec\":{\"queueName\":\"lq\","
                  "\"priorityClassName\":\"high\",\"priorityClassSource\":"
                  "\"kueue.x-k8s.io/workloadpriorityclass\",\"priority\":1000,\"podSets\":[{"
                  "\"count\":2,\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}}]},"
                  "\"status\":{\"accumulatedPastExexcutionTimeSeconds\":60,\"admission\":{"
                  "\"clusterQueue\":\"cq\",\"podSetAssignments\":[{\"name\":\"main\","
                  "\"topologyAssignment\":{\"levels\":[\"kubernetes.io/hostname\"],"
                  "\"domains\":[{\"values\":[\"n1\"],\"count\":2}]}}]}}}",
                  NULL);
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Topology\","
                  "\"metadata\":{\"name\":\"dc\"},\"spec\":{\"levels\":[{\"nodeLabel\":"
                  "\"cloud.example.com/rack\"},{\"nodeLabel\":\"kubernetes.io/hostname\"}]}}",
                  NULL);
    crd_set_fini(&set);
}
END_TEST

START_TEST(test_instances_invalid)
{
    crd_set_t set;

    load_crds(&set);
    expect_object(&set, CQ("{\"queueingStrategy\":\"FIFO\"}"),
                  "spec.queueingStrategy: Unsupported value: \"FIFO\": supported values: "
                  "\"StrictFIFO\", \"BestEffortFIFO\"");
    expect_object(&set, CQ(RG(FLAVOR("a100", "\"12x\"", "8"))),
                  "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: "
                  "\"12x\": should match");
    expect_object(&set, CQ(RG(FLAVOR("a100", "1.5", "8"))),
                  "nominalQuota: Invalid value: 1.5: must be of type integer or string");
    expect_object(&set, CQ(RG(FLAVOR("A100", "1", "8"))),
                  "spec.resourceGroups[0].flavors[0].name: Invalid value: \"A100\": should match");
    expect_object(&set, CQ(RG(FLAVOR("a100", "1", "8") "," FLAVOR("a100", "2", "8"))),
                  "spec.resourceGroups[0].flavors[1]: Duplicate value: {\"name\":\"a100\"}");
    expect_object(&set, CQ("{\"cohort\":\"research\"}"), "spec.cohort: unknown field \"cohort\"");
    expect_object(&set,
                  CQ("{\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":"
                     "[{\"name\":\"f\",\"resources\":[{\"name\":\"cpu\"}]}]}]}"),
                  "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Required value");
    expect_object(&set, CQ("{\"resourceGroups\":[{\"coveredResources\":[],\"flavors\":[]}]}"),
                  "spec.resourceGroups[0].coveredResources: Invalid value: 0 items: should have "
                  "at least 1 items");
    expect_object(&set, CQ("{\"cohortName\":\"-bad\"}"), "spec.cohortName: Invalid value");
    expect_object(&set,
                  CQ("{\"preemption\":{\"borrowWithinCohort\":{\"maxPriorityThreshold\":"
                     "3000000000}}}"),
                  "maxPriorityThreshold: Invalid value: 3000000000: must fit in a 32-bit integer");
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\","
                  "\"metadata\":{\"name\":\"Team_A\",\"labels\":{\"tier\":true}},\"spec\":{}}",
                  "metadata.name: Invalid value: \"Team_A\"");
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\","
                  "\"metadata\":{\"name\":\"a\",\"labels\":{\"tier\":true}},\"spec\":{}}",
                  "metadata.labels[tier]: Invalid value: \"boolean\": must be of type string");
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\","
                  "\"metadata\":{\"name\":\"a\",\"namespace\":\"x\"},\"spec\":{}}",
                  "metadata.namespace: Invalid value: ClusterQueue is cluster-scoped");
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"WorkloadPriorityClass\","
                  "\"metadata\":{\"name\":\"high\"}}",
                  "value: Required value");
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"WorkloadPriorityClass\","
                  "\"metadata\":{\"name\":\"high\"},\"value\":\"1000\"}",
                  "value: Invalid value: \"string\": must be of type integer");
    /* Two podsets without a name both default to "main". */
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":"
                  "{\"name\":\"w\"},\"spec\":{\"podSets\":[{\"template\":{\"spec\":{\"containers\":"
                  "[{\"name\":\"c\"}]}}},{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\"}]"
                  "}}}]}}",
                  "spec.podSets[1]: Duplicate value: {\"name\":\"main\"}");
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":"
                  "{\"name\":\"w\"},\"spec\":{\"podSets\":[{\"count\":-1,\"template\":{\"spec\":"
                  "{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1 "
                  "core\"}}}]}}}]}}",
                  "spec.podSets[0].template.spec.containers[0].resources.requests[cpu]: Invalid "
                  "value: \"1 core\"");
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":"
                  "{\"name\":\"w\"},\"spec\":{\"podSets\":[{\"count\":-1,\"template\":{\"spec\":"
                  "{\"containers\":[{\"name\":\"c\"}]}}}]}}",
                  "spec.podSets[0].count: Invalid value: -1: should be greater than or equal to 0");
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":"
                  "{\"name\":\"w\"},\"spec\":{\"podSets\":[{\"template\":{\"spec\":{}}}]}}",
                  "spec.podSets[0].template.spec.containers: Required value");
    /* Versions and kinds the CRDs do not serve. */
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1alpha1\",\"kind\":\"ClusterQueue\","
                  "\"metadata\":{\"name\":\"a\"},\"spec\":{\"cohort\":\"x\"}}",
                  "apiVersion: Invalid value: \"kueue.x-k8s.io/v1alpha1\": version v1alpha1 of "
                  "ClusterQueue is not served");
    /* v1beta1 objects are checked against the v1beta1 schema, with its names. */
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"ClusterQueue\","
                  "\"metadata\":{\"name\":\"a\"},\"spec\":{\"cohortName\":\"x\"}}",
                  "spec.cohortName: unknown field");
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"ClusterQueue\","
                  "\"metadata\":{\"name\":\"a\"},\"spec\":{\"admissionChecks\":[\"a\","
                  "\"a\"]}}",
                  "spec.admissionChecks[1]: Duplicate value");
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Workload\","
                  "\"metadata\":{\"name\":\"w\"},\"spec\":{\"priorityClassSource\":\"x\","
                  "\"podSets\":[{\"template\":{\"spec\":{\"containers\":[{\"name\":"
                  "\"c\"}]}}}]}}",
                  "spec.priorityClassSource: Unsupported value: \"x\"");
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"LocalQueue\","
                  "\"metadata\":{\"name\":\"q\"},\"spec\":{\"clusterQueue\":\"c\"},"
                  "\"status\":{\"flavorsUsage\":[]}}",
                  "status.flavorsUsage: unknown field");
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"AdmissionCheck\","
                  "\"metadata\":{\"name\":\"a\"},\"spec\":{\"controllerName\":\"\"}}",
                  "spec.controllerName: Invalid value: \"\": should be at least 1 chars long");
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"AdmissionCheck\","
                  "\"metadata\":{\"name\":\"a\"},\"spec\":{\"controllerName\":\"c\","
                  "\"parameters\":{\"apiGroup\":\"kueue.x-k8s.io\",\"kind\":\"Prov\"}}}",
                  "spec.parameters.name: Required value");
    /* Topology: the schema's bounds and pattern (its CEL rules are the API server's, and
     * lib/model's, test_validate). */
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Topology\","
                  "\"metadata\":{\"name\":\"t\"},\"spec\":{\"levels\":[]}}",
                  "spec.levels: Invalid value: 0 items: should have at least 1 items");
    expect_object(&set,
                  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Topology\","
                  "\"metadata\":{\"name\":\"t\"},\"spec\":{\"levels\":[{\"nodeLabel\":"
                  "\"a b\"}]}}",
                  "spec.levels[0].nodeLabel: Invalid value: \"a b\": should match");
    crd_set_fini(&set);
}
END_TEST

START_TEST(test_other_groups_are_skipped)
{
    static const char *const skipped[] = {
        "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\"}}",
        "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"n\"}}",
        "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\",\"value\":1}",
        "{\"apiVersion\":\"config.kueue.x-k8s.io/v1beta2\",\"kind\":\"Configuration\"}",
        "{\"kind\":\"ClusterQueue\"}",
        "[1,2]",
    };
    crd_set_t set;

    load_crds(&set);
    for (size_t i = 0; i < ARRAY_SIZE(skipped); i++) {
        json_t *obj = parse(skipped[i]);
        diags_t d;
        diags_init(&d);
        ck_assert(!crd_set_validate_object(&set, obj, &d));
        ck_assert_uint_eq(d.len, 0);
        diags_fini(&d);
        json_decref(obj);
    }
    crd_set_fini(&set);
}
END_TEST

/* The tree scan reads YAML, names file, document and object, and skips other kinds. */
START_TEST(test_tree_scan_reports_file_doc_and_object)
{
    static const char manifest[] = "apiVersion: batch/v1\n"
                                   "kind: Job\n"
                                   "metadata: {name: train}\n"
                                   "---\n"
                                   "# only a comment\n"
                                   "---\n"
                                   "apiVersion: kueue.x-k8s.io/v1beta2\n"
                                   "kind: ClusterQueue\n"
                                   "metadata:\n"
                                   "  name: cq-a\n"
                                   "  annotations:\n"
                                   "    sim.sluice.dev/at: 5s\n"
                                   "spec:\n"
                                   "  resourceGroups:\n"
                                   "  - coveredResources: [cpu]\n"
                                   "    flavors:\n"
                                   "    - name: default\n"
                                   "      resources:\n"
                                   "      - name: cpu\n"
                                   "        nominalQuota: 12x\n";
    char dir[] = "/tmp/sluice-crds-XXXXXX", sub[64], file[96], link[96];
    crd_set_t set;
    diags_t d;
    crd_scan_stats_t stats = {0, 0, 0};
    err_msg_t msg = {{0}};
    FILE *f;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(sub, sizeof(sub), "%s/team", dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    snprintf(file, sizeof(file), "%s/queues.yaml", sub);
    f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fputs(manifest, f);
    fclose(f);
    snprintf(link, sizeof(link), "%s/loop", sub); /* a symlinked directory is not followed */
    ck_assert_int_eq(symlink(dir, link), 0);

    load_crds(&set);
    diags_init(&d);
    ck_assert_int_eq(crd_set_validate_tree(&set, dir, &d, &stats, &msg), ERR_OK);
    ck_assert_uint_eq(stats.files, 1);
    ck_assert_uint_eq(stats.documents, 2);
    ck_assert_uint_eq(stats.checked, 1);
    print_diags("scan", &d);
    ck_assert_uint_eq(d.len, 1);
    ck_assert_ptr_nonnull(strstr(d.items[0].path, "/team/queues.yaml: doc 2 (ClusterQueue cq-a): "
                                                  "spec.resourceGroups[0].flavors[0].resources[0]."
                                                  "nominalQuota"));
    diags_fini(&d);

    /* A directory that does not exist holds no examples; a YAML syntax error is reported. */
    diags_init(&d);
    snprintf(sub, sizeof(sub), "%s/none", dir);
    ck_assert_int_eq(crd_set_validate_tree(&set, sub, &d, &stats, &msg), ERR_OK);
    f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fputs("kind: [unclosed\n", f);
    fclose(f);
    ck_assert_int_eq(crd_set_validate_tree(&set, dir, &d, &stats, &msg), ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(msg.text, "queues.yaml"));
    diags_fini(&d);
    crd_set_fini(&set);

    unlink(file);
    unlink(link);
    snprintf(sub, sizeof(sub), "%s/team", dir);
    rmdir(sub);
    rmdir(dir);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* Patterns                                                                                   */
/* ------------------------------------------------------------------------------------------ */

static bool pattern_matches(const char *pattern, const char *text)
{
    regex_t re;
    err_msg_t msg;
    bool ok;

    ck_assert_msg(crd_pattern_compile(pattern, &re, &msg) == ERR_OK, "%s", msg.text);
    ok = regexec(&re, text, 0, NULL, 0) == 0;
    regfree(&re);
    return ok;
}

START_TEST(test_patterns_translate_to_posix)
{
    static const char dns[] = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
    static const char qty[] =
        "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+"
        "(\\.[0-9]*)?)|(\\.[0-9]+))))?$";
    static const char *const qty_ok[] = {"0",    "100m",  "1Gi", "1.5",  ".5", "1.",
                                         "+1e3", "-2E-2", "8Ei", "250n", "1k", "3M"};
    static const char *const qty_bad[] = {"",   "Gi",  "1iB", "1.2.3", "1 Gi",
                                          "1e", "1KI", "--1", "1x"};
    regex_t re;
    err_msg_t msg;

    ck_assert(pattern_matches(dns, "a100.example-1.com"));
    ck_assert(!pattern_matches(dns, "-a"));
    ck_assert(!pattern_matches(dns, "A100"));
    ck_assert(!pattern_matches(dns, "a..b"));
    ck_assert(!pattern_matches(dns, "a_b"));
    for (size_t i = 0; i < ARRAY_SIZE(qty_ok); i++)
        ck_assert_msg(pattern_matches(qty, qty_ok[i]), "%s", qty_ok[i]);
    for (size_t i = 0; i < ARRAY_SIZE(qty_bad); i++)
        ck_assert_msg(!pattern_matches(qty, qty_bad[i]), "%s", qty_bad[i]);
    /* \d, a lazy quantifier, a non-capturing group, an unanchored match */
    ck_assert(pattern_matches("^\\d{2}-(?:ab)+?$", "12-abab"));
    ck_assert(!pattern_matches("^\\d{2}$", "1a"));
    ck_assert(pattern_matches("b\\.c", "ab.cd"));
    ck_assert(!pattern_matches("b\\.c", "abxcd"));
    /* constructs with no POSIX equivalent are refused, not mistranslated */
    ck_assert(pattern_matches("(?i)^abc$", "ABc"));
    ck_assert(pattern_matches("^(?i)[a-z]+$", "PodSet"));
    ck_assert_int_eq(crd_pattern_compile("a(?i)bc", &re, &msg), ERR_UNSUPPORTED);
    ck_assert_int_eq(crd_pattern_compile("\\bword", &re, &msg), ERR_UNSUPPORTED);
    ck_assert_int_eq(crd_pattern_compile("[\\-a]", &re, &msg), ERR_UNSUPPORTED);
    ck_assert_int_eq(crd_pattern_compile("[a-", &re, &msg), ERR_PARSE);
    ck_assert_int_eq(crd_pattern_compile("(a", &re, &msg), ERR_PARSE);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("crds");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_crds_are_accepted_and_structural);
    tcase_add_test(tc, test_crds_one_file_per_kind);
    tcase_add_test(tc, test_crds_printer_columns_as_kueue);
    tcase_add_test(tc, test_crds_conversion_webhook);
    tcase_add_test(tc, test_crds_defaults_and_cel_messages);
    tcase_add_test(tc, test_examples_validate_against_crds);
    tcase_add_test(tc, test_schema_rejects_non_structural);
    tcase_add_test(tc, test_schema_rejects_bad_defaults_enums_and_lists);
    tcase_add_test(tc, test_crd_check_catches_mistakes);
    tcase_add_test(tc, test_instances_valid);
    tcase_add_test(tc, test_instances_invalid);
    tcase_add_test(tc, test_other_groups_are_skipped);
    tcase_add_test(tc, test_tree_scan_reports_file_doc_and_object);
    tcase_add_test(tc, test_patterns_translate_to_posix);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
