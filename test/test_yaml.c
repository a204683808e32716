/* test_yaml -- YAML -> jansson loader: documents, scalar resolution, anchors, limits, errors. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/yaml.h"

#include "util/util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Every document seen, as [index, line, doc]. */
typedef struct collect_s {
    json_t *docs;
    size_t stop_at; /* return ERR_CONFLICT from this document's callback (0: never) */
} collect_t;

static err_t collect(void *ctx, size_t index, int line, json_t *doc)
{
    collect_t *c = ctx;

    ck_assert_int_eq(
        json_array_append_new(c->docs, json_pack("[iiO]", (json_int_t)index, line, doc)), 0);
    if (c->stop_at != 0 && json_array_size(c->docs) == c->stop_at)
        return ERR_CONFLICT;
    return ERR_OK;
}

/* Load `yaml` and return the documents' compact JSON, "[index,line,doc] ..." joined by spaces;
 * NULL (with *rc and msg set) on error. The caller frees the text. */
static char *load_text(const char *yaml, err_t *rc, err_msg_t *msg)
{
    collect_t c = {json_array(), 0};
    size_t i;
    json_t *d;
    char *out = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&out, &len);

    ck_assert_ptr_nonnull(mem);
    *rc = yaml_load_string(yaml, strlen(yaml), collect, &c, msg);
    json_array_foreach(c.docs, i, d)
    {
        char *s = json_dumps(d, JSON_COMPACT | JSON_ENCODE_ANY);
        fprintf(mem, "%s%s", i ? " " : "", s);
        free(s);
    }
    fclose(mem);
    json_decref(c.docs);
    if (*rc != ERR_OK) {
        free(out);
        return NULL;
    }
    return out;
}

