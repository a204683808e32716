/* report_int.h -- what the files of the --report writer share (report*.c only). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SIM_REPORT_INT_H
#define SLUICE_SIM_REPORT_INT_H

#include "sim/record.h"

#include <stdbool.h>
#include <stdio.h>

/*
 * Every chart is an inline <svg> with a viewBox and no width: CSS makes it as wide as the page,
 * so it follows the window (and the printed page). A chart is drawn in user units: `rep_frame_t`
 * gives the plot area and the time range it shows; x positions are computed with integer
 * arithmetic from exact times, so the page is byte-identical across runs.
 *
 * A series is drawn per column of the plot (one user unit wide): a column shows the largest
 * value the series took during its time slice, so a short peak never disappears and a 50,000-
 * workload run still gives paths of at most a few thousand points.
 */

typedef struct rep_frame_s {
    int left, top; /* plot origin in user units */
    int w, h;      /* plot size */
    int width;     /* the whole viewBox */
    int height;
    sim_ms_t t0, t1; /* time shown across w */
} rep_frame_t;

/* Context the sections share: the record and its fixed orders. */
typedef struct rep_s {
    const sim_rec_t *r;
    FILE *out;
    size_t *cqs; /* owned: ClusterQueue holder indices in name order */
    size_t ncq;
    size_t *cq_rank; /* owned: per holder, its position in cqs (SIM_NONE for Cohorts) */
    char **flavors;  /* owned array of borrowed names: flavors in name order */
    size_t nflavors;
    char **gpu_res; /* owned array of borrowed names: GPU resources in name order */
    size_t ngpu_res;
    char **other_res; /* owned array of borrowed names: the other resources in name order */
    size_t nother_res;
    char **lqs; /* owned array of borrowed names: LocalQueues ("namespace/name") in name order */
    size_t nlq;
    bool lq_split; /* some ClusterQueue serves more than one LocalQueue */
} rep_t;

/* A merged timeline: the sorted distinct instants of several series, and each series' value
 * at each of them. */
typedef struct rep_grid_s {
    sim_ms_t *t; /* owned */
    size_t n;
} rep_grid_t;

/* ---- report_svg.c: drawing primitives ---------------------------------------------------- */

/* Colors: ClusterQueues, flavors and anything else by position. */
const char *rep_color(size_t i);
const char *rep_reason_color(size_t i); /* preemption reasons: reds first */
const char *rep_flavor_color(const rep_t *x, const char *flavor);
const char *rep_cq_color(const rep_t *x, size_t holder);
const char *rep_lq_color(const rep_t *x, const char *lq);

/* Position of LocalQueue `lq` in x->lqs, SIM_NONE when unknown or NULL. */
size_t rep_lq_index(const rep_t *x, const char *lq);

/* HTML/XML-escape `s` onto `out`. */
void rep_esc(FILE *out, const char *s);

/* x of instant `t`, y of value `v` on a scale of [0, vmax]. */
long long rep_x(const rep_frame_t *f, sim_ms_t t);
long long rep_y(const rep_frame_t *f, sim_wide_t v, sim_wide_t vmax);

/* <svg id class viewBox aria-label> for frame `f`. */
void rep_svg_open(FILE *out, const char *id, const char *cls, const rep_frame_t *f,
                  const char *label);

/* The time axis along y = base, with ticks at round durations. */
void rep_time_axis(FILE *out, const rep_frame_t *f, int base);

/* A value axis with round ticks up to vmax (nano-units of `resource`, or plain counts when
 * resource is NULL) and light grid lines. Returns the top of the scale (>= vmax). */
sim_wide_t rep_value_axis(FILE *out, const rep_frame_t *f, sim_wide_t vmax, const char *resource);

/* The round step of a time axis over `span` ms with at most `most` steps. */
sim_ms_t rep_time_step(sim_ms_t span, int most);

/* The instants of `n` series merged into `g` (ERR_NOMEM). */
err_t rep_grid_init(rep_grid_t *g, const sim_series_t *const *s, size_t n);
void rep_grid_fini(rep_grid_t *g);

/* Values of `s` at each instant of `g` into v[g->n]. */
void rep_grid_eval(const rep_grid_t *g, const sim_series_t *s, qnano_t *v);

/* Per column of `f` (f->w entries into cols), the largest of v over the column's time slice. */
void rep_columns(const rep_frame_t *f, const rep_grid_t *g, const qnano_t *v, qnano_t *cols);

/* A filled band between column values lo[] and hi[] (lo may be NULL: the baseline). */
void rep_band(FILE *out, const rep_frame_t *f, const qnano_t *lo, const qnano_t *hi,
              sim_wide_t vmax, const char *cls, const char *fill);

/* A step line through column values v[]. */
void rep_line(FILE *out, const rep_frame_t *f, const qnano_t *v, sim_wide_t vmax, const char *cls,
              const char *stroke);

/* An HTML legend entry: a swatch of `color` (`kind` "sw", "line", "dash", "hatch") and a
 * label. */
void rep_legend(FILE *out, const char *kind, const char *color, const char *label);

/* ---- sections (report_usage.c, report_waits.c, report_time.c, report_tree.c) --------------- */

bool rep_usage_cluster(rep_t *x);
bool rep_usage_lq(rep_t *x, const char *res, size_t idx);
bool rep_usage_cohorts(rep_t *x, const char *res, size_t idx);
bool rep_usage_per_cq(rep_t *x);
bool rep_pending(rep_t *x);
bool rep_waits(rep_t *x);
bool rep_gantt(rep_t *x);
bool rep_preemptions(rep_t *x);
bool rep_tree(rep_t *x);
bool rep_graph(rep_t *x); /* report_graph.c: the queue graph section */
bool rep_reasons(rep_t *x);

/* Did a wait explanation name resource `res` short while no GPU resource was? (CPU and
 * memory are shown unfolded only then: they, not the GPUs, were the constraint.) */
bool rep_resource_short(const sim_rec_t *r, const char *res);

#endif
