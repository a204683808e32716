/* test_yamlmark -- positions of a loaded document's fields, found by diagnostic field paths. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/yaml.h"
#include "model/yamlmark.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct loaded_s {
    json_t *doc[4];
    yaml_marks_t *marks[4];
    int line[4];
    size_t n;
} loaded_t;

static err_t on_doc(void *ctx, size_t index, int line, json_t *doc, yaml_marks_t *marks)
{
    loaded_t *l = ctx;

    (void)index;
    ck_assert_uint_lt(l->n, 4);
    l->doc[l->n] = json_incref(doc);
    l->marks[l->n] = marks;
    l->line[l->n] = line;
    l->n++;
    return ERR_OK;
}

static void load(loaded_t *l, const char *text)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    err_msg_t msg = {{0}};

    memset(l, 0, sizeof(*l));
    ck_assert_ptr_nonnull(f);
    ck_assert_msg(yaml_load_file_marks(f, on_doc, l, &msg) == ERR_OK, "%s", msg.text);
    fclose(f);
}

static void unload(loaded_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        json_decref(l->doc[i]);
        yaml_marks_free(l->marks[i]);
    }
}

/* "LINE:COL" of `path` in document i. */
static const char *at(const loaded_t *l, size_t i, const char *path)
{
    static char buf[32];
    yaml_pos_t pos;

    if (!yaml_marks_find(l->marks[i], l->doc[i], path, &pos))
        return "none";
    snprintf(buf, sizeof(buf), "%d:%d", pos.line, pos.col);
    return buf;
}

START_TEST(block_yaml)
{
    loaded_t l;

    load(&l, "# comment\n"
             "kind: ClusterQueue\n"
             "metadata:\n"
             "  name: a\n"
             "  labels:\n"
             "    kueue.x-k8s.io/queue-name: q\n"
             "spec:\n"
             "  resourceGroups:\n"
             "  - coveredResources: [cpu, nvidia.com/gpu]\n"
             "    flavors:\n"
             "    - name: f\n"
             "      resources:\n"
             "      - {name: cpu, nominalQuota: 1}\n"
             "  requests:\n"
             "    nvidia.com/gpu: 2\n"
             "---\n"
             "kind: Other\n");
    ck_assert_uint_eq(l.n, 2);
    ck_assert_str_eq(at(&l, 0, ""), "2:1");
    ck_assert_str_eq(at(&l, 0, "kind"), "2:1");
    ck_assert_str_eq(at(&l, 0, "metadata.name"), "4:3");
    ck_assert_str_eq(at(&l, 0, "metadata.labels[kueue.x-k8s.io/queue-name]"), "6:5");
    ck_assert_str_eq(at(&l, 0, "spec.resourceGroups[0]"), "9:5");
    ck_assert_str_eq(at(&l, 0, "spec.resourceGroups[0].coveredResources[1]"), "9:29");
    ck_assert_str_eq(at(&l, 0, "spec.resourceGroups[0].flavors[0].name"), "11:7");
    ck_assert_str_eq(at(&l, 0, "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota"),
                     "13:21");
    /* Kueue's dotted indices, dotted keys, missing fields, indices out of range. */
    ck_assert_str_eq(at(&l, 0, "spec.resourceGroups.0.flavors.0"), "11:7");
    ck_assert_str_eq(at(&l, 0, "spec.requests.nvidia.com/gpu"), "15:5");
    ck_assert_str_eq(at(&l, 0, "spec.cohortName"), "7:1");
    ck_assert_str_eq(at(&l, 0, "spec.resourceGroups[7].flavors"), "8:3");
    ck_assert_str_eq(at(&l, 0, "metadata.labels[missing"), "5:3");
    ck_assert_str_eq(at(&l, 1, "spec"), "17:1");
    ck_assert_int_eq(l.line[1], 16);
    unload(&l);
}
END_TEST

START_TEST(json_and_merges)
{
    loaded_t l;

    load(&l, "{\n"
             "  \"kind\": \"LocalQueue\",\n"
             "  \"spec\": {\"clusterQueue\": \"cq\"}\n"
             "}\n"
             "---\n"
             "base: &b {x: 1}\n"
             "m:\n"
             "  <<: *b\n"
             "  yy: 2\n");
    ck_assert_uint_eq(l.n, 2);
    ck_assert_str_eq(at(&l, 0, "spec.clusterQueue"), "3:12");
    /* A merged key has no place of its own: the mapping that merges it. */
    ck_assert_str_eq(at(&l, 1, "m.yy"), "9:3");
    ck_assert_str_eq(at(&l, 1, "m.x"), "7:1");
    unload(&l);
}
END_TEST

START_TEST(no_table)
{
    yaml_pos_t pos;
    json_t *j = json_object();

    ck_assert(!yaml_marks_find(NULL, j, "a", &pos));
    json_decref(j);
}
END_TEST

static Suite *yamlmark_suite(void)
{
    Suite *s = suite_create("yamlmark");
    TCase *tc = tcase_create("yamlmark");

    tcase_add_test(tc, block_yaml);
    tcase_add_test(tc, json_and_merges);
    tcase_add_test(tc, no_table);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(yamlmark_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
