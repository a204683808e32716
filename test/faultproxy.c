/* faultproxy -- an HTTP proxy on loopback in front of the API server that injects faults. */
/* SPDX-License-Identifier: Apache-2.0 */

/*
 * Issue 15's API faults as a test tool (test/integration/ctrl_faults.sh, docs/reliability.md):
 *
 *   faultproxy --share PERCENT [--seed N] [--port-file FILE]
 *
 * It reads the API server, CA and admin token from the environment of test/kube-env
 * (SLUICE_KUBE_SERVER, SLUICE_KUBE_CA, SLUICE_KUBE_TOKEN), listens on a free port on 127.0.0.1
 * (written to --port-file), and serves plain HTTP/1.1: each request is forwarded with libcurl
 * (over TLS, with the token), its answer streamed back chunked. PERCENT of the requests (a
 * share drawn per request with a seeded generator) get one fault, chosen evenly among:
 *
 *   500 (not applied), 503 (not applied), 429 with Retry-After: 1, 409 (writes only; reads get
 *   a 500), a reset before forwarding, a stall (3 s, then forwarded), and the ambiguous ones:
 *   500 after forwarding (applied, answer lost), a reset after forwarding; a WATCH instead is
 *   cut after 0-2 s of streaming.
 *
 * SIGUSR1 cuts every open watch at once (test/integration/ctrl_compact.sh: a watch resumed after
 * etcd compacted its history). Every fault is counted; SIGTERM or SIGINT prints the counts on
 * stdout and exits 0. A thread per
 * client connection, blocking I/O: a test tool, not a server.
 */

#define _GNU_SOURCE /* strcasestr */

#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum {
    F_NONE,
    F_500,
    F_503,
    F_429,
    F_409,
    F_RESET,
    F_STALL,
    F_500_APPLIED,
    F_RESET_APPLIED,
    F_CUT,
    F__N
};
static const char *const fault_names[F__N] = {"none",
                                              "500",
                                              "503",
                                              "429 Retry-After",
                                              "409",
                                              "reset",
                                              "stall 3 s",
                                              "500 after commit",
                                              "reset after commit",
                                              "watch cut"};

static const char *upstream, *ca, *token;
static unsigned share_bp; /* faults per 10,000 requests */
static atomic_ulong counts[F__N];
static atomic_ulong requests;
static volatile sig_atomic_t cut_epoch; /* SIGUSR1: watches started before a change are cut */
static pthread_mutex_t rng_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned rng_state = 1;

static unsigned rng(void)
{
    unsigned r;

    pthread_mutex_lock(&rng_mu);
    rng_state = rng_state * 1103515245u + 12345u;
    r = (rng_state >> 8) & 0xffffff;
    pthread_mutex_unlock(&rng_mu);
    return r;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void reset_close(int fd)
{
    struct linger l = {1, 0};

    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    close(fd);
}

static void status_reply(int fd, int code, const char *reason, const char *extra)
{
    char body[256], head[512];
    int bl = snprintf(body, sizeof(body),
                      "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                      "\"message\":\"faultproxy: injected %d\",\"reason\":\"%s\",\"code\":%d}",
                      code, reason, code);
    int hl = snprintf(head, sizeof(head),
                      "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n%sContent-Length: "
                      "%d\r\n\r\n",
                      code, reason, extra ? extra : "", bl);

    send_all(fd, head, (size_t)hl);
    send_all(fd, body, (size_t)bl);
}

typedef struct fwd_s {
    int fd;
    CURL *e;
    bool head_sent;
    bool failed;
    bool watch;
    sig_atomic_t epoch; /* cut_epoch when the watch started */
    double cut_at;      /* monotonic seconds; 0: never */
    char ctype[128];
} fwd_t;

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int send_head(fwd_t *f)
{
    long code = 0;
    char head[256];
    int n;

    if (f->head_sent)
        return 0;
    curl_easy_getinfo(f->e, CURLINFO_RESPONSE_CODE, &code);
    n = snprintf(head, sizeof(head),
                 "HTTP/1.1 %ld X\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\n\r\n", code,
                 f->ctype[0] ? f->ctype : "application/json");
    f->head_sent = true;
    return send_all(f->fd, head, (size_t)n);
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    fwd_t *f = ud;
    size_t len = sz * n;

    if (len > 14 && strncasecmp(p, "Content-Type:", 13) == 0) {
        size_t v = len - 13;
        const char *s = p + 13;
        while (v > 0 && (*s == ' ')) {
            s++;
            v--;
        }
        while (v > 0 && (s[v - 1] == '\r' || s[v - 1] == '\n'))
            v--;
        snprintf(f->ctype, sizeof(f->ctype), "%.*s", (int)v, s);
    }
    return len;
}

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    fwd_t *f = ud;
    size_t len = sz * n;
    char size[32];
    int sl;

    if ((f->cut_at > 0 && now_s() >= f->cut_at) || (f->watch && f->epoch != cut_epoch)) {
        f->failed = true;
        return 0; /* abort: the client's stream ends without its last chunk */
    }
    if (send_head(f) != 0)
        goto fail;
    sl = snprintf(size, sizeof(size), "%zx\r\n", len);
    if (send_all(f->fd, size, (size_t)sl) != 0 || send_all(f->fd, p, len) != 0 ||
        send_all(f->fd, "\r\n", 2) != 0)
        goto fail;
    return len;
fail:
    f->failed = true;
    return 0;
}

