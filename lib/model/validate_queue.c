/* validate_queue -- rules of ResourceFlavor, ClusterQueue, Cohort and LocalQueue. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/validate_int.h"

#include "model/names.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- ResourceFlavor ---------------------------------------------------------------------- */

void validate__flavor(const flavor_t *rf, diags_t *d)
{
    char p[VPATH];
    bool bad_effect = false;

    /* CRD rules on spec and spec.nodeTaints. */
    if (rf->topology_name != NULL && rf->node_labels.len == 0)
        validate__err(d, "spec", "at least one nodeLabel is required when topology is set");
    for (size_t i = 0; i < rf->ntaints; i++)
        if (rf->taints[i].effect == TAINT_EFFECT_ANY)
            bad_effect = true;
    if (bad_effect)
        validate__err(d, "spec.nodeTaints", MSG_EFFECTS);

    /* Webhook: ValidateResourceFlavor. */
    validate__labels(d, "spec.nodeLabels", &rf->node_labels);
    for (size_t i = 0; i < rf->ntaints; i++) {
        const taint_t *t = &rf->taints[i];
        names_msgs_t m = {.n = 0};

        validate__pathf(p, "spec.nodeTaints[%zu].key", i);
        validate__label_name(d, p, t->key);
        validate__pathf(p, "spec.nodeTaints[%zu].value", i);
        names_label_value(t->value ? t->value : "", &m);
        validate__emit_joined(d, p, &m, ";");
        for (size_t j = 0; j < i; j++) {
            if (rf->taints[j].effect == t->effect &&
                validate__str_eq_empty(rf->taints[j].key, t->key)) {
                char k[512], v[512];
                validate__pathf(p, "spec.nodeTaints[%zu]", i);
                diag_quote(t->key, k, sizeof(k));
                if (t->value != NULL && t->value[0] != '\0') {
                    diag_quote(t->value, v, sizeof(v));
                    validate__err(
                        d, p,
                        "Duplicate value: {\"key\":%s,\"value\":%s,\"effect\":\"%s\"}: taints "
                        "must be unique by key and effect pair",
                        k, v, validate__effect_name(t->effect));
                } else {
                    validate__err(
                        d, p,
                        "Duplicate value: {\"key\":%s,\"effect\":\"%s\"}: taints must be unique "
                        "by key and effect pair",
                        k, validate__effect_name(t->effect));
                }
                break;
            }
        }
    }
    validate__tolerations_cel(d, "spec.tolerations", rf->tolerations, rf->ntolerations);
    validate__toleration_keys(d, "spec.tolerations", rf->tolerations, rf->ntolerations);
}

void validate__flavor_update(const flavor_t *old, const flavor_t *rf, diags_t *d)
{
    validate__flavor(rf, d);
    if (old->topology_name != NULL && !validate__str_eq(old->topology_name, rf->topology_name))
        validate__err(d, "spec", "topologyName is immutable when topologyName is set");
}

/* ---- ClusterQueue and Cohort ----------------------------------------------------------- */

/* validateFairSharing: the weight, at the fairSharing path itself. */
static void check_fair_weight(diags_t *d, const char *path, bool has, quantity_t w)
{
    quantity_t one_nano = {.nano = 1, .format = QUANTITY_DECIMAL_SI};

    if (!has)
        return;
    if (quantity_sign(w) < 0)
        validate__err(d, path, MSG_NEGATIVE);
    if (quantity_sign(w) > 0 && quantity_cmp(w, one_nano) <= 0)
        validate__err(d, path, "When not 0, weight must be > 10e-9");
}

/* Shared by ClusterQueue (is_cohort false) and Cohort: the CRD rule of ResourceGroup, then the
 * webhook's validateResourceGroups. `has_parent`: cohortName / parentName set. */
