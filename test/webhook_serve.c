/* webhook_serve -- sluice's admission webhooks over TLS on 127.0.0.1, with the audit trail, for
 * the integration test that has the real kube-apiserver call them (test/integration/webhooks.sh).
 * usage: webhook_serve DIR   writes DIR/ca.crt and DIR/port, appends audit records to
 *                            DIR/audit.log, serves until SIGTERM or SIGINT. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/admission.h"
#include "hook/audit.h"
#include "hook/cert.h"
#include "hook/server.h"
#include "hook/tls.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

typedef struct serve_s {
    uv_loop_t loop;
    uv_signal_t sigint, sigterm;
    hook_server_t *srv;
    audit_log_t *audit;
} serve_t;

static void on_audit(void *ctx, const hook_audit_event_t *ev)
{
    serve_t *s = ctx;
    struct timeval tv;
    json_t *rec = NULL;
    err_msg_t msg;

    gettimeofday(&tv, NULL);
    if (audit_record_build(ev, (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000, &rec) != ERR_OK)
        fprintf(stderr, "webhook_serve: audit record: out of memory\n");
    else if (rec != NULL && audit_log_write(s->audit, rec, &msg) != ERR_OK)
        fprintf(stderr, "webhook_serve: %s\n", msg.text);
    json_decref(rec);
}

static void on_closed(void *ud)
{
    (void)ud;
}

static void on_signal(uv_signal_t *sig, int signum)
{
    serve_t *s = sig->data;

    (void)signum;
    hook_server_close(s->srv, on_closed, NULL);
    uv_close((uv_handle_t *)&s->sigint, NULL);
    uv_close((uv_handle_t *)&s->sigterm, NULL);
}

static int write_file(const char *dir, const char *name, const char *text)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *ips[] = {"127.0.0.1"};
    serve_t s;
    hook_pem_t ca, serving;
    hook_tls_t *tls;
    hook_admission_env_t env = {.audit = on_audit, .ctx = &s};
    hook_server_config_t cfg = {.host = "127.0.0.1", .handler = hook_admission_handler, .ud = &env};
    char path[4096], port[32];
    err_msg_t msg;

    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: webhook_serve DIR [CLIENT_CA]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    memset(&s, 0, sizeof(s));
    snprintf(path, sizeof(path), "%s/audit.log", argv[1]);
    if (audit_log_open(path, 1 << 20, 2, &s.audit, &msg) != ERR_OK ||
        hook_cert_ca("sluice-it-ca", 1, &ca, &msg) != ERR_OK ||
        hook_cert_serving(&ca, NULL, 0, ips, 1, 1, &serving, &msg) != ERR_OK ||
        hook_tls_new_pem_ca(serving.cert, serving.cert_len, serving.key, serving.key_len,
                            argc == 3 && argv[2][0] ? argv[2] : NULL, &tls, &msg) != ERR_OK) {
        fprintf(stderr, "webhook_serve: %s\n", msg.text);
        return 1;
    }
    uv_loop_init(&s.loop);
    cfg.tls = tls;
    env.callers_authenticated = hook_tls_verifies_clients(tls); /* mutual TLS */
    if (hook_server_start(&s.loop, &cfg, &s.srv, &msg) != ERR_OK) {
        fprintf(stderr, "webhook_serve: %s\n", msg.text);
        return 1;
    }
    uv_signal_init(&s.loop, &s.sigint);
    uv_signal_init(&s.loop, &s.sigterm);
    s.sigint.data = s.sigterm.data = &s;
    uv_signal_start(&s.sigint, on_signal, SIGINT);
    uv_signal_start(&s.sigterm, on_signal, SIGTERM);
    snprintf(port, sizeof(port), "%d\n", hook_server_port(s.srv));
    if (write_file(argv[1], "ca.crt", ca.cert) != 0 || write_file(argv[1], "port", port) != 0)
        return 1;
    uv_run(&s.loop, UV_RUN_DEFAULT);
    uv_loop_close(&s.loop);
    audit_log_close(s.audit);
    hook_tls_free(tls);
    hook_pem_fini(&ca);
    hook_pem_fini(&serving);
    return 0;
}
