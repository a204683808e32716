/* scale_runner -- Kueue's scheduler-benchmark runner for sluice: run a shape against a live API
 * server (or read a `sluice sim` summary of it) and print Kueue's figures beside Kueue's own. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "scale_live.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: scale_runner [options]\n"
    "\n"
    "Kueue's scheduler benchmark (test/performance/scheduler) against the API server of\n"
    "$KUBECONFIG, with `sluice run` already running there: creates the shape's ResourceFlavor,\n"
    "ClusterQueues, Namespaces, LocalQueues and Workloads on Kueue's schedule, marks each\n"
    "admitted Workload Finished runtimeMs after its admission, checks from the Workload watch\n"
    "that no ClusterQueue or cohort ever held more than its quota, and prints Kueue's figures.\n"
    "bench/scale.sh starts everything around it (docs/performance.md).\n"
    "\n"
    "  --shape NAME              baseline (default), large-scale or smoke\n"
    "  --prefix P                prefix every cluster-scoped name (shared API servers)\n"
    "  --kubeconfig FILE         default $KUBECONFIG\n"
    "  --qps N, --burst N        the runner's own client limits (default 5000, 5000)\n"
    "  --max-inflight N          Workload creates in flight at once (default 250: the streams\n"
    "                            of one HTTP/2 connection to kube-apiserver, what a Go client\n"
    "                            gets; creates that fail for the server's load are retried)\n"
    "  --sluice-pid PID          the controller: CPU time and peak RSS at the end\n"
    "  --apiserver-pid PID, --etcd-pid PID   their CPU during the run\n"
    "  --no-metrics              do not scrape the API server's /metrics\n"
    "  --timeout S               give up after S seconds (default 3600)\n"
    "  --settle S                after the last finish, wait up to S s for the ClusterQueue\n"
    "                            statuses to empty (default 10)\n"
    "  --release-evicted-after MS  remove the admission of an evicted Workload still holding\n"
    "                            quota after MS ms, as Kueue's runner does at once (default\n"
    "                            2000: sluice releases them itself; -1: never)\n"
    "  --cleanup                 delete the shape's objects at the end\n"
    "  --trace FILE              write every Workload record as a JSON line\n"
    "  --check-trace FILE        only replay a trace through the quota check\n"
    "  --sim-summary FILE        add a column from a `sluice sim --summary` of the same shape\n"
    "  --sim-only                no live run: only the simulator's column\n"
    "  --out FILE                write the result as JSON\n"
    "  --label TEXT              recorded in the JSON (e.g. the commit)\n"
    "  --quiet                   no progress lines\n"
    "\n"
    "exit status: 0 done and the check passed; 1 the quota check failed; 2 usage; 3 the run\n"
    "failed (timeout, API errors); 4 the watch history had a gap (the check is incomplete).\n";

typedef struct proc_sample_s {
    bool ok;
    double cpu_s, hwm_mib;
} proc_sample_t;

/* utime + stime from /proc/PID/stat and VmHWM from /proc/PID/status. */
static proc_sample_t proc_sample(long pid)
{
    proc_sample_t s = {0};
    char path[64], buf[4096];
    FILE *f;
    size_t n;

    if (pid <= 0)
        return s;
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    f = fopen(path, "r");
    if (f == NULL)
        return s;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* After "pid (comm) ": field 3 is the state; utime and stime are fields 14 and 15. */
    char *p = strrchr(buf, ')');
    if (p == NULL)
        return s;
    p++;
    unsigned long long v[13];
    for (int i = 0; i < 13; i++) {
        while (*p == ' ')
            p++;
        if (i == 0) { /* the state letter */
            p++;
            v[i] = 0;
            continue;
        }
        char *end;
        v[i] = strtoull(p, &end, 10);
        if (end == p)
            return s;
        p = end;
    }
    long tck = sysconf(_SC_CLK_TCK);
    s.cpu_s = (double)(v[11] + v[12]) / (double)(tck > 0 ? tck : 100);
    snprintf(path, sizeof(path), "/proc/%ld/status", pid);
    f = fopen(path, "r");
    if (f != NULL) {
        char line[256];
        while (fgets(line, sizeof(line), f) != NULL) {
            if (strncmp(line, "VmHWM:", 6) == 0)
                s.hwm_mib = strtod(line + 6, NULL) / 1024.0;
        }
        fclose(f);
    }
    s.ok = true;
    return s;
}

