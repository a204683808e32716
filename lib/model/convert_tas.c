/* convert_tas -- topology assignments: v1beta1 {levels, domains} <-> v1beta2 {levels, slices}. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/convert_int.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * v1beta1 lists one domain per entry: {values: [one per level], count}. v1beta2 compresses runs
 * of domains into slices: {domainCount, valuesPerLevel: [per level: {universal} or
 * {individual: {prefix, suffix, roots: [one per domain]}}], podCounts: {universal} or
 * {individual: [one per domain]}}.
 *
 * Decoding (v1beta2 -> v1beta1) is unambiguous: value = universal, or prefix + root + suffix.
 *
 * Encoding (v1beta1 -> v1beta2) has many valid answers. This one is Kueue's, with its feature
 * gate TASAssignmentsEncodingByHostnamePrefix (beta, on by default), so an object reads the same
 * through sluice as through Kueue (pkg/util/tas/tas_assignment.go V1Beta2From):
 *
 *   1. When the lowest level is kubernetes.io/hostname and there are two or more domains, each
 *      hostname gets a key: its longest '-'-terminated prefix that some other hostname shares
 *      ("pool-a-node-7" -> "pool-a-node-"). Consecutive domains with equal keys form a run; runs
 *      are cut into chunks of at most 100,000 domains. If that makes more than 1,000 slices,
 *      shorter prefixes are tried (depth = how many '-' prefixes count), down to one; if none
 *      fits, all domains form one run.
 *   2. Each chunk becomes one slice, compacted per level: one universal value when all are
 *      equal, else the longest common prefix and suffix (not overlapping) and the roots; pod
 *      counts universal when all are equal.
 *   3. With more than one slice and at most 100,000 domains, the single-slice encoding is also
 *      built, and whichever is smaller as Go's encoding/json writes it wins (ties: the runs).
 *
 * Two deliberate differences, both for input Kueue itself could not produce: a domain whose
 * values do not match the levels one to one is refused (Kueue would panic or silently drop
 * values), and common prefixes/suffixes stop at UTF-8 character boundaries (Go slices bytes, and
 * would emit broken characters for non-ASCII values; label values are ASCII anyway). Hostname
 * values longer than a label value (63) are refused: the prefix search is quadratic in their
 * length.
 */

#define TAS_HOSTNAME          "kubernetes.io/hostname"
#define TAS_MAX_SLICE_DOMAINS 100000 /* Kueue: maxDomainsPerTopologyAssignmentSlice */
#define TAS_MAX_SLICES        1000   /* Kueue: maxTopologyAssignmentSlices */
#define TAS_MAX_LABEL_VALUE   63

typedef struct tstr_s {
    const char *s; /* borrowed from the JSON tree */
    size_t len;
} tstr_t;

/* A v1beta1 assignment, read and checked. */
typedef struct tas_s {
    size_t nlevels, ndomains;
    tstr_t *values;  /* owned: ndomains x nlevels, row-major */
    int32_t *counts; /* owned: ndomains */
} tas_t;

static const tstr_t *value_at(const tas_t *t, size_t domain, size_t level)
{
    return &t->values[domain * t->nlevels + level];
}

static bool int32_of(const json_t *v, int64_t lo, int32_t *out)
{
    json_int_t n;

    if (!json_is_integer(v))
        return false;
    n = json_integer_value(v);
    if (n < lo || n > INT32_MAX)
        return false;
    *out = (int32_t)n;
    return true;
}

/* levels: an array of strings (absent or null: none). */
static err_t read_levels(convert__cur_t *c, json_t *ta, size_t *nlevels, const json_t **levels)
{
    json_t *v = json_object_get(ta, "levels");

    *levels = NULL;
    *nlevels = 0;
    if (v == NULL || json_is_null(v))
        return ERR_OK;
    if (!json_is_array(v))
        return convert__fail_at(c, "levels", ERR_INVALID, "must be an array of label keys");
    if (convert__all_strings(c, v, "levels", "must be a string") != ERR_OK)
        return ERR_INVALID;
    *levels = v;
    *nlevels = json_array_size(v);
    return ERR_OK;
}

