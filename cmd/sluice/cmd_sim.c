/* cmd_sim -- `sluice sim`: flags, files and terminal progress around lib/sim. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "commands.h"

#include "util/alloc.h"
#include "util/util.h"

#include "acct/acct.h"
#include "sim/compare.h"
#include "sim/sim.h"
#include "sim/simmetrics.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *out)
{
    fputs(
        "usage: sluice sim [options] SCENARIO.yaml\n"
        "\n"
        "Run the admission engine over a scenario in virtual time: a multi-document YAML file of\n"
        "Kubernetes and Kueue objects (ResourceFlavor, ClusterQueue, LocalQueue, Cohort,\n"
        "Namespace, WorkloadPriorityClass, PriorityClass, Workload, batch/v1 Job, Configuration,\n"
        "and the workload kinds JobSet, PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob,\n"
        "MPIJob, RayJob, RayCluster, single Pods and StatefulSets) with the annotations\n"
        "sim.sluice.dev/at, sim.sluice.dev/delete-at and sim.sluice.dev/runtime, and for\n"
        "waitForPodsReady sim.sluice.dev/pods-ready-after, -unready-after and -recover-after.\n"
        "SCENARIO.yaml \"-\" reads standard input. The same file always gives the same output.\n"
        "See docs/simulator.md.\n"
        "\n"
        "Without --events or -o, a summary for people is printed on standard output.\n"
        "\n"
        "options (--name VALUE and --name=VALUE alike):\n"
        "  --events [FILE]     write one JSON event per line to FILE (default, or \"-\": standard\n"
        "                      output, and then no human summary); a FILE not given as\n"
        "                      --events=FILE is taken only when a SCENARIO follows it\n"
        "  --summary FILE      write the summary JSON document to FILE (\"-\": standard output)\n"
        "  -o, --output FORMAT json or yaml: the summary document on standard output instead of\n"
        "                      the human summary (json is --summary -)\n"
        "  --report FILE.html  write a self-contained HTML report with charts\n"
        "  --compare           two scenarios, A.yaml B.yaml: run A's workloads under A's quota\n"
        "                      design and under B's (ResourceFlavors, ClusterQueues, Cohorts,\n"
        "                      LocalQueues, Configuration), print one side-by-side table (-o "
        "json:\n"
        "                      JSON; --report FILE.html: both reports side by side); see\n"
        "                      docs/simulator.md, \"Comparing designs\"\n"
        "  --accounting FILE   write the accounting log (one JSON line per admission that ended,\n"
        "                      virtual time 0 = 1970-01-01T00:00:00Z; read it with sluice report)\n"
        "  --metrics FILE      write the run's metrics under sluice run's /metrics names\n"
        "                      (Prometheus text: counters of the whole run, gauges at its end;\n"
        "                      \"-\": standard output; docs/observability.md)\n"
        "  --until DURATION    stop at this virtual time (e.g. 8h, 90m, 1h30m)\n"
        "  -q, --quiet         no human summary and no progress\n"
        "  --timings           print load time, run time and peak memory on standard error\n"
        "  -h, --help          show this help\n"
        "\n"
        "Progress (virtual time reached, workloads done) is shown on standard error when it is a\n"
        "terminal. Warnings go to standard error.\n"
        "\n"
        "exit status: 0 the scenario ran, 1 the scenario is invalid (every error is printed as\n"
        "\"FILE:LINE: doc N (Kind name): path: message\", LINE where the document starts, and\n"
        "nothing runs), 2 usage or I/O error. Warnings read \"FILE:LINE: doc N (Kind name):\n"
        "warning: path: message\", as in sluice check.\n",
        out);
}

typedef struct sim_args_s {
    const char *scenario; /* as given; "-" is standard input */
    const char *name;     /* for messages: the file name, or "<stdin>" */
    const char *events;
    const char *summary;
    const char *report;
    const char *accounting;
    const char *scenario_b; /* --compare: the second scenario (B) */
    bool compare;
    const char *metrics;
    bool has_until;
    sim_ms_t until;
    bool quiet;
    bool timings;
    cli_output_t output; /* -o json|yaml: the summary document on standard output */
} sim_args_t;

