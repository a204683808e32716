/* execcred -- kubeconfig `exec` users: run the ExecCredential plugin for a bearer token. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/execcred.h"

#include "model/jsonx.h"
#include "util/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define OUTPUT_MAX  (1u << 20) /* an ExecCredential is a few KiB */
#define RUN_MAX_MS  60000
#define REFRESH_S   60
#define API_V1      "client.authentication.k8s.io/v1"
#define API_V1BETA1 "client.authentication.k8s.io/v1beta1"

struct kube_exec_s {
    char *user;        /* owned: for messages */
    char *api_version; /* owned */
    char **argv;       /* owned, NULL-terminated; argv[0] is the command */
    char **env;        /* owned, NULL-terminated "NAME=VALUE" added to the environment */
    size_t nenv;
    char *token;     /* owned: the last token, or NULL */
    int64_t expires; /* Unix seconds; 0 = no expiry given */
    unsigned runs;
};

static void exec_strv_free(char **v)
{
    for (size_t i = 0; v != NULL && v[i] != NULL; i++)
        free(v[i]);
    free(v);
}

void kube_exec_free(kube_exec_t *x)
{
    if (x == NULL)
        return;
    free(x->user);
    free(x->api_version);
    exec_strv_free(x->argv);
    exec_strv_free(x->env);
    free(x->token);
    free(x);
}

unsigned kube_exec_runs(const kube_exec_t *x)
{
    return x->runs;
}

