/* kubeconfig -- where the API server is and how to authenticate: kubeconfig files and in-cluster.
 */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/kubeconfig.h"

#include "kube/execcred.h"

#include "util/base64.h"

#include "model/yaml.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/*
 * A kubeconfig names clusters, users and contexts in three lists of {name, <kind>} pairs and
 * selects one context with current-context. We resolve exactly one context into a flat
 * kube_config_t, as client-go's clientcmd does for a single file; merging several files from a
 * $KUBECONFIG list is not done (the first file wins, see kube_config_load()).
 *
 * Files named in the kubeconfig are relative to the kubeconfig's own directory, as in clientcmd
 * (ResolvePaths); "-data" variants hold base64 PEM and win over the file variant.
 */

#define KUBE_FILE_MAX (4u << 20) /* kubeconfigs, tokens and CA bundles are small */
#define SA_DIR        "/var/run/secrets/kubernetes.io/serviceaccount/"

void kube_config_init(kube_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
}

static void blob_free(kube_blob_t *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
}

void kube_config_fini(kube_config_t *cfg)
{
    if (cfg == NULL)
        return;
    free(cfg->server);
    free(cfg->namespace_name);
    free(cfg->ca_file);
    blob_free(&cfg->ca_data);
    free(cfg->cert_file);
    blob_free(&cfg->cert_data);
    free(cfg->key_file);
    blob_free(&cfg->key_data);
    free(cfg->token);
    free(cfg->token_file);
    kube_exec_free(cfg->exec);
    memset(cfg, 0, sizeof(*cfg));
}

/* ---- base64 ------------------------------------------------------------------------------ */

err_t kube_base64_decode(const char *s, size_t len, kube_blob_t *out, err_msg_t *msg)
{
    unsigned char *data;
    size_t n;
    err_t rc = base64_decode(s, len, &data, &n, msg);

    if (rc != ERR_OK)
        return rc;
    out->data = data;
    out->len = n;
    return ERR_OK;
}

/* ---- small helpers ----------------------------------------------------------------------- */

/* Read a whole (small) file into a NUL-terminated buffer. */
static err_t read_file(const char *path, char **out, size_t *out_len, err_msg_t *msg)
{
    FILE *f;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    err_t rc = ERR_OK;

    f = fopen(path, "rb");
    if (f == NULL)
        return err_set(msg, errno == ENOENT ? ERR_NOT_FOUND : ERR_IO, "%s: %s", path,
                       strerror(errno));
    for (;;) {
        size_t got;

        if (cap - n < 4096) {
            char *nb;

            if (cap >= KUBE_FILE_MAX) {
                rc = err_set(msg, ERR_OVERFLOW, "%s: larger than %u bytes", path, KUBE_FILE_MAX);
                goto out;
            }
            cap = cap ? cap * 2 : 8192;
            nb = realloc(buf, cap + 1);
            if (nb == NULL) {
                rc = err_set(msg, ERR_NOMEM, "%s: out of memory", path);
                goto out;
            }
            buf = nb;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                rc = err_set(msg, ERR_IO, "%s: read error", path);
            break;
        }
    }
out:
    fclose(f);
    if (rc != ERR_OK) {
        free(buf);
        return rc;
    }
    if (buf == NULL) {
        buf = malloc(1);
        if (buf == NULL)
            return err_set(msg, ERR_NOMEM, "%s: out of memory", path);
    }
    buf[n] = '\0';
    *out = buf;
    *out_len = n;
    return ERR_OK;
}

/* `path` joined to `base_dir` unless absolute or base_dir is NULL. */
static char *resolve_path(const char *base_dir, const char *path)
{
    size_t bl, pl;
    char *r;

    if (base_dir == NULL || path[0] == '/' || base_dir[0] == '\0')
        return strdup(path);
    bl = strlen(base_dir);
    pl = strlen(path);
    r = malloc(bl + pl + 2);
    if (r == NULL)
        return NULL;
    memcpy(r, base_dir, bl);
    r[bl] = '/';
    memcpy(r + bl + 1, path, pl + 1);
    return r;
}

/* Trim ASCII whitespace at both ends in place; returns `s`. */
static char *trim(char *s)
{
    size_t n = strlen(s), i = 0;

    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == '\t'))
        s[--n] = '\0';
    while (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')
        i++;
    if (i > 0)
        memmove(s, s + i, n - i + 1);
    return s;
}