enum {
    OPT_EVENTS = 1,
    OPT_SUMMARY,
    OPT_REPORT,
    OPT_UNTIL,
    OPT_QUIET,
    OPT_TIMINGS,
    OPT_OUTPUT,
    OPT_ACCOUNTING,
    OPT_COMPARE,
    OPT_METRICS
};

static const cli_opt_t sim_opts[] = {
    {OPT_EVENTS, 0, "events", CLI_ARG_OPTIONAL, "FILE", NULL, "one JSON event per line"},
    {OPT_SUMMARY, 0, "summary", CLI_ARG_REQUIRED, "FILE", NULL, "the summary JSON document"},
    {OPT_REPORT, 0, "report", CLI_ARG_REQUIRED, "FILE", NULL, "a self-contained HTML report"},
    {OPT_METRICS, 0, "metrics", CLI_ARG_REQUIRED, "FILE", NULL, "the run in /metrics' names"},
    {OPT_UNTIL, 0, "until", CLI_ARG_REQUIRED, "DURATION", NULL, "stop at this virtual time"},
    {OPT_QUIET, 'q', "quiet", CLI_ARG_NONE, NULL, NULL, "no human summary, no progress"},
    {OPT_TIMINGS, 0, "timings", CLI_ARG_NONE, NULL, NULL, "load and run times, peak memory"},
    CLI_OPT_OUTPUT(OPT_OUTPUT, "json yaml"),
    {OPT_ACCOUNTING, 0, "accounting", CLI_ARG_REQUIRED, "FILE", NULL, "the accounting log"},
    {OPT_COMPARE, 0, "compare", CLI_ARG_NONE, NULL, NULL, "compare two quota designs"},
};

/* `--events` without '=': the contract's "--events FILE (default: standard output)". The value
 * is optional, so the next argument is taken as FILE only when it is not an option and a
 * scenario remains besides it (`--events x.yaml` runs x.yaml with events on standard output). */
static const char *events_value(cli_t *p, const sim_args_t *a)
{
    const char *next = cli_peek(p);

    if (next == NULL || (next[0] == '-' && next[1] != '\0'))
        return "-";
    if (a->scenario == NULL && cli_operands_left(p) < 2)
        return "-";
    cli_skip(p);
    return next;
}

/* Parse argv; returns -1 to go on, otherwise the exit code. */
static int parse_args(int argc, char **argv, sim_args_t *a)
{
    err_msg_t msg;
    const char *val;
    cli_t p;
    int id;

    cli_init(&p, &cmd_sim, argc, argv);
    while ((id = cli_next(&p, &val)) != CLI_DONE) {
        switch (id) {
        case CLI_STOP:
            return p.status;
        case CLI_OPERAND:
            if (a->scenario != NULL && a->scenario_b != NULL)
                return cli_fail_usage(&p,
                                      "one scenario file at a time ('%s' and '%s'; "
                                      "--compare takes two)",
                                      a->scenario, val);
            if (a->scenario != NULL)
                a->scenario_b = val;
            else
                a->scenario = val;
            break;
        case OPT_COMPARE:
            a->compare = true;
            break;
        case OPT_EVENTS:
            a->events = val != NULL ? val : events_value(&p, a);
            break;
        case OPT_SUMMARY:
            a->summary = val;
            break;
        case OPT_REPORT:
            a->report = val;
            break;
        case OPT_METRICS:
            a->metrics = val;
            break;
        case OPT_UNTIL:
            if (duration_parse_ms(val, strlen(val), SIM_MS_MAX, &a->until, &msg) != ERR_OK)
                return cli_fail(&p, "--until %s: %s", val, msg.text);
            a->has_until = true;
            break;
        case OPT_QUIET:
            a->quiet = true;
            break;
        case OPT_TIMINGS:
            a->timings = true;
            break;
        case OPT_OUTPUT:
            a->output = cli_output_parse(val);
            break;
        case OPT_ACCOUNTING:
            a->accounting = val;
            break;
        }
    }
    if (a->scenario == NULL)
        return cli_fail_usage(&p, "no scenario file (- reads standard input)");
    if (a->scenario_b != NULL && !a->compare)
        return cli_fail_usage(&p,
                              "one scenario file at a time ('%s' and '%s'; --compare takes two)",
                              a->scenario, a->scenario_b);
    if (a->compare && a->scenario_b == NULL)
        return cli_fail_usage(&p, "--compare needs two scenario files: A.yaml B.yaml");
    if (a->compare && (a->events != NULL || a->summary != NULL || a->accounting != NULL ||
                       a->metrics != NULL || a->output == CLI_OUTPUT_YAML))
        return cli_fail_usage(&p, "--compare writes its table (or -o json) and --report only");
    a->name = strcmp(a->scenario, "-") == 0 ? "<stdin>" : a->scenario;
    if (a->report != NULL && strcmp(a->report, "-") == 0)
        return cli_fail(&p, "--report needs a file name");
    if (a->accounting != NULL && strcmp(a->accounting, "-") == 0)
        return cli_fail(&p, "--accounting needs a file name");
    int to_stdout = (a->events != NULL && strcmp(a->events, "-") == 0) +
                    (a->summary != NULL && strcmp(a->summary, "-") == 0) +
                    (a->metrics != NULL && strcmp(a->metrics, "-") == 0) +
                    (a->output != CLI_OUTPUT_TEXT);
    if (to_stdout > 1)
        return cli_fail(&p, "only one of --events -, --summary -, --metrics - and -o can use "
                            "standard output");
    return -1;
}

