/* fuzz_convert_review -- ConversionReview bodies: never crash, always a ConversionReview answer
 * whose result is Success (same uid, one converted object per object, in order, each with the
 * desired apiVersion and the original metadata) or Failure with a message. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/conversion.h"

#include "fuzz_check.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *in = json_loadb((const char *)data, size, JSON_ALLOW_NUL, NULL);
    json_t *req = json_object_get(in, "request"), *ans, *resp, *result, *objs;
    char *out = NULL;
    err_msg_t msg;
    const char *status;

    CHECK(hook_conversion_review((const char *)data, size, &out, &msg) == ERR_OK);
    ans = json_loads(out, JSON_ALLOW_NUL, NULL);
    CHECK(ans != NULL);
    CHECK(strcmp(json_string_value(json_object_get(ans, "kind")), "ConversionReview") == 0);
    resp = json_object_get(ans, "response");
    result = json_object_get(resp, "result");
    status = json_string_value(json_object_get(result, "status"));
    CHECK(json_is_string(json_object_get(resp, "uid")));
    CHECK(status != NULL);
    if (strcmp(status, "Success") == 0) {
        json_t *src = json_object_get(req, "objects"), *o;
        const char *desired = json_string_value(json_object_get(req, "desiredAPIVersion"));
        size_t i;
        objs = json_object_get(resp, "convertedObjects");
        CHECK(json_equal(json_object_get(resp, "uid"), json_object_get(req, "uid")));
        CHECK(json_array_size(objs) == json_array_size(src));
        json_array_foreach(objs, i, o)
        {
            json_t *s = json_array_get(src, i);
            CHECK(strcmp(json_string_value(json_object_get(o, "apiVersion")), desired) == 0);
            CHECK(json_equal(json_object_get(o, "kind"), json_object_get(s, "kind")));
            CHECK(json_object_get(s, "metadata") == NULL ||
                  json_equal(json_object_get(o, "metadata"), json_object_get(s, "metadata")));
        }
    } else {
        CHECK(strcmp(status, "Failure") == 0);
        CHECK(json_string_length(json_object_get(result, "message")) > 0);
        CHECK(json_object_get(resp, "convertedObjects") == NULL);
    }
    json_decref(ans);
    json_decref(in);
    free(out);
    return 0;
}
