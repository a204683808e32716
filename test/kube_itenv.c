/* kube_itenv -- connection settings of the integration test cluster (test/kube-env). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube_itenv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value of `export KEY='value'` in the env file text, copied to buf; false when absent. */
static bool env_value(const char *text, const char *key, char *buf, size_t n)
{
    size_t kl = strlen(key);

    for (const char *p = text; p != NULL && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        const char *v, *end;

        if (strncmp(p, "export ", 7) != 0 || strncmp(p + 7, key, kl) != 0 || p[7 + kl] != '=')
            continue;
        v = p + 7 + kl + 1;
        if (*v == '\'')
            v++;
        end = strchr(v, '\n');
        if (end == NULL)
            end = v + strlen(v);
        if (end > v && end[-1] == '\'')
            end--;
        if ((size_t)(end - v) >= n)
            return false;
        memcpy(buf, v, (size_t)(end - v));
        buf[end - v] = '\0';
        return true;
    }
    return false;
}

/* The env file's text into buf (NUL-terminated); false when unreadable. */
static bool env_text(char *buf, size_t n)
{
    const char *path = getenv("SLUICE_KUBE_ENV");
    size_t got;
    FILE *f;

    if (path == NULL || (f = fopen(path, "r")) == NULL)
        return false;
    got = fread(buf, 1, n - 1, f);
    buf[got] = '\0';
    fclose(f);
    return true;
}

bool itenv_etcd_url(char *buf, size_t n)
{
    char text[16384], val[64], path[96], cmd[8192];
    size_t got;
    FILE *f;

    if (!env_text(text, sizeof(text)) ||
        !env_value(text, "SLUICE_KUBE_EXTERNAL", val, sizeof(val)) || strcmp(val, "0") != 0 ||
        !env_value(text, "SLUICE_KUBE_APISERVER_PID", val, sizeof(val)))
        return false;
    snprintf(path, sizeof(path), "/proc/%s/cmdline", val);
    f = fopen(path, "r");
    if (f == NULL)
        return false;
    got = fread(cmd, 1, sizeof(cmd) - 1, f);
    fclose(f);
    cmd[got] = '\0';
    for (size_t i = 0; i < got; i += strlen(cmd + i) + 1) {
        const char *arg = cmd + i;

        if (strncmp(arg, "--etcd-servers=", 15) == 0) {
            snprintf(buf, n, "%.*s", (int)strcspn(arg + 15, ","), arg + 15);
            return true;
        }
    }
    return false;
}

void itenv_load(kube_config_t *cfg)
{
    const char *path = getenv("SLUICE_KUBE_ENV");
    char text[16384], val[4096], skipped[4200];
    err_msg_t msg;
    size_t n;
    FILE *f;

    if (path == NULL || path[0] == '\0') {
        fprintf(stderr, "SLUICE_KUBE_ENV is not set: run through ctest -L integration or "
                        "test/kube-env/with-apiserver\n");
        exit(1);
    }
    f = fopen(path, "r");
    if (f == NULL) {
        const char *slash = strrchr(path, '/');

        snprintf(skipped, sizeof(skipped), "%.*s/SKIPPED", slash ? (int)(slash - path) : 1,
                 slash ? path : ".");
        f = fopen(skipped, "r");
        if (f != NULL) {
            n = fread(text, 1, sizeof(text) - 1, f);
            text[n] = '\0';
            fclose(f);
            fprintf(stderr, "SKIPPED -- INTEGRATION ENVIRONMENT UNAVAILABLE: %s\n", text);
            exit(77);
        }
        fprintf(stderr, "no environment file %s (did the kube_env_up fixture fail?)\n", path);
        exit(1);
    }
    n = fread(text, 1, sizeof(text) - 1, f);
    text[n] = '\0';
    fclose(f);
    kube_config_init(cfg);
    if (env_value(text, "SLUICE_KUBE_EXTERNAL", val, sizeof(val)) && strcmp(val, "0") == 0 &&
        env_value(text, "KUBECONFIG", val, sizeof(val))) {
        /* The local server: go through the kubeconfig, as `sluice run --kubeconfig` would. */
        if (kube_config_load_file(val, NULL, cfg, &msg) != ERR_OK) {
            fprintf(stderr, "%s\n", msg.text);
            exit(1);
        }
        return;
    }
    if (!env_value(text, "SLUICE_KUBE_SERVER", val, sizeof(val))) {
        fprintf(stderr, "%s: no SLUICE_KUBE_SERVER\n", path);
        exit(1);
    }
    cfg->server = strdup(val);
    cfg->namespace_name = strdup("default");
    if (env_value(text, "SLUICE_KUBE_CA", val, sizeof(val)) && val[0])
        cfg->ca_file = strdup(val);
    if (env_value(text, "SLUICE_KUBE_TOKEN", val, sizeof(val)) && val[0])
        cfg->token = strdup(val);
}