/* Read and check v1beta1 domains into `t`. */
static err_t read_domains(convert__cur_t *c, json_t *ta, const json_t *levels, tas_t *t)
{
    json_t *domains = json_object_get(ta, "domains"), *d, *vals, *v;
    bool hostname = false;
    size_t i, j, mark;

    if (domains == NULL || json_is_null(domains))
        return ERR_OK;
    if (!json_is_array(domains))
        return convert__fail_at(c, "domains", ERR_INVALID, "must be an array");
    t->ndomains = json_array_size(domains);
    if (t->ndomains == 0)
        return ERR_OK;
    if (t->nlevels > 0 && t->ndomains > SIZE_MAX / t->nlevels / sizeof(tstr_t))
        return convert__fail_at(c, "domains", ERR_INVALID, "too many domains");
    t->values = calloc(t->ndomains * (t->nlevels ? t->nlevels : 1), sizeof(tstr_t));
    t->counts = calloc(t->ndomains, sizeof(int32_t));
    if (t->values == NULL || t->counts == NULL)
        return ERR_NOMEM;
    hostname =
        t->nlevels > 0 && convert__str_is(json_array_get(levels, t->nlevels - 1), TAS_HOSTNAME);
    mark = convert__push_key(c, "domains");
    json_array_foreach(domains, i, d)
    {
        size_t dmark = convert__push_index(c, i);
        if (!json_is_object(d))
            return convert__fail(c, ERR_INVALID, "must be an object");
        vals = json_object_get(d, "values");
        if (!json_is_array(vals))
            return convert__fail_at(c, "values", ERR_INVALID, "must be an array of strings");
        if (json_array_size(vals) != t->nlevels)
            return convert__fail_at(c, "values", ERR_INVALID,
                                    "has %zu values for %zu levels: cannot map it to v1beta2 "
                                    "slices",
                                    json_array_size(vals), t->nlevels);
        json_array_foreach(vals, j, v)
        {
            tstr_t *s = &t->values[i * t->nlevels + j];
            if (!json_is_string(v)) {
                convert__push_key(c, "values");
                convert__push_index(c, j);
                return convert__fail(c, ERR_INVALID, "must be a string");
            }
            s->s = json_string_value(v);
            s->len = json_string_length(v);
            if (hostname && j == t->nlevels - 1 && s->len > TAS_MAX_LABEL_VALUE) {
                convert__push_key(c, "values");
                convert__push_index(c, j);
                return convert__fail(c, ERR_INVALID,
                                     "a " TAS_HOSTNAME " value of %zu characters (at most %d)",
                                     s->len, TAS_MAX_LABEL_VALUE);
            }
        }
        if (!int32_of(json_object_get(d, "count"), INT32_MIN, &t->counts[i]))
            return convert__fail_at(c, "count", ERR_INVALID, "must be an int32");
        convert__pop(c, dmark);
    }
    convert__pop(c, mark);
    return ERR_OK;
}

/* ---- step 2: one compact slice ------------------------------------------------------------ */

static bool utf8_cont(unsigned char b)
{
    return (b & 0xC0) == 0x80;
}

/* valuesPerLevel[level] for domains [from, to). */
static json_t *level_json(const tas_t *t, size_t level, size_t from, size_t to)
{
    const tstr_t *s0 = value_at(t, from, level);
    size_t pre = s0->len, suf = s0->len, maxlen = s0->len, minlen = s0->len;
    json_t *ind = NULL, *roots = NULL;

    for (size_t i = from + 1; i < to; i++) {
        const tstr_t *s = value_at(t, i, level);
        size_t k = 0;
        while (k < pre && k < s->len && s0->s[k] == s->s[k])
            k++;
        pre = k;
        k = 0;
        while (k < suf && k < s->len && s0->s[s0->len - 1 - k] == s->s[s->len - 1 - k])
            k++;
        suf = k;
        maxlen = s->len > maxlen ? s->len : maxlen;
        minlen = s->len < minlen ? s->len : minlen;
    }
    if (pre == maxlen) /* all equal */
        return json_pack("{s:s%}", "universal", s0->s, pre);
    if (pre + suf > minlen) /* {"ababa", "aba"}: do not let them overlap */
        pre = minlen - suf;
    while (pre > 0 && pre < s0->len && utf8_cont((unsigned char)s0->s[pre]))
        pre--;
    while (suf > 0 && utf8_cont((unsigned char)s0->s[s0->len - suf]))
        suf--;
    ind = json_object();
    roots = json_array();
    if (ind == NULL || roots == NULL)
        goto fail;
    if (pre > 0 && json_object_set_new(ind, "prefix", json_stringn(s0->s, pre)) != 0)
        goto fail;
    if (suf > 0 && json_object_set_new(ind, "suffix", json_stringn(s0->s + s0->len - suf, suf)))
        goto fail;
    for (size_t i = from; i < to; i++) {
        const tstr_t *s = value_at(t, i, level);
        if (json_array_append_new(roots, json_stringn(s->s + pre, s->len - pre - suf)) != 0)
            goto fail;
    }
    if (json_object_set_new(ind, "roots", roots) != 0) {
        roots = NULL;
        goto fail;
    }
    return convert__obj1("individual", ind);
fail:
    json_decref(ind);
    json_decref(roots);
    return NULL;
}