typedef struct buf_s {
    char *data;
    size_t len;
} buf_t;

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *data)
{
    buf_t *b = data;
    size_t n = size * nmemb;
    char *d = realloc(b->data, b->len + n + 1);
    if (d == NULL)
        return 0;
    memcpy(d + b->len, ptr, n);
    b->data = d;
    b->len += n;
    d[b->len] = '\0';
    return n;
}

/* GET /metrics with the configuration's credentials (blocking: once before, once after). */
static err_t scrape(kube_config_t *cfg, scale_api_t *out, err_msg_t *msg)
{
    CURL *e = curl_easy_init();
    struct curl_slist *h = NULL;
    char url[512], auth[2048];
    buf_t b = {0};
    const char *token = NULL;
    long code = 0;
    CURLcode rc;
    err_t err;

    if (e == NULL)
        return err_set(msg, ERR_NOMEM, "curl_easy_init");
    snprintf(url, sizeof(url), "%s/metrics", cfg->server);
    curl_easy_setopt(e, CURLOPT_URL, url);
    if (cfg->ca_data.data != NULL) {
        struct curl_blob blob = {cfg->ca_data.data, cfg->ca_data.len, CURL_BLOB_COPY};
        curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob);
    } else if (cfg->ca_file != NULL) {
        curl_easy_setopt(e, CURLOPT_CAINFO, cfg->ca_file);
    }
    if (cfg->insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (cfg->cert_file != NULL)
        curl_easy_setopt(e, CURLOPT_SSLCERT, cfg->cert_file);
    if (cfg->key_file != NULL)
        curl_easy_setopt(e, CURLOPT_SSLKEY, cfg->key_file);
    (void)kube_config_token(cfg, &token, NULL);
    if (token != NULL) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
        h = curl_slist_append(h, auth);
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    }
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(e, CURLOPT_TIMEOUT, 30L);
    rc = curl_easy_perform(e);
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
    if (rc != CURLE_OK)
        err = err_set(msg, ERR_IO, "GET %s: %s", url, curl_easy_strerror(rc));
    else if (code != 200)
        err = err_set(msg, ERR_HTTP, "GET %s: HTTP %ld", url, code);
    else
        err = scale_api_parse(out, b.data ? b.data : "", b.len, msg);
    curl_slist_free_all(h);
    curl_easy_cleanup(e);
    free(b.data);
    return err;
}

/* The 1-minute load average, or -1. */
static double loadavg(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    char buf[64];
    double v = -1;
    if (f != NULL) {
        if (fgets(buf, sizeof(buf), f) != NULL)
            v = strtod(buf, NULL);
        fclose(f);
    }
    return v;
}

typedef struct run_s {
    kube_config_t *cfg;
    bool metrics;
    long sluice_pid, apiserver_pid, etcd_pid;
    scale_api_t before, after;
    bool have_before, have_after;
    proc_sample_t api0, api1, etcd0, etcd1, sluice1;
    double load0, load1;
} run_t;

static void on_start(void *data)
{
    run_t *r = data;
    err_msg_t msg;

    if (r->metrics) {
        r->have_before = scrape(r->cfg, &r->before, &msg) == ERR_OK;
        if (!r->have_before)
            fprintf(stderr, "scale: metrics before the run: %s\n", msg.text);
    }
    r->load0 = loadavg();
    r->api0 = proc_sample(r->apiserver_pid);
    r->etcd0 = proc_sample(r->etcd_pid);
}

static void on_end(void *data)
{
    run_t *r = data;
    err_msg_t msg;

    r->load1 = loadavg();
    r->sluice1 = proc_sample(r->sluice_pid);
    r->api1 = proc_sample(r->apiserver_pid);
    r->etcd1 = proc_sample(r->etcd_pid);
    if (r->metrics) {
        r->have_after = scrape(r->cfg, &r->after, &msg) == ERR_OK;
        if (!r->have_after)
            fprintf(stderr, "scale: metrics after the run: %s\n", msg.text);
    }
}

static scale_proc_t delta(proc_sample_t a, proc_sample_t b)
{
    scale_proc_t p = {0};
    if (a.ok && b.ok) {
        p.known = true;
        p.cpu_s = b.cpu_s - a.cpu_s;
        p.rss_mib = b.hwm_mib;
    }
    return p;
}

