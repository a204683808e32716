/* events -- the simulator's JSON Lines event stream (scenario-format.md, "Output"). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/events.h"

#include <errno.h>
#include <string.h>

/*
 * The writer formats by hand instead of building jansson trees: the key order is part of the
 * contract, numbers must come out exactly as integer milliseconds render, and a 50,000-workload
 * run writes hundreds of thousands of lines, so one fprintf-free pass per event matters.
 */

void sim_events_init(sim_events_t *ev, FILE *out)
{
    ev->out = out;
    ev->failed = false;
    ev->count = 0;
}

void sim_json_write_string(FILE *out, const char *s)
{
    static const char hex[] = "0123456789abcdef";

    putc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\r':
            fputs("\\r", out);
            break;
        case '\t':
            fputs("\\t", out);
            break;
        default:
            if (*p < 0x20) {
                fputs("\\u00", out);
                putc(hex[*p >> 4], out);
                putc(hex[*p & 15], out);
            } else {
                putc(*p, out);
            }
        }
    }
    putc('"', out);
}

/* The four keys every event starts with; leaves the object open. */
static bool begin(sim_events_t *ev, sim_ms_t t, const char *event, const char *wl, const char *cq)
{
    char tbuf[DURATION_STR_MAX];

    ev->count++;
    if (ev->out == NULL)
        return false;
    fputs("{\"time\":", ev->out);
    fputs(duration_format_secs(t, tbuf), ev->out);
    fputs(",\"event\":", ev->out);
    sim_json_write_string(ev->out, event);
    fputs(",\"workload\":", ev->out);
    sim_json_write_string(ev->out, wl);
    fputs(",\"clusterQueue\":", ev->out);
    sim_json_write_string(ev->out, cq != NULL ? cq : "");
    return true;
}

static void end(sim_events_t *ev)
{
    fputs("}\n", ev->out);
    if (ferror(ev->out))
        ev->failed = true;
}

static void write_flavors(sim_events_t *ev, const admission_t *adm, bool borrowing)
{
    fputs(",\"flavors\":{", ev->out);
    for (size_t i = 0; adm != NULL && i < adm->nassignments; i++) {
        const pod_set_assignment_t *a = &adm->assignments[i];
        if (i > 0)
            putc(',', ev->out);
        sim_json_write_string(ev->out, a->name != NULL ? a->name : "main");
        fputs(":{", ev->out);
        for (size_t k = 0; k < a->flavors.len; k++) {
            if (k > 0)
                putc(',', ev->out);
            sim_json_write_string(ev->out, a->flavors.items[k].key);
            putc(':', ev->out);
            sim_json_write_string(ev->out, a->flavors.items[k].value);
        }
        putc('}', ev->out);
    }
    fputs("},\"borrowing\":", ev->out);
    fputs(borrowing ? "true" : "false", ev->out);
}

void sim_events_admitted(sim_events_t *ev, sim_ms_t t, const char *wl, const char *cq,
                         const admission_t *adm, bool borrowing)
{
    if (!begin(ev, t, "Admitted", wl, cq))
        return;
    write_flavors(ev, adm, borrowing);
    end(ev);
}

void sim_events_quota_reserved(sim_events_t *ev, sim_ms_t t, const char *wl, const char *cq,
                               const admission_t *adm, bool borrowing, char *const *checks,
                               size_t nchecks)
{
    if (!begin(ev, t, "QuotaReserved", wl, cq))
        return;
    write_flavors(ev, adm, borrowing);
    fputs(",\"admissionChecks\":[", ev->out);
    for (size_t i = 0; i < nchecks; i++) {
        if (i > 0)
            putc(',', ev->out);
        sim_json_write_string(ev->out, checks[i]);
    }
    putc(']', ev->out);
    end(ev);
}

void sim_events_preempted(sim_events_t *ev, sim_ms_t t, const char *wl, const char *cq,
                          const char *preemptor, const char *reason)
{
    if (!begin(ev, t, "Preempted", wl, cq))
        return;
    fputs(",\"preemptor\":", ev->out);
    sim_json_write_string(ev->out, preemptor);
    fputs(",\"reason\":", ev->out);
    sim_json_write_string(ev->out, reason);
    end(ev);
}

void sim_events_finished(sim_events_t *ev, sim_ms_t t, const char *wl, const char *cq)
{
    if (!begin(ev, t, "Finished", wl, cq))
        return;
    end(ev);
}

void sim_events_deactivated(sim_events_t *ev, sim_ms_t t, const char *wl, const char *cq,
                            const char *reason)
{
    if (!begin(ev, t, "Deactivated", wl, cq))
        return;
    fputs(",\"reason\":", ev->out);
    sim_json_write_string(ev->out, reason);
    end(ev);
}

void sim_events_evicted(sim_events_t *ev, sim_ms_t t, const char *wl, const char *cq,
                        const char *reason)
{
    if (!begin(ev, t, "Evicted", wl, cq))
        return;
    fputs(",\"reason\":", ev->out);
    sim_json_write_string(ev->out, reason);
    end(ev);
}

void sim_events_node_replaced(sim_events_t *ev, sim_ms_t t, const char *wl, const char *cq,
                              const char *node, const admission_t *adm)
{
    bool first = true;

    if (!begin(ev, t, "NodeReplaced", wl, cq))
        return;
    fputs(",\"node\":", ev->out);
    sim_json_write_string(ev->out, node);
    fputs(",\"topology\":{", ev->out);
    for (size_t i = 0; i < adm->nassignments; i++) {
        const topology_assignment_t *ta = adm->assignments[i].topology;
        if (ta == NULL || ta->nlevels == 0)
            continue;
        if (!first)
            putc(',', ev->out);
        first = false;
        sim_json_write_string(ev->out, adm->assignments[i].name);
        putc(':', ev->out);
        putc('{', ev->out);
        for (size_t d = 0; d < ta->ndomains; d++) {
            if (d > 0)
                putc(',', ev->out);
            sim_json_write_string(ev->out, ta->values[d * ta->nlevels + ta->nlevels - 1]);
            fprintf(ev->out, ":%d", ta->counts[d]);
        }
        putc('}', ev->out);
    }
    putc('}', ev->out);
    end(ev);
}

void sim_events_requeued(sim_events_t *ev, sim_ms_t t, const char *wl, const char *cq,
                         const char *reason)
{
    if (!begin(ev, t, "Requeued", wl, cq))
        return;
    fputs(",\"reason\":", ev->out);
    sim_json_write_string(ev->out, reason);
    end(ev);
}

void sim_events_deleted(sim_events_t *ev, sim_ms_t t, const char *wl, const char *cq)
{
    if (!begin(ev, t, "Deleted", wl, cq))
        return;
    end(ev);
}

err_t sim_events_finish(sim_events_t *ev, err_msg_t *msg)
{
    if (ev->out == NULL)
        return ERR_OK;
    if (fflush(ev->out) != 0 || ferror(ev->out))
        ev->failed = true;
    if (ev->failed)
        return err_set(msg, ERR_IO, "writing events: %s", strerror(errno != 0 ? errno : EIO));
    return ERR_OK;
}
