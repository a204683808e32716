/* test_release_in_sync -- manifests/release/sluice.yaml is what manifests/ renders to today. */
/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The release file is generated (.ci/render-release) and committed; this test re-renders
 * manifests/ with `kubectl kustomize` (through `.ci/render-release --print`) and compares the
 * two object by object, as parsed YAML (the API server's reading: sigs.k8s.io/yaml rules, see
 * model/yaml.h), so a failure names the object and the field that differ. With kustomize v3+
 * (kubectl 1.21+) the order of the objects must match too. With kubectl 1.20's kustomize v2
 * the render comes in parts and its ConfigMap name hash differs (see .ci/render-release): the
 * objects are then matched by kind and name, with the generated hash left out.
 * It also checks what the release file promises on its own: the namespace first, webhook
 * configurations last, one namespace, the image tagged with the project version, the
 * Deployment's ConfigMap present; and that the manage-jobs-without-queue-name component only
 * changes the Job webhooks' selectors.
 * Exit 77 (skipped) only when there is no kubectl at all.
 */
#include "model/yaml.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SLUICE_PROJECT_VERSION
#error "SLUICE_PROJECT_VERSION must be defined (test/manifests.cmake)"
#endif

#define GEN_CONFIGMAP "sluice-manager-config" /* configMapGenerator name, kustomization.yaml */

static char src[4096];
static int compat; /* the render came from kustomize v2 */

/* ---- helpers -------------------------------------------------------------------------------- */

/* Run `cmd` through sh; its stdout in a malloc'd NUL-terminated buffer (*len bytes), its stderr
 * appended to the buffer `err` (size n). Returns the exit status, -1 if it could not run. */
