/* tls -- server-side TLS contexts (TLS 1.2/1.3 only) with hot certificate replacement. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/tls.h"

#include "util/grow.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hook_tls_s {
    SSL_CTX *ctx;      /* owned reference */
    char *cert_path;   /* owned, NULL when built from PEM text */
    char *key_path;    /* owned */
    char *loaded_cert; /* owned: PEM last loaded (file contents or text), to detect changes */
    char *loaded_key;  /* owned */
    size_t loaded_cert_len;
    size_t loaded_key_len;
    char *client_ca_path; /* owned: NULL = callers are not asked for a certificate */
    char *client_ca;      /* owned: its contents when the current context was built */
};

/* ECDHE key exchange with AEAD ciphers only (TLS 1.2); TLS 1.3 suites are all AEAD. */
static const char tls12_ciphers[] = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
                                    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
                                    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

static err_t ssl_error(err_msg_t *msg, const char *what)
{
    char buf[256];
    unsigned long e = ERR_get_error();

    ERR_error_string_n(e, buf, sizeof(buf));
    ERR_clear_error();
    return err_set(msg, ERR_TLS, "%s: %s", what, e ? buf : "unknown OpenSSL error");
}

/* Require a client certificate signed by one of the CAs in `pem` (mutual TLS): the handshake of a
 * caller without one, or with one from another CA, fails, so no byte of its request reaches the
 * HTTP layer. Fail closed: a file without a single certificate is an error, never "no check". */
static err_t ctx_client_ca(SSL_CTX *ctx, const char *pem, size_t len, err_msg_t *msg)
{
    X509_STORE *store = SSL_CTX_get_cert_store(ctx);
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    X509 *ca;
    size_t n = 0;

    if (bio == NULL || store == NULL)
        return ssl_error(msg, "client CA");
    while ((ca = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
        if (X509_STORE_add_cert(store, ca) != 1 || SSL_CTX_add_client_CA(ctx, ca) != 1) {
            X509_free(ca);
            BIO_free(bio);
            return ssl_error(msg, "adding client CA certificate");
        }
        X509_free(ca);
        n++;
    }
    ERR_clear_error(); /* the loop ends on a "no start line" error */
    BIO_free(bio);
    if (n == 0)
        return err_set(msg, ERR_INVALID, "client CA: no PEM certificate in it");
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    SSL_CTX_set_purpose(ctx, X509_PURPOSE_SSL_CLIENT); /* extendedKeyUsage clientAuth if any */
    /* Resumed sessions must carry a verified peer too; OpenSSL requires an id context here. */
    if (SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"sluice-webhook", 14) != 1)
        return ssl_error(msg, "client CA");
    return ERR_OK;
}

/* A new SSL_CTX holding the given certificate chain and key (and the client CA `ca_pem` when not
 * NULL). */
static err_t ctx_build(const char *cert_pem, size_t cert_len, const char *key_pem, size_t key_len,
                       const char *ca_pem, SSL_CTX **out, err_msg_t *msg)
{
    SSL_CTX *ctx = NULL;
    BIO *bio = NULL;
    X509 *cert = NULL, *extra = NULL;
    EVP_PKEY *key = NULL;
    err_t rc = ERR_OK;

    if (cert_len > (size_t)INT32_MAX || key_len > (size_t)INT32_MAX)
        return err_set(msg, ERR_INVALID, "certificate or key too large");
    ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL)
        return ssl_error(msg, "creating TLS context");
    if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
        !SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) ||
        !SSL_CTX_set_cipher_list(ctx, tls12_ciphers)) {
        rc = ssl_error(msg, "configuring TLS context");
        goto out;
    }
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
                                 SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);

    bio = BIO_new_mem_buf(cert_pem, (int)cert_len);
    if (bio == NULL || (cert = PEM_read_bio_X509(bio, NULL, NULL, NULL)) == NULL) {
        rc = ssl_error(msg, "reading certificate PEM");
        goto out;
    }
    if (SSL_CTX_use_certificate(ctx, cert) != 1) {
        rc = ssl_error(msg, "using certificate");
        goto out;
    }
    /* The rest of the file is the chain. */
    while ((extra = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
        if (SSL_CTX_add0_chain_cert(ctx, extra) != 1) {
            X509_free(extra);
            rc = ssl_error(msg, "adding chain certificate");
            goto out;
        }
    }
    ERR_clear_error(); /* the loop ends on a "no start line" error */
    BIO_free(bio);
    bio = BIO_new_mem_buf(key_pem, (int)key_len);
    if (bio == NULL || (key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL)) == NULL) {
        rc = ssl_error(msg, "reading private key PEM");
        goto out;
    }
    if (SSL_CTX_use_PrivateKey(ctx, key) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
        rc = ssl_error(msg, "private key does not match the certificate");
        goto out;
    }
    if (ca_pem != NULL && (rc = ctx_client_ca(ctx, ca_pem, strlen(ca_pem), msg)) != ERR_OK)
        goto out;
    *out = ctx;
    ctx = NULL;
