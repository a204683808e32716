/* test_yamlw -- the YAML writer: exact output for a manifest, and every tricky scalar reads back
 * through the YAML loader as the same JSON. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/yaml.h"
#include "model/yamlw.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, JSON_ALLOW_NUL, &e);

    if (j == NULL)
        ck_abort_msg("bad test JSON: %s: %s", e.text, text);
    return j;
}

typedef struct docs_s {
    json_t *items[8];
    size_t n;
} docs_t;

static err_t on_doc(void *ctx, size_t index, int line, json_t *doc)
{
    docs_t *d = ctx;

    (void)index;
    (void)line;
    ck_assert_uint_lt(d->n, 8);
    d->items[d->n++] = json_incref(doc);
    return ERR_OK;
}

static char *write1(const json_t *v)
{
    const json_t *docs[1] = {v};
    char *out = NULL;
    size_t len = 0;
    err_msg_t msg;

    ck_assert_msg(yamlw_string(docs, 1, &out, &len, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_uint_eq(strlen(out), len);
    return out;
}

/* Write `json`, read it back: the same value. */
static void round_trip(const char *json)
{
    json_t *v = J(json);
    char *text = write1(v);
    docs_t d = {0};
    err_msg_t msg;

    ck_assert_msg(yaml_load_string(text, strlen(text), on_doc, &d, &msg) == ERR_OK, "%s: %s",
                  msg.text, text);
    ck_assert_uint_eq(d.n, 1);
    if (!json_equal(d.items[0], v)) {
        char *back = json_dumps(d.items[0], JSON_COMPACT | JSON_ENCODE_ANY);
        ck_abort_msg("%s\nwrote:\n%s\nread back: %s", json, text, back);
    }
    json_decref(d.items[0]);
    json_decref(v);
    free(text);
}

START_TEST(manifest_text)
{
    json_t *v = J("{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\","
                  "\"metadata\":{\"name\":\"team-a\",\"labels\":{}},\"spec\":{\"cohortName\":"
                  "\"ml\",\"resourceGroups\":[{\"coveredResources\":[\"cpu\",\"nvidia.com/gpu\"],"
                  "\"flavors\":[{\"name\":\"a100\",\"resources\":[{\"name\":\"cpu\","
                  "\"nominalQuota\":64},{\"name\":\"nvidia.com/gpu\",\"nominalQuota\":\"8\"}]}]}],"
                  "\"namespaceSelector\":{},\"x\":[]}}");
    char *text = write1(v);

    ck_assert_str_eq(text, "apiVersion: kueue.x-k8s.io/v1beta2\n"
                           "kind: ClusterQueue\n"
                           "metadata:\n"
                           "  name: team-a\n"
                           "  labels: {}\n"
                           "spec:\n"
                           "  cohortName: ml\n"
                           "  resourceGroups:\n"
                           "  - coveredResources:\n"
                           "    - cpu\n"
                           "    - nvidia.com/gpu\n"
                           "    flavors:\n"
                           "    - name: a100\n"
                           "      resources:\n"
                           "      - name: cpu\n"
                           "        nominalQuota: 64\n"
                           "      - name: nvidia.com/gpu\n"
                           "        nominalQuota: '8'\n"
                           "  namespaceSelector: {}\n"
                           "  x: []\n");
    free(text);
    json_decref(v);
}
END_TEST

START_TEST(plain_when_safe)
{
    /* Quoted only when a plain scalar would read back as something else. */
    json_t *v = J("{\"a\":\"512Gi\",\"b\":\"team-a\",\"c\":\"1.5\",\"d\":\"yes\","
                  "\"e\":\"1.0.0\",\"f\":\"-x\",\"g\":\"off-peak\",\"h\":\"0x1F\","
                  "\"i\":\"2025-01-01T00:00:00Z\",\"10\":\"k\"}");
    char *text = write1(v);

    ck_assert_str_eq(text, "a: 512Gi\n"
                           "b: team-a\n"
                           "c: '1.5'\n"
                           "d: 'yes'\n"
                           "e: 1.0.0\n"
                           "f: -x\n"
                           "g: off-peak\n"
                           "h: '0x1F'\n"
                           "i: 2025-01-01T00:00:00Z\n"
                           "'10': k\n");
    free(text);
    json_decref(v);
    round_trip("{\"a\":\"512Gi\",\"b\":\"team-a\",\"c\":\"1.5\",\"d\":\"yes\","
               "\"e\":\"1.0.0\",\"f\":\"-x\",\"i\":\"2025-01-01T00:00:00Z\",\"10\":\"k\"}");
}
END_TEST