/* Replay a trace file through the quota check. */
static int check_trace(const scale_layout_t *l, const char *path)
{
    FILE *f = fopen(path, "r");
    scale_check_t chk;
    char *line = NULL;
    size_t cap = 0;
    bool prev_relist = false;
    err_msg_t msg;
    int rc = 0;

    if (f == NULL) {
        fprintf(stderr, "scale: %s: %s\n", path, strerror(errno));
        return 2;
    }
    if (scale_check_init(&chk, l, &msg) != ERR_OK) {
        fprintf(stderr, "scale: %s\n", msg.text);
        fclose(f);
        return 2;
    }
    while (getline(&line, &cap, f) > 0) {
        json_error_t je;
        json_t *j = json_loads(line, 0, &je);
        scale_rec_t rec;
        if (j == NULL) {
            fprintf(stderr, "scale: %s:%d: %s\n", path, je.line, je.text);
            rc = 2;
            break;
        }
        const char *type = json_string_value(json_object_get(j, "type"));
        bool relist = type != NULL && strcmp(type, "RELIST") == 0;
        if (relist && !prev_relist)
            scale_check_gap(&chk);
        else if (!relist && prev_relist)
            scale_check_gap_end(&chk);
        prev_relist = relist;
        if (scale_trace_parse(j, &rec, &msg) != ERR_OK) {
            fprintf(stderr, "scale: %s: %s\n", path, msg.text);
            json_decref(j);
            rc = 2;
            break;
        }
        json_decref(j);
        int64_t idx = scale_layout_wl_find(l, rec.ns, rec.name);
        if (scale_check_apply(&chk, idx < 0 ? l->nwl : (uint64_t)idx, &rec, &msg) != ERR_OK &&
            chk.violations <= 20)
            fprintf(stderr, "scale: QUOTA CHECK FAILED: %s\n", msg.text);
    }
    free(line);
    fclose(f);
    printf("quota check of %s: %llu records, %llu admissions, %llu violation(s)%s\n", path,
           (unsigned long long)chk.records, (unsigned long long)chk.admissions,
           (unsigned long long)chk.violations, chk.gaps ? ", history with gaps" : "");
    if (chk.violations > 0) {
        printf("first violation: %s\n", chk.first_violation.text);
        rc = rc ? rc : 1;
    }
    scale_check_fini(&chk);
    return rc;
}

static json_t *load_json(const char *path)
{
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (j == NULL)
        fprintf(stderr, "scale: %s:%d: %s\n", path, je.line, je.text);
    return j;
}

static bool num_arg(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end != '\0')
        return false;
    *out = v;
    return true;
}