/* ---- progress on a terminal ------------------------------------------------------------------ */

typedef struct progress_s {
    struct timespec last;
    bool shown;
} progress_t;

static void on_progress(void *ud, sim_ms_t now, size_t done, size_t total)
{
    progress_t *p = ud;
    struct timespec ts;
    char buf[DURATION_STR_MAX];

    clock_gettime(CLOCK_MONOTONIC, &ts);
    long long ms = (ts.tv_sec - p->last.tv_sec) * 1000LL + (ts.tv_nsec - p->last.tv_nsec) / 1000000;
    if (p->shown && ms < 200)
        return;
    p->last = ts;
    p->shown = true;
    fprintf(stderr, "\r\033[Ksim: virtual time %s, %zu/%zu workloads done",
            duration_format(now, buf), done, total);
    fflush(stderr);
}

/* ---- --timings --------------------------------------------------------------------------- */

/* A point in time: wall clock and this process's CPU time, in seconds. */
typedef struct stamp_s {
    double wall, cpu;
} stamp_t;

static stamp_t stamp(void)
{
    struct timespec w, c;
    clock_gettime(CLOCK_MONOTONIC, &w);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
    return (stamp_t){(double)w.tv_sec + (double)w.tv_nsec / 1e9,
                     (double)c.tv_sec + (double)c.tv_nsec / 1e9};
}

static void print_timings(const sim_scenario_t *sc, const sim_rec_t *rec, stamp_t t0, stamp_t t1,
                          stamp_t t2, stamp_t t3)
{
    struct rusage ru;
    long peak_kb = getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : 0;

    fprintf(stderr,
            "sim: load %.3fs (cpu %.3fs; %zu documents), run %.3fs (cpu %.3fs; %zu workloads, "
            "%zu events), outputs %.3fs (cpu %.3fs), peak memory %.1f MiB\n",
            t1.wall - t0.wall, t1.cpu - t0.cpu, sc->ndocs, t2.wall - t1.wall, t2.cpu - t1.cpu,
            rec->nwls, rec->events, t3.wall - t2.wall, t3.cpu - t2.cpu, (double)peak_kb / 1024);
}

/* ---- messages ------------------------------------------------------------------------------ */

/* The document whose label `text` starts with ("doc N (Kind name): ..."), or NULL. The documents
 * are in file order, so their numbers increase: a binary search finds N. */
static const sim_doc_t *doc_of(const sim_scenario_t *sc, const char *text)
{
    size_t lo = 0, hi = sc->ndocs, n = 0;
    const char *p = text + 4;

    if (strncmp(text, "doc ", 4) != 0)
        return NULL;
    for (; *p >= '0' && *p <= '9' && n < SIZE_MAX / 10 - 9; p++)
        n = n * 10 + (size_t)(*p - '0');
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sc->docs[mid].number < n)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == sc->ndocs || sc->docs[lo].number != n)
        return NULL;
    return &sc->docs[lo];
}

