/* idle -- the idle-reclaim policy of a queue and the state machine of one Workload. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/idle.h"

#include "util/duration.h"

#include <stdio.h>
#include <string.h>

/*
 * Why the clock starts at the first idle sample and not earlier: each query asks for the
 * highest utilisation over the last interval, so an idle sample proves the GPUs idle since the
 * previous query at best, and only for the samples Prometheus holds (a pod that started a few
 * seconds ago has few). Counting from the first idle answer under-states the idle time by less
 * than one interval -- the safe side for a step that stops someone's work.
 *
 * Why a warning always comes first, even with warnBefore 0: the condition and the Event are the
 * only notice a user gets, and deactivating in the same step as the first notice would leave
 * no moment to react. With warnBefore 0 the deactivation waits for one more idle sample.
 */

int64_t idle_policy_warn_ms(const idle_policy_t *p)
{
    return p->warn_set ? p->warn_ms : p->idle_ms / 4;
}

idle_action_t idle_step(idle_state_t *st, const idle_policy_t *p, const idle_sample_t *s,
                        int64_t now_ms)
{
    int64_t warn = idle_policy_warn_ms(p), elapsed;

    if (s->kind != IDLE_SAMPLE_IDLE) {
        bool was = st->since_ms != 0;
        memset(st, 0, sizeof(*st));
        return was ? IDLE_ACT_CLEAR : IDLE_ACT_NONE;
    }
    if (st->since_ms == 0 || now_ms < st->since_ms) {
        /* A new stretch (or a clock that went back: start over rather than trust it). */
        st->since_ms = now_ms > 0 ? now_ms : 1;
        st->warned_ms = 0;
        st->max_milli = s->max_milli;
    } else if (s->max_milli > st->max_milli) {
        st->max_milli = s->max_milli;
    }
    elapsed = now_ms - st->since_ms;
    if (st->warned_ms == 0) {
        if (elapsed < p->idle_ms - warn)
            return IDLE_ACT_NONE;
        st->warned_ms = now_ms > 0 ? now_ms : 1;
        return IDLE_ACT_WARN;
    }
    if (elapsed >= p->idle_ms && now_ms > st->warned_ms && now_ms - st->warned_ms >= warn)
        return IDLE_ACT_DEACTIVATE;
    return IDLE_ACT_NONE;
}

void idle_sample_add(idle_sample_t *s, uint32_t gpus, uint32_t series, uint32_t max_milli, bool bad)
{
    if (gpus == 0)
        return; /* a pod without GPUs (a launcher, a driver) says nothing */
    s->gpus = s->gpus + gpus < s->gpus ? UINT32_MAX : s->gpus + gpus;
    s->series = s->series + series < s->series ? UINT32_MAX : s->series + series;
    if (series > 0 && max_milli > s->max_milli)
        s->max_milli = max_milli;
    if (bad || series < gpus)
        s->incomplete = true;
}

void idle_sample_end(idle_sample_t *s, uint32_t threshold)
{
    if (s->series > 0 && s->max_milli > threshold)
        s->kind = IDLE_SAMPLE_BUSY;
    else if (s->gpus == 0 || s->incomplete)
        s->kind = IDLE_SAMPLE_UNKNOWN;
    else
        s->kind = IDLE_SAMPLE_IDLE;
}

/* ---- percentages ------------------------------------------------------------------------- */

err_t idle_percent_parse(const char *s, uint32_t *out, err_msg_t *msg)
{
    uint64_t whole = 0, frac = 0;
    size_t i = 0, nd = 0, nf = 0;

    if (s == NULL)
        return err_set(msg, ERR_INVALID, "missing percentage");
    for (; s[i] >= '0' && s[i] <= '9'; i++, nd++)
        if (nd < 4)
            whole = whole * 10 + (uint64_t)(s[i] - '0');
    if (s[i] == '.') {
        for (i++; s[i] >= '0' && s[i] <= '9'; i++, nf++)
            if (nf < 3)
                frac = frac * 10 + (uint64_t)(s[i] - '0');
            else if (s[i] != '0')
                return err_set(msg, ERR_INVALID, "%.32s: at most three decimals", s);
        if (nf == 0)
            return err_set(msg, ERR_INVALID, "%.32s: digits must follow the point", s);
    }
    if (nd == 0 || s[i] != '\0')
        return err_set(msg, ERR_INVALID, "%.32s: must be a percentage such as 5 or 2.5", s);
    for (size_t k = nf < 3 ? nf : 3; k < 3; k++)
        frac *= 10;
    if (nd > 3 || whole * 1000 + frac > IDLE_MILLI_MAX)
        return err_set(msg, ERR_INVALID, "%.32s: must be at most 100", s);
    *out = (uint32_t)(whole * 1000 + frac);
    return ERR_OK;
}

char *idle_percent_format(uint32_t milli, char *buf, size_t n)
{
    unsigned frac = milli % 1000;

    if (frac == 0)
        snprintf(buf, n, "%u%%", milli / 1000);
    else if (frac % 100 == 0)
        snprintf(buf, n, "%u.%u%%", milli / 1000, frac / 100);
    else if (frac % 10 == 0)
        snprintf(buf, n, "%u.%02u%%", milli / 1000, frac / 10);
    else
        snprintf(buf, n, "%u.%03u%%", milli / 1000, frac);
    return buf;
}

/* ---- a queue's annotations --------------------------------------------------------------- */

/* Idle durations: at least a minute, at most a year (whole milliseconds). */
#define IDLE_FOR_MIN_MS 60000
#define IDLE_FOR_MAX_MS ((int64_t)366 * 24 * 3600 * 1000)

err_t idle_policy_from_annotations(const kv_list_t *ann, const idle_policy_t *defaults,
                                   idle_policy_t *out, bool *found, err_msg_t *msg)
{
    const char *after = kv_list_get(ann, IDLE_ANN_FOR);
    const char *thr = kv_list_get(ann, IDLE_ANN_THRESHOLD);
    const char *warn = kv_list_get(ann, IDLE_ANN_WARN);
    idle_policy_t p = *defaults;
    int64_t ms;

    *found = false;
    if (after == NULL)
        return ERR_OK;
    if (duration_parse_ms(after, strlen(after), IDLE_FOR_MAX_MS, &ms, msg) != ERR_OK)
        return err_prefix(msg, ERR_INVALID, IDLE_ANN_FOR ": ");
    if (ms < IDLE_FOR_MIN_MS)
        return err_set(msg, ERR_INVALID, IDLE_ANN_FOR ": %.32s: must be at least 1m", after);
    p.idle_ms = ms;
    if (thr != NULL && idle_percent_parse(thr, &p.threshold_milli, msg) != ERR_OK)
        return err_prefix(msg, ERR_INVALID, IDLE_ANN_THRESHOLD ": ");
    if (warn == NULL && p.warn_set && p.warn_ms >= p.idle_ms)
        p.warn_set = false; /* the default lead does not fit this shorter idleFor */
    if (warn != NULL) {
        if (duration_parse_ms(warn, strlen(warn), IDLE_FOR_MAX_MS, &ms, msg) != ERR_OK)
            return err_prefix(msg, ERR_INVALID, IDLE_ANN_WARN ": ");
        p.warn_ms = ms;
        p.warn_set = true;
    }
    if (p.warn_set && p.warn_ms >= p.idle_ms)
        return err_set(msg, ERR_INVALID,
                       IDLE_ANN_WARN ": must be shorter than " IDLE_ANN_FOR " (%.32s)", after);
    *out = p;
    *found = true;
    return ERR_OK;
}