out:
    BIO_free(bio);
    X509_free(cert);
    EVP_PKEY_free(key);
    SSL_CTX_free(ctx);
    return rc;
}

/* Whole file contents, NUL-terminated, in a malloc'ed buffer. */
static err_t read_file(const char *path, char **out, size_t *len, err_msg_t *msg)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, n = 0;

    if (f == NULL)
        return err_set(msg, ERR_IO, "%s: cannot open", path);
    for (;;) {
        if (n + 4096 + 1 > cap && cap > (1u << 20)) {
            free(buf);
            fclose(f);
            return err_set(msg, ERR_INVALID, "%s: larger than 1 MiB", path);
        }
        if (util_grow((void **)&buf, &cap, n + 4096 + 1, 1) != ERR_OK) {
            free(buf);
            fclose(f);
            return err_set(msg, ERR_NOMEM, "out of memory");
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        free(buf);
        fclose(f);
        return err_set(msg, ERR_IO, "%s: read error", path);
    }
    fclose(f);
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return ERR_OK;
}

/* Build a context from `cert`/`key` (consumed: kept as the loaded PEM on success, freed on
 * failure) and the client CA text `ca` (consumed likewise; NULL = none) and make it current. */
static err_t install(hook_tls_t *tls, char *cert, size_t cert_len, char *key, size_t key_len,
                     char *ca, err_msg_t *msg)
{
    SSL_CTX *ctx = NULL;
    err_t rc = ctx_build(cert, cert_len, key, key_len, ca, &ctx, msg);

    if (rc != ERR_OK) {
        free(cert);
        free(key);
        free(ca);
        return rc;
    }
    SSL_CTX_free(tls->ctx);
    tls->ctx = ctx;
    if (tls->loaded_cert != cert) {
        free(tls->loaded_cert);
        tls->loaded_cert = cert;
    }
    if (tls->loaded_key != key) {
        free(tls->loaded_key);
        tls->loaded_key = key;
    }
    if (tls->client_ca != ca) {
        free(tls->client_ca);
        tls->client_ca = ca;
    }
    tls->loaded_cert_len = cert_len;
    tls->loaded_key_len = key_len;
    return ERR_OK;
}

/* A NUL-terminated copy of `len` bytes, NULL on out-of-memory. */
static char *copy(const char *p, size_t len)
{
    char *c = malloc(len + 1);

    if (c != NULL) {
        memcpy(c, p, len);
        c[len] = '\0';
    }
    return c;
}

/* The client CA file's contents (NULL when none is configured) into *out. */
static err_t read_client_ca(const hook_tls_t *tls, char **out, err_msg_t *msg)
{
    size_t len;

    *out = NULL;
    if (tls->client_ca_path == NULL)
        return ERR_OK;
    if (read_file(tls->client_ca_path, out, &len, msg) != ERR_OK)
        return err_prefix(msg, ERR_IO, "client CA: ");
    return ERR_OK;
}

err_t hook_tls_new_pem(const char *cert_pem, size_t cert_len, const char *key_pem, size_t key_len,
                       hook_tls_t **out, err_msg_t *msg)
{
    return hook_tls_new_pem_ca(cert_pem, cert_len, key_pem, key_len, NULL, out, msg);
}

err_t hook_tls_new_pem_ca(const char *cert_pem, size_t cert_len, const char *key_pem,
                          size_t key_len, const char *client_ca_path, hook_tls_t **out,
                          err_msg_t *msg)
{
    hook_tls_t *tls = calloc(1, sizeof(*tls));
    char *cert = copy(cert_pem, cert_len), *key = copy(key_pem, key_len), *ca = NULL;
    err_t rc = ERR_OK;

    if (tls == NULL || cert == NULL || key == NULL ||
        (client_ca_path != NULL && (tls->client_ca_path = strdup(client_ca_path)) == NULL)) {
        rc = err_set(msg, ERR_NOMEM, "out of memory");
        goto fail;
    }
    if ((rc = read_client_ca(tls, &ca, msg)) != ERR_OK)
        goto fail;
    rc = install(tls, cert, cert_len, key, key_len, ca, msg);
    cert = key = NULL;
    if (rc != ERR_OK)
        goto fail;
    *out = tls;
    return ERR_OK;
fail:
    free(cert);
    free(key);
    hook_tls_free(tls);
    return rc;
}

/* Load both files (and the client CA); when they equal what is loaded already, *changed = 0 and
 * nothing happens. */