/* Kueue's compactSliceEncoding for domains [from, to). */
static json_t *slice_json(const tas_t *t, size_t from, size_t to)
{
    json_t *slice = json_pack("{s:I}", "domainCount", (json_int_t)(to - from)), *vpl = NULL;
    json_t *counts = NULL;
    bool same = true;

    if (slice == NULL)
        return NULL;
    if (t->nlevels > 0) {
        vpl = json_array();
        if (vpl == NULL)
            goto fail;
        for (size_t l = 0; l < t->nlevels; l++)
            if (json_array_append_new(vpl, level_json(t, l, from, to)) != 0)
                goto fail;
        if (json_object_set_new(slice, "valuesPerLevel", vpl) != 0) {
            vpl = NULL;
            goto fail;
        }
        vpl = NULL;
    }
    for (size_t i = from + 1; i < to; i++)
        same = same && t->counts[i] == t->counts[from];
    if (same) {
        if (json_object_set_new(slice, "podCounts",
                                json_pack("{s:i}", "universal", (int)t->counts[from])) != 0)
            goto fail;
        return slice;
    }
    counts = json_array();
    if (counts == NULL)
        goto fail;
    for (size_t i = from; i < to; i++)
        if (json_array_append_new(counts, json_integer(t->counts[i])) != 0)
            goto fail;
    if (json_object_set_new(slice, "podCounts", convert__obj1("individual", counts)) != 0) {
        counts = NULL;
        goto fail;
    }
    return slice;
fail:
    json_decref(vpl);
    json_decref(counts);
    json_decref(slice);
    return NULL;
}

/* ---- step 1: hostname-prefix keys ----------------------------------------------------------- */

/* Each domain's key as a length of its hostname (0 = no key). */
typedef struct keys_s {
    size_t *klen;   /* owned: ndomains */
    size_t *cand;   /* owned: every domain's '-' prefix lengths, ascending, concatenated */
    bool *reusable; /* owned: parallel to cand: the prefix occurs in two or more hostnames */
    size_t *off;    /* owned: ndomains + 1; domain i's candidates are cand[off[i]..off[i+1]) */
    size_t max_depth;
} keys_t;

static void keys_fini(keys_t *k)
{
    free(k->klen);
    free(k->cand);
    free(k->reusable);
    free(k->off);
}

static const tstr_t *host(const tas_t *t, size_t i)
{
    return value_at(t, i, t->nlevels - 1);
}

static bool same_key(const tas_t *t, const keys_t *k, size_t i, size_t j)
{
    return k->klen[i] == k->klen[j] && memcmp(host(t, i)->s, host(t, j)->s, k->klen[i]) == 0;
}

static size_t chunks(size_t n)
{
    return (n + TAS_MAX_SLICE_DOMAINS - 1) / TAS_MAX_SLICE_DOMAINS;
}