START_TEST(scalars_read_back)
{
    /* YAML 1.1 words and numbers that must stay strings, as values and as keys. */
    round_trip("{\"a\":[\"true\",\"False\",\"yes\",\"No\",\"on\",\"OFF\",\"y\",\"N\",\"null\","
               "\"~\",\"\",\"0x10\",\"010\",\"1e3\",\".5\",\".inf\",\"-.Inf\",\".NaN\",\"+1\","
               "\"-1\",\"1_000\",\"2025-01-01\",\"12:30\",\"<<\",\"8\",\"09\"]}");
    round_trip("{\"true\":1,\"no\":2,\"0x10\":3,\"\":4,\"<<\":5,\"~\":6,\"1.5\":7}");
    /* Strings libyaml has to quote for syntax. */
    round_trip("{\"a\":[\"- x\",\"a: b\",\"#c\",\"x #y\",\" lead\",\"trail \",\"[x]\",\"{y}\","
               "\"'q'\",\"\\\"dq\\\"\",\"!tag\",\"&anchor\",\"*alias\",\"%p\",\"@at\",\"`bq\","
               "\"?q\",\"|l\",\">f\",\"a,b\"]}");
    /* Multi-line, control characters, NUL, non-ASCII. */
    round_trip("{\"d\":\"line one\\nline two\\n\",\"e\":\"no newline at end\\nx\","
               "\"f\":\"trailing spaces  \\nx\",\"g\":\"tab\\there\",\"h\":\"nul\\u0000byte\","
               "\"i\":\"\\u00e9t\\u00e9 \\u2028 \\ufeff\",\"j\":\"\\u0001\\u007f\",\"k\":\"\\n\"}");
    /* Numbers, booleans, null; reals keep being reals. */
    round_trip("{\"n\":[0,-1,9223372036854775807,-9223372036854775808,1.0,-0.0,0.1,1.5e-07,"
               "1e+21,123456789.125,1e300,true,false,null]}");
    /* Nesting and empty collections. */
    round_trip("{\"a\":{\"b\":[[],[{}],{\"c\":[[1,[2]]]}],\"d\":{}},\"e\":[{\"f\":null}]}");
}
END_TEST

START_TEST(documents)
{
    const json_t *docs[3];
    json_t *a = J("{\"kind\":\"A\"}"), *b = J("{\"kind\":\"B\",\"x\":[1]}"), *c = J("{}");
    char *out = NULL;
    size_t len = 0;
    docs_t d = {0};
    err_msg_t msg;
    FILE *f;
    char buf[256];
    size_t n;

    docs[0] = a;
    docs[1] = b;
    docs[2] = c;
    ck_assert_int_eq(yamlw_string(docs, 3, &out, &len, &msg), ERR_OK);
    ck_assert_str_eq(out, "kind: A\n---\nkind: B\nx:\n- 1\n--- {}\n");
    ck_assert_int_eq(yaml_load_string(out, len, on_doc, &d, &msg), ERR_OK);
    ck_assert_uint_eq(d.n, 3);
    ck_assert(json_equal(d.items[0], a) && json_equal(d.items[1], b) && json_equal(d.items[2], c));
    for (size_t i = 0; i < d.n; i++)
        json_decref(d.items[i]);
    free(out);
    /* No documents: an empty string. */
    ck_assert_int_eq(yamlw_string(docs, 0, &out, &len, &msg), ERR_OK);
    ck_assert_uint_eq(len, 0);
    free(out);
    /* To a FILE, and a write error reported as ERR_IO. */
    f = tmpfile();
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(yamlw_file(f, docs, 2, &msg), ERR_OK);
    rewind(f);
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    ck_assert_str_eq(buf, "kind: A\n---\nkind: B\nx:\n- 1\n");
    fclose(f);
    f = fopen("/dev/full", "w");
    if (f != NULL) {
        setvbuf(f, NULL, _IONBF, 0);
        ck_assert_int_eq(yamlw_file(f, docs, 2, &msg), ERR_IO);
        fclose(f);
    }
    json_decref(a);
    json_decref(b);
    json_decref(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("yamlw");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, manifest_text);
    tcase_add_test(tc, plain_when_safe);
    tcase_add_test(tc, scalars_read_back);
    tcase_add_test(tc, documents);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
