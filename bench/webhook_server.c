/* webhook_server -- the admission webhooks alone over TLS on loopback, for load generators. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/admission.h"
#include "hook/cert.h"
#include "hook/server.h"
#include "hook/tls.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * usage: webhook_server PORTFILE
 * Serves sluice's webhooks (hook_admission_handler, no cluster knowledge) over TLS on
 * 127.0.0.1 with a fresh self-signed certificate, writes the port to PORTFILE, and runs until
 * SIGINT or SIGTERM. bench/webhook.sh drives it with wrk.
 */

typedef struct bench_s {
    uv_loop_t loop;
    uv_signal_t sigint, sigterm;
    hook_server_t *srv;
} bench_t;

static void on_closed(void *ud)
{
    (void)ud;
}

static void on_signal(uv_signal_t *s, int signum)
{
    bench_t *b = s->data;

    (void)signum;
    hook_server_close(b->srv, on_closed, NULL);
    uv_close((uv_handle_t *)&b->sigint, NULL);
    uv_close((uv_handle_t *)&b->sigterm, NULL);
}

int main(int argc, char **argv)
{
    static const hook_admission_env_t env;
    const char *ips[] = {"127.0.0.1"};
    bench_t b;
    hook_pem_t ca, serving;
    hook_tls_t *tls;
    hook_server_config_t cfg = {.host = "127.0.0.1",
                                .handler = hook_admission_handler,
                                .ud = (void *)&env,
                                .max_connections = 1024};
    err_msg_t msg;
    FILE *f;

    if (argc != 2) {
        fprintf(stderr, "usage: webhook_server PORTFILE\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    if (hook_cert_ca("bench-ca", 1, &ca, &msg) != ERR_OK ||
        hook_cert_serving(&ca, NULL, 0, ips, 1, 1, &serving, &msg) != ERR_OK ||
        hook_tls_new_pem(serving.cert, serving.cert_len, serving.key, serving.key_len, &tls,
                         &msg) != ERR_OK) {
        fprintf(stderr, "webhook_server: %s\n", msg.text);
        return 1;
    }
    uv_loop_init(&b.loop);
    cfg.tls = tls;
    if (hook_server_start(&b.loop, &cfg, &b.srv, &msg) != ERR_OK) {
        fprintf(stderr, "webhook_server: %s\n", msg.text);
        return 1;
    }
    uv_signal_init(&b.loop, &b.sigint);
    uv_signal_init(&b.loop, &b.sigterm);
    b.sigint.data = b.sigterm.data = &b;
    uv_signal_start(&b.sigint, on_signal, SIGINT);
    uv_signal_start(&b.sigterm, on_signal, SIGTERM);
    f = fopen(argv[1], "w");
    if (f == NULL) {
        perror(argv[1]);
        return 1;
    }
    fprintf(f, "%d\n", hook_server_port(b.srv));
    fclose(f);
    uv_run(&b.loop, UV_RUN_DEFAULT);
    uv_loop_close(&b.loop);
    hook_tls_free(tls);
    hook_pem_fini(&ca);
    hook_pem_fini(&serving);
    return 0;
}
