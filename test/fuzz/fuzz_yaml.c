/* fuzz_yaml -- libFuzzer target for the YAML loader: no crash, no leak, valid trees only. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/yaml.h"

#include "fuzz_check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct seen_s {
    size_t docs;
    size_t next_index;
} seen_t;

/* Nodes in `j`, checking the nesting limit on the way (depth counts open collections). */
static size_t walk(json_t *j, size_t depth)
{
    size_t n = 1, i;
    const char *key;
    json_t *child;

    CHECK(j != NULL);
    if (json_is_object(j) || json_is_array(j))
        CHECK(depth < YAML_MAX_DEPTH);
    if (json_is_object(j)) {
        json_object_foreach(j, key, child)
        {
            CHECK(key != NULL);
            n += walk(child, depth + 1);
        }
    } else if (json_is_array(j)) {
        json_array_foreach(j, i, child) n += walk(child, depth + 1);
    } else if (json_is_real(j)) {
        double d = json_real_value(j);
        CHECK(d == d && d - d == 0); /* finite: JSON cannot hold inf or NaN */
    }
    return n;
}

static err_t on_doc(void *ctx, size_t index, int line, json_t *doc)
{
    seen_t *seen = ctx;
    char *text;
    json_t *back;
    json_error_t jerr;

    CHECK(index >= seen->next_index);
    CHECK(line >= 1);
    CHECK(doc != NULL && !json_is_null(doc));
    seen->next_index = index + 1;
    seen->docs++;
    CHECK(walk(doc, 0) <= YAML_MAX_NODES);
    /* Every tree serialises to JSON that reads back equal. */
    text = json_dumps(doc, JSON_ENCODE_ANY | JSON_COMPACT);
    CHECK(text != NULL);
    back = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    CHECK(back != NULL);
    CHECK(json_equal(back, doc));
    json_decref(back);
    free(text);
    return ERR_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    seen_t seen = {0, 0}, seen_file = {0, 0};
    err_msg_t msg, msg_file;
    err_t rc, rc_file;
    FILE *f;

    msg.text[0] = '\0';
    rc = yaml_load_string((const char *)data, size, on_doc, &seen, &msg);
    if (rc != ERR_OK) {
        CHECK(rc == ERR_PARSE);
        CHECK(strncmp(msg.text, "line ", 5) == 0);
    }
    /* The streaming reader must agree with the string reader, error text included. */
    if (size == 0)
        return 0;
    f = fmemopen((void *)data, size, "r");
    CHECK(f != NULL);
    msg_file.text[0] = '\0';
    rc_file = yaml_load_file(f, on_doc, &seen_file, &msg_file);
    fclose(f);
    CHECK(rc_file == rc);
    CHECK(seen_file.docs == seen.docs);
    if (rc != ERR_OK)
        CHECK(strcmp(msg.text, msg_file.text) == 0);
    return 0;
}