err_t kube_exec_parse(json_t *exec, const char *path, const char *user, const char *base_dir,
                      kube_exec_t **out, err_msg_t *msg)
{
    kube_exec_t *x = calloc(1, sizeof(*x));
    const char *api = json_string_value(json_object_get(exec, "apiVersion"));
    const char *cmd = json_string_value(json_object_get(exec, "command"));
    json_t *args = json_object_get(exec, "args"), *env = json_object_get(exec, "env"), *v;
    size_t i, n;
    err_t rc = ERR_OK;

    if (x == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    if (!json_is_object(exec)) {
        rc = err_set(msg, ERR_INVALID, "%s.exec: must be an object", path);
        goto fail;
    }
    if (api == NULL || (strcmp(api, API_V1) != 0 && strcmp(api, API_V1BETA1) != 0)) {
        rc = err_set(msg, ERR_UNSUPPORTED,
                     "%s.exec.apiVersion: user \"%s\": \"%.100s\" is not supported (want " API_V1
                     " or " API_V1BETA1 ")",
                     path, user, api ? api : "");
        goto fail;
    }
    if (cmd == NULL || cmd[0] == '\0') {
        rc = err_set(msg, ERR_INVALID, "%s.exec.command: required", path);
        goto fail;
    }
    if ((args != NULL && !json_is_array(args) && !json_is_null(args)) ||
        (env != NULL && !json_is_array(env) && !json_is_null(env))) {
        rc = err_set(msg, ERR_INVALID, "%s.exec: args and env must be lists", path);
        goto fail;
    }
    n = json_array_size(args);
    x->user = strdup(user);
    x->api_version = strdup(api);
    x->argv = calloc(n + 2, sizeof(char *));
    x->env = calloc(json_array_size(env) + 2, sizeof(char *)); /* + KUBERNETES_EXEC_INFO */
    if (x->user == NULL || x->api_version == NULL || x->argv == NULL || x->env == NULL)
        goto nomem;
    if (strchr(cmd, '/') != NULL && cmd[0] != '/' && base_dir != NULL) {
        size_t len = strlen(base_dir) + strlen(cmd) + 2;
        x->argv[0] = malloc(len);
        if (x->argv[0] != NULL)
            snprintf(x->argv[0], len, "%s/%s", base_dir, cmd);
    } else {
        x->argv[0] = strdup(cmd);
    }
    if (x->argv[0] == NULL)
        goto nomem;
    json_array_foreach(args, i, v)
    {
        if (!json_is_string(v)) {
            rc = err_set(msg, ERR_INVALID, "%s.exec.args[%zu]: must be a string", path, i);
            goto fail;
        }
        x->argv[i + 1] = strdup(json_string_value(v));
        if (x->argv[i + 1] == NULL)
            goto nomem;
    }
    json_array_foreach(env, i, v)
    {
        const char *name = json_string_value(json_object_get(v, "name"));
        const char *value = json_string_value(json_object_get(v, "value"));
        size_t len;
        if (name == NULL || name[0] == '\0' || strchr(name, '=') != NULL || value == NULL) {
            rc = err_set(msg, ERR_INVALID, "%s.exec.env[%zu]: want {name, value} strings", path, i);
            goto fail;
        }
        len = strlen(name) + strlen(value) + 2;
        x->env[x->nenv] = malloc(len);
        if (x->env[x->nenv] == NULL)
            goto nomem;
        snprintf(x->env[x->nenv++], len, "%s=%s", name, value);
    }
    *out = x;
    return ERR_OK;
nomem:
    rc = err_set(msg, ERR_NOMEM, "out of memory");
fail:
    kube_exec_free(x);
    return rc;
}

/* The environment of the plugin: ours, then the user's env (later wins), then
 * KUBERNETES_EXEC_INFO. A new NULL-terminated array of borrowed strings (free the array only),
 * whose last entry `info` the caller owns. */
static char **plugin_env(const kube_exec_t *x, char *info)
{
    size_t n = 0, k = 0;
    char **e;

    while (environ != NULL && environ[n] != NULL)
        n++;
    e = calloc(n + x->nenv + 2, sizeof(char *));
    if (e == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        size_t name = strcspn(environ[i], "=");
        bool replaced = strncmp(environ[i], "KUBERNETES_EXEC_INFO=", 21) == 0;
        for (size_t j = 0; j < x->nenv && !replaced; j++)
            replaced = strncmp(x->env[j], environ[i], name + 1) == 0;
        if (!replaced)
            e[k++] = environ[i];
    }
    for (size_t j = 0; j < x->nenv; j++)
        e[k++] = x->env[j];
    e[k++] = info;
    e[k] = NULL;
    return e;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Run the plugin; its standard output into *out (malloc'ed, NUL-terminated). */
static err_t run(kube_exec_t *x, char **out, err_msg_t *msg)
{
    char info[256], *buf = NULL, **envp = NULL;
    posix_spawn_file_actions_t fa;
    int fds[2] = {-1, -1}, status = 0, spawned = -1;
    size_t len = 0, cap = 0;
    int64_t deadline = mono_ms() + RUN_MAX_MS;
    pid_t pid = -1;
    err_t rc = ERR_OK;

    snprintf(info, sizeof(info),
             "KUBERNETES_EXEC_INFO={\"apiVersion\":\"%s\",\"kind\":\"ExecCredential\","
             "\"spec\":{\"interactive\":false}}",
             x->api_version);
    envp = plugin_env(x, info);
    if (envp == NULL || pipe(fds) != 0 || fcntl(fds[0], F_SETFD, FD_CLOEXEC) != 0)
        return err_set(msg, ERR_IO, "user \"%s\": exec plugin %s: %s", x->user, x->argv[0],
                       envp == NULL ? "out of memory" : strerror(errno));
    if (posix_spawn_file_actions_init(&fa) == 0) {
        if (posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) == 0 &&
            posix_spawn_file_actions_adddup2(&fa, fds[1], 1) == 0 &&
            posix_spawn_file_actions_addclose(&fa, fds[1]) == 0)
            spawned = posix_spawnp(&pid, x->argv[0], &fa, NULL, x->argv, envp);
        posix_spawn_file_actions_destroy(&fa);
    }
    close(fds[1]);
    free(envp);
    if (spawned != 0) {
        close(fds[0]);
        return err_set(msg, ERR_IO, "user \"%s\": exec plugin \"%s\" cannot be started: %s",
                       x->user, x->argv[0], spawned > 0 ? strerror(spawned) : "spawn failed");
    }
    x->runs++;
    for (;;) {
        struct pollfd p = {fds[0], POLLIN, 0};
        int64_t left = deadline - mono_ms();
        ssize_t got;
        if (left <= 0) {
            rc = err_set(msg, ERR_TIMEOUT,
                         "user \"%s\": exec plugin \"%s\" gave no credential "
                         "within %d s: killed",
                         x->user, x->argv[0], RUN_MAX_MS / 1000);
            kill(pid, SIGKILL);
            break;
        }
        if (poll(&p, 1, (int)left) < 0 && errno != EINTR) {
            rc = err_set(msg, ERR_IO, "user \"%s\": exec plugin: %s", x->user, strerror(errno));
            kill(pid, SIGKILL);
            break;
        }
        if (len + 4096 + 1 > cap) {
            char *nb;
            if (cap >= OUTPUT_MAX) {
                rc = err_set(msg, ERR_INVALID,
                             "user \"%s\": exec plugin \"%s\" printed more than %u bytes", x->user,
                             x->argv[0], OUTPUT_MAX);
                kill(pid, SIGKILL);
                break;
            }
            nb = realloc(buf, cap + 16384);
            if (nb == NULL) {
                rc = err_set(msg, ERR_NOMEM, "out of memory");
                kill(pid, SIGKILL);
                break;
            }
            buf = nb;
            cap += 16384;
        }
        got = read(fds[0], buf + len, cap - len - 1);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    close(fds[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (rc == ERR_OK && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        rc = err_set(msg, ERR_IO, "user \"%s\": exec plugin \"%s\" failed (%s %d)", x->user,
                     x->argv[0], WIFEXITED(status) ? "exit status" : "signal",
                     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    if (rc != ERR_OK) {
        free(buf);
        return rc;
    }
    if (buf == NULL && (buf = malloc(1)) == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    buf[len] = '\0';
    *out = buf;
    return ERR_OK;
}

err_t kube_exec_token(kube_exec_t *x, int64_t now, const char **out, err_msg_t *msg)
{
    json_t *cred = NULL, *status;
    const char *api, *kind, *token, *exp;
    char *text = NULL, *copy;
    int64_t expires = 0;
    err_t rc;

    *out = x->token;
    if (x->token != NULL && (x->expires == 0 || now < x->expires - REFRESH_S))
        return ERR_OK;
    rc = run(x, &text, msg);
    if (rc != ERR_OK)
        return rc;
    cred = util_json_loads(text, 0, NULL);
    free(text);
    api = json_string_value(json_object_get(cred, "apiVersion"));
    kind = json_string_value(json_object_get(cred, "kind"));
    status = json_object_get(cred, "status");
    token = json_string_value(json_object_get(status, "token"));
    exp = json_string_value(json_object_get(status, "expirationTimestamp"));
    if (!json_is_object(cred) || kind == NULL || strcmp(kind, "ExecCredential") != 0) {
        rc = err_set(msg, ERR_PARSE, "user \"%s\": exec plugin \"%s\" printed no ExecCredential",
                     x->user, x->argv[0]);
    } else if (api == NULL || strcmp(api, x->api_version) != 0) {
        rc = err_set(msg, ERR_PARSE,
                     "user \"%s\": exec plugin \"%s\" answered apiVersion \"%.100s\", asked for %s",
                     x->user, x->argv[0], api ? api : "", x->api_version);
    } else if (token == NULL || token[0] == '\0') {
        rc = err_set(
            msg, json_object_get(status, "clientCertificateData") ? ERR_UNSUPPORTED : ERR_PARSE,
            "user \"%s\": exec plugin \"%s\" returned no status.token%s", x->user, x->argv[0],
            json_object_get(status, "clientCertificateData")
                ? " (client certificates from plugins are not supported)"
                : "");
    } else if (exp != NULL && !jsonx_parse_time(exp, &expires)) {
        rc = err_set(msg, ERR_PARSE,
                     "user \"%s\": exec plugin \"%s\": status.expirationTimestamp \"%.64s\" is "
                     "not RFC 3339",
                     x->user, x->argv[0], exp);
    } else if ((copy = strdup(token)) == NULL) {
        rc = err_set(msg, ERR_NOMEM, "out of memory");
    } else {
        free(x->token);
        x->token = copy;
        x->expires = expires;
        *out = x->token;
    }
    json_decref(cred);
    return rc;
}
