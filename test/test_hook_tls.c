/* test_hook_tls -- mutual TLS: callers without a certificate from the client CA are refused. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/tls.h"

#include "hook/cert.h"

#include <check.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The handshake between a server SSL of `srv` and a client that presents `client` (NULL: no
 * certificate), entirely in memory: 1 when it completes on both sides, 0 when it fails. */
static int handshake(hook_tls_t *srv, const hook_pem_t *client)
{
    SSL_CTX *sctx = hook_tls_ctx(srv), *cctx = SSL_CTX_new(TLS_client_method());
    SSL *s = SSL_new(sctx), *c = SSL_new(cctx);
    BIO *s_in = BIO_new(BIO_s_mem()), *s_out = BIO_new(BIO_s_mem());
    BIO *c_in = BIO_new(BIO_s_mem()), *c_out = BIO_new(BIO_s_mem());
    char buf[16384];
    int ok = 0;

    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_nonnull(c);
    SSL_CTX_set_verify(cctx, SSL_VERIFY_NONE, NULL);
    if (client != NULL) {
        BIO *b = BIO_new_mem_buf(client->cert, (int)client->cert_len);
        X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
        BIO_free(b);
        b = BIO_new_mem_buf(client->key, (int)client->key_len);
        EVP_PKEY *k = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
        BIO_free(b);
        ck_assert_int_eq(SSL_use_certificate(c, x), 1);
        ck_assert_int_eq(SSL_use_PrivateKey(c, k), 1);
        X509_free(x);
        EVP_PKEY_free(k);
    }
    BIO_set_mem_eof_return(s_in, -1); /* empty means "wait", not end of stream */
    BIO_set_mem_eof_return(c_in, -1);
    SSL_set_bio(s, s_in, s_out);
    SSL_set_bio(c, c_in, c_out);
    SSL_set_accept_state(s);
    SSL_set_connect_state(c);
    for (int round = 0, sdone = 0, cdone = 0; round < 20; round++) {
        int n;
        if (!cdone) {
            int rc = SSL_do_handshake(c);
            if (rc == 1)
                cdone = 1;
            else if (SSL_get_error(c, rc) != SSL_ERROR_WANT_READ)
                break;
        }
        while ((n = BIO_read(c_out, buf, sizeof(buf))) > 0)
            BIO_write(s_in, buf, n);
        if (!sdone) {
            int rs = SSL_do_handshake(s);
            if (rs == 1)
                sdone = 1;
            else if (SSL_get_error(s, rs) != SSL_ERROR_WANT_READ)
                break;
        }
        while ((n = BIO_read(s_out, buf, sizeof(buf))) > 0)
            BIO_write(c_in, buf, n);
        if (sdone && cdone) {
            /* TLS 1.3: the client may finish before the server has judged its certificate;
             * one application byte shows that the server accepted it. */
            char x = 'x', y = 0;
            ck_assert_int_eq(SSL_write(c, &x, 1), 1);
            while ((n = BIO_read(c_out, buf, sizeof(buf))) > 0)
                BIO_write(s_in, buf, n);
            ok = SSL_read(s, &y, 1) == 1 && y == 'x';
            break;
        }
    }
    ERR_clear_error();
    SSL_free(s);
    SSL_free(c);
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    return ok;
}

typedef struct pki_s {
    hook_pem_t ca, serving, client_ca, client, other_ca, other_client;
    char ca_file[64];
} pki_t;

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void pki_init(pki_t *p)
{
    const char *dns[] = {"sluice-webhook-service.sluice-system.svc"};
    err_msg_t msg;
    int fd;

    memset(p, 0, sizeof(*p));
    ck_assert_int_eq(hook_cert_ca("serving-ca", 1, &p->ca, &msg), ERR_OK);
    ck_assert_int_eq(hook_cert_serving(&p->ca, dns, 1, NULL, 0, 1, &p->serving, &msg), ERR_OK);
    ck_assert_int_eq(hook_cert_ca("webhook-client-ca", 1, &p->client_ca, &msg), ERR_OK);
    ck_assert_int_eq(hook_cert_client(&p->client_ca, "kube-apiserver", 1, &p->client, &msg),
                     ERR_OK);
    ck_assert_int_eq(hook_cert_ca("someone-else", 1, &p->other_ca, &msg), ERR_OK);
    ck_assert_int_eq(hook_cert_client(&p->other_ca, "kube-apiserver", 1, &p->other_client, &msg),
                     ERR_OK);
    snprintf(p->ca_file, sizeof(p->ca_file), "/tmp/sluice-test-client-ca-XXXXXX");
    fd = mkstemp(p->ca_file);
    ck_assert_int_ge(fd, 0);
    close(fd);
    write_file(p->ca_file, p->client_ca.cert);
}