int main(int argc, char **argv)
{
    const char *shape_name = "baseline", *prefix = NULL, *kubeconfig = NULL, *trace_path = NULL;
    const char *check_path = NULL, *sim_path = NULL, *out_path = NULL, *label = NULL;
    double qps = 5000, burst = 5000, timeout = 3600, settle = 10, release = 2000, pid = 0;
    double inflight = 250;
    bool sim_only = false, cleanup = false, quiet = false;
    run_t run = {.metrics = true};
    scale_layout_t l;
    scale_result_t live = {.load_start = -1}, sim = {.load_start = -1};
    scale_live_out_t out;
    kube_config_t cfg;
    err_msg_t msg;
    int rc = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = true;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage_text, stdout);
            return 0;
        } else if (strcmp(a, "--sim-only") == 0) {
            sim_only = true;
            continue;
        } else if (strcmp(a, "--cleanup") == 0) {
            cleanup = true;
            continue;
        } else if (strcmp(a, "--quiet") == 0) {
            quiet = true;
            continue;
        } else if (strcmp(a, "--no-metrics") == 0) {
            run.metrics = false;
            continue;
        } else if (v == NULL) {
            ok = false;
        } else if (strcmp(a, "--shape") == 0) {
            shape_name = v;
        } else if (strcmp(a, "--prefix") == 0) {
            prefix = v;
        } else if (strcmp(a, "--kubeconfig") == 0) {
            kubeconfig = v;
        } else if (strcmp(a, "--trace") == 0) {
            trace_path = v;
        } else if (strcmp(a, "--check-trace") == 0) {
            check_path = v;
        } else if (strcmp(a, "--sim-summary") == 0) {
            sim_path = v;
        } else if (strcmp(a, "--out") == 0) {
            out_path = v;
        } else if (strcmp(a, "--label") == 0) {
            label = v;
        } else if (strcmp(a, "--qps") == 0) {
            ok = num_arg(v, &qps) && qps > 0;
        } else if (strcmp(a, "--burst") == 0) {
            ok = num_arg(v, &burst) && burst >= 1;
        } else if (strcmp(a, "--max-inflight") == 0) {
            ok = num_arg(v, &inflight) && inflight >= 1;
        } else if (strcmp(a, "--timeout") == 0) {
            ok = num_arg(v, &timeout) && timeout > 0;
        } else if (strcmp(a, "--settle") == 0) {
            ok = num_arg(v, &settle) && settle >= 0;
        } else if (strcmp(a, "--release-evicted-after") == 0) {
            ok = num_arg(v, &release);
        } else if (strcmp(a, "--sluice-pid") == 0) {
            ok = num_arg(v, &pid);
            run.sluice_pid = (long)pid;
        } else if (strcmp(a, "--apiserver-pid") == 0) {
            ok = num_arg(v, &pid);
            run.apiserver_pid = (long)pid;
        } else if (strcmp(a, "--etcd-pid") == 0) {
            ok = num_arg(v, &pid);
            run.etcd_pid = (long)pid;
        } else {
            ok = false;
        }
        if (!ok) {
            fprintf(stderr, "scale_runner: bad or incomplete option %s\n\n%s", a, usage_text);
            return 2;
        }
        i++;
    }
    const scale_shape_t *shape = scale_shape_find(shape_name);
    if (shape == NULL) {
        fprintf(stderr, "scale_runner: unknown shape %s (have: %s)\n", shape_name,
                scale_shape_names());
        return 2;
    }
    if (scale_layout_init(&l, shape, prefix) != 0) {
        fprintf(stderr, "scale_runner: out of memory or name too long\n");
        return 2;
    }
    if (check_path != NULL) {
        rc = check_trace(&l, check_path);
        scale_layout_fini(&l);
        return rc;
    }
    live.l = sim.l = &l;
    live.mode = "sluice run";
    sim.mode = "sluice sim";
    if (sim_path != NULL) {
        json_t *j = load_json(sim_path);
        if (j == NULL || scale_result_from_sim(&sim, j, &msg) != ERR_OK) {
            if (j != NULL)
                fprintf(stderr, "scale_runner: %s: %s\n", sim_path, msg.text);
            json_decref(j);
            scale_layout_fini(&l);
            return 2;
        }
        json_decref(j);
    }

    if (!sim_only) {
        FILE *trace = NULL;
        err_t e;

        curl_global_init(CURL_GLOBAL_DEFAULT);
        kube_config_init(&cfg);
        if (kube_config_load(kubeconfig, NULL, &cfg, &msg) != ERR_OK) {
            fprintf(stderr, "scale_runner: kubeconfig: %s\n", msg.text);
            scale_layout_fini(&l);
            return 2;
        }
        if (trace_path != NULL) {
            trace = fopen(trace_path, "w");
            if (trace == NULL) {
                fprintf(stderr, "scale_runner: %s: %s\n", trace_path, strerror(errno));
                kube_config_fini(&cfg);
                scale_layout_fini(&l);
                return 2;
            }
        }
        run.cfg = &cfg;
        scale_live_opts_t o = {.l = &l,
                               .cfg = &cfg,
                               .qps_milli = (uint64_t)(qps * 1000.0),
                               .burst = (uint32_t)burst,
                               .max_inflight = (uint32_t)inflight,
                               .timeout_s = timeout,
                               .settle_s = settle,
                               .release_after_ms = (int64_t)release,
                               .cleanup = cleanup,
                               .trace = trace,
                               .quiet = quiet,
                               .on_start = on_start,
                               .on_end = on_end,
                               .data = &run};
        if (!quiet)
            fprintf(stderr,
                    "scale: shape %s: %u cohorts, %u ClusterQueues, %llu workloads; lower bound "
                    "%.1f s, creation schedule %.1f s\n",
                    shape->name, l.ncohorts, l.ncqs, (unsigned long long)l.nwl,
                    scale_layout_lower_bound_s(&l), scale_layout_generation_s(&l));
        e = scale_live_run(&o, &out, &msg);
        if (trace != NULL)
            fclose(trace);
        if (out.wl == NULL) { /* it never started */
            fprintf(stderr, "scale_runner: %s\n", msg.text);
            kube_config_fini(&cfg);
            scale_layout_fini(&l);
            return 3;
        }
        scale_result_from_wl(&live, out.wl, out.first_create_ms, out.last_create_ms,
                             out.last_finish_ms);
        scale_result_cq_usage(&live, out.cq);
        if (run.sluice_pid > 0 && run.sluice1.ok)
            live.ctrl = (scale_proc_t){true, run.sluice1.cpu_s, run.sluice1.hwm_mib};
        live.load_start = run.load0;
        live.load_end = run.load1;
        live.apiserver = delta(run.api0, run.api1);
        live.etcd = delta(run.etcd0, run.etcd1);
        struct rusage ru;
        if (getrusage(RUSAGE_SELF, &ru) == 0)
            live.runner =
                (scale_proc_t){true,
                               (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                                   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
                               (double)ru.ru_maxrss / 1024.0};
        if (run.have_before && run.have_after &&
            scale_api_diff(&run.after, &run.before, &live.api_total) == ERR_OK) {
            live.have_api = true;
            live.api_runner = out.api;
            memset(&out.api, 0, sizeof(out.api));
        }
        live.have_check = true;
        live.check_records = out.chk.records;
        live.check_violations = out.chk.violations;
        live.check_gaps = out.chk.gaps;
        snprintf(live.check_first, sizeof(live.check_first), "%s",
                 out.chk.violations ? out.chk.first_violation.text : "");
        for (uint32_t q = 0; q < l.ncqs; q++) {
            if (out.chk.cq_peak[q] > live.peak_cq_milli)
                live.peak_cq_milli = out.chk.cq_peak[q];
        }
        for (uint32_t c = 0; c < l.ncohorts; c++) {
            if (out.chk.cohort_peak[c] > live.peak_cohort_milli)
                live.peak_cohort_milli = out.chk.cohort_peak[c];
        }
        snprintf(live.notes, sizeof(live.notes),
                 "%s%s%screate retries %llu; runner status writes: %llu Finished, %llu evictions "
                 "released by the runner, %llu conflicts (409), %llu errors; Workload relists "
                 "%llu",
                 e != ERR_OK ? "RUN FAILED: " : "", e != ERR_OK ? msg.text : "",
                 e != ERR_OK ? "; " : "", (unsigned long long)out.create_retries,
                 (unsigned long long)out.finish_writes, (unsigned long long)out.release_writes,
                 (unsigned long long)out.write_conflicts, (unsigned long long)out.write_errors,
                 (unsigned long long)out.relists);
        if (e != ERR_OK)
            rc = 3;
        else if (out.chk.violations > 0)
            rc = 1;
        else if (out.chk.gaps > 0)
            rc = 4;
    }

    scale_report_print(stdout, sim_only ? NULL : &live, sim_path ? &sim : NULL);
    fflush(stdout);
    if (out_path != NULL) {
        json_t *doc = json_pack("{s:s?}", "label", label);
        if (doc != NULL && !sim_only)
            json_object_set_new(doc, "live", scale_result_json(&live));
        if (doc != NULL && sim_path != NULL)
            json_object_set_new(doc, "sim", scale_result_json(&sim));
        if (doc == NULL || json_dump_file(doc, out_path, JSON_INDENT(2)) != 0) {
            fprintf(stderr, "scale_runner: cannot write %s\n", out_path);
            rc = rc ? rc : 3;
        }
        json_decref(doc);
    }
    if (!sim_only) {
        if (rc == 1)
            fprintf(stderr, "scale_runner: QUOTA CHECK FAILED: %s\n", live.check_first);
        scale_live_out_fini(&out);
        scale_api_fini(&run.before);
        scale_api_fini(&run.after);
        kube_config_fini(&cfg);
        curl_global_cleanup();
    }
    scale_result_fini(&live);
    scale_result_fini(&sim);
    scale_layout_fini(&l);
    return rc;
}