static void check_resource_groups(diags_t *d, const resource_group_t *g, size_t ng, bool has_parent,
                                  bool is_cohort)
{
    char p[VPATH], q[VPATH];

    for (size_t i = 0; i < ng; i++) {
        for (size_t j = 0; j < g[i].nflavors; j++) {
            if (g[i].flavors[j].nresources != g[i].ncovered) {
                validate__pathf(p, "spec.resourceGroups[%zu]", i);
                validate__err(d, p,
                              "flavors must have the same number of resources as the "
                              "coveredResources");
                break;
            }
        }
    }

    for (size_t i = 0; i < ng; i++) {
        const resource_group_t *rg = &g[i];
        for (size_t j = 0; j < rg->ncovered; j++) {
            names_msgs_t m = {.n = 0};
            bool dup = false;
            validate__pathf(p, "spec.resourceGroups[%zu].coveredResources[%zu]", i, j);
            names_label_key(rg->covered[j] ? rg->covered[j] : "", &m);
            validate__emit_each(d, p, &m);
            for (size_t i2 = 0; i2 <= i && !dup; i2++)
                for (size_t j2 = 0; j2 < (i2 == i ? j : g[i2].ncovered) && !dup; j2++)
                    dup = validate__str_eq(g[i2].covered[j2], rg->covered[j]);
            if (dup) {
                char v[512];
                validate__err(d, p, "Duplicate value: %s",
                              diag_quote(rg->covered[j], v, sizeof(v)));
            }
        }
        for (size_t j = 0; j < rg->nflavors; j++) {
            const flavor_quotas_t *fq = &rg->flavors[j];
            bool dup = false;
            for (size_t k = 0; k < fq->nresources && k < rg->ncovered; k++) {
                const resource_quota_t *rq = &fq->resources[k];
                validate__pathf(p, "spec.resourceGroups[%zu].flavors[%zu].resources[%zu]", i, j, k);
                if (!validate__str_eq(rq->name, rg->covered[k])) {
                    validate__pathf(q, "%s.name", p);
                    validate__err(d, q, "must match the name in coveredResources");
                }
                validate__pathf(q, "%s.nominalQuota", p);
                validate__quantity_nonneg(d, q, rq->nominal);
                if (rq->has_borrowing_limit) {
                    validate__pathf(q, "%s.borrowingLimit", p);
                    if (!has_parent)
                        validate__err(d, q, "must be nil when %s is empty",
                                      is_cohort ? "parent" : "cohort");
                    validate__quantity_nonneg(d, q, rq->borrowing_limit);
                }
                if (rq->has_lending_limit) {
                    validate__pathf(q, "%s.lendingLimit", p);
                    validate__quantity_nonneg(d, q, rq->lending_limit);
                    if (!has_parent)
                        validate__err(d, q, "must be nil when %s is empty",
                                      is_cohort ? "parent" : "cohort");
                    if (!is_cohort && quantity_cmp(rq->lending_limit, rq->nominal) > 0)
                        validate__err(d, q, MSG_LEND_NOMINAL);
                }
            }
            for (size_t i2 = 0; i2 <= i && !dup; i2++)
                for (size_t j2 = 0; j2 < (i2 == i ? j : g[i2].nflavors) && !dup; j2++)
                    dup = validate__str_eq(g[i2].flavors[j2].name, fq->name);
            if (dup) {
                char v[512];
                validate__pathf(p, "spec.resourceGroups[%zu].flavors[%zu].name", i, j);
                validate__err(d, p, "Duplicate value: %s", diag_quote(fq->name, v, sizeof(v)));
            }
        }
    }
}

static const char *flavor_quotas_key(const void *items, size_t i)
{
    return ((const flavor_quotas_t *)items)[i].name;
}

static const char *resource_quota_key(const void *items, size_t i)
{
    return ((const resource_quota_t *)items)[i].name;
}

static const char *check_rule_key(const void *items, size_t i)
{
    return ((const admission_check_rule_t *)items)[i].name;
}

