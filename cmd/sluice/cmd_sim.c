/* cmd_sim -- `sluice sim`: flags, files and terminal progress around lib/sim. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "commands.h"

#include "sim/sim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: sluice sim [options] SCENARIO.yaml\n"
    "\n"
    "Run the admission engine over a scenario in virtual time: a multi-document YAML file of\n"
    "Kubernetes and Kueue objects (ResourceFlavor, ClusterQueue, LocalQueue, Cohort, Namespace,\n"
    "WorkloadPriorityClass, PriorityClass, Workload, batch/v1 Job, Configuration, and the\n"
    "workload kinds JobSet, PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob, MPIJob, RayJob,\n"
    "RayCluster, single Pods and StatefulSets) with the annotations sim.sluice.dev/at,\n"
    "sim.sluice.dev/delete-at and sim.sluice.dev/runtime.\n"
    "The same file always gives the same output. See docs/simulator.md.\n"
    "\n"
    "Without --events, a summary for people is printed on standard output.\n"
    "\n"
    "options:\n"
    "  --events [FILE]     write one JSON event per line to FILE (default, or \"-\": standard\n"
    "                      output, and then no human summary); also --events=FILE\n"
    "  --summary FILE      write the summary JSON document to FILE (\"-\": standard output)\n"
    "  --report FILE.html  write a self-contained HTML report with charts\n"
    "  --until DURATION    stop at this virtual time (e.g. 8h, 90m, 1h30m)\n"
    "  --quiet             no human summary and no progress\n"
    "  --timings           print load time, run time and peak memory on standard error\n"
    "  -h, --help          show this help\n"
    "\n"
    "Progress (virtual time reached, workloads done) is shown on standard error when it is a\n"
    "terminal. Warnings go to standard error.\n"
    "\n"
    "exit status: 0 the scenario ran, 1 the scenario is invalid (every error is printed as\n"
    "\"doc N (Kind name): path: message\" and nothing runs), 2 usage or I/O error.\n";

typedef struct sim_args_s {
    const char *scenario;
    const char *events;
    const char *summary;
    const char *report;
    bool has_until;
    sim_ms_t until;
    bool quiet;
    bool timings;
} sim_args_t;

/* Is there a positional argument (the scenario) among argv[from..]? --until and --report always
 * take a value; any other argument starting with '-' is taken as a flag. */
static bool positional_after(int argc, char **argv, int from)
{
    for (int j = from; j < argc; j++) {
        if (strcmp(argv[j], "--until") == 0 || strcmp(argv[j], "--report") == 0)
            j++;
        else if (argv[j][0] != '-' || argv[j][1] == '\0')
            return true;
    }
    return false;
}

/* Parse argv; returns -1 to go on, otherwise the exit code. */
static int parse_args(int argc, char **argv, sim_args_t *a)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char **target = NULL;

        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }
        if (strcmp(arg, "--quiet") == 0 || strcmp(arg, "-q") == 0) {
            a->quiet = true;
            continue;
        }
        if (strcmp(arg, "--timings") == 0) {
            a->timings = true;
            continue;
        }
        if (strncmp(arg, "--events=", 9) == 0) {
            a->events = arg + 9;
            continue;
        }
        /* The contract's "--events FILE (default: standard output)": the value is optional, so
         * `--events` takes the next argument as FILE only when a scenario argument remains. */
        if (strcmp(arg, "--events") == 0 &&
            (i + 1 >= argc || (argv[i + 1][0] == '-' && argv[i + 1][1] != '\0') ||
             (a->scenario == NULL && !positional_after(argc, argv, i + 2)))) {
            a->events = "-";
            continue;
        }
        if (strcmp(arg, "--events") == 0)
            target = &a->events;
        else if (strcmp(arg, "--summary") == 0)
            target = &a->summary;
        else if (strcmp(arg, "--report") == 0)
            target = &a->report;
        if (target != NULL || strcmp(arg, "--until") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "sluice sim: %s needs a value\n", arg);
                return 2;
            }
            const char *val = argv[++i];
            if (target != NULL) {
                *target = val;
                continue;
            }
            err_msg_t msg;
            if (duration_parse_ms(val, strlen(val), SIM_MS_MAX, &a->until, &msg) != ERR_OK) {
                fprintf(stderr, "sluice sim: --until: %s\n", msg.text);
                return 2;
            }
            a->has_until = true;
            continue;
        }
        if (arg[0] == '-' && arg[1] != '\0') {
            fprintf(stderr, "sluice sim: unknown option '%s'\n\n%s", arg, usage_text);
            return 2;
        }
        if (a->scenario != NULL) {
            fprintf(stderr, "sluice sim: one scenario file at a time ('%s' and '%s')\n",
                    a->scenario, arg);
            return 2;
        }
        a->scenario = arg;
    }
    if (a->scenario == NULL) {
        fprintf(stderr, "sluice sim: no scenario file\n\n%s", usage_text);
        return 2;
    }
    if (a->report != NULL && strcmp(a->report, "-") == 0) {
        fprintf(stderr, "sluice sim: --report needs a file name\n");
        return 2;
    }
    int to_stdout = (a->events != NULL && strcmp(a->events, "-") == 0) +
                    (a->summary != NULL && strcmp(a->summary, "-") == 0);
    if (to_stdout > 1) {
        fprintf(stderr, "sluice sim: only one of --events and --summary can be \"-\"\n");
        return 2;
    }
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

