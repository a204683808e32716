/* fuzz_admission -- AdmissionReview bodies through every webhook path: never crash, and every
 * answer is either a well-formed AdmissionReview (200) or a 4xx with a reason. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/admission.h"

#include "fuzz_check.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const paths[] = {
    "/validate-kueue-x-k8s-io-v1beta2-clusterqueue",
    "/mutate-kueue-x-k8s-io-v1beta2-clusterqueue",
    "/validate-kueue-x-k8s-io-v1beta2-workload",
    "/validate-kueue-x-k8s-io-v1beta2-localqueue",
    "/validate-kueue-x-k8s-io-v1beta2-cohort",
    "/mutate-batch-v1-job",
    "/validate-batch-v1-job",
    "/validate-kueue-x-k8s-io-v1beta2-resourceflavor",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const hook_admission_env_t env;
    const char *path;
    char *out = NULL;
    int status = 0;
    err_msg_t msg;
    err_t rc;

    if (size < 1)
        return 0;
    /* the first byte picks the webhook */
    path = paths[data[0] % (sizeof(paths) / sizeof(paths[0]))];
    rc = hook_admission_review(&env, path, (const char *)data + 1, size - 1, &status, &out, &msg);
    if (rc == ERR_OK) {
        json_t *doc = json_loads(out, 0, NULL), *resp = json_object_get(doc, "response");
        if (status != 200 || doc == NULL || !json_is_boolean(json_object_get(resp, "allowed")) ||
            !json_is_string(json_object_get(resp, "uid")))
            abort();
        if (json_is_false(json_object_get(resp, "allowed")) &&
            !json_is_string(json_object_get(json_object_get(resp, "status"), "message")))
            abort();
        json_decref(doc);
        free(out);
    } else if (out != NULL || status < 400 || status > 599 || msg.text[0] == '\0') {
        abort();
    }
    return 0;
}