/* Structural schema: resourceGroups[i].flavors and flavors[j].resources are list-maps keyed by
 * name (ClusterQueue and Cohort share the ResourceGroup type). */
static void check_groups_list_maps(diags_t *d, const resource_group_t *g, size_t ng)
{
    char p[VPATH];

    for (size_t i = 0; i < ng; i++) {
        validate__pathf(p, "spec.resourceGroups[%zu].flavors", i);
        validate__list_map(d, p, "name", g[i].nflavors, flavor_quotas_key, g[i].flavors);
        for (size_t j = 0; j < g[i].nflavors; j++) {
            validate__pathf(p, "spec.resourceGroups[%zu].flavors[%zu].resources", i, j);
            validate__list_map(d, p, "name", g[i].flavors[j].nresources, resource_quota_key,
                               g[i].flavors[j].resources);
        }
    }
}

/* The flavors a ClusterQueue names, sorted and unique (Go's sets.List of AllFlavors); `out` has
 * room for every flavor of every group. Returns the count. */
static size_t all_flavors(const resource_group_t *g, size_t ng, const char **out)
{
    size_t n = 0;

    for (size_t i = 0; i < ng; i++)
        for (size_t j = 0; j < g[i].nflavors; j++)
            out[n++] = g[i].flavors[j].name ? g[i].flavors[j].name : "";
    return validate__sorted_set(out, n);
}

static size_t count_flavors(const resource_group_t *g, size_t ng)
{
    size_t n = 0;

    for (size_t i = 0; i < ng; i++)
        n += g[i].nflavors;
    return n;
}

/* The same set of strings (order and repeats aside). */
static bool strv_same_set(char *const *a, size_t na, char *const *b, size_t nb)
{
    for (size_t i = 0; i < na; i++)
        if (!validate__strv_has((const char *const *)b, nb, a[i]))
            return false;
    for (size_t i = 0; i < nb; i++)
        if (!validate__strv_has((const char *const *)a, na, b[i]))
            return false;
    return true;
}

/*
 * validateAdmissionCheckOnFlavors: every onFlavors entry names a flavor of the queue
 * (field.NotSupported). Kueue lists the allowed flavors in Go map order, which varies from call
 * to call; sluice prints them sorted. On update (`old` non-NULL) with the default feature gates
 * (RejectUpdatesToCQWithInvalidOnFlavors off), a rule whose onFlavors did not change is not
 * checked again while the queue's flavors stay the same, so legacy queues stay updatable.
 */
static void check_on_flavors(diags_t *d, const cluster_queue_t *cq, const cluster_queue_t *old)
{
    size_t total = count_flavors(cq->groups, cq->ngroups), nvalid;
    bool same_flavors = false;
    const char **valid;
    char p[VPATH];

    if (cq->ncheck_rules == 0)
        return;
    valid = calloc(total ? total : 1, sizeof(*valid));
    if (valid == NULL) {
        d->oom = true;
        return;
    }
    nvalid = all_flavors(cq->groups, cq->ngroups, valid);
    if (old != NULL && old->ncheck_rules > 0) {
        size_t ototal = count_flavors(old->groups, old->ngroups), novalid;
        const char **ov = calloc(ototal ? ototal : 1, sizeof(*ov));
        if (ov == NULL) {
            d->oom = true;
            free(valid);
            return;
        }
        novalid = all_flavors(old->groups, old->ngroups, ov);
        same_flavors = novalid == nvalid;
        for (size_t i = 0; same_flavors && i < nvalid; i++)
            same_flavors = strcmp(ov[i], valid[i]) == 0;
        free(ov);
    }
    for (size_t i = 0; i < cq->ncheck_rules; i++) {
        const admission_check_rule_t *r = &cq->check_rules[i];
        bool unchanged = false;

        for (size_t k = 0; same_flavors && k < old->ncheck_rules && !unchanged; k++)
            unchanged =
                validate__str_eq(old->check_rules[k].name, r->name) &&
                strv_same_set(old->check_rules[k].on_flavors, old->check_rules[k].non_flavors,
                              r->on_flavors, r->non_flavors);
        if (unchanged)
            continue;
        for (size_t j = 0; j < r->non_flavors; j++) {
            if (validate__strv_has(valid, nvalid, r->on_flavors[j]))
                continue;
            validate__pathf(p, "spec.admissionChecksStrategy.admissionChecks[%zu].onFlavors[%zu]",
                            i, j);
            validate__err_not_supported(d, p, r->on_flavors[j], valid, nvalid);
        }
    }
    free(valid);
}

