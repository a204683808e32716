/* kubeconfig -- where the API server is and how to authenticate: kubeconfig files and in-cluster.
 */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_KUBECONFIG_H
#define SLUICE_KUBECONFIG_H

#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/* Bytes decoded from a kubeconfig "-data" field (PEM text). */
typedef struct kube_blob_s {
    unsigned char *data; /* owned, NUL-terminated for convenience; NULL when unset */
    size_t len;          /* without the terminating NUL */
} kube_blob_t;

/* A resolved client configuration: one cluster, one user, one namespace. Paths are absolute or
 * relative to the working directory (kubeconfig-relative paths are resolved at load time). */
typedef struct kube_config_s {
    char *server;          /* owned, "https://host:port" without a trailing slash */
    char *namespace_name;  /* owned, the context's namespace, "default" when unset */
    char *ca_file;         /* owned or NULL: certificate-authority */
    kube_blob_t ca_data;   /* certificate-authority-data (wins over ca_file) */
    char *cert_file;       /* owned or NULL: client-certificate */
    kube_blob_t cert_data; /* client-certificate-data (wins over cert_file) */
    char *key_file;        /* owned or NULL: client-key */
    kube_blob_t key_data;  /* client-key-data (wins over key_file) */
    char *token;           /* owned or NULL: static bearer token, or the last one read */
    char *token_file;      /* owned or NULL: tokenFile / service-account token, re-read on change */
    struct kube_exec_s *exec; /* owned or NULL: users[].user.exec credential plugin (execcred.h) */
    bool insecure;            /* insecure-skip-tls-verify */
    bool in_cluster;          /* from the pod's ServiceAccount (kube_config_in_cluster) */
    /* Token-file change detection (identity and timestamp of the last read). */
    dev_t token_dev;
    ino_t token_ino;
    off_t token_size;
    struct timespec token_mtime;
} kube_config_t;

/* Paths and values used by kube_config_in_cluster(); NULL fields take the real defaults
 * ($KUBERNETES_SERVICE_HOST, $KUBERNETES_SERVICE_PORT and the files under
 * /var/run/secrets/kubernetes.io/serviceaccount/). Tests point them at temporary files. */
typedef struct kube_incluster_s {
    const char *host;
    const char *port;
    const char *token_path;
    const char *ca_path;
    const char *namespace_path;
} kube_incluster_t;

/* Zero `cfg` so that kube_config_fini() is safe. */
void kube_config_init(kube_config_t *cfg);

/* Release everything `cfg` owns and zero it; NULL-safe. */
void kube_config_fini(kube_config_t *cfg);

/* Resolve a parsed kubeconfig document `root` (borrowed) into `out`: the context named `context`
 * (NULL: current-context), its cluster and user. Relative file paths are resolved against
 * `base_dir` (NULL: left as written). Errors (ERR_INVALID/ERR_PARSE/ERR_NOT_FOUND) name the field
 * path, e.g. "clusters[0].cluster.certificate-authority-data: bad base64"; `out` is untouched. */
err_t kube_config_from_json(json_t *root, const char *context, const char *base_dir,
                            kube_config_t *out, err_msg_t *msg);

/* Read the kubeconfig file at `path` (YAML or JSON) and resolve it as kube_config_from_json()
 * does, relative paths against the file's directory. */
err_t kube_config_load_file(const char *path, const char *context, kube_config_t *out,
                            err_msg_t *msg);

/* In-cluster configuration from the service-account mount (`paths` may be NULL for defaults).
 * ERR_NOT_FOUND when the service host/port are not set or the token is unreadable. */
err_t kube_config_in_cluster(const kube_incluster_t *paths, kube_config_t *out, err_msg_t *msg);

/* Find and load the configuration as controller-runtime does: `path` (the --kubeconfig flag) if
 * non-NULL, else the first entry of $KUBECONFIG (a colon-separated list; only the first file is
 * read, files are not merged), else in-cluster when $KUBERNETES_SERVICE_HOST is set, else
 * $HOME/.kube/config. `context` overrides current-context (NULL: keep). */
err_t kube_config_load(const char *path, const char *context, kube_config_t *out, err_msg_t *msg);

/* The bearer token to send now, or NULL for none (borrowed from `cfg`, valid until the next
 * call). An exec user's plugin runs when its token is missing or about to expire (execcred.h;
 * on failure the previous token stays in `*out` with the error). A token file is re-read when its
 * identity, size or mtime changed since the last read (rotated service-account tokens); if
 * re-reading fails the last good token is kept and ERR_IO is returned with `*out` still set to it.
 */
err_t kube_config_token(kube_config_t *cfg, const char **out, err_msg_t *msg);

/* Decode standard base64 (padding optional, ASCII whitespace ignored) into `out` (NUL-terminated,
 * owned by the caller). ERR_PARSE on a bad character or length, ERR_NOMEM on allocation. */
err_t kube_base64_decode(const char *s, size_t len, kube_blob_t *out, err_msg_t *msg);

#endif