static void pki_fini(pki_t *p)
{
    unlink(p->ca_file);
    hook_pem_fini(&p->ca);
    hook_pem_fini(&p->serving);
    hook_pem_fini(&p->client_ca);
    hook_pem_fini(&p->client);
    hook_pem_fini(&p->other_ca);
    hook_pem_fini(&p->other_client);
}

START_TEST(test_without_client_ca_anyone_connects)
{
    pki_t p;
    hook_tls_t *tls;
    err_msg_t msg;

    pki_init(&p);
    ck_assert_int_eq(hook_tls_new_pem(p.serving.cert, p.serving.cert_len, p.serving.key,
                                      p.serving.key_len, &tls, &msg),
                     ERR_OK);
    ck_assert(!hook_tls_verifies_clients(tls));
    ck_assert_int_eq(handshake(tls, NULL), 1);
    hook_tls_free(tls);
    pki_fini(&p);
}
END_TEST

START_TEST(test_client_ca_refuses_unauthenticated)
{
    pki_t p;
    hook_tls_t *tls;
    err_msg_t msg;

    pki_init(&p);
    ck_assert_int_eq(hook_tls_new_pem_ca(p.serving.cert, p.serving.cert_len, p.serving.key,
                                         p.serving.key_len, p.ca_file, &tls, &msg),
                     ERR_OK);
    ck_assert(hook_tls_verifies_clients(tls));
    ck_assert_int_eq(handshake(tls, NULL), 0);            /* no certificate */
    ck_assert_int_eq(handshake(tls, &p.other_client), 0); /* another CA's */
    ck_assert_int_eq(handshake(tls, &p.serving), 0);      /* serverAuth only, wrong CA */
    ck_assert_int_eq(handshake(tls, &p.client), 1);       /* the API server's */
    /* A replaced serving certificate keeps the check. */
    ck_assert_int_eq(hook_tls_replace_pem(tls, p.serving.cert, p.serving.cert_len, p.serving.key,
                                          p.serving.key_len, &msg),
                     ERR_OK);
    ck_assert_int_eq(handshake(tls, NULL), 0);
    ck_assert_int_eq(handshake(tls, &p.client), 1);
    hook_tls_free(tls);
    pki_fini(&p);
}
END_TEST

START_TEST(test_client_ca_fails_closed)
{
    pki_t p;
    hook_tls_t *tls = NULL;
    err_msg_t msg;
    int changed = 0;

    pki_init(&p);
    /* A missing or empty file is an error, never "no check". */
    ck_assert_int_ne(hook_tls_new_pem_ca(p.serving.cert, p.serving.cert_len, p.serving.key,
                                         p.serving.key_len, "/nonexistent/ca.crt", &tls, &msg),
                     ERR_OK);
    ck_assert_ptr_null(tls);
    ck_assert_ptr_nonnull(strstr(msg.text, "client CA"));
    write_file(p.ca_file, "not a certificate\n");
    ck_assert_int_ne(hook_tls_new_pem_ca(p.serving.cert, p.serving.cert_len, p.serving.key,
                                         p.serving.key_len, p.ca_file, &tls, &msg),
                     ERR_OK);
    ck_assert_ptr_nonnull(strstr(msg.text, "no PEM certificate"));
    /* Rotation of the client CA: the new CA is used once re-read; a broken file keeps the
     * context in use, which still refuses unauthenticated callers. */
    write_file(p.ca_file, p.client_ca.cert);
    ck_assert_int_eq(hook_tls_new_pem_ca(p.serving.cert, p.serving.cert_len, p.serving.key,
                                         p.serving.key_len, p.ca_file, &tls, &msg),
                     ERR_OK);
    ck_assert_int_eq(hook_tls_reload_client_ca(tls, &changed, &msg), ERR_OK);
    ck_assert_int_eq(changed, 0);
    write_file(p.ca_file, p.other_ca.cert);
    ck_assert_int_eq(hook_tls_reload_client_ca(tls, &changed, &msg), ERR_OK);
    ck_assert_int_eq(changed, 1);
    ck_assert_int_eq(handshake(tls, &p.client), 0);
    ck_assert_int_eq(handshake(tls, &p.other_client), 1);
    write_file(p.ca_file, "garbage");
    ck_assert_int_ne(hook_tls_reload_client_ca(tls, &changed, &msg), ERR_OK);
    ck_assert_int_eq(handshake(tls, NULL), 0);
    ck_assert_int_eq(handshake(tls, &p.other_client), 1);
    hook_tls_free(tls);
    pki_fini(&p);
}
END_TEST

