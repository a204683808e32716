/* test_kube_kubeconfig -- kubeconfig resolution, base64 "-data" fields, token files, in-cluster. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/kubeconfig.h"

#include "kube/execcred.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "-----BEGIN CERTIFICATE-----\nX\n" in base64 (JSON-escaped), split over two lines. */
#define PEM_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t\\nClgK"
#define PEM_TXT "-----BEGIN CERTIFICATE-----\nX\n"

static const char *kubeconfig_json =
    "{\"apiVersion\":\"v1\",\"kind\":\"Config\",\"current-context\":\"dev\","
    " \"contexts\":["
    "  {\"name\":\"dev\",\"context\":{\"cluster\":\"c1\",\"user\":\"u1\",\"namespace\":\"team\"}},"
    "  {\"name\":\"ops\",\"context\":{\"cluster\":\"c2\",\"user\":\"u2\"}},"
    "  {\"name\":\"broken\",\"context\":{\"cluster\":\"c3\",\"user\":\"u1\"}},"
    "  {\"name\":\"nouser\",\"context\":{\"cluster\":\"c1\",\"user\":\"missing\"}}],"
    " \"clusters\":["
    "  {\"name\":\"c1\",\"cluster\":{\"server\":\"https://127.0.0.1:6443/\","
    "     \"certificate-authority-data\":\"" PEM_B64 "\"}},"
    "  {\"name\":\"c2\",\"cluster\":{\"server\":\"https://k.example:443\","
    "     \"certificate-authority\":\"pki/ca.crt\",\"insecure-skip-tls-verify\":true}},"
    "  {\"name\":\"c3\",\"cluster\":{\"server\":\"https://x\","
    "     \"certificate-authority-data\":\"!!notbase64\"}}],"
    " \"users\":["
    "  {\"name\":\"u1\",\"user\":{\"client-certificate-data\":\"" PEM_B64 "\","
    "     \"client-key-data\":\"" PEM_B64 "\"}},"
    "  {\"name\":\"u2\",\"user\":{\"client-certificate\":\"/abs/cert.pem\","
    "     \"client-key\":\"key.pem\",\"tokenFile\":\"tok\"}}]}";

static json_t *load_doc(void)
{
    json_error_t e;
    json_t *root = json_loads(kubeconfig_json, 0, &e);

    ck_assert_msg(root != NULL, "fixture: %s", e.text);
    return root;
}

START_TEST(test_current_context_with_data_fields)
{
    json_t *root = load_doc();
    kube_config_t cfg;
    err_msg_t msg;

    ck_assert_int_eq(kube_config_from_json(root, NULL, "/etc/kube", &cfg, &msg), ERR_OK);
    ck_assert_str_eq(cfg.server, "https://127.0.0.1:6443");
    ck_assert_str_eq(cfg.namespace_name, "team");
    ck_assert_ptr_null(cfg.ca_file);
    ck_assert_uint_eq(cfg.ca_data.len, strlen(PEM_TXT));
    ck_assert_str_eq((char *)cfg.ca_data.data, PEM_TXT);
    ck_assert_str_eq((char *)cfg.cert_data.data, PEM_TXT);
    ck_assert_str_eq((char *)cfg.key_data.data, PEM_TXT);
    ck_assert(!cfg.insecure);
    ck_assert_ptr_null(cfg.token);
    kube_config_fini(&cfg);
    json_decref(root);
}
END_TEST

START_TEST(test_named_context_with_file_fields)
{
    json_t *root = load_doc();
    kube_config_t cfg;
    err_msg_t msg;

    ck_assert_int_eq(kube_config_from_json(root, "ops", "/etc/kube", &cfg, &msg), ERR_OK);
    ck_assert_str_eq(cfg.server, "https://k.example:443");
    ck_assert_str_eq(cfg.namespace_name, "default");
    ck_assert_str_eq(cfg.ca_file, "/etc/kube/pki/ca.crt");
    ck_assert_str_eq(cfg.cert_file, "/abs/cert.pem");
    ck_assert_str_eq(cfg.key_file, "/etc/kube/key.pem");
    ck_assert_str_eq(cfg.token_file, "/etc/kube/tok");
    ck_assert(cfg.insecure);
    kube_config_fini(&cfg);
    json_decref(root);
}
END_TEST