/* Find the entry named `name` in kubeconfig list `key` ("clusters"); returns its `inner` object
 * (borrowed) and index, or an error naming the path. */
static err_t find_named(json_t *root, const char *key, const char *inner, const char *name,
                        json_t **out, size_t *out_index, err_msg_t *msg)
{
    json_t *list = json_object_get(root, key), *item;
    size_t i;

    if (list == NULL || json_is_null(list))
        return err_set(msg, ERR_NOT_FOUND, "%s: %s \"%s\" not found", key, inner, name);
    if (!json_is_array(list))
        return err_set(msg, ERR_INVALID, "%s: must be a list", key);
    json_array_foreach(list, i, item)
    {
        json_t *n = json_object_get(item, "name"), *body;

        if (!json_is_string(n) || strcmp(json_string_value(n), name) != 0)
            continue;
        body = json_object_get(item, inner);
        if (body != NULL && !json_is_object(body) && !json_is_null(body))
            return err_set(msg, ERR_INVALID, "%s[%zu].%s: must be a mapping", key, i, inner);
        *out = body;
        *out_index = i;
        return ERR_OK;
    }
    return err_set(msg, ERR_NOT_FOUND, "%s: %s \"%s\" not found", key, inner, name);
}

/* Optional string field: NULL when absent or null; ERR_INVALID when not a string. */
static err_t get_str(json_t *obj, const char *field, const char *path, const char **out,
                     err_msg_t *msg)
{
    json_t *v = obj ? json_object_get(obj, field) : NULL;

    *out = NULL;
    if (v == NULL || json_is_null(v))
        return ERR_OK;
    if (!json_is_string(v))
        return err_set(msg, ERR_INVALID, "%s.%s: must be a string", path, field);
    *out = json_string_value(v);
    if ((*out)[0] == '\0')
        *out = NULL;
    return ERR_OK;
}

/* Copy the optional file field `file_key` (resolved) and the base64 `data_key` field. */
static err_t get_file_and_data(json_t *obj, const char *path, const char *file_key,
                               const char *data_key, const char *base_dir, char **file_out,
                               kube_blob_t *data_out, err_msg_t *msg)
{
    const char *file, *data;
    err_t rc;

    rc = get_str(obj, file_key, path, &file, msg);
    if (rc == ERR_OK)
        rc = get_str(obj, data_key, path, &data, msg);
    if (rc != ERR_OK)
        return rc;
    if (data != NULL) {
        rc = kube_base64_decode(data, strlen(data), data_out, msg);
        if (rc != ERR_OK)
            return err_prefix(msg, rc, "%s.%s: ", path, data_key);
    }
    if (file != NULL) {
        *file_out = resolve_path(base_dir, file);
        if (*file_out == NULL)
            return err_set(msg, ERR_NOMEM, "%s.%s: out of memory", path, file_key);
    }
    return ERR_OK;
}

