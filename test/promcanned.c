/* promcanned -- a canned Prometheus on loopback: every request is answered with a file. */
/* SPDX-License-Identifier: Apache-2.0 */

/*
 * Idle reclaim's live test (test/integration/ctrl_idle.sh) as a test tool:
 *
 *   promcanned --port-file FILE --answer FILE [--log FILE]
 *
 * Listens on a free port of 127.0.0.1 (written to --port-file once listening) and answers every
 * HTTP/1.1 request with 200, Content-Type application/json and the contents of --answer, read
 * anew for each request (the test rewrites it to change what the "cluster" reports; a missing
 * file is a 503). Each request line is appended to --log. One connection at a time, blocking
 * I/O, closed after each answer: a test tool, not a server. SIGTERM ends it.
 */

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *arg(int argc, char **argv, const char *name)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return NULL;
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static void serve(int fd, const char *answer, const char *log)
{
    char req[8192], head[256], *body = NULL;
    size_t len = 0, blen = 0;
    FILE *f;

    /* Read the request head (no request here has a body). */
    while (len < sizeof(req) - 1) {
        ssize_t r = read(fd, req + len, sizeof(req) - 1 - len);
        if (r <= 0)
            break;
        len += (size_t)r;
        req[len] = '\0';
        if (strstr(req, "\r\n\r\n") != NULL)
            break;
    }
    req[len] = '\0';
    if (log != NULL && (f = fopen(log, "a")) != NULL) {
        fprintf(f, "%.*s\n", (int)strcspn(req, "\r\n"), req);
        fclose(f);
    }
    f = fopen(answer, "rb");
    if (f != NULL) {
        body = malloc(1 << 20);
        blen = body != NULL ? fread(body, 1, 1 << 20, f) : 0;
        fclose(f);
    }
    if (body == NULL) {
        static const char down[] = "{\"status\":\"error\",\"errorType\":\"unavailable\","
                                   "\"error\":\"no canned answer\"}";
        snprintf(head, sizeof(head),
                 "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                 sizeof(down) - 1);
        write_all(fd, head, strlen(head));
        write_all(fd, down, sizeof(down) - 1);
        return;
    }
    snprintf(head, sizeof(head),
             "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
             "Connection: close\r\n\r\n",
             blen);
    write_all(fd, head, strlen(head));
    write_all(fd, body, blen);
    free(body);
}

int main(int argc, char **argv)
{
    const char *port_file = arg(argc, argv, "--port-file"), *answer = arg(argc, argv, "--answer");
    const char *log = arg(argc, argv, "--log");
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    int s, one = 1;
    FILE *f;

    if (port_file == NULL || answer == NULL) {
        fprintf(stderr, "usage: promcanned --port-file FILE --answer FILE [--log FILE]\n");
        return 2;
    }
    s = socket(AF_INET, SOCK_STREAM, 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(s, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s, 16) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &alen) != 0) {
        perror("promcanned: listen");
        return 1;
    }
    f = fopen(port_file, "w");
    if (f == NULL || fprintf(f, "%d\n", ntohs(a.sin_port)) < 0 || fclose(f) != 0) {
        perror("promcanned: port file");
        return 1;
    }
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0)
            continue;
        serve(c, answer, log);
        close(c);
    }
}