START_TEST(test_errors_name_the_field)
{
    json_t *root = load_doc();
    kube_config_t cfg;
    err_msg_t msg;

    memset(&cfg, 0x5a, sizeof(cfg));
    ck_assert_int_eq(kube_config_from_json(root, "broken", NULL, &cfg, &msg), ERR_PARSE);
    ck_assert_msg(strstr(msg.text, "clusters[2].cluster.certificate-authority-data: ") == msg.text,
                  "%s", msg.text);
    ck_assert_int_eq(((unsigned char *)&cfg)[0], 0x5a); /* untouched on failure */
    ck_assert_int_eq(kube_config_from_json(root, "nouser", NULL, &cfg, &msg), ERR_NOT_FOUND);
    ck_assert_str_eq(msg.text, "users: user \"missing\" not found");
    ck_assert_int_eq(kube_config_from_json(root, "absent", NULL, &cfg, &msg), ERR_NOT_FOUND);
    ck_assert_str_eq(msg.text, "contexts: context \"absent\" not found");
    json_decref(root);

    root = json_pack("{s:s, s:[{s:s, s:{s:s}}], s:[{s:s, s:{s:s}}]}", "current-context", "a",
                     "contexts", "name", "a", "context", "cluster", "c", "clusters", "name", "c",
                     "cluster", "server", "ftp://x");
    ck_assert_int_eq(kube_config_from_json(root, NULL, NULL, &cfg, &msg), ERR_INVALID);
    ck_assert_str_eq(msg.text,
                     "clusters[0].cluster.server: \"ftp://x\" must start with https:// or http://");
    json_decref(root);
    /* found by fuzz_kubeconfig: "https:///" lost its slashes and became "https:" */
    root = json_pack("{s:s, s:[{s:s, s:{s:s}}], s:[{s:s, s:{s:s}}]}", "current-context", "a",
                     "contexts", "name", "a", "context", "cluster", "c", "clusters", "name", "c",
                     "cluster", "server", "https:///");
    ck_assert_int_eq(kube_config_from_json(root, NULL, NULL, &cfg, &msg), ERR_INVALID);
    ck_assert_str_eq(msg.text, "clusters[0].cluster.server: \"https:///\" has no host");
    json_decref(root);
}
END_TEST

/* A one-context kubeconfig: server `server`, user `user_json` (an object's text). */
static json_t *one_user(const char *server, const char *user_json)
{
    char text[2048];
    json_error_t e;
    json_t *root;

    snprintf(text, sizeof(text),
             "{\"current-context\":\"a\",\"contexts\":[{\"name\":\"a\",\"context\":{"
             "\"cluster\":\"c\",\"user\":\"eks-admin\"}}],\"clusters\":[{\"name\":\"c\","
             "\"cluster\":{\"server\":\"%s\"}}],\"users\":[{\"name\":\"eks-admin\",\"user\":%s}]}",
             server, user_json);
    root = json_loads(text, 0, &e);
    ck_assert_msg(root != NULL, "fixture: %s", e.text);
    return root;
}

START_TEST(test_unsupported_credentials_refused_loudly)
{
    kube_config_t cfg;
    err_msg_t msg;
    json_t *root;

    /* An exec plugin of an unknown API version is refused by name. */
    root = one_user("https://k:443", "{\"exec\":{\"apiVersion\":"
                                     "\"client.authentication.k8s.io/v1alpha1\",\"command\":"
                                     "\"aws\"}}");
    ck_assert_int_eq(kube_config_from_json(root, NULL, NULL, &cfg, &msg), ERR_UNSUPPORTED);
    ck_assert_msg(strstr(msg.text, "users[0].user.exec.apiVersion: user \"eks-admin\"") == msg.text,
                  "%s", msg.text);
    json_decref(root);
    root = one_user("https://k:443", "{\"auth-provider\":{\"name\":\"gcp\"}}");
    ck_assert_int_eq(kube_config_from_json(root, NULL, NULL, &cfg, &msg), ERR_UNSUPPORTED);
    ck_assert_msg(strstr(msg.text, "users[0].user.auth-provider: user \"eks-admin\" uses the auth "
                                   "provider \"gcp\"") == msg.text,
                  "%s", msg.text);
    json_decref(root);
    /* Bearer tokens never go over plain http. */
    root = one_user("http://k:8080", "{\"token\":\"secret\"}");
    ck_assert_int_eq(kube_config_from_json(root, NULL, NULL, &cfg, &msg), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(msg.text, "plain http://"));
    ck_assert_ptr_null(strstr(msg.text, "secret"));
    json_decref(root);
    root = one_user("http://k:8080", "{\"tokenFile\":\"/t\"}");
    ck_assert_int_eq(kube_config_from_json(root, NULL, NULL, &cfg, &msg), ERR_INVALID);
    json_decref(root);
    /* http without a token (kubectl proxy) and https with one are fine. */
    root = one_user("http://127.0.0.1:8001", "{}");
    ck_assert_int_eq(kube_config_from_json(root, NULL, NULL, &cfg, &msg), ERR_OK);
    kube_config_fini(&cfg);
    json_decref(root);
    root = one_user("https://k:443", "{\"token\":\"secret\"}");
    ck_assert_int_eq(kube_config_from_json(root, NULL, NULL, &cfg, &msg), ERR_OK);
    kube_config_fini(&cfg);
    json_decref(root);
}
END_TEST

