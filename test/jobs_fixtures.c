/* jobs_fixtures -- API objects for the lib/jobs kind tests, from test/data/jobs/ or inline YAML. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs_fixtures.h"

#include "model/yaml.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static err_t on_doc(void *ctx, size_t index, int line, json_t *doc)
{
    (void)index;
    (void)line;
    return json_array_append(ctx, doc) ? ERR_NOMEM : ERR_OK;
}

json_t *jf_file(const char *name)
{
    const char *dir = getenv("SLUICE_SOURCE_DIR");
    ck_assert_msg(dir != NULL, "SLUICE_SOURCE_DIR must be set (ctest sets it)");
    char path[4096];
    snprintf(path, sizeof(path), "%s/test/data/jobs/%s", dir, name);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    json_t *docs = json_array();
    err_msg_t msg = {{0}};
    err_t e = yaml_load_file(f, on_doc, docs, &msg);
    fclose(f);
    ck_assert_msg(e == ERR_OK, "%s: %s", path, msg.text);
    return docs;
}

json_t *jf_doc(const char *name, size_t i)
{
    json_t *docs = jf_file(name);
    json_t *doc = json_incref(json_array_get(docs, i));
    json_decref(docs);
    ck_assert_msg(doc != NULL, "%s has no document %zu", name, i);
    return doc;
}

json_t *jf_yaml(const char *yaml)
{
    json_t *docs = json_array();
    err_msg_t msg = {{0}};
    err_t e = yaml_load_string(yaml, strlen(yaml), on_doc, docs, &msg);
    ck_assert_msg(e == ERR_OK, "inline YAML: %s", msg.text);
    json_t *doc = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    ck_assert_ptr_nonnull(doc);
    return doc;
}

json_t *jf_at(const json_t *v, const char *path)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", path);
    const json_t *cur = v;
    char *save = NULL;
    for (char *tok = strtok_r(buf, " ", &save); tok != NULL && cur != NULL;
         tok = strtok_r(NULL, " ", &save)) {
        if (json_is_array(cur))
            cur = json_array_get(cur, strtoul(tok, NULL, 10));
        else
            cur = json_object_get(cur, tok);
    }
    return (json_t *)cur;
}

const char *jf_str(const json_t *v, const char *path)
{
    return json_string_value(jf_at(v, path));
}

size_t jf_pod_sets(const jobs_kind_t *k, json_t *obj, jobs_podset_t *sets)
{
    size_t n = 0;
    err_msg_t msg = {{0}};
    ck_assert_msg(k->pod_sets(obj, sets, &n, &msg) == ERR_OK, "%s", msg.text);
    return n;
}