static int on_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    fwd_t *f = ud;

    (void)a;
    (void)b;
    (void)c;
    (void)d;
    /* a quiet watch is cut too */
    return (f->cut_at > 0 && now_s() >= f->cut_at) || (f->watch && f->epoch != cut_epoch);
}

static size_t discard(char *p, size_t sz, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return sz * n;
}

/* Forward; with `answer` false the upstream answer is dropped (the caller fakes one). 0 when the
 * client connection can go on. */
static int forward(CURL *e, int fd, const char *method, const char *target, const char *ctype,
                   const char *body, size_t body_len, bool answer, bool watch, double cut_at)
{
    char url[8192], auth[4096], ct[300];
    struct curl_slist *hs = NULL;
    fwd_t f = {.fd = fd, .e = e, .watch = watch, .epoch = cut_epoch, .cut_at = cut_at};
    CURLcode rc;

    snprintf(url, sizeof(url), "%s%s", upstream, target);
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
    hs = curl_slist_append(hs, auth);
    hs = curl_slist_append(hs, "Accept: application/json");
    if (ctype[0]) {
        snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
        hs = curl_slist_append(hs, ct);
    }
    curl_easy_reset(e);
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_CAINFO, ca);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, hs);
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    if (body_len > 0) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)body_len);
    } else if (strcmp(method, "GET") != 0 && strcmp(method, "DELETE") != 0) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
    }
    if (strcmp(method, "GET") == 0)
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &f);
    if (answer) {
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, &f);
    } else {
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
    }
    if (cut_at > 0 || watch) {
        curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(e, CURLOPT_XFERINFODATA, &f);
    }
    rc = curl_easy_perform(e);
    curl_slist_free_all(hs);
    if (!answer)
        return 0;
    if (f.failed || (rc != CURLE_OK && f.head_sent))
        return -1; /* cut, or the client went away: close without the last chunk */
    if (rc != CURLE_OK) {
        status_reply(fd, 502, "Bad Gateway", NULL);
        return 0;
    }
    if (send_head(&f) != 0 || send_all(fd, "0\r\n\r\n", 5) != 0)
        return -1;
    return 0;
}

