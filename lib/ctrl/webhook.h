/* webhook -- sluice's admission webhooks inside `sluice run`: TLS server, certificates, caBundle.
 */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_WEBHOOK_H
#define SLUICE_CTRL_WEBHOOK_H

#include "ctrl/config.h"
#include "ctrl/ctrl.h"
#include "kube/client.h"
#include "util/err.h"

#include <stdbool.h>

/*
 * Serves lib/hook's AdmissionReview handler (Kueue's paths) over TLS on cfg->webhook_port, with
 * the cluster knowledge the handler asks for (LocalQueue "default", WorkloadPriorityClass
 * "default", managed namespaces, ClusterQueue usage for quota-decrease warnings) read from the
 * controller's caches and engine.
 *
 * Certificates, two ways:
 *   cert dir (webhook.certDir / --cert-dir): tls.crt + tls.key written by cert-manager or a
 *     mounted Secret; waited for when absent, reloaded when the files change (checked every 5 s).
 *   self-managed (internalCertManagement.enable, the default without a cert dir): a CA and a
 *     serving certificate for <service>.<namespace>.svc kept in the Secret <webhookSecretName>
 *     in sluice's namespace -- created when absent, reused while valid, rotated 90 days before
 *     expiry (certificates last 1 year, the CA 10 years) -- and the CA bundle patched into
 *     <prefix>-validating-webhook-configuration and <prefix>-mutating-webhook-configuration.
 *     Every replica runs this (not only the leader), as Kueue's cert rotator does.
 * Ready once a certificate is being served.
 */

typedef struct ctrl_webhook_s ctrl_webhook_t;

/* The Secret's CA, handed on (self-managed certificates): `ca_crt` is its ca.crt (PEM: the
 * current CA, then after a rotation the previous ones still valid: the caBundle), `ca_key` the
 * current CA's key. Both borrowed for the call. */
typedef void (*ctrl_webhook_ca_fn)(void *data, const char *ca_crt, size_t crt_len,
                                   const char *ca_key, size_t key_len);

/* Extra subject names for the self-managed serving certificate (all borrowed). */
typedef struct ctrl_webhook_opts_s {
    const char *const *ips; /* IP SANs, e.g. "127.0.0.1" when the API server calls a url: */
    size_t nips;
    const char *const *dns; /* extra DNS SANs */
    size_t ndns;
    /* Called (may be NULL) each time the Secret is read or written (at start, hourly, after a
     * rotation), so another server can serve certificates of the same CA: the visibility API
     * (lib/ctrl/visibility_ca.h). Never after ctrl_webhook_close(). */
    ctrl_webhook_ca_fn on_ca;
    void *on_ca_data;
} ctrl_webhook_opts_t;

/* Start serving on `client`'s loop (all arguments borrowed and outliving the webhook; `opts` may
 * be NULL). ERR_IO when the port cannot be bound. */
err_t ctrl_webhook_start(kube_client_t *client, ctrl_t *ctrl, const ctrl_config_t *cfg,
                         const ctrl_webhook_opts_t *opts, ctrl_log_fn log, void *log_data,
                         ctrl_webhook_t **out, err_msg_t *msg);

/* A certificate is in place and the server is listening. */
bool ctrl_webhook_ready(const ctrl_webhook_t *w);

/* False while the server's accepts are stalled (an allocation failure, retried with backoff). */
bool ctrl_webhook_accepting(const ctrl_webhook_t *w);

/* The bound port (useful with port 0). */
int ctrl_webhook_port(const ctrl_webhook_t *w);

/* Stop serving and free; `on_closed` (may be NULL) fires once everything is closed. */
void ctrl_webhook_close(ctrl_webhook_t *w, void (*on_closed)(void *data), void *data);

#endif