/* validateTotalFlavors, validateTotalCoveredResources, validateFlavorResourceCombinations. */
static void check_group_totals(diags_t *d, const resource_group_t *g, size_t ng)
{
    size_t flavors = 0, covered = 0;
    char p[VPATH];

    for (size_t i = 0; i < ng; i++) {
        flavors += g[i].nflavors;
        covered += g[i].ncovered;
    }
    if (flavors > 256)
        validate__err(d, "spec.resourceGroups",
                      "total number of flavors across all resourceGroups must be ≤ 256, got %zu",
                      flavors);
    if (covered > 256)
        validate__err(
            d, "spec.resourceGroups",
            "total number of covered resources across all resourceGroups must be ≤ 256, got %zu",
            covered);
    for (size_t i = 0; i < ng; i++) {
        size_t combos = 0;
        for (size_t j = 0; j < g[i].nflavors; j++)
            combos += g[i].flavors[j].nresources;
        if (combos > 512) {
            validate__pathf(p, "spec.resourceGroups[%zu]", i);
            validate__err(
                d, p,
                "number of flavor-resource combinations in a resourceGroup must be ≤ 512, got %zu",
                combos);
        }
    }
}

static const char *preference_name(fungibility_pref_t p)
{
    return p == FUNGIBILITY_PREF_PREEMPTION_OVER_BORROWING ? "PreemptionOverBorrowing"
                                                           : "BorrowingOverPreemption";
}

/* `old` is NULL on create. */
void validate__cluster_queue(const cluster_queue_t *cq, const cluster_queue_t *old, diags_t *d)
{
    bool has_cohort = cq->cohort != NULL && cq->cohort[0] != '\0';
    bool both_try_next = cq->when_can_borrow == FUNGIBILITY_TRY_NEXT_FLAVOR &&
                         cq->when_can_preempt == FUNGIBILITY_TRY_NEXT_FLAVOR;
    bool borrow_without_cohort = false;

    /* Structural schema: list-map keys. */
    check_groups_list_maps(d, cq->groups, cq->ngroups);
    validate__list_map(d, "spec.admissionChecksStrategy.admissionChecks", "name", cq->ncheck_rules,
                       check_rule_key, cq->check_rules);
    for (size_t i = 0; i < cq->ncheck_rules; i++) {
        char p[VPATH];
        validate__pathf(p, "spec.admissionChecksStrategy.admissionChecks[%zu].onFlavors", i);
        validate__list_set(d, p, cq->check_rules[i].on_flavors, cq->check_rules[i].non_flavors);
    }

    /* CRD rules: spec, spec.resourceGroups[i] (in check_resource_groups), flavorFungibility,
     * preemption. */
    for (size_t i = 0; i < cq->ngroups && !has_cohort; i++)
        for (size_t j = 0; j < cq->groups[i].nflavors; j++)
            for (size_t k = 0; k < cq->groups[i].flavors[j].nresources; k++)
                if (cq->groups[i].flavors[j].resources[k].has_borrowing_limit)
                    borrow_without_cohort = true;
    if (borrow_without_cohort)
        validate__err(d, "spec", "borrowingLimit must be nil when cohort is empty");
    if (cq->preference != FUNGIBILITY_PREF_UNSET && !both_try_next)
        validate__err(d, "spec.flavorFungibility",
                      "preference can only be set when both whenCanBorrow and whenCanPreempt are "
                      "TryNextFlavor");
    if (cq->reclaim_within_cohort == PREEMPT_NEVER && cq->borrow_within_cohort != PREEMPT_NEVER)
        validate__err(d, "spec.preemption",
                      "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never");

    /* Webhook: validateClusterQueueSpec, in Kueue's order. */
    check_resource_groups(d, cq->groups, cq->ngroups, has_cohort, false);
    validate__label_selector(d, "spec.namespaceSelector", &cq->namespace_selector);
    if (cq->preference != FUNGIBILITY_PREF_UNSET && !both_try_next)
        validate__err(d, "spec.flavorFungibility.preference",
                      "preference \"%s\" requires both whenCanBorrow and whenCanPreempt to be "
                      "TryNextFlavor",
                      preference_name(cq->preference));
    check_fair_weight(d, "spec.fairSharing", cq->has_fair_weight, cq->fair_weight);
    check_group_totals(d, cq->groups, cq->ngroups);
    /* ValidateClusterQueue / ValidateClusterQueueUpdate. */
    check_on_flavors(d, cq, old);
}