static void *serve(void *arg)
{
    int fd = (int)(intptr_t)arg;
    CURL *e = curl_easy_init();
    char *buf = malloc(1 << 16);
    size_t have = 0;

    for (;;) {
        char *end, method[16], target[8192], ctype[256] = "";
        size_t head_len, clen = 0;
        char *body;
        const char *cl, *ctp;
        bool watch, write, conn_close = false;
        unsigned r;
        int fault = F_NONE;

        buf[have] = '\0';
        while ((end = strstr(buf, "\r\n\r\n")) == NULL) {
            ssize_t n;
            if (have >= (1 << 16) - 1)
                goto out;
            n = recv(fd, buf + have, (1 << 16) - 1 - have, 0);
            if (n <= 0)
                goto out;
            have += (size_t)n;
            buf[have] = '\0';
        }
        head_len = (size_t)(end - buf) + 4;
        if (sscanf(buf, "%15s %8191s", method, target) != 2)
            goto out;
        cl = strcasestr(buf, "\r\nContent-Length:");
        if (cl != NULL && cl < end)
            clen = strtoul(cl + 17, NULL, 10);
        ctp = strcasestr(buf, "\r\nContent-Type:");
        if (ctp != NULL && ctp < end)
            sscanf(ctp + 15, " %255[^\r\n]", ctype);
        conn_close = strcasestr(buf, "\r\nConnection: close") != NULL;
        body = malloc(clen + 1);
        if (body == NULL)
            goto out;
        {
            size_t got = have - head_len < clen ? have - head_len : clen;
            memcpy(body, buf + head_len, got);
            memmove(buf, buf + head_len + got, have - head_len - got);
            have -= head_len + got;
            while (got < clen) {
                ssize_t n = recv(fd, body + got, clen - got, 0);
                if (n <= 0) {
                    free(body);
                    goto out;
                }
                got += (size_t)n;
            }
        }
        body[clen] = '\0';
        requests++;
        watch = strstr(target, "watch=true") != NULL || strstr(target, "watch=1") != NULL;
        write = strcmp(method, "GET") != 0;
        r = rng();
        if (r % 10000 < share_bp) {
            fault = watch ? F_CUT : F_500 + (int)((r >> 14) % (F_RESET_APPLIED - F_500 + 1));
            if (fault == F_409 && !write)
                fault = F_500;
            if ((fault == F_500_APPLIED || fault == F_RESET_APPLIED) && !write)
                fault = F_RESET;
        }
        counts[fault]++;
        switch (fault) {
        case F_500:
            status_reply(fd, 500, "InternalError", NULL);
            break;
        case F_503:
            status_reply(fd, 503, "ServiceUnavailable", NULL);
            break;
        case F_429:
            status_reply(fd, 429, "TooManyRequests", "Retry-After: 1\r\n");
            break;
        case F_409:
            status_reply(fd, 409, "Conflict", NULL);
            break;
        case F_RESET:
            free(body);
            reset_close(fd);
            fd = -1;
            goto out;
        case F_STALL:
            sleep(3);
            conn_close = forward(e, fd, method, target, ctype, body, clen, true, watch, 0) != 0;
            break;
        case F_500_APPLIED:
            forward(e, fd, method, target, ctype, body, clen, false, false, 0);
            status_reply(fd, 500, "InternalError", NULL);
            break;
        case F_RESET_APPLIED:
            forward(e, fd, method, target, ctype, body, clen, false, false, 0);
            free(body);
            reset_close(fd);
            fd = -1;
            goto out;
        case F_CUT:
            forward(e, fd, method, target, ctype, body, clen, true, true,
                    now_s() + (double)((r >> 14) % 2000) / 1000.0);
            conn_close = true; /* the stream is cut: close the connection */
            break;
        default:
            conn_close = forward(e, fd, method, target, ctype, body, clen, true, watch, 0) != 0 ||
                         conn_close;
            break;
        }
        free(body);
        if (conn_close)
            break;
    }
out:
    if (fd >= 0)
        close(fd);
    free(buf);
    curl_easy_cleanup(e);
    return NULL;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    if (sig == SIGUSR1)
        cut_epoch++;
    else
        stop = 1;
}

int main(int argc, char **argv)
{
    const char *port_file = NULL;
    double share = 5;
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    int lfd, one = 1;
    struct sigaction sa;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--share") == 0)
            share = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--seed") == 0)
            rng_state = (unsigned)strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--port-file") == 0)
            port_file = argv[i + 1];
    }
    upstream = getenv("SLUICE_KUBE_SERVER");
    ca = getenv("SLUICE_KUBE_CA");
    token = getenv("SLUICE_KUBE_TOKEN");
    if (upstream == NULL || ca == NULL || token == NULL || share < 0 || share > 100) {
        fprintf(stderr, "faultproxy: needs SLUICE_KUBE_SERVER, SLUICE_KUBE_CA, "
                        "SLUICE_KUBE_TOKEN and --share 0..100\n");
        return 2;
    }
    share_bp = (unsigned)(share * 100 + 0.5);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    signal(SIGPIPE, SIG_IGN);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal; /* no SA_RESTART: accept() returns EINTR */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_flags = SA_RESTART; /* SIGUSR1 only cuts watches: the accept loop goes on */
    sigaction(SIGUSR1, &sa, NULL);
    lfd = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(lfd, 128) != 0 ||
        getsockname(lfd, (struct sockaddr *)&a, &alen) != 0) {
        perror("faultproxy: listen");
        return 1;
    }
    if (port_file != NULL) {
        FILE *pf = fopen(port_file, "w");
        if (pf == NULL)
            return 1;
        fprintf(pf, "%d\n", ntohs(a.sin_port));
        fclose(pf);
    }
    while (!stop) {
        pthread_t t;
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (pthread_create(&t, NULL, serve, (void *)(intptr_t)fd) != 0)
            close(fd);
        else
            pthread_detach(t);
    }
    printf("faultproxy: %lu requests, share %.1f%%; faults:", (unsigned long)requests, share);
    for (int f = 1; f < F__N; f++)
        printf(" %s %lu,", fault_names[f], (unsigned long)counts[f]);
    printf(" total %lu\n", (unsigned long)(requests - counts[F_NONE]));
    fflush(stdout);
    return 0;
}