/* Write the ExecCredential plugin `dir`/plug.sh: counts its runs in dir/count, checks
 * KUBERNETES_EXEC_INFO, prints a token "tok-<arg 1>-<run>" of apiVersion $API expiring at $EXP,
 * or fails with $FAIL. */
static void write_plugin(const char *dir)
{
    char path[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/plug.sh", dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("#!/bin/sh\n"
          "n=$(cat \"$DIR/count\" 2>/dev/null || echo 0); n=$((n + 1)); echo $n >\"$DIR/count\"\n"
          "[ -z \"$FAIL\" ] || { echo \"plugin says no\" >&2; exit \"$FAIL\"; }\n"
          "case \"$KUBERNETES_EXEC_INFO\" in *'\"interactive\":false'*) ;; *) exit 9 ;; esac\n"
          "printf '{\"apiVersion\":\"%s\",\"kind\":\"ExecCredential\",\"status\":{\"token\":"
          "\"tok-%s-%s\",\"expirationTimestamp\":\"%s\"}}' \"$API\" \"$1\" \"$n\" \"$EXP\"\n",
          f);
    fclose(f);
    chmod(path, 0700);
}

/* A kubeconfig whose user runs ./plug.sh (relative to the kubeconfig) with `api`, answering
 * `answer_api`, expiring at `exp`, failing with status `fail` ("" = not). */
static json_t *exec_user(const char *dir, const char *api, const char *answer_api, const char *exp,
                         const char *fail)
{
    char user[1024];

    snprintf(user, sizeof(user),
             "{\"exec\":{\"apiVersion\":\"%s\",\"command\":\"./plug.sh\",\"args\":[\"a1\"],"
             "\"env\":[{\"name\":\"DIR\",\"value\":\"%s\"},{\"name\":\"API\",\"value\":\"%s\"},"
             "{\"name\":\"EXP\",\"value\":\"%s\"},{\"name\":\"FAIL\",\"value\":\"%s\"}]}}",
             api, dir, answer_api, exp, fail);
    return one_user("https://k:443", user);
}