void validate__cohort(const cohort_t *co, diags_t *d)
{
    bool has_parent = co->parent != NULL && co->parent[0] != '\0';

    check_groups_list_maps(d, co->groups, co->ngroups);
    check_fair_weight(d, "spec.fairSharing", co->has_fair_weight, co->fair_weight);
    check_resource_groups(d, co->groups, co->ngroups, has_parent, true);
}

/* ---- LocalQueue -------------------------------------------------------------------------- */

void validate__local_queue_update(const local_queue_t *old, const local_queue_t *lq, diags_t *d)
{
    if (!validate__str_eq_empty(old->cluster_queue, lq->cluster_queue))
        validate__err(d, "spec.clusterQueue", MSG_IMMUTABLE);
}

/* ---- Topology -------------------------------------------------------------------------------- */

#define TOPOLOGY_HOSTNAME  "kubernetes.io/hostname"
#define TOPOLOGY_LABEL_MAX 316
#define TOPOLOGY_LABEL_PATTERN                                                                     \
    "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-" \
    "9_.]*)?[A-Za-z0-9])$"

static bool lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool any_alnum(char c)
{
    return lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)* over s[0..n) */
static bool dns_subdomain_shape(const char *s, size_t n)
{
    size_t start = 0;

    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.') {
            if (!lower_alnum(s[i]) && s[i] != '-')
                return false;
            continue;
        }
        if (i == start || !lower_alnum(s[start]) || !lower_alnum(s[i - 1]))
            return false;
        start = i + 1;
    }
    return true;
}

/* The CRD's nodeLabel pattern (a qualified name, without the 63-character bound of a label key:
 * the CRD does not state one). */
static bool topology_label_shape(const char *s)
{
    const char *slash = strchr(s, '/'), *name = slash ? slash + 1 : s;
    size_t n = strlen(name);

    if (slash != NULL &&
        (strchr(name, '/') != NULL || !dns_subdomain_shape(s, (size_t)(slash - s))))
        return false;
    if (n == 0 || !any_alnum(name[0]) || !any_alnum(name[n - 1]))
        return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!any_alnum(name[i]) && name[i] != '-' && name[i] != '_' && name[i] != '.')
            return false;
    return true;
}

static bool topology_has_hostname_last(const topology_t *t)
{
    return t->nlevels > 0 && validate__str_eq(t->levels[t->nlevels - 1], TOPOLOGY_HOSTNAME);
}

