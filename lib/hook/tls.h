/* tls -- server-side TLS contexts (TLS 1.2/1.3 only) with hot certificate replacement. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_HOOK_TLS_H
#define SLUICE_HOOK_TLS_H

#include "util/err.h"

#include <openssl/ssl.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * A hook_tls_t holds the current SSL_CTX. Replacing the certificate (rotation, or files changed
 * on disk for cert-manager) builds a new context; connections already open keep the one they
 * started with (SSL_CTX is reference counted), new connections get the new one.
 * Protocols: TLS 1.2 and 1.3 only. TLS 1.2 ciphers: ECDHE with AES-GCM or ChaCha20-Poly1305.
 *
 * Mutual TLS (the _ca constructors): every caller must present a certificate signed by a CA of
 * the client CA file (the API server's webhook client certificate, set up through its
 * --admission-control-config-file). A caller without one fails the handshake and never reaches
 * the HTTP layer. The file is read at every rebuild; if it cannot be read or holds no
 * certificate, the rebuild fails and the context in use (which still checks callers) stays:
 * sluice fails closed, never open.
 */
typedef struct hook_tls_s hook_tls_t;

/* A context from PEM text (certificate chain, private key). */
err_t hook_tls_new_pem(const char *cert_pem, size_t cert_len, const char *key_pem, size_t key_len,
                       hook_tls_t **out, err_msg_t *msg);

/* The same, requiring client certificates signed by a CA of the PEM file `client_ca_path`
 * (NULL: no client certificate asked, as hook_tls_new_pem). */
err_t hook_tls_new_pem_ca(const char *cert_pem, size_t cert_len, const char *key_pem,
                          size_t key_len, const char *client_ca_path, hook_tls_t **out,
                          err_msg_t *msg);

/* A context from PEM files (e.g. tls.crt / tls.key of a mounted Secret). */
err_t hook_tls_new_files(const char *cert_path, const char *key_path, hook_tls_t **out,
                         err_msg_t *msg);

/* The same, with client certificates required as hook_tls_new_pem_ca(). */
err_t hook_tls_new_files_ca(const char *cert_path, const char *key_path, const char *client_ca_path,
                            hook_tls_t **out, err_msg_t *msg);

/* Replace the certificate from PEM text; on error the old one stays in use. */
err_t hook_tls_replace_pem(hook_tls_t *tls, const char *cert_pem, size_t cert_len,
                           const char *key_pem, size_t key_len, err_msg_t *msg);

/* Reload from the files given at creation when their contents changed; *changed tells. */
err_t hook_tls_reload_files(hook_tls_t *tls, int *changed, err_msg_t *msg);

/* Re-read the client CA file; when it changed, new connections are checked against the new
 * contents (*changed = 1). On error the context in use stays. No-op without a client CA. */
err_t hook_tls_reload_client_ca(hook_tls_t *tls, int *changed, err_msg_t *msg);

/* Is the client CA file at `path` usable (readable, at least one PEM certificate)? */
err_t hook_tls_client_ca_check(const char *path, err_msg_t *msg);

/* Does this context require client certificates? (NULL: false) */
bool hook_tls_verifies_clients(const hook_tls_t *tls);

/* The current context with one more reference (SSL_CTX_free it when done). */
SSL_CTX *hook_tls_ctx(hook_tls_t *tls);

/* Release; connections holding the context keep it alive. NULL-safe. */
void hook_tls_free(hook_tls_t *tls);

#endif