START_TEST(test_exec_credential_plugin)
{
    char dir[] = "/tmp/sluice-exec-XXXXXX", path[256];
    const char *v1 = "client.authentication.k8s.io/v1";
    const char *v1beta1 = "client.authentication.k8s.io/v1beta1";
    const char *tok = NULL;
    kube_config_t cfg;
    err_msg_t msg;
    json_t *root;

    ck_assert_ptr_nonnull(mkdtemp(dir));
    write_plugin(dir);
    snprintf(path, sizeof(path), "%s/count", dir);

    /* A token valid for long: the plugin runs once, the token is reused. */
    root = exec_user(dir, v1, v1, "2099-01-01T00:00:00Z", "");
    ck_assert_msg(kube_config_from_json(root, NULL, dir, &cfg, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_ptr_nonnull(cfg.exec);
    ck_assert_msg(kube_config_token(&cfg, &tok, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_str_eq(tok, "tok-a1-1");
    ck_assert_int_eq(kube_config_token(&cfg, &tok, &msg), ERR_OK);
    ck_assert_str_eq(tok, "tok-a1-1");
    ck_assert_uint_eq(kube_exec_runs(cfg.exec), 1);
    kube_config_fini(&cfg);
    json_decref(root);
    unlink(path);

    /* An expired one (v1beta1 this time): the plugin runs for every token. */
    root = exec_user(dir, v1beta1, v1beta1, "2001-01-01T00:00:00Z", "");
    ck_assert_int_eq(kube_config_from_json(root, NULL, dir, &cfg, &msg), ERR_OK);
    ck_assert_int_eq(kube_config_token(&cfg, &tok, &msg), ERR_OK);
    ck_assert_str_eq(tok, "tok-a1-1");
    ck_assert_int_eq(kube_config_token(&cfg, &tok, &msg), ERR_OK);
    ck_assert_str_eq(tok, "tok-a1-2");
    kube_config_fini(&cfg);
    json_decref(root);
    unlink(path);

    /* Failures name the user and the plugin. */
    root = exec_user(dir, v1, v1, "2099-01-01T00:00:00Z", "3");
    ck_assert_int_eq(kube_config_from_json(root, NULL, dir, &cfg, &msg), ERR_OK);
    ck_assert_int_ne(kube_config_token(&cfg, &tok, &msg), ERR_OK);
    ck_assert_ptr_null(tok);
    ck_assert_msg(strstr(msg.text, "user \"eks-admin\": exec plugin \"") == msg.text &&
                      strstr(msg.text, "plug.sh\" failed (exit status 3)") != NULL,
                  "%s", msg.text);
    kube_config_fini(&cfg);
    json_decref(root);
    root = exec_user(dir, v1, v1beta1, "2099-01-01T00:00:00Z", "");
    ck_assert_int_eq(kube_config_from_json(root, NULL, dir, &cfg, &msg), ERR_OK);
    ck_assert_int_eq(kube_config_token(&cfg, &tok, &msg), ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(msg.text, "answered apiVersion"));
    kube_config_fini(&cfg);
    json_decref(root);
    root = exec_user("/nonexistent", v1, v1, "x", "");
    ck_assert_int_eq(kube_config_from_json(root, NULL, "/nonexistent", &cfg, &msg), ERR_OK);
    ck_assert_int_ne(kube_config_token(&cfg, &tok, &msg), ERR_OK);
    ck_assert_ptr_nonnull(strstr(msg.text, "cannot be started"));
    kube_config_fini(&cfg);
    json_decref(root);
    /* Never over plain http. */
    {
        char user[256];
        snprintf(user, sizeof(user), "{\"exec\":{\"apiVersion\":\"%s\",\"command\":\"x\"}}", v1);
        root = one_user("http://k:80", user);
        ck_assert_int_eq(kube_config_from_json(root, NULL, NULL, &cfg, &msg), ERR_INVALID);
        json_decref(root);
    }
    unlink(path);
    snprintf(path, sizeof(path), "%s/plug.sh", dir);
    unlink(path);
    rmdir(dir);
}
END_TEST

START_TEST(test_base64_variants)
{
    kube_blob_t b;
    err_msg_t msg;

    ck_assert_int_eq(kube_base64_decode("aGVsbG8=", 8, &b, &msg), ERR_OK);
    ck_assert_str_eq((char *)b.data, "hello");
    free(b.data);
    ck_assert_int_eq(kube_base64_decode("aGVsbG8", 7, &b, &msg), ERR_OK); /* no padding */
    ck_assert_uint_eq(b.len, 5);
    free(b.data);
    ck_assert_int_eq(kube_base64_decode("aGk=", 4, &b, &msg), ERR_OK);
    ck_assert_str_eq((char *)b.data, "hi");
    free(b.data);
    ck_assert_int_eq(kube_base64_decode("", 0, &b, &msg), ERR_OK);
    ck_assert_uint_eq(b.len, 0);
    free(b.data);
    ck_assert_int_eq(kube_base64_decode("a", 1, &b, &msg), ERR_PARSE);
    ck_assert_int_eq(kube_base64_decode("aGk=x", 5, &b, &msg), ERR_PARSE);
    ck_assert_int_eq(kube_base64_decode("aG==k", 5, &b, &msg), ERR_PARSE);
    ck_assert_int_eq(kube_base64_decode("a===", 4, &b, &msg), ERR_PARSE);
}
END_TEST

/* A temporary directory for files; removed by the caller with rm_tree(). */
static void make_tmpdir(char *dir, size_t n)
{
    snprintf(dir, n, "/tmp/sluice-kubecfg-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void rm_files(const char *dir, const char *const *names)
{
    char path[512];

    for (; *names; names++) {
        snprintf(path, sizeof(path), "%s/%s", dir, *names);
        unlink(path);
    }
    rmdir(dir);
}

START_TEST(test_load_file_resolves_relative_paths_and_token_rotation)
{
    static const char *const files[] = {"config", "tok", "tok.new", NULL};
    char dir[64], path[128];
    kube_config_t cfg;
    const char *tok;
    err_msg_t msg;

    make_tmpdir(dir, sizeof(dir));
    write_file(dir, "config", kubeconfig_json);
    write_file(dir, "tok", "first-token\n");
    snprintf(path, sizeof(path), "%s/config", dir);
    ck_assert_int_eq(kube_config_load_file(path, "ops", &cfg, &msg), ERR_OK);
    snprintf(path, sizeof(path), "%s/tok", dir);
    ck_assert_str_eq(cfg.token_file, path);
    ck_assert_int_eq(kube_config_token(&cfg, &tok, &msg), ERR_OK);
    ck_assert_str_eq(tok, "first-token");
    /* Rotation as kubelet does it: a new file renamed over the old one. */
    write_file(dir, "tok.new", "second-token-longer");
    snprintf(path, sizeof(path), "%s/tok.new", dir);
    {
        char dst[128];

        snprintf(dst, sizeof(dst), "%s/tok", dir);
        ck_assert_int_eq(rename(path, dst), 0);
    }
    ck_assert_int_eq(kube_config_token(&cfg, &tok, &msg), ERR_OK);
    ck_assert_str_eq(tok, "second-token-longer");
    /* A vanished file keeps the last good token and reports the error. */
    snprintf(path, sizeof(path), "%s/tok", dir);
    unlink(path);
    ck_assert_int_eq(kube_config_token(&cfg, &tok, &msg), ERR_IO);
    ck_assert_str_eq(tok, "second-token-longer");
    kube_config_fini(&cfg);

    snprintf(path, sizeof(path), "%s/missing", dir);
    ck_assert_int_eq(kube_config_load_file(path, NULL, &cfg, &msg), ERR_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(msg.text, "missing"));
    rm_files(dir, files);
}
END_TEST

START_TEST(test_load_yaml_kubeconfig)
{
    static const char *const files[] = {"config", NULL};
    static const char yaml[] = "apiVersion: v1\n"
                               "kind: Config\n"
                               "clusters:\n"
                               "- cluster:\n"
                               "    certificate-authority: ca.crt\n"
                               "    server: https://127.0.0.1:36443\n"
                               "  name: local\n"
                               "contexts:\n"
                               "- context:\n"
                               "    cluster: local\n"
                               "    user: admin\n"
                               "  name: local\n"
                               "current-context: local\n"
                               "users:\n"
                               "- name: admin\n"
                               "  user:\n"
                               "    token: abc.def\n";
    char dir[64], path[128];
    kube_config_t cfg;
    const char *tok;
    err_msg_t msg;

    make_tmpdir(dir, sizeof(dir));
    write_file(dir, "config", yaml);
    snprintf(path, sizeof(path), "%s/config", dir);
    ck_assert_int_eq(kube_config_load_file(path, NULL, &cfg, &msg), ERR_OK);
    ck_assert_str_eq(cfg.server, "https://127.0.0.1:36443");
    snprintf(path, sizeof(path), "%s/ca.crt", dir);
    ck_assert_str_eq(cfg.ca_file, path);
    ck_assert_int_eq(kube_config_token(&cfg, &tok, &msg), ERR_OK);
    ck_assert_str_eq(tok, "abc.def");
    kube_config_fini(&cfg);
    write_file(dir, "config", "clusters: [\n");
    snprintf(path, sizeof(path), "%s/config", dir);
    ck_assert_int_eq(kube_config_load_file(path, NULL, &cfg, &msg), ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(msg.text, "line"));
    rm_files(dir, files);
}
END_TEST

START_TEST(test_load_prefers_flag_then_env_list)
{
    static const char *const files[] = {"config", NULL};
    char dir[64], path[128], env[300];
    kube_config_t cfg;
    err_msg_t msg;

    make_tmpdir(dir, sizeof(dir));
    write_file(dir, "config", kubeconfig_json);
    snprintf(path, sizeof(path), "%s/config", dir);
    snprintf(env, sizeof(env), "%s:/nonexistent/second", path);
    setenv("KUBECONFIG", env, 1);
    ck_assert_int_eq(kube_config_load(NULL, NULL, &cfg, &msg), ERR_OK);
    ck_assert_str_eq(cfg.namespace_name, "team");
    kube_config_fini(&cfg);
    setenv("KUBECONFIG", "/nonexistent/first", 1);
    ck_assert_int_eq(kube_config_load(path, "ops", &cfg, &msg), ERR_OK);
    ck_assert_str_eq(cfg.server, "https://k.example:443");
    kube_config_fini(&cfg);
    ck_assert_int_eq(kube_config_load(NULL, NULL, &cfg, &msg), ERR_NOT_FOUND);
    unsetenv("KUBECONFIG");
    rm_files(dir, files);
}
END_TEST

START_TEST(test_load_falls_back_to_in_cluster_then_home)
{
    static const char *const files[] = {".kube/config", NULL};
    char dir[64], sub[96];
    kube_config_t cfg;
    err_msg_t msg;

    make_tmpdir(dir, sizeof(dir));
    snprintf(sub, sizeof(sub), "%s/.kube", dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    write_file(sub, "config", kubeconfig_json);
    unsetenv("KUBECONFIG");
    setenv("HOME", dir, 1);
    /* In-cluster comes before ~/.kube/config; here its token file is missing. */
    setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    ck_assert_int_eq(kube_config_load(NULL, NULL, &cfg, &msg), ERR_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(msg.text, "in-cluster token"));
    unsetenv("KUBERNETES_SERVICE_HOST");
    ck_assert_int_eq(kube_config_load(NULL, NULL, &cfg, &msg), ERR_OK);
    ck_assert_str_eq(cfg.namespace_name, "team");
    kube_config_fini(&cfg);
    rm_files(dir, files);
    rmdir(sub);
    rmdir(dir);
}
END_TEST

START_TEST(test_in_cluster_with_overridden_paths)
{
    static const char *const files[] = {"token", "ca.crt", "namespace", NULL};
    char dir[64], tok[128], ca[128], ns[128];
    kube_incluster_t p;
    kube_config_t cfg;
    const char *t;
    err_msg_t msg;

    make_tmpdir(dir, sizeof(dir));
    write_file(dir, "token", "sa-token\n");
    write_file(dir, "ca.crt", PEM_TXT);
    write_file(dir, "namespace", "kueue-system\n");
    snprintf(tok, sizeof(tok), "%s/token", dir);
    snprintf(ca, sizeof(ca), "%s/ca.crt", dir);
    snprintf(ns, sizeof(ns), "%s/namespace", dir);
    p = (kube_incluster_t){"10.96.0.1", "443", tok, ca, ns};
    ck_assert_int_eq(kube_config_in_cluster(&p, &cfg, &msg), ERR_OK);
    ck_assert_str_eq(cfg.server, "https://10.96.0.1:443");
    ck_assert_str_eq(cfg.namespace_name, "kueue-system");
    ck_assert_str_eq(cfg.ca_file, ca);
    ck_assert_int_eq(kube_config_token(&cfg, &t, &msg), ERR_OK);
    ck_assert_str_eq(t, "sa-token");
    kube_config_fini(&cfg);

    p.host = "fd00::1";
    ck_assert_int_eq(kube_config_in_cluster(&p, &cfg, &msg), ERR_OK);
    ck_assert_str_eq(cfg.server, "https://[fd00::1]:443");
    kube_config_fini(&cfg);

    unsetenv("KUBERNETES_SERVICE_HOST");
    p.host = NULL;
    ck_assert_int_eq(kube_config_in_cluster(&p, &cfg, &msg), ERR_NOT_FOUND);
    p.host = "10.0.0.1";
    p.token_path = "/nonexistent/token";
    ck_assert_int_eq(kube_config_in_cluster(&p, &cfg, &msg), ERR_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(msg.text, "/nonexistent/token"));
    rm_files(dir, files);
}
END_TEST

static Suite *kubeconfig_suite(void)
{
    Suite *s = suite_create("kube_kubeconfig");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_current_context_with_data_fields);
    tcase_add_test(tc, test_named_context_with_file_fields);
    tcase_add_test(tc, test_errors_name_the_field);
    tcase_add_test(tc, test_unsupported_credentials_refused_loudly);
    tcase_add_test(tc, test_exec_credential_plugin);
    tcase_add_test(tc, test_base64_variants);
    tcase_add_test(tc, test_load_file_resolves_relative_paths_and_token_rotation);
    tcase_add_test(tc, test_load_yaml_kubeconfig);
    tcase_add_test(tc, test_load_prefers_flag_then_env_list);
    tcase_add_test(tc, test_load_falls_back_to_in_cluster_then_home);
    tcase_add_test(tc, test_in_cluster_with_overridden_paths);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(kubeconfig_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