static int run_capture(const char *cmd, char **out, size_t *len, char *err, size_t n)
{
    char errfile[] = "/tmp/release-sync-err-XXXXXX", full[8192];
    int fd = mkstemp(errfile), status;
    size_t cap = 1 << 16, got = 0, r;
    char *buf = malloc(cap);
    FILE *p;

    ck_assert_int_ge(fd, 0);
    ck_assert_ptr_nonnull(buf);
    close(fd);
    snprintf(full, sizeof(full), "%s 2>%s", cmd, errfile);
    p = popen(full, "r");
    ck_assert_ptr_nonnull(p);
    while ((r = fread(buf + got, 1, cap - got - 1, p)) > 0) {
        got += r;
        if (cap - got < 4096) {
            cap *= 2;
            buf = realloc(buf, cap);
            ck_assert_ptr_nonnull(buf);
        }
    }
    buf[got] = '\0';
    status = pclose(p);
    err[0] = '\0';
    FILE *e = fopen(errfile, "r");
    if (e != NULL) {
        size_t k = fread(err, 1, n - 1, e);
        err[k] = '\0';
        fclose(e);
    }
    unlink(errfile);
    *out = buf;
    *len = got;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static err_t keep_doc(void *ctx, size_t index, int line, json_t *doc)
{
    (void)index;
    (void)line;
    return json_array_append(ctx, doc) == 0 ? ERR_OK : ERR_NOMEM;
}

/* The documents of a YAML stream, as a new array. */
static json_t *load_docs(const char *text, size_t len, const char *what)
{
    json_t *docs = json_array();
    err_msg_t msg = {{0}};

    ck_assert_ptr_nonnull(docs);
    ck_assert_msg(yaml_load_string(text, len, keep_doc, docs, &msg) == ERR_OK, "%s: %s", what,
                  msg.text);
    return docs;
}

static const char *str_at(const json_t *o, const char *k1, const char *k2)
{
    const json_t *v = json_object_get(o, k1);
    return json_string_value(k2 ? json_object_get(v, k2) : v);
}

/* "Kind namespace/name" of a document, into buf. */
static const char *doc_id(const json_t *d, char *buf, size_t n)
{
    const char *ns = str_at(d, "metadata", "namespace");
    snprintf(buf, n, "%s %s%s%s", str_at(d, "kind", NULL), ns ? ns : "", ns ? "/" : "",
             str_at(d, "metadata", "name"));
    return buf;
}

/* Replace every string equal to `from` in `v` (recursively) by `to`. */
static void replace_strings(json_t *v, const char *from, const char *to)
{
    const char *k;
    json_t *child;
    size_t i;

    if (json_is_object(v)) {
        json_object_foreach(v, k, child)
        {
            if (json_is_string(child) && strcmp(json_string_value(child), from) == 0)
                ck_assert_int_eq(json_string_set(child, to), 0);
            else
                replace_strings(child, from, to);
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, child)
        {
            if (json_is_string(child) && strcmp(json_string_value(child), from) == 0)
                ck_assert_int_eq(json_string_set(child, to), 0);
            else
                replace_strings(child, from, to);
        }
    }
}

/* kustomize v2 and v3+ hash the generated ConfigMap differently: name it <name>-HASH everywhere
 * in `docs` (the ConfigMap and the Deployment's reference alike). */
static void mask_generated_hash(json_t *docs)
{
    json_t *d;
    size_t i;

    json_array_foreach(docs, i, d)
    {
        const char *name = str_at(d, "metadata", "name");
        size_t pre = strlen(GEN_CONFIGMAP);
        if (strcmp(str_at(d, "kind", NULL), "ConfigMap") == 0 && name != NULL &&
            strncmp(name, GEN_CONFIGMAP "-", pre + 1) == 0 && strlen(name) == pre + 11) {
            char *old = strdup(name);
            ck_assert_ptr_nonnull(old);
            replace_strings(docs, old, GEN_CONFIGMAP "-HASH");
            free(old);
        }
    }
}

/* The path of the first difference between a and b, into buf ("" when equal). */
static void first_diff(const json_t *a, const json_t *b, char *buf, size_t n)
{
    if (json_equal(a, b)) {
        buf[0] = '\0';
        return;
    }
    if (json_is_object(a) && json_is_object(b)) {
        const char *k;
        json_t *va;
        json_object_foreach((json_t *)a, k, va)
        {
            const json_t *vb = json_object_get(b, k);
            if (vb == NULL || !json_equal(va, vb)) {
                size_t used = (size_t)snprintf(buf, n, ".%s", k);
                if (vb != NULL && used < n)
                    first_diff(va, vb, buf + used, n - used);
                return;
            }
        }
        json_object_foreach((json_t *)b, k, va)
        {
            if (json_object_get(a, k) == NULL) {
                snprintf(buf, n, ".%s (only in the render)", k);
                return;
            }
        }
    }
    if (json_is_array(a) && json_is_array(b)) {
        size_t i;
        for (i = 0; i < json_array_size(a) && i < json_array_size(b); i++) {
            if (!json_equal(json_array_get(a, i), json_array_get(b, i))) {
                size_t used = (size_t)snprintf(buf, n, "[%zu]", i);
                if (used < n)
                    first_diff(json_array_get(a, i), json_array_get(b, i), buf + used, n - used);
                return;
            }
        }
        snprintf(buf, n, " (%zu items in the release, %zu in the render)", json_array_size(a),
                 json_array_size(b));
        return;
    }
    char *sa = json_dumps(a, JSON_ENCODE_ANY | JSON_COMPACT);
    char *sb = json_dumps(b, JSON_ENCODE_ANY | JSON_COMPACT);
    snprintf(buf, n, ": release %.200s, render %.200s", sa ? sa : "?", sb ? sb : "?");
    free(sa);
    free(sb);
}

static json_t *find_doc(const json_t *docs, const char *kind, const char *name)
{
    json_t *d;
    size_t i;

    json_array_foreach(docs, i, d)
    {
        if (strcmp(str_at(d, "kind", NULL), kind) == 0 &&
            strcmp(str_at(d, "metadata", "name"), name) == 0)
            return d;
    }
    return NULL;
}

/* A fresh render of manifests/ (new array); sets `compat`. */
static json_t *render(void)
{
    char cmd[4600], err[8192];
    char *out;
    size_t len;
    int rc;
    json_t *docs;

    snprintf(cmd, sizeof(cmd), "'%s/.ci/render-release' --print", src);
    rc = run_capture(cmd, &out, &len, err, sizeof(err));
    ck_assert_msg(rc == 0, ".ci/render-release --print exited %d: %s", rc, err);
    compat = strncmp(out, "# renderer: kustomize v2", 24) == 0;
    docs = load_docs(out, len, "the render of manifests/");
    free(out);
    return docs;
}

/* manifests/release/sluice.yaml (new array); its raw text's first line into `first`. */
static json_t *release(char *first, size_t n)
{
    char path[4200];
    FILE *f;
    long size;
    char *text;
    json_t *docs;

    snprintf(path, sizeof(path), "%s/manifests/release/sluice.yaml", src);
    f = fopen(path, "r");
    ck_assert_msg(f != NULL, "no %s: run .ci/render-release", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    size = ftell(f);
    ck_assert_int_gt(size, 0);
    rewind(f);
    text = malloc((size_t)size + 1);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(fread(text, 1, (size_t)size, f), (size_t)size);
    text[size] = '\0';
    fclose(f);
    snprintf(first, n, "%.*s", (int)strcspn(text, "\n"), text);
    docs = load_docs(text, (size_t)size, "manifests/release/sluice.yaml");
    free(text);
    return docs;
}

/* ---- tests ---------------------------------------------------------------------------------- */

START_TEST(release_equals_render)
{
    char first[512], ida[512], idb[512], where[1024];
    json_t *rel = release(first, sizeof(first)), *ren = render(), *d;
    size_t i;

    if (compat) {
        printf("release_in_sync: kubectl's kustomize is v2 (kubectl 1.20): objects compared by "
               "kind and name, generated ConfigMap hash left out\n");
        mask_generated_hash(rel);
        mask_generated_hash(ren);
    }
    json_array_foreach(rel, i, d)
    {
        json_t *other;
        doc_id(d, ida, sizeof(ida));
        if (!compat && i < json_array_size(ren)) {
            other = json_array_get(ren, i);
            ck_assert_msg(strcmp(ida, doc_id(other, idb, sizeof(idb))) == 0,
                          "object %zu: release has %s, the render %s (run .ci/render-release)", i,
                          ida, idb);
        } else {
            other = find_doc(ren, str_at(d, "kind", NULL), str_at(d, "metadata", "name"));
        }
        ck_assert_msg(other != NULL,
                      "%s is in the release file but manifests/ no longer renders it "
                      "(run .ci/render-release)",
                      ida);
        first_diff(d, other, where, sizeof(where));
        ck_assert_msg(where[0] == '\0', "%s differs at %s (run .ci/render-release)", ida, where);
    }
    json_array_foreach(ren, i, d)
    {
        ck_assert_msg(find_doc(rel, str_at(d, "kind", NULL), str_at(d, "metadata", "name")),
                      "%s is rendered from manifests/ but not in the release file (run "
                      ".ci/render-release)",
                      doc_id(d, ida, sizeof(ida)));
    }
    ck_assert_uint_eq(json_array_size(rel), json_array_size(ren));
    json_decref(rel);
    json_decref(ren);
}
END_TEST

START_TEST(release_is_installable)
{
    char first[512], want[128], id[512];
    json_t *rel = release(first, sizeof(first)), *d, *dep, *vol;
    size_t i, n = json_array_size(rel), webhooks = 0, crds = 0;
    const char *image, *cm = NULL;

    /* the header names the version it was rendered for */
    snprintf(want, sizeof(want), "# sluice %s:", SLUICE_PROJECT_VERSION);
    ck_assert_msg(strncmp(first, want, strlen(want)) == 0,
                  "the release file starts \"%s\", not \"%s\" (run .ci/render-release)", first,
                  want);
    /* namespace first, webhook configurations last, CRDs before anything after them */
    ck_assert_uint_ge(n, 10);
    ck_assert_str_eq(str_at(json_array_get(rel, 0), "kind", NULL), "Namespace");
    ck_assert_str_eq(str_at(json_array_get(rel, 0), "metadata", "name"), "sluice-system");
    json_array_foreach(rel, i, d)
    {
        const char *kind = str_at(d, "kind", NULL), *ns = str_at(d, "metadata", "namespace");
        if (strstr(kind, "WebhookConfiguration") != NULL) {
            webhooks++;
            ck_assert_msg(i >= n - 2, "%s is not among the last objects",
                          doc_id(d, id, sizeof(id)));
        }
        if (strcmp(kind, "CustomResourceDefinition") == 0) {
            crds++;
            ck_assert_msg(i == crds + 1, "CRD %s is not right after the namespace and its quota",
                          str_at(d, "metadata", "name"));
        }
        ck_assert_msg(ns == NULL || strcmp(ns, "sluice-system") == 0, "%s: another namespace",
                      doc_id(d, id, sizeof(id)));
        if (strcmp(kind, "ConfigMap") == 0)
            cm = str_at(d, "metadata", "name");
    }
    ck_assert_uint_eq(webhooks, 2);
    ck_assert_uint_eq(crds, 9);
    /* the image carries the project version; the generated ConfigMap is the one mounted */
    dep = find_doc(rel, "Deployment", "sluice-controller-manager");
    ck_assert_ptr_nonnull(dep);
    d = json_object_get(json_object_get(json_object_get(dep, "spec"), "template"), "spec");
    image = str_at(json_array_get(json_object_get(d, "containers"), 0), "image", NULL);
    snprintf(want, sizeof(want), "sluice:%s", SLUICE_PROJECT_VERSION);
    ck_assert_str_eq(image, want);
    vol = json_array_get(json_object_get(d, "volumes"), 0);
    ck_assert_ptr_nonnull(cm);
    ck_assert_str_eq(str_at(vol, "configMap", "name"), cm);
    ck_assert_int_eq(strncmp(cm, GEN_CONFIGMAP "-", strlen(GEN_CONFIGMAP) + 1), 0);
    json_decref(rel);
}
END_TEST

/* The webhook entry `name` of configuration `conf`. */
static json_t *hook_of(const json_t *conf, const char *name)
{
    json_t *w;
    size_t i;

    json_array_foreach(json_object_get(conf, "webhooks"), i, w)
    {
        if (strcmp(str_at(w, "name", NULL), name) == 0)
            return w;
    }
    return NULL;
}

START_TEST(component_manage_jobs_without_queue_name)
{
    char dir[] = "/tmp/release-sync-XXXXXX", path[4400], cmd[9000], err[8192], rel[4300] = "";
    char *out;
    size_t len, i, k, depth = 0;
    json_t *base = render(), *comp, *d;
    FILE *f;
    int rc;

    if (compat) {
        /* components need kustomize v3.7+; nothing of the component can be rendered here */
        printf("release_in_sync: component not rendered: kustomize v2 has no components\n");
        json_decref(base);
        return;
    }
    /* An overlay in a temporary directory, naming manifests/ by a relative path (kustomize
     * refuses absolute ones). */
    ck_assert_ptr_nonnull(mkdtemp(dir));
    for (const char *p = dir; *p; p++)
        depth += *p == '/';
    for (k = 0; k < depth; k++)
        strcat(rel, "../");
    strncat(rel, src + 1, sizeof(rel) - strlen(rel) - 1);
    snprintf(path, sizeof(path), "%s/kustomization.yaml", dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "resources: [%s/manifests]\ncomponents: [%s/manifests/components/"
            "manage-jobs-without-queue-name]\n",
            rel, rel);
    fclose(f);
    snprintf(cmd, sizeof(cmd), "kubectl kustomize '%s'", dir);
    rc = run_capture(cmd, &out, &len, err, sizeof(err));
    unlink(path);
    rmdir(dir);
    ck_assert_msg(rc == 0, "%s exited %d: %s", cmd, rc, err);
    comp = load_docs(out, len, "the overlay with the component");
    free(out);

    ck_assert_uint_eq(json_array_size(comp), json_array_size(base));
    json_array_foreach(base, i, d)
    {
        const char *kind = str_at(d, "kind", NULL);
        json_t *c = find_doc(comp, kind, str_at(d, "metadata", "name")), *w;
        size_t j;
        char id[512];

        ck_assert_ptr_nonnull(c);
        if (strstr(kind, "WebhookConfiguration") == NULL) {
            ck_assert_msg(json_equal(c, d), "the component changed %s", doc_id(d, id, sizeof(id)));
            continue;
        }
        ck_assert_uint_eq(json_array_size(json_object_get(c, "webhooks")),
                          json_array_size(json_object_get(d, "webhooks")));
        json_array_foreach(json_object_get(d, "webhooks"), j, w)
        {
            const char *name = str_at(w, "name", NULL);
            json_t *cw = hook_of(c, name), *want;
            ck_assert_msg(cw != NULL, "the component lost webhook %s", name);
            /* The queue-side kinds' webhooks (kueue.x-k8s.io) are left as they are; those of the
             * job kinds (Job, JobSet, the Kubeflow and Ray kinds) select namespaces instead. */
            const char *group = json_string_value(json_array_get(
                json_object_get(json_array_get(json_object_get(w, "rules"), 0), "apiGroups"), 0));
            if (group != NULL && strcmp(group, "kueue.x-k8s.io") == 0) {
                ck_assert_msg(json_equal(cw, w), "the component changed webhook %s", name);
                continue;
            }
            /* a job kind's webhook: the base's entry less its objectSelector */
            ck_assert_msg(json_object_get(w, "objectSelector") != NULL,
                          "the base's %s has no objectSelector", name);
            ck_assert_msg(json_object_get(cw, "objectSelector") == NULL,
                          "the component left the objectSelector of %s", name);
            want = json_deep_copy(w);
            ck_assert_int_eq(json_object_del(want, "objectSelector"), 0);
            ck_assert_msg(json_equal(cw, want),
                          "the component changed more than the selector "
                          "of %s",
                          name);
            json_decref(want);
        }
    }
    json_decref(comp);
    json_decref(base);
}
END_TEST

int main(void)
{
    const char *s = getenv("SLUICE_SOURCE_DIR");
    Suite *suite = suite_create("release_in_sync");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    if (s == NULL || s[0] != '/') {
        fprintf(stderr, "SLUICE_SOURCE_DIR must be an absolute path\n");
        return EXIT_FAILURE;
    }
    snprintf(src, sizeof(src), "%s", s);
    if (system("command -v kubectl >/dev/null 2>&1") != 0) {
        printf("release_in_sync: SKIPPED: no kubectl in PATH to render manifests/ with\n");
        return 77;
    }
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, release_equals_render);
    tcase_add_test(tc, release_is_installable);
    tcase_add_test(tc, component_manage_jobs_without_queue_name);
    suite_add_tcase(suite, tc);
    sr = srunner_create(suite);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