START_TEST(test_client_ca_with_cert_files)
{
    pki_t p;
    hook_tls_t *tls;
    err_msg_t msg;
    char crt[] = "/tmp/sluice-test-crt-XXXXXX", key[] = "/tmp/sluice-test-key-XXXXXX";
    int changed = 0;

    pki_init(&p);
    close(mkstemp(crt));
    close(mkstemp(key));
    write_file(crt, p.serving.cert);
    write_file(key, p.serving.key);
    ck_assert_int_eq(hook_tls_new_files_ca(crt, key, p.ca_file, &tls, &msg), ERR_OK);
    ck_assert_int_eq(handshake(tls, NULL), 0);
    ck_assert_int_eq(handshake(tls, &p.client), 1);
    /* A changed client CA file alone is a change of the files. */
    write_file(p.ca_file, p.other_ca.cert);
    ck_assert_int_eq(hook_tls_reload_files(tls, &changed, &msg), ERR_OK);
    ck_assert_int_eq(changed, 1);
    ck_assert_int_eq(handshake(tls, &p.other_client), 1);
    ck_assert_int_eq(handshake(tls, &p.client), 0);
    hook_tls_free(tls);
    unlink(crt);
    unlink(key);
    pki_fini(&p);
}
END_TEST

static int count_certs(const char *pem)
{
    int n = 0;
    for (const char *p = pem; (p = strstr(p, "-----BEGIN CERTIFICATE-----")) != NULL; p++)
        n++;
    return n;
}

/* CA rotation: the caBundle keeps the old CA beside the new one while it is valid. */
START_TEST(test_ca_bundle_keeps_old_ca)
{
    hook_pem_t old_ca, new_ca;
    err_msg_t msg;
    char *bundle = NULL, *again = NULL, two[8192];
    int64_t now = (int64_t)time(NULL);

    ck_assert_int_eq(hook_cert_ca("old", 2, &old_ca, &msg), ERR_OK);
    ck_assert_int_eq(hook_cert_ca("new", 30, &new_ca, &msg), ERR_OK);
    ck_assert_int_eq(hook_cert_bundle(new_ca.cert, old_ca.cert, now, &bundle, &msg), ERR_OK);
    ck_assert_int_eq(count_certs(bundle), 2);
    ck_assert(strncmp(bundle, new_ca.cert, new_ca.cert_len) == 0); /* the new CA first */
    ck_assert_ptr_nonnull(strstr(bundle, old_ca.cert));
    /* Rotating again from that bundle: no duplicate of the new CA. */
    ck_assert_int_eq(hook_cert_bundle(bundle, bundle, now, &again, &msg), ERR_OK);
    ck_assert_str_eq(again, bundle);
    free(again);
    /* Once the old CA has expired it is dropped. */
    ck_assert_int_eq(hook_cert_bundle(new_ca.cert, bundle, now + 3 * 86400, &again, &msg), ERR_OK);
    ck_assert_int_eq(count_certs(again), 1);
    free(again);
    /* No previous bundle (first CA), or garbage: only the new CA. */
    ck_assert_int_eq(hook_cert_bundle(new_ca.cert, NULL, now, &again, &msg), ERR_OK);
    ck_assert_int_eq(count_certs(again), 1);
    free(again);
    snprintf(two, sizeof(two), "junk");
    ck_assert_int_eq(hook_cert_bundle(new_ca.cert, two, now, &again, &msg), ERR_OK);
    ck_assert_int_eq(count_certs(again), 1);
    free(again);
    ck_assert_int_ne(hook_cert_bundle("not a cert", NULL, now, &again, &msg), ERR_OK);
    free(bundle);
    hook_pem_fini(&old_ca);
    hook_pem_fini(&new_ca);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("hook_tls");
    TCase *tc = tcase_create("mtls");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_without_client_ca_anyone_connects);
    tcase_add_test(tc, test_client_ca_refuses_unauthenticated);
    tcase_add_test(tc, test_client_ca_fails_closed);
    tcase_add_test(tc, test_client_ca_with_cert_files);
    tcase_add_test(tc, test_ca_bundle_keeps_old_ca);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
