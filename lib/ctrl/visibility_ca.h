/* visibility_ca -- the visibility API's serving certificate from sluice's CA, and that CA in the
 * caBundle of its APIServices. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_VISIBILITY_CA_H
#define SLUICE_CTRL_VISIBILITY_CA_H

#include "ctrl/ctrl.h"
#include "ctrl/visibility_server.h"
#include "kube/client.h"

#include <stdbool.h>

/*
 * With self-managed certificates (internalCertManagement, no cert dir) the webhook module keeps
 * sluice's CA in the webhook Secret and hands it here each time it reads the Secret
 * (ctrl_webhook_opts_t.on_ca: at start, hourly, after a rotation). This module then
 *
 *   - issues the visibility server a serving certificate of that CA for the Service
 *     <service>.<namespace>.svc -- the name the API server's aggregator verifies -- when the CA
 *     changed or the certificate has less than 90 days left (each replica issues its own, all
 *     signed by the one CA, so the caBundle verifies whichever replica the Service picks);
 *   - writes the Secret's ca.crt (the caBundle, which keeps the previous CA beside a new one
 *     after a rotation) into spec.caBundle of the APIService of each version served
 *     (v1beta1.visibility.kueue.x-k8s.io, v1beta2...), dropping insecureSkipTLSVerify (the API
 *     server refuses both together). Read-modify-write with conflict retries, as the webhook
 *     configurations' caBundle; only an APIService whose spec.service is sluice's visibility
 *     Service is touched (another one, e.g. Kueue's, is left alone and logged once).
 *
 *   use(CA) -> issue certificate (CA changed / < 90 days) -> server serves it
 *           -> GET APIService -(404)-> absent: again at the next use (hourly)
 *                             -(not our Service)-> left alone
 *                             -(caBundle current)-> done
 *                             -> PUT caBundle -(error)-> problem, again in 10 s
 *   every APIService is checked again hourly, so a re-applied manifest gets its caBundle back.
 */

typedef struct ctrl_visibility_ca_s ctrl_visibility_ca_t;

/* Start, for visibility server `srv` behind Service `service` in `ns` (copied). `client`, `ctrl`
 * and `srv` are borrowed and must outlive the module. NULL on out-of-memory. */
ctrl_visibility_ca_t *ctrl_visibility_ca_new(kube_client_t *client, ctrl_t *ctrl,
                                             ctrl_visibility_server_t *srv, const char *service,
                                             const char *ns, ctrl_log_fn log, void *log_data);

/* The CA to serve from and inject (a ctrl_webhook_ca_fn; `data` the module): PEM ca.crt (the
 * bundle) and the key of its first certificate, borrowed for the call. Failures become
 * problems (ctrl_problems) and are retried. Ignored once closing. */
void ctrl_visibility_ca_use(void *data, const char *ca_crt, size_t crt_len, const char *ca_key,
                            size_t key_len);

/* Every APIService served carries the current CA (or is absent or not sluice's). */
bool ctrl_visibility_ca_done(const ctrl_visibility_ca_t *v);

/* Stop; freed once its requests have ended (they end when the client closes). NULL-safe. */
void ctrl_visibility_ca_close(ctrl_visibility_ca_t *v);

#endif