void validate__topology(const topology_t *t, diags_t *d)
{
    char p[VPATH], q[512];
    bool dup = false, host_misplaced = false;

    /* Schema: each nodeLabel's length and pattern. */
    for (size_t i = 0; i < t->nlevels; i++) {
        const char *l = t->levels[i] ? t->levels[i] : "";
        validate__pathf(p, "spec.levels[%zu].nodeLabel", i);
        if (l[0] == '\0') {
            validate__err(d, p, "Invalid value: \"\": %s in body should be at least 1 chars long",
                          p);
            continue;
        }
        if (strlen(l) > TOPOLOGY_LABEL_MAX) {
            validate__err(d, p, "Too long: may not be more than %d bytes", TOPOLOGY_LABEL_MAX);
            continue;
        }
        if (!topology_label_shape(l))
            validate__err(d, p, "Invalid value: %s: %s in body should match '%s'",
                          diag_quote(l, q, sizeof(q)), p, TOPOLOGY_LABEL_PATTERN);
    }
    /* CEL rules on spec.levels, in the CRD's order. */
    for (size_t i = 0; i < t->nlevels; i++) {
        for (size_t j = 0; j < i; j++)
            dup = dup || validate__str_eq(t->levels[i], t->levels[j]);
        if (i + 1 < t->nlevels && validate__str_eq(t->levels[i], TOPOLOGY_HOSTNAME))
            host_misplaced = true;
    }
    if (dup)
        validate__err(d, "spec.levels", "must be unique");
    if (host_misplaced)
        validate__err(d, "spec.levels",
                      "the " TOPOLOGY_HOSTNAME " label can only be used at the lowest level of "
                      "topology");
}

void validate__topology_update(const topology_t *old, const topology_t *t, diags_t *d)
{
    bool same = old->nlevels == t->nlevels;

    for (size_t i = 0; same && i < t->nlevels; i++)
        same = validate__str_eq(old->levels[i], t->levels[i]);
    if (!same && !(topology_has_hostname_last(t) && topology_has_hostname_last(old)))
        validate__err(d, "spec.levels",
                      "levels are mutable only when " TOPOLOGY_HOSTNAME " is the lowest level "
                      "both before and after the change");
    validate__topology(t, d);
}

/* ---- AdmissionCheck ----------------------------------------------------------------------- */

/* The CRD's kind pattern: ^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$ */
static bool is_kind_name(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || !isalpha((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '-')
            return false;
    return true;
}

/*
 * AdmissionCheck has no webhook in Kueue: its rules are the CRD's (config/components/crd/bases/
 * kueue.x-k8s.io_admissionchecks.yaml): controllerName 1..253 and immutable, the parameters'
 * apiGroup a DNS-1123 subdomain (<= 253), kind a letter-led name (<= 63), name a DNS-1123 label.
 */
void validate__admission_check(const admission_check_t *ac, const admission_check_t *old,
                               diags_t *d)
{
    names_msgs_t m;

    if (ac->controller_name != NULL) {
        size_t n = strlen(ac->controller_name);
        if (n == 0)
            validate__err(d, "spec.controllerName",
                          "Invalid value: \"\": should be at least 1 "
                          "chars long");
        else if (n > 253)
            validate__err(d, "spec.controllerName", "Too long: may not be more than %d bytes", 253);
    }
    if (old != NULL && old->controller_name != NULL && ac->controller_name != NULL &&
        strcmp(old->controller_name, ac->controller_name) != 0)
        validate__err(d, "spec.controllerName", MSG_IMMUTABLE);
    if (!ac->has_parameters)
        return;
    if (ac->param_group != NULL) {
        names_dns1123_subdomain(ac->param_group, &m);
        names_report(d, "spec.parameters.apiGroup", ac->param_group, &m);
    }
    if (ac->param_kind != NULL && (strlen(ac->param_kind) > 63 || !is_kind_name(ac->param_kind)))
        validate__err(d, "spec.parameters.kind",
                      "Invalid value: \"%s\": should match '^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$' and "
                      "be at most 63 characters",
                      ac->param_kind);
    if (ac->param_name != NULL) {
        names_dns1123_label(ac->param_name, &m);
        names_report(d, "spec.parameters.name", ac->param_name, &m);
    }
}
