/* visibility_server -- the visibility API's HTTPS server behind API aggregation: the front
 * proxy's client certificate, the requestheader user, SubjectAccessReview. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_VISIBILITY_SERVER_H
#define SLUICE_CTRL_VISIBILITY_SERVER_H

#include "ctrl/ctrl.h"
#include "hook/limits.h"
#include "kube/client.h"

/*
 * The API server proxies requests for visibility.kueue.x-k8s.io (an APIService) to this server,
 * as for any aggregated API: over TLS, presenting its front-proxy client certificate (signed by
 * the requestheader CA, --proxy-client-cert-file), with the user it authenticated in headers
 * (X-Remote-User, X-Remote-Group: --requestheader-username-headers / -group-headers). This
 * server trusts those headers only from that certificate, as Kubernetes' delegated
 * authentication does:
 *
 *   start -> GET configmap kube-system/extension-apiserver-authentication (requestheader CA,
 *            allowed names, header names; retried every 10 s until it can be read) -> listen
 *   request -> TLS handshake: a client certificate signed by the requestheader CA, else no
 *              HTTP at all -> its CN in requestheader-allowed-names (when the list is not
 *              empty), else 401 -> discovery and /healthz: answered -> pending workloads: the
 *              user of the headers (none: 401) is authorized by a SubjectAccessReview for get on
 *              <clusterqueues|localqueues>/pendingworkloads (the answer waits for it, deferred;
 *              verdicts cached 10 s, as delegated authorization caches them) -> 403 or the
 *              answer (lib/ctrl/visibility.h)
 *
 * Bounded as the webhook server: per-client connection limits, 4 KiB request bodies (GETs send
 * none), the server's timeouts; at most 16 reviews in flight, 1,024 cached verdicts and 64
 * requests waiting per verdict (beyond: 503, retry). sluice's ServiceAccount needs get on that
 * ConfigMap (RoleBinding to extension-apiserver-authentication-reader in kube-system) and
 * create on subjectaccessreviews (manifests/rbac.yaml).
 */

typedef struct ctrl_visibility_server_s ctrl_visibility_server_t;

typedef struct ctrl_visibility_opts_s {
    const char *host; /* listen address ("" or NULL: all) */
    int port;         /* 0: a free one (ctrl_visibility_server_port) */
    /* serving certificate files; NULL: a self-signed one made at start for `dns_name`,
     * localhost and 127.0.0.1 */
    const char *cert_path, *key_path;
    const char *dns_name;
    const hook_limits_t *limits; /* the server's limits (copied); NULL: the defaults */
} ctrl_visibility_opts_t;

/* Start: read the requestheader configuration, then listen. The loop runs `client`'s requests;
 * `ctrl` and `client` are borrowed and must outlive the server. On error nothing is left. */
err_t ctrl_visibility_server_start(kube_client_t *client, ctrl_t *ctrl,
                                   const ctrl_visibility_opts_t *opts, ctrl_log_fn log,
                                   void *log_data, ctrl_visibility_server_t **out, err_msg_t *msg);

/* Serve `cert` and `key` (PEM, copied) from now on instead of the self-signed certificate: new
 * connections get it, open ones keep theirs. Before the server listens it is kept for then.
 * ERR_INVALID with certificate files (opts.cert_path) or once closing; on error the current
 * certificate stays. */
err_t ctrl_visibility_server_set_cert(ctrl_visibility_server_t *s, const char *cert,
                                      size_t cert_len, const char *key, size_t key_len,
                                      err_msg_t *msg);

/* The port listened on, 0 while the requestheader configuration has not been read yet. */
int ctrl_visibility_server_port(const ctrl_visibility_server_t *s);

/* Stop listening and answer the requests still waiting (503); `on_closed` (may be NULL) runs
 * once everything is released. NULL-safe. */
void ctrl_visibility_server_close(ctrl_visibility_server_t *s, void (*on_closed)(void *data),
                                  void *data);

#endif