/* Index the '-' prefixes and count which are shared (Kueue's indexHostnamePrefixes). */
static err_t keys_index(const tas_t *t, keys_t *k)
{
    json_t *seen = json_object(); /* prefix -> number of hostnames with it, capped at 2 */
    size_t total = 0, n = t->ndomains;
    err_t rc = ERR_NOMEM;

    k->klen = calloc(n, sizeof(size_t));
    k->off = calloc(n + 1, sizeof(size_t));
    if (seen == NULL || k->klen == NULL || k->off == NULL)
        goto out;
    for (size_t i = 0; i < n; i++) {
        const tstr_t *h = host(t, i);
        size_t m = 0;
        for (size_t e = 0; e + 1 < h->len; e++)
            m += h->s[e] == '-';
        k->off[i] = total;
        total += m;
        k->max_depth = m > k->max_depth ? m : k->max_depth;
    }
    k->off[n] = total;
    k->cand = calloc(total ? total : 1, sizeof(size_t));
    k->reusable = calloc(total ? total : 1, sizeof(bool));
    if (k->cand == NULL || k->reusable == NULL)
        goto out;
    for (size_t i = 0; i < n; i++) {
        const tstr_t *h = host(t, i);
        size_t j = k->off[i];
        for (size_t e = 0; e + 1 < h->len; e++) {
            json_t *cnt;
            if (h->s[e] != '-')
                continue;
            k->cand[j++] = e + 1;
            cnt = json_object_getn(seen, h->s, e + 1);
            if (cnt == NULL) {
                if (json_object_setn_new_nocheck(seen, h->s, e + 1, json_integer(1)) != 0)
                    goto out;
            } else if (json_integer_value(cnt) < 2) {
                json_integer_set(cnt, 2);
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        const tstr_t *h = host(t, i);
        for (size_t j = k->off[i]; j < k->off[i + 1]; j++)
            k->reusable[j] = json_integer_value(json_object_getn(seen, h->s, k->cand[j])) >= 2;
    }
    rc = ERR_OK;
out:
    json_decref(seen);
    return rc;
}

/* Kueue's selectHostnamePrefixKeys: fills k->klen; *found false when no depth fits (then every
 * domain belongs to one run). */
static void keys_select(const tas_t *t, keys_t *k, bool *found)
{
    *found = false;
    for (size_t depth = k->max_depth; depth >= 1; depth--) {
        size_t slices = 0, start = 0;
        for (size_t i = 0; i < t->ndomains; i++) {
            size_t m = k->off[i + 1] - k->off[i];
            k->klen[i] = 0;
            for (size_t j = (m < depth ? m : depth); j-- > 0;) {
                if (k->reusable[k->off[i] + j]) {
                    k->klen[i] = k->cand[k->off[i] + j];
                    break;
                }
            }
        }
        for (size_t i = 1; i < t->ndomains; i++) {
            if (same_key(t, k, i, start))
                continue;
            slices += chunks(i - start);
            start = i;
        }
        slices += chunks(t->ndomains - start);
        if (slices <= TAS_MAX_SLICES) {
            *found = true;
            return;
        }
    }
}

/* Append the slices of run [from, to), chunked. */
static err_t add_run(const tas_t *t, json_t *slices, size_t from, size_t to)
{
    for (size_t s = from; s < to; s += TAS_MAX_SLICE_DOMAINS) {
        size_t e = to - s > TAS_MAX_SLICE_DOMAINS ? s + TAS_MAX_SLICE_DOMAINS : to;
        if (json_array_append_new(slices, slice_json(t, s, e)) != 0)
            return ERR_NOMEM;
    }
    return ERR_OK;
}

/* ---- step 3: choose ------------------------------------------------------------------------- */

/* Kueue's V1Beta2From (hostname-prefix encoding on): the slices for `t`, a new array. */
static err_t encode(const tas_t *t, bool hostname, json_t **out)
{
    json_t *runs = json_array(), *single = NULL;
    keys_t k = {0};
    bool keyed = false;
    size_t start = 0;
    err_t rc = ERR_NOMEM;

    if (runs == NULL)
        goto out;
    if (t->ndomains > 1 && hostname) {
        if (keys_index(t, &k) != ERR_OK)
            goto out;
        keys_select(t, &k, &keyed);
    }
    for (size_t i = 1; keyed && i < t->ndomains; i++) {
        if (same_key(t, &k, i, start))
            continue;
        if (add_run(t, runs, start, i) != ERR_OK)
            goto out;
        start = i;
    }
    if (t->ndomains > 0 && add_run(t, runs, start, t->ndomains) != ERR_OK)
        goto out;
    if (json_array_size(runs) > 1 && t->ndomains <= TAS_MAX_SLICE_DOMAINS) {
        single = json_array();
        if (single == NULL || json_array_append_new(single, slice_json(t, 0, t->ndomains)) != 0)
            goto out;
        if (convert__go_json_size(single) < convert__go_json_size(runs)) {
            json_decref(runs);
            runs = single;
            single = NULL;
        }
    }
    *out = runs;
    runs = NULL;
    rc = ERR_OK;
out:
    keys_fini(&k);
    json_decref(single);
    json_decref(runs);
    return rc;
}

/* ---- Go's encoding/json size ---------------------------------------------------------------- */

static size_t go_string_size(const char *s, size_t n)
{
    size_t size = 2;

    for (size_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)s[i];
        if (b == '"' || b == '\\' || b == '\n' || b == '\r' || b == '\t' || b == '\b' || b == '\f')
            size += 2;
        else if (b < 0x20 || b == '<' || b == '>' || b == '&')
            size += 6; /* \u00XX */
        else if (b == 0xE2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
                 ((unsigned char)s[i + 2] == 0xA8 || (unsigned char)s[i + 2] == 0xA9)) {
            size += 6; /* U+2028, U+2029 as \u2028, \u2029 */
            i += 2;
        } else
            size += 1;
    }
    return size;
}

size_t convert__go_json_size(const json_t *v)
{
    const char *key;
    size_t klen, i, size, n;
    json_t *item;
    char buf[32];

    switch (json_typeof(v)) {
    case JSON_OBJECT:
        size = 2;
        n = 0;
        json_object_keylen_foreach((json_t *)v, key, klen, item)
        {
            size += (n++ > 0) + go_string_size(key, klen) + 1 + convert__go_json_size(item);
        }
        return size;
    case JSON_ARRAY:
        size = 2;
        json_array_foreach(v, i, item) size += (i > 0) + convert__go_json_size(item);
        return size;
    case JSON_STRING:
        return go_string_size(json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        return (size_t)snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    case JSON_TRUE:
    case JSON_NULL:
        return 4;
    case JSON_FALSE:
        return 5;
    default:
        return 0; /* reals never occur in the trees built here */
    }
}

/* ---- v1beta1 -> v1beta2 --------------------------------------------------------------------- */

err_t convert__tas_to_v2(convert__cur_t *c, json_t *ta)
{
    static const char *const v2_only[] = {"slices", NULL};
    const json_t *levels;
    tas_t t = {0};
    json_t *slices = NULL, *entries = NULL;
    err_t rc;

    if ((rc = convert__foreign(c, ta, v2_only, CONVERT_V1BETA1)) != ERR_OK ||
        (rc = read_levels(c, ta, &t.nlevels, &levels)) != ERR_OK ||
        (rc = read_domains(c, ta, levels, &t)) != ERR_OK)
        goto out;
    rc = ERR_NOMEM;
    if (encode(&t,
               t.nlevels > 0 &&
                   convert__str_is(json_array_get(levels, t.nlevels - 1), TAS_HOSTNAME),
               &slices) != ERR_OK)
        goto out;
    if (json_array_size(slices) > 0) { /* Go: slices,omitempty */
        entries = convert__obj1("slices", slices);
        slices = NULL;
        if (entries == NULL)
            goto out;
    }
    rc = convert__splice(ta, "domains", entries);
out:
    json_decref(slices);
    free(t.values);
    free(t.counts);
    return rc;
}

/* ---- v1beta2 -> v1beta1 --------------------------------------------------------------------- */

/* One level of one slice, checked: universal, or prefix/suffix/roots. */
typedef struct level_s {
    const json_t *universal, *prefix, *suffix, *roots;
} level_t;

static err_t read_level(convert__cur_t *c, const json_t *lv, size_t domains, level_t *out)
{
    const json_t *u = json_object_get(lv, "universal"), *ind = json_object_get(lv, "individual");

    memset(out, 0, sizeof(*out));
    if (!json_is_object(lv))
        return convert__fail(c, ERR_INVALID, "must be an object");
    if (json_is_null(u))
        u = NULL;
    if (json_is_null(ind))
        ind = NULL;
    if ((u == NULL) == (ind == NULL))
        return convert__fail(c, ERR_INVALID,
                             "exactly one of the fields in [universal individual] must be set");
    if (u != NULL) {
        if (!json_is_string(u))
            return convert__fail_at(c, "universal", ERR_INVALID, "must be a string");
        out->universal = u;
        return ERR_OK;
    }
    if (!json_is_object(ind))
        return convert__fail_at(c, "individual", ERR_INVALID, "must be an object");
    out->prefix = json_object_get(ind, "prefix");
    out->suffix = json_object_get(ind, "suffix");
    out->roots = json_object_get(ind, "roots");
    if (json_is_null(out->prefix))
        out->prefix = NULL;
    if (json_is_null(out->suffix))
        out->suffix = NULL;
    if ((out->prefix != NULL && !json_is_string(out->prefix)) ||
        (out->suffix != NULL && !json_is_string(out->suffix)))
        return convert__fail_at(c, "individual", ERR_INVALID, "prefix and suffix must be strings");
    if (!json_is_array(out->roots) || json_array_size(out->roots) != domains)
        return convert__fail_at(c, "individual", ERR_INVALID,
                                "roots must be an array of domainCount (%zu) strings", domains);
    for (size_t i = 0; i < domains; i++)
        if (!json_is_string(json_array_get(out->roots, i)))
            return convert__fail_at(c, "individual", ERR_INVALID, "roots[%zu] must be a string", i);
    return ERR_OK;
}

/* The value of domain `i` at level `lv`, a new string. */
static json_t *level_value(const level_t *lv, size_t i)
{
    const json_t *root = json_array_get(lv->roots, i);
    size_t pl = lv->prefix ? json_string_length(lv->prefix) : 0;
    size_t sl = lv->suffix ? json_string_length(lv->suffix) : 0, rl;
    char *buf;
    json_t *s;

    if (lv->universal != NULL)
        return json_stringn_nocheck(json_string_value(lv->universal),
                                    json_string_length(lv->universal));
    rl = json_string_length(root);
    buf = malloc(pl + rl + sl + 1);
    if (buf == NULL)
        return NULL;
    if (pl > 0)
        memcpy(buf, json_string_value(lv->prefix), pl);
    memcpy(buf + pl, json_string_value(root), rl);
    if (sl > 0)
        memcpy(buf + pl + rl, json_string_value(lv->suffix), sl);
    s = json_stringn_nocheck(buf, pl + rl + sl); /* valid UTF-8 joined is valid UTF-8 */
    free(buf);
    return s;
}

/* Append slice `sl`'s domains to `domains`. */
static err_t decode_slice(convert__cur_t *c, const json_t *sl, size_t nlevels, json_t *domains)
{
    const json_t *vpl = json_object_get(sl, "valuesPerLevel"),
                 *pc = json_object_get(sl, "podCounts");
    const json_t *pu = NULL, *pi = NULL, *dcv = json_object_get(sl, "domainCount");
    level_t *lv = NULL;
    int32_t dc32 = 0;
    size_t dc;
    err_t rc = ERR_INVALID;

    if (!json_is_object(sl))
        return convert__fail(c, ERR_INVALID, "must be an object");
    if (dcv != NULL && !int32_of(dcv, 0, &dc32))
        return convert__fail_at(c, "domainCount", ERR_INVALID, "must be an int32, at least 0");
    dc = (size_t)dc32;
    if (dc > *c->budget)
        return convert__fail_at(c, "domainCount", ERR_INVALID,
                                "the topology assignments would expand to more domains than "
                                "allowed (%d per object; %zu left)",
                                CONVERT_MAX_DOMAINS, *c->budget);
    *c->budget -= dc;
    if (json_is_null(vpl))
        vpl = NULL;
    if (vpl != NULL && !json_is_array(vpl))
        return convert__fail_at(c, "valuesPerLevel", ERR_INVALID, "must be an array");
    if (json_array_size(vpl) != nlevels)
        return convert__fail_at(c, "valuesPerLevel", ERR_INVALID,
                                "valuesPerLevel must have the same length as the number of levels "
                                "in this TopologyAssignment (%zu, not %zu)",
                                nlevels, json_array_size(vpl));
    if (dc == 0)
        return ERR_OK;
    if (!json_is_object(pc))
        return convert__fail_at(c, "podCounts", ERR_INVALID, "must be an object");
    pu = json_object_get(pc, "universal");
    pi = json_object_get(pc, "individual");
    pu = json_is_null(pu) ? NULL : pu;
    pi = json_is_null(pi) ? NULL : pi;
    if ((pu == NULL) == (pi == NULL))
        return convert__fail_at(c, "podCounts", ERR_INVALID,
                                "exactly one of the fields in [universal individual] must be set");
    if (pu != NULL && !int32_of(pu, INT32_MIN, &dc32))
        return convert__fail_at(c, "podCounts", ERR_INVALID, "universal must be an int32");
    if (pi != NULL) {
        if (!json_is_array(pi) || json_array_size(pi) != dc)
            return convert__fail_at(c, "podCounts", ERR_INVALID,
                                    "podCounts.individual must have length equal to domainCount "
                                    "(%zu)",
                                    dc);
        for (size_t i = 0; i < dc; i++)
            if (!int32_of(json_array_get(pi, i), INT32_MIN, &dc32))
                return convert__fail_at(c, "podCounts", ERR_INVALID,
                                        "individual[%zu] must be an int32", i);
    }
    lv = calloc(nlevels ? nlevels : 1, sizeof(*lv));
    if (lv == NULL)
        return ERR_NOMEM;
    for (size_t l = 0; l < nlevels; l++) {
        size_t mark = convert__push_key(c, "valuesPerLevel");
        convert__push_index(c, l);
        if ((rc = read_level(c, json_array_get(vpl, l), dc, &lv[l])) != ERR_OK)
            goto out;
        convert__pop(c, mark);
    }
    rc = ERR_NOMEM;
    for (size_t i = 0; i < dc; i++) {
        json_t *values = json_array(), *d;
        const json_t *count = pu != NULL ? pu : json_array_get(pi, i);
        if (values == NULL)
            goto out;
        for (size_t l = 0; l < nlevels; l++) {
            if (json_array_append_new(values, level_value(&lv[l], i)) != 0) {
                json_decref(values);
                goto out;
            }
        }
        d = convert__obj1("values", values);
        if (d == NULL || json_object_set(d, "count", (json_t *)count) != 0) {
            json_decref(d);
            goto out;
        }
        if (json_array_append_new(domains, d) != 0)
            goto out;
    }
    rc = ERR_OK;
out:
    free(lv);
    return rc;
}

err_t convert__tas_to_v1(convert__cur_t *c, json_t *ta)
{
    static const char *const v1_only[] = {"domains", NULL};
    const json_t *levels, *slices = json_object_get(ta, "slices"), *sl;
    size_t nlevels, i;
    json_t *domains = NULL, *entries = NULL;
    err_t rc;

    if ((rc = convert__foreign(c, ta, v1_only, CONVERT_V1BETA2)) != ERR_OK ||
        (rc = read_levels(c, ta, &nlevels, &levels)) != ERR_OK)
        return rc;
    if (json_is_null(slices))
        slices = NULL;
    if (slices != NULL && !json_is_array(slices))
        return convert__fail_at(c, "slices", ERR_INVALID, "must be an array");
    domains = json_array();
    if (domains == NULL)
        return ERR_NOMEM;
    json_array_foreach(slices, i, sl)
    {
        size_t mark = convert__push_key(c, "slices");
        convert__push_index(c, i);
        if ((rc = decode_slice(c, sl, nlevels, domains)) != ERR_OK) {
            json_decref(domains);
            return rc;
        }
        convert__pop(c, mark);
    }
    /* Kueue's v1beta1 domains has no omitempty: always written, [] when empty. */
    entries = convert__obj1("domains", domains);
    if (entries == NULL)
        return ERR_NOMEM;
    return convert__splice(ta, "slices", entries);
}

/* ---- a typed assignment as v1beta2 -------------------------------------------------------- */

err_t convert_topology_assignment(const topology_assignment_t *a, json_t **out, err_msg_t *msg)
{
    static const convert_opts_t no_opts = {0};
    convert__cur_t c = {.opts = &no_opts, .msg = msg};
    json_t *ta = json_pack("{s:[],s:[]}", "levels", "domains"), *levels, *domains;
    err_t rc = ERR_NOMEM;

    snprintf(c.who, sizeof(c.who), "topology assignment");
    c.budget = &c.own_budget;
    if (ta == NULL)
        return ERR_NOMEM;
    levels = json_object_get(ta, "levels");
    domains = json_object_get(ta, "domains");
    for (size_t l = 0; l < a->nlevels; l++)
        if (json_array_append_new(levels, json_string(a->levels[l])) != 0)
            goto out;
    for (size_t i = 0; i < a->ndomains; i++) {
        json_t *vals = json_array(), *d;
        if (vals == NULL)
            goto out;
        for (size_t l = 0; l < a->nlevels; l++) {
            if (json_array_append_new(vals, json_string(a->values[i * a->nlevels + l])) != 0) {
                json_decref(vals);
                goto out;
            }
        }
        d = json_pack("{s:o,s:i}", "values", vals, "count", (int)a->counts[i]);
        if (d == NULL || json_array_append_new(domains, d) != 0)
            goto out;
    }
    if ((rc = convert__tas_to_v2(&c, ta)) != ERR_OK)
        goto out;
    *out = ta;
    return ERR_OK;
out:
    json_decref(ta);
    return rc;
}

err_t convert_topology_assignment_read(const json_t *ta, bool v1beta2, topology_assignment_t **out,
                                       err_msg_t *msg)
{
    static const convert_opts_t no_opts = {0};
    convert__cur_t c = {.opts = &no_opts, .msg = msg};
    json_t *copy = json_deep_copy(ta), *levels, *domains, *d;
    topology_assignment_t *a = calloc(1, sizeof(*a));
    size_t nl, nd, i;
    err_t rc = ERR_NOMEM;

    snprintf(c.who, sizeof(c.who), "topologyAssignment");
    c.own_budget = CONVERT_MAX_DOMAINS;
    c.budget = &c.own_budget;
    if (copy == NULL || a == NULL)
        goto out;
    if (!json_is_object(copy)) {
        rc = err_set(msg, ERR_INVALID, "topologyAssignment: must be an object");
        goto out;
    }
    if (v1beta2 && (rc = convert__tas_to_v1(&c, copy)) != ERR_OK)
        goto out;
    rc = ERR_INVALID;
    levels = json_object_get(copy, "levels");
    domains = json_object_get(copy, "domains");
    if (!json_is_array(levels) || json_array_size(levels) == 0 || !json_is_array(domains)) {
        err_set(msg, rc, "topologyAssignment: levels and %s are required",
                v1beta2 ? "slices" : "domains");
        goto out;
    }
    nl = json_array_size(levels);
    nd = json_array_size(domains);
    if (nd > CONVERT_MAX_DOMAINS) {
        err_set(msg, rc, "topologyAssignment.domains: more than %d", CONVERT_MAX_DOMAINS);
        goto out;
    }
    a->levels = calloc(nl, sizeof(*a->levels));
    a->values = calloc(nl * (nd ? nd : 1), sizeof(*a->values));
    a->counts = calloc(nd ? nd : 1, sizeof(*a->counts));
    if (a->levels == NULL || a->values == NULL || a->counts == NULL) {
        rc = err_set(msg, ERR_NOMEM, "topologyAssignment: out of memory");
        goto out;
    }
    /* counts set as filled, so that topology_assignment_fini() frees only what exists */
    for (i = 0; i < nl; i++) {
        const char *l = json_string_value(json_array_get(levels, i));
        if (l == NULL) {
            err_set(msg, rc, "topologyAssignment.levels[%zu]: must be a string", i);
            goto out;
        }
        if ((a->levels[i] = strdup(l)) == NULL) {
            rc = err_set(msg, ERR_NOMEM, "topologyAssignment: out of memory");
            goto out;
        }
        a->nlevels = i + 1;
    }
    json_array_foreach(domains, i, d)
    {
        const json_t *vals = json_object_get(d, "values"), *cnt = json_object_get(d, "count");
        if (json_array_size(vals) != nl || !int32_of(cnt, 0, &a->counts[i])) {
            err_set(msg, rc,
                    "topologyAssignment.domains[%zu]: want %zu values and a count (0..2^31-1)", i,
                    nl);
            goto out;
        }
        a->ndomains = i + 1;
        for (size_t l = 0; l < nl; l++) {
            const char *v = json_string_value(json_array_get(vals, l));
            if (v == NULL) {
                err_set(msg, rc, "topologyAssignment.domains[%zu].values[%zu]: must be a string", i,
                        l);
                goto out;
            }
            if ((a->values[i * nl + l] = strdup(v)) == NULL) {
                rc = err_set(msg, ERR_NOMEM, "topologyAssignment: out of memory");
                goto out;
            }
        }
    }
    *out = a;
    a = NULL;
    rc = ERR_OK;
out:
    if (a != NULL) {
        topology_assignment_fini(a);
        free(a);
    }
    json_decref(copy);
    return rc;
}