static err_t dup_str(const char *s, char **out, err_msg_t *msg)
{
    if (s == NULL)
        return ERR_OK;
    *out = strdup(s);
    if (*out == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    return ERR_OK;
}

/* Normalise a server URL: require a scheme and a host, strip trailing slashes. */
static err_t set_server(kube_config_t *cfg, const char *server, const char *path, err_msg_t *msg)
{
    size_t n, scheme = strncmp(server, "https://", 8) == 0  ? 8
                       : strncmp(server, "http://", 7) == 0 ? 7
                                                            : 0;

    if (scheme == 0)
        return err_set(msg, ERR_INVALID, "%s.server: \"%s\" must start with https:// or http://",
                       path, server);
    if (server[scheme] == '\0' || server[scheme] == '/')
        return err_set(msg, ERR_INVALID, "%s.server: \"%s\" has no host", path, server);
    cfg->server = strdup(server);
    if (cfg->server == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    n = strlen(cfg->server);
    while (n > 0 && cfg->server[n - 1] == '/')
        cfg->server[--n] = '\0';
    return ERR_OK;
}

/* ---- kubeconfig ---------------------------------------------------------------------------- */

err_t kube_config_from_json(json_t *root, const char *context, const char *base_dir,
                            kube_config_t *out, err_msg_t *msg)
{
    kube_config_t cfg;
    json_t *ctx, *cluster, *user;
    const char *cluster_name, *user_name, *ns, *server, *token;
    char path[128];
    size_t idx;
    err_t rc;

    if (!json_is_object(root))
        return err_set(msg, ERR_INVALID, "kubeconfig: must be a mapping");
    kube_config_init(&cfg);
    if (context == NULL) {
        rc = get_str(root, "current-context", "kubeconfig", &context, msg);
        if (rc != ERR_OK)
            return rc;
        if (context == NULL)
            return err_set(msg, ERR_NOT_FOUND, "current-context: not set");
    }
    rc = find_named(root, "contexts", "context", context, &ctx, &idx, msg);
    if (rc != ERR_OK)
        return rc;
    snprintf(path, sizeof(path), "contexts[%zu].context", idx);
    rc = get_str(ctx, "cluster", path, &cluster_name, msg);
    if (rc == ERR_OK)
        rc = get_str(ctx, "user", path, &user_name, msg);
    if (rc == ERR_OK)
        rc = get_str(ctx, "namespace", path, &ns, msg);
    if (rc != ERR_OK)
        return rc;
    if (cluster_name == NULL)
        return err_set(msg, ERR_INVALID, "%s.cluster: required", path);
    rc = dup_str(ns ? ns : "default", &cfg.namespace_name, msg);
    if (rc != ERR_OK)
        goto fail;

    rc = find_named(root, "clusters", "cluster", cluster_name, &cluster, &idx, msg);
    if (rc != ERR_OK)
        goto fail;
    snprintf(path, sizeof(path), "clusters[%zu].cluster", idx);
    rc = get_str(cluster, "server", path, &server, msg);
    if (rc != ERR_OK)
        goto fail;
    if (server == NULL) {
        rc = err_set(msg, ERR_INVALID, "%s.server: required", path);
        goto fail;
    }
    rc = set_server(&cfg, server, path, msg);
    if (rc != ERR_OK)
        goto fail;
    rc = get_file_and_data(cluster, path, "certificate-authority", "certificate-authority-data",
                           base_dir, &cfg.ca_file, &cfg.ca_data, msg);
    if (rc != ERR_OK)
        goto fail;
    if (cluster != NULL) {
        json_t *v = json_object_get(cluster, "insecure-skip-tls-verify");

        if (v != NULL && !json_is_null(v) && !json_is_boolean(v)) {
            rc = err_set(msg, ERR_INVALID, "%s.insecure-skip-tls-verify: must be a boolean", path);
            goto fail;
        }
        cfg.insecure = json_is_true(v);
    }

    if (user_name != NULL) {
        rc = find_named(root, "users", "user", user_name, &user, &idx, msg);
        if (rc != ERR_OK)
            goto fail;
        snprintf(path, sizeof(path), "users[%zu].user", idx);
        /* Credentials sluice cannot produce are refused by name, never loaded as "no
         * credentials" (which would fail later as 401/403 with no hint, e.g. on EKS/GKE/AKS). */
        if (json_object_get(user, "exec") != NULL && !json_is_null(json_object_get(user, "exec"))) {
            rc = kube_exec_parse(json_object_get(user, "exec"), path, user_name, base_dir,
                                 &cfg.exec, msg);
            if (rc != ERR_OK)
                goto fail;
        }
        if (json_object_get(user, "auth-provider") != NULL &&
            !json_is_null(json_object_get(user, "auth-provider"))) {
            const char *name =
                json_string_value(json_object_get(json_object_get(user, "auth-provider"), "name"));
            rc = err_set(msg, ERR_UNSUPPORTED,
                         "%s.auth-provider: user \"%s\" uses the auth provider \"%.200s\", "
                         "which sluice does not support (client-go removed them in 1.26); use a "
                         "token, tokenFile or client certificate",
                         path, user_name, name ? name : "?");
            goto fail;
        }
        rc = get_file_and_data(user, path, "client-certificate", "client-certificate-data",
                               base_dir, &cfg.cert_file, &cfg.cert_data, msg);
        if (rc == ERR_OK)
            rc = get_file_and_data(user, path, "client-key", "client-key-data", base_dir,
                                   &cfg.key_file, &cfg.key_data, msg);
        if (rc == ERR_OK)
            rc = get_str(user, "token", path, &token, msg);
        if (rc == ERR_OK)
            rc = dup_str(token, &cfg.token, msg);
        if (rc == ERR_OK && token == NULL) {
            const char *tf;

            rc = get_str(user, "tokenFile", path, &tf, msg);
            if (rc == ERR_OK && tf != NULL) {
                cfg.token_file = resolve_path(base_dir, tf);
                if (cfg.token_file == NULL)
                    rc = err_set(msg, ERR_NOMEM, "out of memory");
            }
        }
        if (rc != ERR_OK)
            goto fail;
        if ((cfg.cert_file || cfg.cert_data.data) != (cfg.key_file || cfg.key_data.data)) {
            rc = err_set(msg, ERR_INVALID, "%s: client-certificate and client-key go together",
                         path);
            goto fail;
        }
        /* A bearer token over plain HTTP is readable by anyone on the path: never sent. */
        if ((cfg.token != NULL || cfg.token_file != NULL || cfg.exec != NULL) &&
            strncmp(cfg.server, "http://", 7) == 0) {
            rc = err_set(msg, ERR_INVALID,
                         "%s: user \"%s\" has a bearer token, but the server %s is plain http://; "
                         "tokens are only sent over https://",
                         path, user_name, cfg.server);
            goto fail;
        }
    }
    *out = cfg;
    return ERR_OK;
fail:
    kube_config_fini(&cfg);
    return rc;
}

typedef struct first_doc_s {
    json_t *doc;
} first_doc_t;

static err_t on_first_doc(void *ctx, size_t index, int line, json_t *doc)
{
    first_doc_t *fd = ctx;

    (void)line;
    if (index == 0 && fd->doc == NULL)
        fd->doc = json_incref(doc);
    return ERR_OK;
}

err_t kube_config_load_file(const char *path, const char *context, kube_config_t *out,
                            err_msg_t *msg)
{
    first_doc_t fd = {NULL};
    char *text = NULL, *dir = NULL, *slash;
    size_t len;
    err_t rc;

    rc = read_file(path, &text, &len, msg);
    if (rc != ERR_OK)
        return err_prefix(msg, rc, "kubeconfig ");
    rc = yaml_load_string(text, len, on_first_doc, &fd, msg);
    if (rc != ERR_OK) {
        err_prefix(msg, rc, "kubeconfig %s: ", path);
        goto out;
    }
    if (fd.doc == NULL) {
        rc = err_set(msg, ERR_PARSE, "kubeconfig %s: empty", path);
        goto out;
    }
    dir = strdup(path);
    if (dir == NULL) {
        rc = err_set(msg, ERR_NOMEM, "out of memory");
        goto out;
    }
    slash = strrchr(dir, '/');
    if (slash == NULL)
        dir[0] = '\0';
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    rc = kube_config_from_json(fd.doc, context, dir, out, msg);
    if (rc != ERR_OK)
        err_prefix(msg, rc, "kubeconfig %s: ", path);
out:
    json_decref(fd.doc);
    free(dir);
    free(text);
    return rc;
}

/* ---- in-cluster ------------------------------------------------------------------------------ */

err_t kube_config_in_cluster(const kube_incluster_t *paths, kube_config_t *out, err_msg_t *msg)
{
    kube_incluster_t p = {NULL, NULL, NULL, NULL, NULL};
    kube_config_t cfg;
    char server[300], *ns = NULL;
    const char *tok;
    size_t len;
    err_t rc;

    if (paths != NULL)
        p = *paths;
    if (p.host == NULL)
        p.host = getenv("KUBERNETES_SERVICE_HOST");
    if (p.port == NULL)
        p.port = getenv("KUBERNETES_SERVICE_PORT");
    if (p.token_path == NULL)
        p.token_path = SA_DIR "token";
    if (p.ca_path == NULL)
        p.ca_path = SA_DIR "ca.crt";
    if (p.namespace_path == NULL)
        p.namespace_path = SA_DIR "namespace";
    if (p.host == NULL || p.host[0] == '\0' || p.port == NULL || p.port[0] == '\0')
        return err_set(msg, ERR_NOT_FOUND,
                       "in-cluster: KUBERNETES_SERVICE_HOST and "
                       "KUBERNETES_SERVICE_PORT must be set");
    /* An IPv6 service address needs brackets in the URL. */
    if (strchr(p.host, ':') != NULL)
        snprintf(server, sizeof(server), "https://[%s]:%s", p.host, p.port);
    else
        snprintf(server, sizeof(server), "https://%s:%s", p.host, p.port);

    kube_config_init(&cfg);
    cfg.in_cluster = true;
    rc = dup_str(server, &cfg.server, msg);
    if (rc == ERR_OK)
        rc = dup_str(p.token_path, &cfg.token_file, msg);
    if (rc == ERR_OK)
        rc = dup_str(p.ca_path, &cfg.ca_file, msg);
    if (rc != ERR_OK)
        goto fail;
    /* The namespace file is optional: default when absent. */
    if (read_file(p.namespace_path, &ns, &len, NULL) == ERR_OK && trim(ns)[0] != '\0')
        cfg.namespace_name = ns;
    else {
        free(ns);
        rc = dup_str("default", &cfg.namespace_name, msg);
        if (rc != ERR_OK)
            goto fail;
    }
    rc = kube_config_token(&cfg, &tok, msg);
    if (rc != ERR_OK || tok == NULL) {
        rc = err_prefix(msg, ERR_NOT_FOUND, "in-cluster token: ");
        goto fail;
    }
    *out = cfg;
    return ERR_OK;
fail:
    kube_config_fini(&cfg);
    return rc;
}

err_t kube_config_load(const char *path, const char *context, kube_config_t *out, err_msg_t *msg)
{
    const char *env = getenv("KUBECONFIG"), *home;
    char buf[4096];

    if (path != NULL && path[0] != '\0')
        return kube_config_load_file(path, context, out, msg);
    if (env != NULL && env[0] != '\0') {
        size_t n = strcspn(env, ":");

        if (n > 0 && n < sizeof(buf)) {
            memcpy(buf, env, n);
            buf[n] = '\0';
            return kube_config_load_file(buf, context, out, msg);
        }
    }
    env = getenv("KUBERNETES_SERVICE_HOST");
    if (env != NULL && env[0] != '\0')
        return kube_config_in_cluster(NULL, out, msg);
    home = getenv("HOME");
    if (home == NULL || home[0] == '\0')
        return err_set(msg, ERR_NOT_FOUND,
                       "no kubeconfig: no --kubeconfig, $KUBECONFIG, in-cluster env or $HOME");
    snprintf(buf, sizeof(buf), "%s/.kube/config", home);
    return kube_config_load_file(buf, context, out, msg);
}

/* ---- tokens ---------------------------------------------------------------------------------- */

err_t kube_config_token(kube_config_t *cfg, const char **out, err_msg_t *msg)
{
    struct stat st;
    char *text = NULL;
    size_t len;
    err_t rc;

    if (cfg->exec != NULL && cfg->token == NULL && cfg->token_file == NULL)
        return kube_exec_token(cfg->exec, (int64_t)time(NULL), out, msg);
    if (cfg->token_file == NULL) {
        *out = cfg->token;
        return ERR_OK;
    }
    /* Kubelet rotates projected tokens by atomically replacing the file (a symlink swap), so a
     * change of inode, size or mtime is the signal to read it again; an unchanged file costs one
     * stat() per request. */
    if (stat(cfg->token_file, &st) != 0) {
        *out = cfg->token;
        return err_set(msg, ERR_IO, "%s: %s", cfg->token_file, strerror(errno));
    }
    if (cfg->token != NULL && st.st_dev == cfg->token_dev && st.st_ino == cfg->token_ino &&
        st.st_size == cfg->token_size && st.st_mtim.tv_sec == cfg->token_mtime.tv_sec &&
        st.st_mtim.tv_nsec == cfg->token_mtime.tv_nsec) {
        *out = cfg->token;
        return ERR_OK;
    }
    rc = read_file(cfg->token_file, &text, &len, msg);
    if (rc != ERR_OK) {
        *out = cfg->token;
        return rc;
    }
    trim(text);
    if (text[0] == '\0') {
        free(text);
        *out = cfg->token;
        return err_set(msg, ERR_IO, "%s: empty token", cfg->token_file);
    }
    free(cfg->token);
    cfg->token = text;
    cfg->token_dev = st.st_dev;
    cfg->token_ino = st.st_ino;
    cfg->token_size = st.st_size;
    cfg->token_mtime = st.st_mtim;
    *out = cfg->token;
    return ERR_OK;
}