static err_t load_files(hook_tls_t *tls, int *changed, err_msg_t *msg)
{
    char *cert = NULL, *key = NULL, *ca = NULL;
    size_t cert_len, key_len;
    err_t rc;

    *changed = 0;
    rc = read_file(tls->cert_path, &cert, &cert_len, msg);
    if (rc == ERR_OK)
        rc = read_file(tls->key_path, &key, &key_len, msg);
    if (rc == ERR_OK)
        rc = read_client_ca(tls, &ca, msg);
    if (rc != ERR_OK)
        goto out;
    if (tls->loaded_cert && tls->loaded_key && strcmp(cert, tls->loaded_cert) == 0 &&
        strcmp(key, tls->loaded_key) == 0 &&
        (ca == NULL || (tls->client_ca != NULL && strcmp(ca, tls->client_ca) == 0)))
        goto out;
    rc = install(tls, cert, cert_len, key, key_len, ca, msg);
    cert = key = ca = NULL;
    if (rc == ERR_OK)
        *changed = 1;
out:
    free(cert);
    free(key);
    free(ca);
    return rc;
}

err_t hook_tls_new_files(const char *cert_path, const char *key_path, hook_tls_t **out,
                         err_msg_t *msg)
{
    return hook_tls_new_files_ca(cert_path, key_path, NULL, out, msg);
}

err_t hook_tls_new_files_ca(const char *cert_path, const char *key_path, const char *client_ca_path,
                            hook_tls_t **out, err_msg_t *msg)
{
    hook_tls_t *tls = calloc(1, sizeof(*tls));
    int changed;
    err_t rc;

    if (tls == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    tls->cert_path = strdup(cert_path);
    tls->key_path = strdup(key_path);
    if (client_ca_path != NULL)
        tls->client_ca_path = strdup(client_ca_path);
    if (tls->cert_path == NULL || tls->key_path == NULL ||
        (client_ca_path != NULL && tls->client_ca_path == NULL)) {
        hook_tls_free(tls);
        return err_set(msg, ERR_NOMEM, "out of memory");
    }
    rc = load_files(tls, &changed, msg);
    if (rc != ERR_OK) {
        hook_tls_free(tls);
        return rc;
    }
    *out = tls;
    return ERR_OK;
}

err_t hook_tls_replace_pem(hook_tls_t *tls, const char *cert_pem, size_t cert_len,
                           const char *key_pem, size_t key_len, err_msg_t *msg)
{
    char *cert = copy(cert_pem, cert_len), *key = copy(key_pem, key_len), *ca = NULL;
    err_t rc;

    if (cert == NULL || key == NULL) {
        free(cert);
        free(key);
        return err_set(msg, ERR_NOMEM, "out of memory");
    }
    if ((rc = read_client_ca(tls, &ca, msg)) != ERR_OK) {
        free(cert);
        free(key);
        return rc;
    }
    return install(tls, cert, cert_len, key, key_len, ca, msg);
}

err_t hook_tls_reload_files(hook_tls_t *tls, int *changed, err_msg_t *msg)
{
    *changed = 0;
    if (tls->cert_path == NULL)
        return err_set(msg, ERR_INVALID, "TLS context was not loaded from files");
    return load_files(tls, changed, msg);
}

err_t hook_tls_reload_client_ca(hook_tls_t *tls, int *changed, err_msg_t *msg)
{
    char *ca = NULL, *cert, *key;
    err_t rc;

    *changed = 0;
    if (tls->client_ca_path == NULL)
        return ERR_OK;
    if ((rc = read_client_ca(tls, &ca, msg)) != ERR_OK)
        return rc;
    if (tls->client_ca != NULL && strcmp(ca, tls->client_ca) == 0) {
        free(ca);
        return ERR_OK;
    }
    cert = copy(tls->loaded_cert, tls->loaded_cert_len);
    key = copy(tls->loaded_key, tls->loaded_key_len);
    if (cert == NULL || key == NULL) {
        free(cert);
        free(key);
        free(ca);
        return err_set(msg, ERR_NOMEM, "out of memory");
    }
    rc = install(tls, cert, tls->loaded_cert_len, key, tls->loaded_key_len, ca, msg);
    if (rc == ERR_OK)
        *changed = 1;
    return rc;
}

err_t hook_tls_client_ca_check(const char *path, err_msg_t *msg)
{
    hook_tls_t probe = {.client_ca_path = (char *)path};
    SSL_CTX *ctx = NULL;
    char *ca = NULL;
    err_t rc = read_client_ca(&probe, &ca, msg);

    if (rc != ERR_OK)
        return rc;
    ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL)
        rc = ssl_error(msg, "creating TLS context");
    else
        rc = ctx_client_ca(ctx, ca, strlen(ca), msg);
    SSL_CTX_free(ctx);
    free(ca);
    return rc;
}

bool hook_tls_verifies_clients(const hook_tls_t *tls)
{
    return tls != NULL && tls->client_ca_path != NULL;
}

SSL_CTX *hook_tls_ctx(hook_tls_t *tls)
{
    SSL_CTX_up_ref(tls->ctx);
    return tls->ctx;
}

void hook_tls_free(hook_tls_t *tls)
{
    if (tls == NULL)
        return;
    SSL_CTX_free(tls->ctx);
    free(tls->cert_path);
    free(tls->key_path);
    free(tls->loaded_cert);
    free(tls->loaded_key);
    free(tls->client_ca_path);
    free(tls->client_ca);
    free(tls);
}