/* The single document of `yaml`, as compact JSON. */
static char *load_one(const char *yaml)
{
    err_t rc;
    err_msg_t msg = {""};
    collect_t c = {json_array(), 0};
    char *s;

    rc = yaml_load_string(yaml, strlen(yaml), collect, &c, &msg);
    ck_assert_msg(rc == ERR_OK, "%s: %s", yaml, msg.text);
    ck_assert_int_eq(json_array_size(c.docs), 1);
    s = json_dumps(json_array_get(json_array_get(c.docs, 0), 2), JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(c.docs);
    return s;
}

/* ------------------------------------------------------------------------------------------ */

START_TEST(test_multi_document_stream)
{
    err_t rc;
    err_msg_t msg;
    char *got = load_text("# leading comment\n"
                          "a: 1 # trailing comment\n"
                          "---\n"
                          "# a document with only comments\n"
                          "---\n"
                          "b: [x, z]\n"
                          "...\n"
                          "---\n"
                          "~\n"
                          "--- 7\n"
                          "---\n"
                          "- c\n",
                          &rc, &msg);

    /* The first document starts where its content does (line 2), after the comment. */
    ck_assert_str_eq(got, "[0,2,{\"a\":1}] [2,5,{\"b\":[\"x\",\"z\"]}] [4,10,7] [5,11,[\"c\"]]");
    free(got);
}
END_TEST

START_TEST(test_empty_inputs)
{
    err_t rc;
    err_msg_t msg;
    char *got;
    collect_t c = {json_array(), 0};

    got = load_text("", &rc, &msg);
    ck_assert_str_eq(got, "");
    free(got);
    got = load_text("# nothing\n\n   \n", &rc, &msg);
    ck_assert_str_eq(got, "");
    free(got);
    got = load_text("---\n---\n...\n", &rc, &msg);
    ck_assert_str_eq(got, "");
    free(got);
    ck_assert_int_eq(yaml_load_string(NULL, 0, collect, &c, &msg), ERR_OK);
    ck_assert_int_eq(json_array_size(c.docs), 0);
    json_decref(c.docs);
}
END_TEST

START_TEST(test_nested_structures)
{
    char *got = load_one("apiVersion: kueue.x-k8s.io/v1beta2\n"
                         "kind: ClusterQueue\n"
                         "metadata:\n"
                         "  name: team-a\n"
                         "  labels: {tier: \"1\", gpu: \"true\"}\n"
                         "spec:\n"
                         "  namespaceSelector: {}\n"
                         "  resourceGroups:\n"
                         "  - coveredResources: [cpu, nvidia.com/gpu]\n"
                         "    flavors:\n"
                         "    - name: a100\n"
                         "      resources:\n"
                         "      - name: cpu\n"
                         "        nominalQuota: 96\n"
                         "      - {name: nvidia.com/gpu, nominalQuota: 8, lendingLimit: \"2\"}\n"
                         "  empty: []\n");

    ck_assert_str_eq(got, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\","
                          "\"metadata\":{\"name\":\"team-a\",\"labels\":{\"tier\":\"1\","
                          "\"gpu\":\"true\"}},\"spec\":{\"namespaceSelector\":{},"
                          "\"resourceGroups\":[{\"coveredResources\":[\"cpu\",\"nvidia.com/gpu\"],"
                          "\"flavors\":[{\"name\":\"a100\",\"resources\":[{\"name\":\"cpu\","
                          "\"nominalQuota\":96},{\"name\":\"nvidia.com/gpu\",\"nominalQuota\":8,"
                          "\"lendingLimit\":\"2\"}]}]}],\"empty\":[]}}");
    free(got);
}
END_TEST

START_TEST(test_scalar_styles)
{
    char *got = load_one("lit: |\n  one\n  two\n"
                         "fold: >\n  one\n  two\n"
                         "strip: |-\n  x\n"
                         "single: 'it''s'\n"
                         "double: \"tab\\tq\\\"\\u00e9\"\n"
                         "nul: \"a\\0b\"\n"
                         "multi: plain\n  continued\n");

    ck_assert_str_eq(got, "{\"lit\":\"one\\ntwo\\n\",\"fold\":\"one two\\n\",\"strip\":\"x\","
                          "\"single\":\"it's\",\"double\":\"tab\\tq\\\"\xc3\xa9\","
                          "\"nul\":\"a\\u0000b\",\"multi\":\"plain continued\"}");
    free(got);
}
END_TEST

/* Plain and quoted scalars as a value: "v: <text>" must load as {"v": <json>}. The plain cases
 * follow go-yaml v2's resolve() (which sigs.k8s.io/yaml uses); see lib/model/yaml.c. */
static const struct {
    const char *text;
    const char *json;
} scalars[] = {
    /* booleans, in the case forms go-yaml v2 accepts */
    {"true", "true"},
    {"True", "true"},
    {"TRUE", "true"},
    {"tRUE", "\"tRUE\""},
    {"yes", "true"},
    {"Yes", "true"},
    {"YES", "true"},
    {"yEs", "\"yEs\""},
    {"y", "true"},
    {"Y", "true"},
    {"on", "true"},
    {"On", "true"},
    {"ON", "true"},
    {"false", "false"},
    {"False", "false"},
    {"FALSE", "false"},
    {"no", "false"},
    {"No", "false"},
    {"NO", "false"},
    {"n", "false"},
    {"N", "false"},
    {"off", "false"},
    {"Off", "false"},
    {"OFF", "false"},
    {"yess", "\"yess\""},
    {"nan", "\"nan\""},
    /* nulls */
    {"", "null"},
    {"~", "null"},
    {"null", "null"},
    {"Null", "null"},
    {"NULL", "null"},
    {"nULL", "\"nULL\""},
    /* integers: decimal, sign, underscores, 0x / 0o / 0b / leading-zero octal */
    {"0", "0"},
    {"-0", "0"},
    {"+0", "0"},
    {"42", "42"},
    {"+1", "1"},
    {"-17", "-17"},
    {"1_000", "1000"},
    {"1__0", "10"},
    {"1_", "1"},
    {"_1", "\"_1\""},
    {"0x1F", "31"},
    {"0X1f", "31"},
    {"-0x10", "-16"},
    {"+0x10", "16"},
    {"0o17", "15"},
    {"0O17", "15"},
    {"017", "15"},
    {"0777", "511"},
    {"00", "0"},
    {"0b101", "5"},
    {"-0b11", "-3"},
    {"0x_ff", "255"},
    {"0x", "\"0x\""},
    {"0xG", "\"0xG\""},
    {"0b", "\"0b\""},
    {"0b2", "\"0b2\""},
    {"0o8", "\"0o8\""},
    {"9223372036854775807", "9223372036854775807"},
    {"-9223372036854775808", "-9223372036854775808"},
    /* beyond int64: go-yaml holds a uint64 (we keep the text), or falls back to a float */
    {"9223372036854775808", "\"9223372036854775808\""},
    {"18446744073709551615", "\"18446744073709551615\""},
    {"0xFFFFFFFFFFFFFFFF", "\"0xFFFFFFFFFFFFFFFF\""},
    {"+9223372036854775808", "9.2233720368547758e18"},
    {"18446744073709551616", "1.8446744073709552e19"},
    {"-9223372036854775809", "-9.2233720368547758e18"},
    {"0x10000000000000000", "\"0x10000000000000000\""},
    /* "08" and "09" are not octal, so they are floats */
    {"08", "8.0"},
    {"09", "9.0"},
    {"019", "19.0"},
    /* floats */
    {"1.5", "1.5"},
    {".5", "0.5"},
    {"-.5", "-0.5"},
    {"+.5", "0.5"},
    {"1.", "1.0"},
    {"0.", "0.0"},
    {"-0.0", "-0.0"},
    {"1e3", "1000.0"},
    {"1E3", "1000.0"},
    {"1e+3", "1000.0"},
    {"1.5e-3", "0.0015"},
    {".5e1", "5.0"},
    {"1_0.5", "10.5"},
    {"0.1", "0.10000000000000001"},
    {"1e-400", "0.0"},
    /* no JSON form: infinities and NaN stay strings; so does a double overflow (as go-yaml) */
    {".inf", "\".inf\""},
    {".Inf", "\".Inf\""},
    {".INF", "\".INF\""},
    {"+.inf", "\"+.inf\""},
    {"-.Inf", "\"-.Inf\""},
    {"-.INF", "\"-.INF\""},
    {".nan", "\".nan\""},
    {".NaN", "\".NaN\""},
    {".NAN", "\".NAN\""},
    {".iNf", "\".iNf\""},
    {"1e400", "\"1e400\""},
    /* strings that look numeric but are not */
    {".", "\".\""},
    {".5_0", "\".5_0\""},
    {"1.2.3", "\"1.2.3\""},
    {"1e", "\"1e\""},
    {"1e3.5", "\"1e3.5\""},
    {"0x1p3", "\"0x1p3\""},
    {"1,000", "\"1,000\""},
    {"12:30", "\"12:30\""},
    {"190:20:30", "\"190:20:30\""},
    {"2001-12-14", "\"2001-12-14\""},
    {"2001-12-14t21:59:43.10-05:00", "\"2001-12-14t21:59:43.10-05:00\""},
    {"-x", "\"-x\""},
    {"'-'", "\"-\""},
    {"infinity", "\"infinity\""},
    {"1Gi", "\"1Gi\""},
    {"500m", "\"500m\""},
    {"abc", "\"abc\""},
    {"<<", "\"<<\""},
    {"a b", "\"a b\""},
    /* quoted: always strings */
    {"'true'", "\"true\""},
    {"\"yes\"", "\"yes\""},
    {"'08'", "\"08\""},
    {"\"0x1F\"", "\"0x1F\""},
    {"\"\"", "\"\""},
    {"''", "\"\""},
    {"'~'", "\"~\""},
    {"'null'", "\"null\""},
    {"\"1.5\"", "\"1.5\""},
    {"|\n  true", "\"true\\n\""},
    /* explicit tags */
    {"!!str 123", "\"123\""},
    {"!!str true", "\"true\""},
    {"!!str", "\"\""},
    {"!!int \"42\"", "42"},
    {"!!int 0x10", "16"},
    {"!!int 9223372036854775808", "\"9223372036854775808\""},
    {"!!float 1", "1.0"},
    {"!!float \"2.5\"", "2.5"},
    {"!!float .inf", "\".inf\""},
    {"!!float 18_446_744_073_709_551_615", "1.8446744073709552e19"},
    {"!!bool yes", "true"},
    {"!!bool \"off\"", "false"},
    {"!!null ~", "null"},
    {"!!null ''", "null"},
    {"!!timestamp 2001-12-14", "\"2001-12-14\""},
    {"!!binary aGk=", "\"aGk=\""},
    {"!custom 5", "\"5\""},
    {"! 5", "\"5\""},
    {"!<tag:yaml.org,2002:int> 7", "7"},
};

START_TEST(test_scalar_resolution)
{
    char yaml[128], want[128];
    char *got;

    snprintf(yaml, sizeof(yaml), "v: %s\n", scalars[_i].text);
    snprintf(want, sizeof(want), "{\"v\":%s}", scalars[_i].json);
    got = load_one(yaml);
    ck_assert_msg(strcmp(got, want) == 0, "%s: got %s, want %s", scalars[_i].text, got, want);
    free(got);
}
END_TEST

/* Keys become strings the way sigs.k8s.io/yaml converts go-yaml's typed keys. */
START_TEST(test_mapping_keys)
{
    char *got = load_one("name: a\n"
                         "0x10: hex\n"
                         "yes: bool\n"
                         "n: no\n"
                         "\"yes\": quoted\n"
                         "1.50: real\n"
                         "-3: neg\n"
                         "? explicit\n"
                         ": value\n"
                         "'': empty\n");

    ck_assert_str_eq(got, "{\"name\":\"a\",\"16\":\"hex\",\"true\":\"bool\",\"false\":false,"
                          "\"yes\":\"quoted\",\"1.50\":\"real\",\"-3\":\"neg\","
                          "\"explicit\":\"value\",\"\":\"empty\"}");
    free(got);
}
END_TEST

START_TEST(test_anchors_and_aliases)
{
    char *got = load_one("base: &b {cpu: 1, memory: 1Gi}\n"
                         "copy: *b\n"
                         "list: &l [1, 2]\n"
                         "again: [*l, *l]\n"
                         "s: &s scalar\n"
                         "t: *s\n"
                         "*s : via-alias-key\n"
                         "re: &b 5\n"
                         "shadow: *b\n");

    ck_assert_str_eq(got, "{\"base\":{\"cpu\":1,\"memory\":\"1Gi\"},\"copy\":{\"cpu\":1,"
                          "\"memory\":\"1Gi\"},\"list\":[1,2],\"again\":[[1,2],[1,2]],"
                          "\"s\":\"scalar\",\"t\":\"scalar\",\"scalar\":\"via-alias-key\","
                          "\"re\":5,\"shadow\":5}");
    free(got);
}
END_TEST

/* An alias is a copy: changing one place leaves the others alone. */
START_TEST(test_alias_is_a_copy)
{
    collect_t c = {json_array(), 0};
    json_t *doc, *a, *b;
    const char *yaml = "a: &x {k: 1}\nb: *x\n";

    ck_assert_int_eq(yaml_load_string(yaml, strlen(yaml), collect, &c, NULL), ERR_OK);
    doc = json_array_get(json_array_get(c.docs, 0), 2);
    a = json_object_get(doc, "a");
    b = json_object_get(doc, "b");
    ck_assert_ptr_ne(a, b);
    json_object_set_new(a, "k", json_integer(2));
    ck_assert_int_eq(json_integer_value(json_object_get(b, "k")), 1);
    json_decref(c.docs);
}
END_TEST

START_TEST(test_merge_keys)
{
    char *got = load_one("base: &b {cpu: 1, memory: 2}\n"
                         "gpu: &g {gpu: 1, cpu: 9}\n"
                         "one:\n"
                         "  <<: *b\n"
                         "  cpu: 4\n"
                         "before: {cpu: 5, <<: *b}\n"
                         "list: {<<: [*b, *g], extra: x}\n"
                         "order: {<<: [*g, *b]}\n"
                         "inline: {<<: {a: 1}}\n"
                         "two: {<<: *b, <<: *g}\n"
                         "quoted: {\"<<\": not-a-merge}\n"
                         "tagged: {!!merge <<: *g}\n"
                         "nested: &n {<<: *b, z: 0}\n"
                         "deep: {<<: *n}\n");

    ck_assert_str_eq(got, "{\"base\":{\"cpu\":1,\"memory\":2},\"gpu\":{\"gpu\":1,\"cpu\":9},"
                          "\"one\":{\"cpu\":4,\"memory\":2},"
                          "\"before\":{\"cpu\":5,\"memory\":2},"
                          "\"list\":{\"extra\":\"x\",\"cpu\":1,\"memory\":2,\"gpu\":1},"
                          "\"order\":{\"gpu\":1,\"cpu\":9,\"memory\":2},"
                          "\"inline\":{\"a\":1},"
                          "\"two\":{\"cpu\":1,\"memory\":2,\"gpu\":1},"
                          "\"quoted\":{\"<<\":\"not-a-merge\"},"
                          "\"tagged\":{\"gpu\":1,\"cpu\":9},"
                          "\"nested\":{\"z\":0,\"cpu\":1,\"memory\":2},"
                          "\"deep\":{\"z\":0,\"cpu\":1,\"memory\":2}}");
    free(got);
}
END_TEST

static const struct {
    const char *yaml;
    const char *msg;
} errors[] = {
    {"a: 1\nb: 2\na: 3\n", "line 3, column 1: duplicate key \"a\""},
    {"yes: 1\ntrue: 2\n", "line 2, column 1: duplicate key \"true\""},
    {"0x10: 1\n16: 2\n", "line 2, column 1: duplicate key \"16\""},
    {"a:\n  b: {c: 1, c: 2}\n", "line 2, column 13: duplicate key \"c\""},
    {"[a]: 1\n", "line 1, column 1: mapping key must be a scalar"},
    {"? {a: 1}\n: 1\n", "line 1, column 3: mapping key must be a scalar"},
    {"k: &k [1]\n*k : v\n", "line 2, column 1: mapping key must be a scalar"},
    {"~: 1\n", "line 1, column 1: mapping key is null"},
    {"{a: 1, ? : 2}\n", "line 1, column 10: mapping key is null"},
    {"?\n: v\n", "line 1, column 2: mapping key is null"},
    {"\"a\\0b\": 1\n", "line 1, column 1: mapping key contains a NUL character"},
    {"a: *nope\n", "line 1, column 4: unknown anchor \"nope\""},
    {"a: &x [*x]\n", "line 1, column 8: unknown anchor \"x\""},
    {"<<: 1\n", "line 1, column 5: the value of a merge key (<<) must be a mapping or a sequence "
                "of mappings"},
    {"<<: [{a: 1}, 2]\n", "line 1, column 5: the value of a merge key (<<) must be a mapping or "
                          "a sequence of mappings"},
    {"<<:\n", "line 1, column 4: the value of a merge key (<<) must be a mapping or a sequence of "
              "mappings"},
    {"v: !!int abc\n", "line 1, column 4: cannot decode !!str `abc` as a !!int"},
    {"v: !!bool 1\n", "line 1, column 4: cannot decode !!int `1` as a !!bool"},
    {"v: !!float true\n", "line 1, column 4: cannot decode !!bool `true` as a !!float"},
    {"v: !!null 0\n", "line 1, column 4: cannot decode !!int `0` as a !!null"},
    {"v: !!int 1.5\n", "line 1, column 4: cannot decode !!float `1.5` as a !!int"},
    {"a: [1, 2\n", "line 2, column 1: did not find expected ',' or ']' (while parsing a flow "
                   "sequence at line 1, column 4)"},
    {"a:\n\t- b\n", "line 2, column 1: a tab character indents this line: YAML indents with "
                    "spaces only"},
    {"a:\n  b: 1\n\tc: 2\n", "line 3, column 1: a tab character indents this line: YAML indents "
                             "with spaces only"},
    {"a: 1\n b: 2\n", "line 2, column 3: mapping values are not allowed in this context"},
    {"- a\nb: c\n", "line 2, column 1: did not find expected '-' indicator (while parsing a block "
                    "collection at line 1, column 1)"},
    {"ok: 1\n---\nbad: \"x\n", "line 4, column 1: found unexpected end of stream (while scanning a "
                               "quoted scalar at line 3, column 6)"},
    {"a: \xff\n", "line 1, column 4: invalid leading UTF-8 octet (byte 3)"},
    {"a: 1\nb: \xc3\xa9\xc3\xa9 \x01\n",
     "line 2, column 7: control characters are not allowed (byte 13)"},
    {"a: *b\n*c\n", "line 1, column 4: unknown anchor \"b\""},
};

START_TEST(test_errors)
{
    err_t rc;
    err_msg_t msg = {""};
    char *got = load_text(errors[_i].yaml, &rc, &msg);

    ck_assert_ptr_null(got);
    ck_assert_int_eq(rc, ERR_PARSE);
    ck_assert_str_eq(msg.text, errors[_i].msg);
}
END_TEST

/* Documents before the bad one are delivered; loading stops at the error. */
START_TEST(test_error_after_good_documents)
{
    collect_t c = {json_array(), 0};
    err_msg_t msg;
    const char *yaml = "a: 1\n---\nb: 2\n---\nc: [\n";

    ck_assert_int_eq(yaml_load_string(yaml, strlen(yaml), collect, &c, &msg), ERR_PARSE);
    ck_assert_int_eq(json_array_size(c.docs), 2);
    ck_assert_ptr_nonnull(strstr(msg.text, "line 6, column 1: "));
    json_decref(c.docs);
}
END_TEST

static char *nested(int levels, const char *inner)
{
    size_t n = (size_t)levels, len = strlen(inner);
    char *s = malloc(2 * n + len + 2);

    ck_assert_ptr_nonnull(s);
    memset(s, '[', n);
    memcpy(s + n, inner, len);
    memset(s + n + len, ']', n);
    s[2 * n + len] = '\n';
    s[2 * n + len + 1] = '\0';
    return s;
}

START_TEST(test_depth_limit)
{
    err_t rc;
    err_msg_t msg;
    char *yaml, *got;

    yaml = nested(YAML_MAX_DEPTH, "1");
    got = load_text(yaml, &rc, &msg);
    ck_assert_int_eq(rc, ERR_OK);
    ck_assert_uint_eq(strlen(got), strlen("[0,1,]") + 2 * YAML_MAX_DEPTH + 1);
    free(got);
    free(yaml);

    yaml = nested(YAML_MAX_DEPTH + 1, "1");
    got = load_text(yaml, &rc, &msg);
    ck_assert_ptr_null(got);
    ck_assert_int_eq(rc, ERR_PARSE);
    ck_assert_str_eq(msg.text, "line 1, column 129: nesting deeper than 128 levels");
    free(yaml);

    /* An alias counts with the depth of what it expands to. */
    {
        char *a = nested(YAML_MAX_DEPTH - 8, "x"), *b = nested(9, "*a");
        size_t n = strlen(a) + strlen(b) + 16;
        yaml = malloc(n);
        ck_assert_ptr_nonnull(yaml);
        snprintf(yaml, n, "- &a %s- %s", a, b);
        free(a);
        free(b);
    }
    got = load_text(yaml, &rc, &msg);
    ck_assert_ptr_null(got);
    ck_assert_int_eq(rc, ERR_PARSE);
    /* the alias sits at depth 1 (the top sequence) + 9 and expands to 120 levels */
    ck_assert_str_eq(msg.text, "line 2, column 12: nesting deeper than 128 levels");
    free(yaml);
}
END_TEST

/* "Billion laughs": 9^8 leaves after expansion, stopped by the alias expansion limit. */
START_TEST(test_node_limit)
{
    err_t rc;
    err_msg_t msg;
    char yaml[1024];
    size_t pos = 0;
    char *got;

    pos += (size_t)snprintf(yaml + pos, sizeof(yaml) - pos, "a0: &a0 [x,x,x,x,x,x,x,x,x]\n");
    for (int i = 1; i <= 8; i++)
        pos += (size_t)snprintf(yaml + pos, sizeof(yaml) - pos,
                                "a%d: &a%d [*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d]\n", i, i,
                                i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
    got = load_text(yaml, &rc, &msg);
    ck_assert_ptr_null(got);
    ck_assert_int_eq(rc, ERR_PARSE);
    ck_assert_str_eq(msg.text, "line 6, column 14: aliases expand to more than 200000 nodes: "
                               "refused");

    /* Just under the limit is fine: 5 levels of 9 = 66430 nodes. */
    yaml[0] = '\0';
    pos = 0;
    pos += (size_t)snprintf(yaml + pos, sizeof(yaml) - pos, "a0: &a0 [x,x,x,x,x,x,x,x,x]\n");
    for (int i = 1; i <= 4; i++)
        pos += (size_t)snprintf(yaml + pos, sizeof(yaml) - pos,
                                "a%d: &a%d [*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d]\n", i, i,
                                i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
    got = load_text(yaml, &rc, &msg);
    ck_assert_ptr_nonnull(got);
    free(got);
}
END_TEST

/* An alias bomb of few nodes: one 1.6 MB scalar aliased 1000 times would be 1.6 GB. Refused by
 * expanded bytes, quickly, before the copies are made. */
START_TEST(test_byte_limit)
{
    const size_t big = 1600000;
    size_t cap = big + 1000 * 8 + 64, pos = 0;
    char *yaml = malloc(cap), *got;
    struct timespec t0, t1;
    err_msg_t msg;
    err_t rc;

    ck_assert_ptr_nonnull(yaml);
    pos += (size_t)snprintf(yaml, cap, "a: &a ");
    memset(yaml + pos, 'x', big);
    pos += big;
    pos += (size_t)snprintf(yaml + pos, cap - pos, "\nb: [");
    for (int i = 0; i < 1000; i++)
        pos += (size_t)snprintf(yaml + pos, cap - pos, "%s*a", i ? "," : "");
    pos += (size_t)snprintf(yaml + pos, cap - pos, "]\n");
    ck_assert_uint_lt(pos, 1700000); /* a 1.6 MB file */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    got = load_text(yaml, &rc, &msg);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ck_assert_ptr_null(got);
    ck_assert_int_eq(rc, ERR_PARSE);
    ck_assert_msg(strstr(msg.text, "aliases expand to more than 33554432 bytes: refused") != NULL,
                  "%s", msg.text);
    ck_assert_int_lt((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000, 2000);
    /* Twenty copies (32 MB) are within the limit. */
    pos = 6 + big;
    pos += (size_t)snprintf(yaml + pos, cap - pos, "\nb: [");
    for (int i = 0; i < 19; i++)
        pos += (size_t)snprintf(yaml + pos, cap - pos, "%s*a", i ? "," : "");
    snprintf(yaml + pos, cap - pos, "]\n");
    got = load_text(yaml, &rc, &msg);
    ck_assert_msg(got != NULL, "%s", msg.text);
    free(got);
    free(yaml);
}
END_TEST

/* A large honest document -- a List of 3,000 Nodes as kubectl prints them, each with labels and
 * a status.images list: about a million nodes and 34 MB in one document, far above the alias
 * expansion bound -- loads whole; the same bound still refuses aliases in it that expand past
 * 200,000 nodes. */
START_TEST(test_large_honest_document)
{
    FILE *f = tmpfile();
    collect_t c = {json_array(), 0};
    err_msg_t msg;
    long size;

    ck_assert_ptr_nonnull(f);
    fputs("apiVersion: v1\nkind: List\nitems:\n", f);
    for (int i = 0; i < 3000; i++) {
        fprintf(f,
                "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: node-%05d\n    labels:\n"
                "      kubernetes.io/hostname: node-%05d\n      nvidia.com/gpu.product: "
                "NVIDIA-A100-SXM4-80GB\n  status:\n    allocatable: {cpu: \"128\", nvidia.com/gpu: "
                "\"8\"}\n    images:\n",
                i, i);
        for (int k = 0; k < 60; k++)
            fprintf(f,
                    "    - names: [registry.example.com/team/image-%02d@sha256:%064d, "
                    "registry.example.com/team/image-%02d:v1]\n      sizeBytes: %d\n",
                    k, k, k, 1000000 + k);
    }
    size = ftell(f);
    ck_assert_int_gt(size, 32 << 20); /* above the alias bound in bytes too */
    rewind(f);
    ck_assert_msg(yaml_load_file(f, collect, &c, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_int_eq(json_array_size(c.docs), 1);
    ck_assert_int_eq(
        json_array_size(json_object_get(json_array_get(json_array_get(c.docs, 0), 2), "items")),
        3000);
    json_decref(c.docs);
    fclose(f);

    /* An anchor of 100,001 nodes aliased twice in a large document: refused by the alias bound. */
    f = tmpfile();
    ck_assert_ptr_nonnull(f);
    fputs("a: &a [", f);
    for (int i = 0; i < 100000; i++)
        fputs(i ? ",x" : "x", f);
    fputs("]\nb: [*a, *a]\n", f);
    rewind(f);
    c.docs = json_array();
    ck_assert_int_eq(yaml_load_file(f, collect, &c, &msg), ERR_PARSE);
    ck_assert_msg(strstr(msg.text, "aliases expand to more than 200000 nodes: refused") != NULL,
                  "%s", msg.text);
    json_decref(c.docs);
    fclose(f);
}
END_TEST

/* The node budget is per document: anchors do not leak into the next one. */
START_TEST(test_anchors_are_per_document)
{
    err_t rc;
    err_msg_t msg;
    char *got = load_text("a: &x 1\n---\nb: *x\n", &rc, &msg);

    ck_assert_ptr_null(got);
    ck_assert_str_eq(msg.text, "line 3, column 4: unknown anchor \"x\"");
}
END_TEST

START_TEST(test_load_file_streams)
{
    FILE *f = tmpfile();
    collect_t c = {json_array(), 0};
    err_msg_t msg;

    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 2000; i++)
        fprintf(f, "---\nkind: ConfigMap\nmetadata: {name: cm-%d}\ndata: {v: \"%d\"}\n", i, i);
    rewind(f);
    ck_assert_int_eq(yaml_load_file(f, collect, &c, &msg), ERR_OK);
    ck_assert_int_eq(json_array_size(c.docs), 2000);
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(json_array_get(json_array_get(c.docs, 1999), 2), "data"), "v")),
        "1999");
    ck_assert_int_eq(json_integer_value(json_array_get(json_array_get(c.docs, 1999), 1)),
                     1999 * 4 + 1);
    json_decref(c.docs);
    fclose(f);
}
END_TEST

/* A reader error deep in a file is placed by line and column, like one in a string. */
START_TEST(test_load_file_error_position)
{
    FILE *f = tmpfile();
    collect_t c = {json_array(), 0};
    err_msg_t msg;
    long off;

    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 5000; i++)
        fprintf(f, "k%04d: v\n", i); /* 9 bytes a line: 45000 bytes, several read chunks */
    off = ftell(f);
    fputs("bad: \x01\n", f);
    rewind(f);
    ck_assert_int_eq(yaml_load_file(f, collect, &c, &msg), ERR_PARSE);
    ck_assert_int_eq(off, 45000);
    ck_assert_str_eq(msg.text, "line 5001, column 6: control characters are not allowed "
                               "(byte 45005)");
    ck_assert_int_eq(json_array_size(c.docs), 0);
    json_decref(c.docs);
    fclose(f);
}
END_TEST

START_TEST(test_callback_stops_loading)
{
    collect_t c = {json_array(), 2};
    err_msg_t msg = {"untouched"};
    const char *yaml = "a: 1\n---\nb: 2\n---\nc: 3\n";
    FILE *f = fmemopen((void *)yaml, strlen(yaml), "r");

    ck_assert_int_eq(yaml_load_string(yaml, strlen(yaml), collect, &c, &msg), ERR_CONFLICT);
    ck_assert_int_eq(json_array_size(c.docs), 2);
    ck_assert_str_eq(msg.text, "untouched");
    json_array_clear(c.docs);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(yaml_load_file(f, collect, &c, &msg), ERR_CONFLICT);
    ck_assert_int_eq(json_array_size(c.docs), 2);
    fclose(f);
    json_decref(c.docs);
}
END_TEST

START_TEST(test_invalid_arguments_and_io)
{
    err_msg_t msg;
    collect_t c = {json_array(), 0};
    FILE *w = fopen("/dev/null", "w");

    ck_assert_int_eq(yaml_load_string("a", 1, NULL, NULL, &msg), ERR_INVALID);
    ck_assert_int_eq(yaml_load_string(NULL, 3, collect, &c, &msg), ERR_INVALID);
    ck_assert_int_eq(yaml_load_file(NULL, collect, &c, &msg), ERR_INVALID);
    /* A stream open only for writing fails to read: an I/O error, not a parse error. */
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(yaml_load_file(w, collect, &c, &msg), ERR_IO);
    ck_assert_ptr_nonnull(strstr(msg.text, "reading YAML"));
    fclose(w);
    json_decref(c.docs);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("yaml");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_multi_document_stream);
    tcase_add_test(tc, test_empty_inputs);
    tcase_add_test(tc, test_nested_structures);
    tcase_add_test(tc, test_scalar_styles);
    tcase_add_loop_test(tc, test_scalar_resolution, 0, (int)ARRAY_SIZE(scalars));
    tcase_add_test(tc, test_mapping_keys);
    tcase_add_test(tc, test_anchors_and_aliases);
    tcase_add_test(tc, test_alias_is_a_copy);
    tcase_add_test(tc, test_merge_keys);
    tcase_add_loop_test(tc, test_errors, 0, (int)ARRAY_SIZE(errors));
    tcase_add_test(tc, test_error_after_good_documents);
    tcase_add_test(tc, test_depth_limit);
    tcase_add_test(tc, test_node_limit);
    tcase_add_test(tc, test_anchors_are_per_document);
    tcase_add_test(tc, test_load_file_streams);
    tcase_add_test(tc, test_load_file_error_position);
    tcase_add_test(tc, test_callback_stops_loading);
    tcase_add_test(tc, test_invalid_arguments_and_io);
    tcase_add_test(tc, test_large_honest_document);
    tcase_add_test(tc, test_byte_limit);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    /* Hundreds of table rows: forking an ASan process for each costs minutes, and the rows
     * share no state, so run them in-process (a failed row still reports and continues). */
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
