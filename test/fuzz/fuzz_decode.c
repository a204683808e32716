/* fuzz_decode -- libFuzzer target for object_decode() (JSON bytes -> typed object) and the
 * validation rules run on whatever decodes. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/object.h"
#include "model/requests.h"
#include "model/selector.h"
#include "model/validate.h"

#include "fuzz_check.h"

#include <jansson.h>
#include <stdint.h>
#include <string.h>

/* Validation of any decoded object (create, and an update to itself, which runs the update rules
 * with nothing changed) must terminate with well-formed diagnostics. */
static void validate_all(const object_t *obj)
{
    diags_t create, update;

    diags_init(&create);
    diags_init(&update);
    validate_object(obj, &create);
    validate_update(obj, obj, &update);
    for (size_t i = 0; i < update.len; i++) {
        CHECK(update.items[i].path != NULL && update.items[i].message != NULL);
        CHECK(update.items[i].message[0] != '\0');
    }
    /* (warnings too: the pod-template checks warn about what has no effect, validate.h) */
    for (size_t i = 0; i < create.len; i++)
        CHECK(create.items[i].path != NULL && create.items[i].message[0] != '\0');
    diags_fini(&create);
    diags_fini(&update);
}

/* The result must be consistent with the diagnostics, whatever the input. */
static void check_diags(const diags_t *d, err_t rc, const object_t *obj)
{
    size_t errors = 0;

    for (size_t i = 0; i < d->len; i++) {
        CHECK(d->items[i].path != NULL && d->items[i].message != NULL);
        CHECK(d->items[i].message[0] != '\0');
        if (!d->items[i].warning)
            errors++;
    }
    CHECK(errors == d->nerrors);
    if (rc == ERR_OK) {
        CHECK(d->nerrors == 0 && !d->oom);
        CHECK(obj->kind != KIND_UNKNOWN && obj->api_version != NULL);
    } else {
        CHECK(rc == ERR_INVALID || rc == ERR_NOMEM);
        CHECK(rc == ERR_NOMEM || d->nerrors > 0);
        CHECK(obj->kind == KIND_UNKNOWN && obj->api_version == NULL); /* zeroed */
    }
}

/* Exercise what callers do with a decoded object: sorted maps, bounded lists, request math and
 * selector matching must hold up on any accepted input. */
static void use_object(const object_t *obj)
{
    resource_list_t out = {0};

    switch (obj->kind) {
    case KIND_CLUSTER_QUEUE:
        CHECK(obj->u.cq.ngroups <= 16);
        for (size_t i = 0; i < obj->u.cq.ngroups; i++)
            CHECK(obj->u.cq.groups[i].nflavors <= 64);
        (void)selector_matches(&obj->u.cq.namespace_selector, &obj->u.cq.meta.labels);
        break;
    case KIND_WORKLOAD:
        CHECK(obj->u.wl.npod_sets >= 1 && obj->u.wl.npod_sets <= 18);
        for (size_t i = 0; i < obj->u.wl.npod_sets; i++) {
            const pod_set_t *ps = &obj->u.wl.pod_sets[i];
            CHECK(ps->name != NULL);
            for (size_t j = 1; j < ps->pod_requests.len; j++)
                CHECK(strcmp(ps->pod_requests.items[j - 1].name, ps->pod_requests.items[j].name) <
                      0);
            if (ps->count >= 0 &&
                requests_total(&ps->pod_requests, ps->count, &out, NULL) == ERR_OK)
                resource_list_fini(&out);
            (void)selector_terms_match(ps->spec.affinity_terms, ps->spec.naffinity_terms,
                                       &ps->template_labels);
        }
        break;
    case KIND_JOB:
        CHECK(requests_job_count(&obj->u.job) >= 0);
        if (requests_job(&obj->u.job, NULL, &out, NULL) == ERR_OK)
            resource_list_fini(&out);
        break;
    case KIND_RESOURCE_FLAVOR:
        for (size_t i = 1; i < obj->u.flavor.node_labels.len; i++)
            CHECK(strcmp(obj->u.flavor.node_labels.items[i - 1].key,
                         obj->u.flavor.node_labels.items[i].key) < 0);
        (void)selector_untolerated(obj->u.flavor.taints, obj->u.flavor.ntaints,
                                   obj->u.flavor.tolerations, obj->u.flavor.ntolerations, NULL, 0);
        break;
    default:
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t e;
    json_t *root = json_loadb((const char *)data, size, JSON_DECODE_ANY, &e);
    object_t obj;
    diags_t d;
    err_t rc;

    if (root == NULL)
        return 0;
    diags_init(&d);
    rc = object_decode(root, &obj, &d);
    check_diags(&d, rc, &obj);
    if (rc == ERR_OK) {
        use_object(&obj);
        validate_all(&obj);
    }
    object_fini(&obj);
    CHECK(obj.kind == KIND_UNKNOWN);
    diags_fini(&d);

    /* `sluice check`'s one pass: an object kept despite its decode errors must be as fit for
     * the validators and for the callers as a valid one. */
    diags_init(&d);
    rc = object_decode_keep(root, &obj, &d);
    CHECK(rc == ERR_OK || rc == ERR_INVALID || rc == ERR_NOMEM);
    if (rc == ERR_NOMEM)
        CHECK(obj.kind == KIND_UNKNOWN);
    if (rc != ERR_NOMEM && obj.kind != KIND_UNKNOWN) {
        CHECK(obj.api_version != NULL);
        use_object(&obj);
        validate_all(&obj);
    }
    object_fini(&obj);
    diags_fini(&d);
    json_decref(root);
    return 0;
}