/* One error or warning of the scenario as `sluice check` prints its own, with the line where the
 * document starts: "FILE:LINE: doc N (Kind name): [warning: ]path: message". */
static void print_diag(const sim_scenario_t *sc, const char *file, const char *text, bool warning)
{
    const sim_doc_t *d = doc_of(sc, text);
    size_t len = d != NULL ? strlen(d->label) : 0;

    if (d != NULL && strncmp(text, d->label, len) == 0 && strncmp(text + len, ": ", 2) == 0)
        fprintf(stderr, "%s:%d: %s: %s%s\n", file, d->line, d->label, warning ? "warning: " : "",
                text + len + 2);
    else
        fprintf(stderr, "%s: %s%s\n", file, warning ? "warning: " : "", text);
}

/* ---- files --------------------------------------------------------------------------------- */

static FILE *open_out(const char *path, const char *what)
{
    if (strcmp(path, "-") == 0)
        return stdout;
    FILE *f = fopen(path, "w");
    if (f == NULL)
        fprintf(stderr, "sluice sim: %s %s: %s\n", what, path, strerror(errno));
    return f;
}

static int close_out(FILE *f, const char *path, const char *what)
{
    if (f == NULL || f == stdout)
        return 0;
    if (fclose(f) != 0) {
        fprintf(stderr, "sluice sim: %s %s: %s\n", what, path, strerror(errno));
        return 2;
    }
    return 0;
}

/* -o json: the --summary document on standard output, as written; -o yaml: the same document
 * read back and written as YAML. */