int cmd_sim(int argc, char **argv)
{
    sim_args_t a;
    sim_scenario_t sc;
    sim_rec_t rec;
    sim_options_t opts;
    progress_t prog;
    err_msg_t msg = {{0}};
    FILE *in = NULL, *events = NULL, *summary = NULL, *report = NULL;
    int code;
    err_t rc;

    memset(&a, 0, sizeof(a));
    memset(&prog, 0, sizeof(prog));
    sim_scenario_init(&sc);
    sim_rec_init(&rec);
    code = parse_args(argc, argv, &a);
    if (code >= 0)
        goto out;
    code = 2;

    stamp_t t0 = stamp(), t1, t2;
    in = fopen(a.scenario, "r");
    if (in == NULL) {
        fprintf(stderr, "sluice sim: %s: %s\n", a.scenario, strerror(errno));
        goto out;
    }
    rc = sim_scenario_load(in, &sc, &msg);
    t1 = stamp();
    for (size_t i = 0; i < sc.nwarnings; i++)
        fprintf(stderr, "%s: warning: %s\n", a.scenario, sc.warnings[i]);
    if (rc == ERR_INVALID) {
        for (size_t i = 0; i < sc.nerrors; i++)
            fprintf(stderr, "%s: %s\n", a.scenario, sc.errors[i]);
        fprintf(stderr, "sluice sim: %s: %s; nothing was run\n", a.scenario, msg.text);
        code = 1;
        goto out;
    }
    if (rc != ERR_OK) {
        fprintf(stderr, "sluice sim: %s: %s\n", a.scenario, msg.text);
        goto out;
    }

    /* Open every output before running, so a typo in a path costs nothing. */
    if (a.events != NULL && (events = open_out(a.events, "--events")) == NULL)
        goto out;
    if (a.summary != NULL && (summary = open_out(a.summary, "--summary")) == NULL)
        goto out;
    if (a.report != NULL && (report = open_out(a.report, "--report")) == NULL)
        goto out;

    memset(&opts, 0, sizeof(opts));
    opts.has_until = a.has_until;
    opts.until = a.until;
    opts.events = events;
    if (!a.quiet && isatty(STDERR_FILENO)) {
        opts.on_progress = on_progress;
        opts.progress_ud = &prog;
    }
    rc = sim_run(&sc, &opts, &rec, &msg);
    t2 = stamp();
    if (prog.shown)
        fputs("\r\033[K", stderr);
    if (rc != ERR_OK) {
        fprintf(stderr, "sluice sim: %s: %s\n", a.scenario, msg.text);
        code = rc == ERR_INVALID ? 1 : 2;
        goto out;
    }
    if (summary != NULL && sim_summary_write(&rec, summary, &msg) != ERR_OK) {
        fprintf(stderr, "sluice sim: --summary %s: %s\n", a.summary, msg.text);
        goto out;
    }
    if (report != NULL && sim_report_write(&rec, a.scenario, report, &msg) != ERR_OK) {
        fprintf(stderr, "sluice sim: --report %s: %s\n", a.report, msg.text);
        goto out;
    }
    if (!a.quiet && events != stdout && summary != stdout &&
        sim_human_write(&rec, stdout, &msg) != ERR_OK) {
        fprintf(stderr, "sluice sim: %s\n", msg.text);
        goto out;
    }
    code = 0;
    if (a.timings)
        print_timings(&sc, &rec, t0, t1, t2, stamp());
out:
    if (close_out(events, a.events, "--events") != 0 ||
        close_out(summary, a.summary, "--summary") != 0 ||
        close_out(report, a.report, "--report") != 0)
        code = 2;
    if (code == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
        fprintf(stderr, "sluice sim: standard output: %s\n", strerror(errno));
        code = 2;
    }
    if (in != NULL)
        fclose(in);
    sim_rec_fini(&rec);
    sim_scenario_fini(&sc);
    return code;
}
