/* flood -- open many hostile connections to an HTTP(S) server and hold them (issue 15's floods). */
/* SPDX-License-Identifier: Apache-2.0 */

/*
 * Used by test/integration/ctrl_flood.sh against `sluice run` and by hand (docs/reliability.md):
 *
 *   flood --port N [--host 127.0.0.1] [--tls] [--mode M] [--conns 256] [--addrs 64] [--hold S]
 *
 * Modes: silent (connect, send nothing), idle (one request answered, then idle keep-alive),
 * pipeline (2048 pipelined requests, never read, small receive buffer), body (a 3 MiB
 * Content-Length and all of the body but its last byte). The connections come from --addrs
 * loopback source addresses 127.0.1.2, 127.0.1.3, ... (a loopback host, several "clients"). It
 * holds them --hold seconds, then prints how many were opened, refused at once, and closed by the
 * server meanwhile, and exits 0. Blocking sockets with 1 s send/receive timeouts: a server that
 * stops reading costs a second, not a hang.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define BODY (3u << 20)

typedef struct conn_s {
    int fd;
    SSL *ssl;
    bool refused;
} conn_t;

static int conn_send(conn_t *c, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = c->ssl ? SSL_write(c->ssl, p, (int)(n > 1u << 20 ? 1u << 20 : n))
                           : send(c->fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Read until the end of one response's headers and its Content-Length body; -1 on EOF/error. */
static int conn_read_response(conn_t *c)
{
    char buf[8192];
    size_t have = 0;

    for (;;) {
        ssize_t r = c->ssl ? SSL_read(c->ssl, buf + have, (int)(sizeof(buf) - 1 - have))
                           : recv(c->fd, buf + have, sizeof(buf) - 1 - have, 0);
        char *end, *cl;
        if (r <= 0)
            return -1;
        have += (size_t)r;
        buf[have] = '\0';
        end = strstr(buf, "\r\n\r\n");
        cl = strstr(buf, "Content-Length: ");
        if (end != NULL && cl != NULL &&
            have >= (size_t)(end - buf) + 4 + strtoul(cl + 16, NULL, 10))
            return atoi(buf + 9);
        if (have == sizeof(buf) - 1)
            return -1;
    }
}

int main(int argc, char **argv)
{
    const char *host = "127.0.0.1", *mode = "silent";
    int port = 0, nconns = 256, naddrs = 64, hold = 10, small = 2048;
    bool tls = false;
    SSL_CTX *ctx = NULL;
    conn_t *cs;
    char *body = NULL, head[256];
    int opened = 0, refused = 0, closed = 0;
    struct timeval tv = {.tv_sec = 1};

    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (strcmp(argv[i], "--tls") == 0)
            tls = true;
        else if (strcmp(argv[i], "--host") == 0 && ++i)
            host = v;
        else if (strcmp(argv[i], "--port") == 0 && ++i)
            port = atoi(v);
        else if (strcmp(argv[i], "--mode") == 0 && ++i)
            mode = v;
        else if (strcmp(argv[i], "--conns") == 0 && ++i)
            nconns = atoi(v);
        else if (strcmp(argv[i], "--addrs") == 0 && ++i)
            naddrs = atoi(v);
        else if (strcmp(argv[i], "--hold") == 0 && ++i)
            hold = atoi(v);
        else {
            fprintf(stderr, "usage: flood --port N [--host H] [--tls] [--mode "
                            "silent|idle|pipeline|body] [--conns N] [--addrs N] [--hold S]\n");
            return 2;
        }
    }
    if (port <= 0 || nconns <= 0 || naddrs <= 0 || naddrs > 250)
        return fprintf(stderr, "flood: --port, --conns, --addrs (1..250) needed\n"), 2;
    signal(SIGPIPE, SIG_IGN);
    if (tls) {
        ctx = SSL_CTX_new(TLS_client_method());
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    }
    cs = calloc((size_t)nconns, sizeof(*cs));
    if (strcmp(mode, "body") == 0) {
        body = malloc(BODY);
        memset(body, ' ', BODY);
        snprintf(head, sizeof(head),
                 "POST /validate-kueue-x-k8s-io-v1beta2-clusterqueue HTTP/1.1\r\nHost: x\r\n"
                 "Content-Type: application/json\r\nContent-Length: %u\r\n\r\n",
                 BODY);
    }
    for (int i = 0; i < nconns; i++) {
        conn_t *c = &cs[i];
        struct sockaddr_in from, to;
        char src[32];

        c->fd = socket(AF_INET, SOCK_STREAM, 0);
        snprintf(src, sizeof(src), "127.0.1.%d", 2 + i % naddrs);
        memset(&from, 0, sizeof(from));
        from.sin_family = AF_INET;
        inet_pton(AF_INET, src, &from.sin_addr);
        memset(&to, 0, sizeof(to));
        to.sin_family = AF_INET;
        to.sin_port = htons((uint16_t)port);
        inet_pton(AF_INET, host, &to.sin_addr);
        setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        if (strcmp(mode, "pipeline") == 0)
            setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
        if (bind(c->fd, (struct sockaddr *)&from, sizeof(from)) != 0 ||
            connect(c->fd, (struct sockaddr *)&to, sizeof(to)) != 0) {
            c->refused = true;
            refused++;
            continue;
        }
        opened++;
        if (strcmp(mode, "silent") == 0)
            continue;
        if (tls) {
            c->ssl = SSL_new(ctx);
            SSL_set_fd(c->ssl, c->fd);
            if (SSL_connect(c->ssl) != 1) {
                ERR_clear_error();
                c->refused = true;
                refused++;
                continue;
            }
        }
        if (strcmp(mode, "idle") == 0) {
            static const char req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
            if (conn_send(c, req, sizeof(req) - 1) != 0 || conn_read_response(c) < 0) {
                c->refused = true;
                refused++;
            }
        } else if (strcmp(mode, "pipeline") == 0) {
            /* answers of ~200 bytes each: 2048 of them back up past the server's kernel
             * buffer (256 KiB) and its 64 KiB output limit */
            static const char req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
            for (int k = 0; k < 2048 && conn_send(c, req, sizeof(req) - 1) == 0; k++)
                ;
        } else if (strcmp(mode, "body") == 0) {
            if (conn_send(c, head, strlen(head)) == 0)
                conn_send(c, body, BODY - 1); /* a refusal (503, close) ends this early */
        }
        ERR_clear_error();
    }
    printf("flood %s: holding %d connections\n", mode, opened - refused);
    fflush(stdout);
    sleep((unsigned)hold);
    for (int i = 0; i < nconns; i++) {
        struct pollfd p = {.fd = cs[i].fd, .events = POLLIN};
        char b[4096];
        if (cs[i].refused)
            continue;
        /* closed by the server: readable, and reading ends in EOF or a reset after the data */
        while (poll(&p, 1, 0) == 1) {
            ssize_t r = recv(cs[i].fd, b, sizeof(b), MSG_DONTWAIT);
            if (r <= 0) {
                if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
                    closed++;
                break;
            }
        }
    }
    printf("flood %s: %d opened, %d refused at once, %d closed by the server within %d s, %d "
           "still open\n",
           mode, opened, refused, closed, hold, opened - refused - closed);
    for (int i = 0; i < nconns; i++) {
        SSL_free(cs[i].ssl);
        close(cs[i].fd);
    }
    free(cs);
    free(body);
    SSL_CTX_free(ctx);
    return 0;
}