static err_t write_output(const sim_rec_t *rec, cli_output_t fmt, err_msg_t *msg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem;
    json_t *doc = NULL;
    json_error_t jerr;
    err_t rc;

    if (fmt == CLI_OUTPUT_JSON)
        return sim_summary_write(rec, stdout, msg);
    mem = open_memstream(&buf, &len);
    if (mem == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    rc = sim_summary_write(rec, mem, msg);
    if (fclose(mem) != 0 && rc == ERR_OK)
        rc = err_set(msg, ERR_NOMEM, "out of memory");
    if (rc == ERR_OK) {
        doc = util_json_loadb(buf, len, JSON_DECODE_ANY, &jerr);
        rc = doc != NULL ? cli_output_write(stdout, fmt, doc, msg)
                         : err_set(msg, ERR_PARSE, "summary: %s", jerr.text);
    }
    json_decref(doc);
    free(buf);
    return rc;
}

/* Load scenario `path` into `sc` (initialised), printing its diagnostics; 0 or the exit code. */
static int load_scenario(const char *path, sim_scenario_t *sc)
{
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    FILE *in = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    err_msg_t msg = {{0}};
    err_t rc;

    if (in == NULL) {
        fprintf(stderr, "sluice sim: %s: %s\n", path, strerror(errno));
        return 2;
    }
    rc = sim_scenario_load(in, sc, &msg);
    if (in != stdin)
        fclose(in);
    for (size_t i = 0; i < sc->nwarnings; i++)
        print_diag(sc, name, sc->warnings[i], true);
    if (rc == ERR_INVALID) {
        for (size_t i = 0; i < sc->nerrors; i++)
            print_diag(sc, name, sc->errors[i], false);
        fprintf(stderr, "sluice sim: %s: %s; nothing was run\n", name, msg.text);
        return 1;
    }
    if (rc != ERR_OK) {
        fprintf(stderr, "sluice sim: %s: %s\n", name, msg.text);
        return 2;
    }
    return 0;
}

/* `sluice sim --compare A.yaml B.yaml` (lib/sim/compare.h says what is taken from which). */
static int compare_run(const sim_args_t *a)
{
    sim_scenario_t sa, sb, mixed;
    sim_rec_t ra, rb;
    sim_options_t opts;
    err_msg_t msg = {{0}};
    size_t ignored = 0;
    FILE *report = NULL;
    int code;

    sim_scenario_init(&sa);
    sim_scenario_init(&sb);
    sim_scenario_init(&mixed);
    sim_rec_init(&ra);
    sim_rec_init(&rb);
    memset(&opts, 0, sizeof(opts));
    opts.has_until = a->has_until;
    opts.until = a->until;
    code = load_scenario(a->scenario, &sa);
    if (code == 0)
        code = load_scenario(a->scenario_b, &sb);
    if (code != 0)
        goto out;
    code = 2;
    if (a->report != NULL && (report = open_out(a->report, "--report")) == NULL)
        goto out;
    if (sim_compare_scenario(&sa, &sb, &mixed, &ignored, &msg) != ERR_OK) {
        fprintf(stderr, "sluice sim: %s\n", msg.text);
        goto out;
    }
    if (ignored > 0)
        fprintf(stderr,
                "sluice sim: --compare: %zu document%s of %s that %s not part of the quota "
                "design ignored (B runs A's workloads)\n",
                ignored, ignored == 1 ? "" : "s", a->scenario_b, ignored == 1 ? "is" : "are");
    if (sim_run(&sa, &opts, &ra, &msg) != ERR_OK) {
        fprintf(stderr, "sluice sim: %s: %s\n", a->scenario, msg.text);
        goto out;
    }
    if (sim_run(&mixed, &opts, &rb, &msg) != ERR_OK) {
        fprintf(stderr, "sluice sim: %s's design with %s's workloads: %s\n", a->scenario_b,
                a->scenario, msg.text);
        goto out;
    }
    if (sim_compare_write(&ra, a->scenario, &rb, a->scenario_b, a->output == CLI_OUTPUT_JSON,
                          stdout, &msg) != ERR_OK) {
        fprintf(stderr, "sluice sim: %s\n", msg.text);
        goto out;
    }
    if (report != NULL &&
        sim_compare_html(&ra, a->scenario, &rb, a->scenario_b, report, &msg) != ERR_OK) {
        fprintf(stderr, "sluice sim: --report %s: %s\n", a->report, msg.text);
        goto out;
    }
    code = 0;
out:
    if (close_out(report, a->report, "--report") != 0)
        code = 2;
    sim_rec_fini(&ra);
    sim_rec_fini(&rb);
    sim_compare_scenario_fini(&mixed);
    sim_scenario_fini(&sa);
    sim_scenario_fini(&sb);
    return code;
}

static int sim_run_cmd(int argc, char **argv)
{
    sim_args_t a;
    sim_scenario_t sc;
    sim_rec_t rec;
    sim_options_t opts;
    progress_t prog;
    err_msg_t msg = {{0}};
    FILE *in = NULL, *events = NULL, *summary = NULL, *report = NULL, *metrics = NULL;
    acct_log_t *accounting = NULL;
    sim_metrics_t *collector = NULL;
    int code;
    err_t rc;

    memset(&a, 0, sizeof(a));
    memset(&prog, 0, sizeof(prog));
    sim_scenario_init(&sc);
    sim_rec_init(&rec);
    code = parse_args(argc, argv, &a);
    if (code >= 0)
        goto out;
    if (a.compare) {
        code = compare_run(&a);
        goto out;
    }
    code = 2;

    stamp_t t0 = stamp(), t1, t2;
    in = strcmp(a.scenario, "-") == 0 ? stdin : fopen(a.scenario, "r");
    if (in == NULL) {
        fprintf(stderr, "sluice sim: %s: %s\n", a.scenario, strerror(errno));
        goto out;
    }
    rc = sim_scenario_load(in, &sc, &msg);
    t1 = stamp();
    for (size_t i = 0; i < sc.nwarnings; i++)
        print_diag(&sc, a.name, sc.warnings[i], true);
    if (rc == ERR_INVALID) {
        for (size_t i = 0; i < sc.nerrors; i++)
            print_diag(&sc, a.name, sc.errors[i], false);
        fprintf(stderr, "sluice sim: %s: %s; nothing was run\n", a.name, msg.text);
        code = 1;
        goto out;
    }
    if (rc != ERR_OK) {
        fprintf(stderr, "sluice sim: %s: %s\n", a.name, msg.text);
        goto out;
    }

    /* Open every output before running, so a typo in a path costs nothing. */
    if (a.events != NULL && (events = open_out(a.events, "--events")) == NULL)
        goto out;
    if (a.summary != NULL && (summary = open_out(a.summary, "--summary")) == NULL)
        goto out;
    if (a.report != NULL && (report = open_out(a.report, "--report")) == NULL)
        goto out;
    if (a.accounting != NULL &&
        acct_log_open(a.accounting, true, 0, 0, &accounting, &msg) != ERR_OK) {
        fprintf(stderr, "sluice sim: --accounting: %s\n", msg.text);
        goto out;
    }
    if (a.metrics != NULL && (metrics = open_out(a.metrics, "--metrics")) == NULL)
        goto out;

    memset(&opts, 0, sizeof(opts));
    opts.has_until = a.has_until;
    opts.until = a.until;
    opts.events = events;
    opts.accounting = accounting;
    if (!a.quiet && isatty(STDERR_FILENO)) {
        opts.on_progress = on_progress;
        opts.progress_ud = &prog;
    }
    if (metrics != NULL) {
        collector = sim_metrics_new();
        if (collector == NULL) {
            fprintf(stderr, "sluice sim: --metrics: out of memory\n");
            goto out;
        }
        opts.on_instant = sim_metrics_on_instant;
        opts.instant_ud = collector;
    }
    rc = sim_run(&sc, &opts, &rec, &msg);
    t2 = stamp();
    if (prog.shown)
        fputs("\r\033[K", stderr);
    if (rc != ERR_OK) {
        fprintf(stderr, "sluice sim: %s: %s\n", a.name, msg.text);
        code = rc == ERR_INVALID ? 1 : 2;
        goto out;
    }
    if (summary != NULL && sim_summary_write(&rec, summary, &msg) != ERR_OK) {
        fprintf(stderr, "sluice sim: --summary %s: %s\n", a.summary, msg.text);
        goto out;
    }
    if (report != NULL && sim_report_write(&rec, a.name, report, &msg) != ERR_OK) {
        fprintf(stderr, "sluice sim: --report %s: %s\n", a.report, msg.text);
        goto out;
    }
    if (metrics != NULL && sim_metrics_write(collector, &rec, metrics, &msg) != ERR_OK) {
        fprintf(stderr, "sluice sim: --metrics %s: %s\n", a.metrics, msg.text);
        goto out;
    }
    if (a.output != CLI_OUTPUT_TEXT && write_output(&rec, a.output, &msg) != ERR_OK) {
        fprintf(stderr, "sluice sim: -o: %s\n", msg.text);
        goto out;
    }
    if (!a.quiet && events != stdout && summary != stdout && metrics != stdout &&
        a.output == CLI_OUTPUT_TEXT && sim_human_write(&rec, stdout, &msg) != ERR_OK) {
        fprintf(stderr, "sluice sim: %s\n", msg.text);
        goto out;
    }
    if (accounting != NULL) {
        err_t arc = acct_log_close(accounting, &msg);
        accounting = NULL;
        if (arc != ERR_OK) {
            fprintf(stderr, "sluice sim: --accounting: %s\n", msg.text);
            goto out;
        }
    }
    code = 0;
    if (a.timings)
        print_timings(&sc, &rec, t0, t1, t2, stamp());
out:
    if (close_out(events, a.events, "--events") != 0 ||
        close_out(summary, a.summary, "--summary") != 0 ||
        close_out(report, a.report, "--report") != 0 ||
        close_out(metrics, a.metrics, "--metrics") != 0)
        code = 2;
    sim_metrics_free(collector);
    if (code == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
        fprintf(stderr, "sluice sim: standard output: %s\n", strerror(errno));
        code = 2;
    }
    if (in != NULL && in != stdin)
        fclose(in);
    acct_log_close(accounting, NULL);
    sim_rec_fini(&rec);
    sim_scenario_fini(&sc);
    return code;
}

const cli_cmd_t cmd_sim = {
    "sim",
    "simulate a queue and quota design over a scenario, in virtual time",
    sim_run_cmd,
    sim_opts,
    ARRAY_SIZE(sim_opts),
    "SCENARIO.yaml",
    NULL,
    usage,
};
