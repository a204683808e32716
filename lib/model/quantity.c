/* quantity -- exact Kubernetes resource quantities (parse, arithmetic, canonical format). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/quantity.h"

#include <stdio.h>
#include <string.h>

/*
 * Representation
 * --------------
 * A value is a signed 128-bit count of nano-units. Kubernetes keeps arbitrary precision (inf.Dec)
 * but rounds every parsed value to nano-units, so nano-units lose nothing that Kubernetes keeps.
 * The magnitude is capped at 10^36 nano (10^27 units); 10^36 * 100 still fits in 127 bits, which
 * the formatter relies on when it scales a mantissa to a multiple-of-three exponent.
 *
 * Accepted text
 * -------------
 *   [+-]? ( DIGITS ( "." DIGITS? )? | "." DIGITS ) SUFFIX?
 *   SUFFIX := n u m k M G T P E | Ki Mi Gi Ti Pi Ei | [eE] [+-]? DIGITS
 *
 * This is the intersection of what resource.ParseQuantity() accepts and the pattern the API
 * server applies to every Quantity field of a CRD (Kueue's quotas are such fields):
 * ParseQuantity alone also takes "", ".", "-", "Mi" (all zero), which the CRD pattern refuses,
 * and the pattern alone allows a fractional exponent ("1e1.5"), which ParseQuantity refuses.
 *
 * Differences from Kubernetes, on purpose
 * ---------------------------------------
 * - ParseQuantity silently caps a binary-SI value at 2^63-1 ("9Ei" -> 9223372036854775807).
 *   We keep the exact value and report ERR_OVERFLOW only beyond 10^27 units.
 * - A binary value divisible by 1024^7 would have no suffix in Kubernetes (it cannot happen
 *   there because of the cap); we stop at "Ei" ("1024Ei").
 */

#define NANO_PER_UNIT 1000000000
#define QUOTE_MAX     64 /* input bytes quoted in an error message */

__extension__ typedef unsigned __int128 u128;

/* Magnitude ceiling as unsigned, for the overflow checks. */
#define NANO_MAX_U ((u128)QUANTITY_NANO_MAX)

static err_t quote_error(err_msg_t *msg, err_t code, const char *what, const char *s, size_t len)
{
    int shown = len > QUOTE_MAX ? QUOTE_MAX : (int)len;
    const char *more = len > QUOTE_MAX ? "..." : "";

    if (code == ERR_OVERFLOW)
        return err_set(msg, code, "quantity \"%.*s%s\" %s", shown, s, more, what);
    return err_set(msg, code, "invalid quantity \"%.*s%s\"%s%s", shown, s, more,
                   what[0] ? ": " : "", what);
}

static u128 pow10_u(int e)
{
    u128 r = 1;
    while (e-- > 0)
        r *= 10;
    return r;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The parsed pieces of the text: the digit run (integer digits then fraction digits, the
 * '.' skipped), how many of them follow the point, the power of ten and the power of two
 * the suffix applies. */
typedef struct parsed_s {
    const char *int_digits;
    size_t int_len;
    const char *frac_digits;
    size_t frac_len;
    int64_t exp10; /* saturated to +-EXP_CLAMP */
    int shift2;    /* 0, 10, ..., 60 */
    quantity_format_t format;
    int negative;
} parsed_t;

/* Exponents beyond this magnitude are all equivalent: the value overflows, or rounds to 1n,
 * or is zero. Clamping keeps the arithmetic below in int64 for any input length. */
#define EXP_CLAMP 1000000000LL

static int parse_suffix(const char *p, const char *end, parsed_t *out)
{
    static const char bin[] = "KMGTPE";
    static const struct {
        char c;
        int exp;
    } dec[] = {{'n', -9}, {'u', -6}, {'m', -3}, {'k', 3}, {'M', 6},
               {'G', 9},  {'T', 12}, {'P', 15}, {'E', 18}};
    size_t n = (size_t)(end - p);

    out->exp10 = 0;
    out->shift2 = 0;
    out->format = QUANTITY_DECIMAL_SI;
    if (n == 0)
        return 0;
    if (n == 2 && p[1] == 'i') {
        const char *hit = memchr(bin, p[0], sizeof(bin) - 1);
        if (hit == NULL)
            return -1;
        out->shift2 = 10 * (int)(hit - bin + 1);
        out->format = QUANTITY_BINARY_SI;
        return 0;
    }
    if (n == 1) {
        for (size_t i = 0; i < sizeof(dec) / sizeof(dec[0]); i++) {
            if (dec[i].c == p[0]) {
                out->exp10 = dec[i].exp;
                return 0;
            }
        }
        return -1;
    }
    if (p[0] != 'e' && p[0] != 'E')
        return -1;
    p++;
    int neg = 0;
    if (*p == '+' || *p == '-') {
        neg = *p == '-';
        p++;
    }
    if (p == end)
        return -1;
    int64_t e = 0;
    for (; p < end; p++) {
        if (!is_digit(*p))
            return -1;
        if (e < EXP_CLAMP)
            e = e * 10 + (*p - '0');
    }
    if (e > EXP_CLAMP)
        e = EXP_CLAMP;
    out->exp10 = neg ? -e : e;
    out->format = QUANTITY_DECIMAL_EXP;
    return 0;
}

static int parse_syntax(const char *s, size_t len, parsed_t *out)
{
    const char *p = s, *end = s + len;

    out->negative = 0;
    if (p < end && (*p == '+' || *p == '-')) {
        out->negative = *p == '-';
        p++;
    }
    out->int_digits = p;
    while (p < end && is_digit(*p))
        p++;
    out->int_len = (size_t)(p - out->int_digits);
    out->frac_digits = p;
    out->frac_len = 0;
    if (p < end && *p == '.') {
        p++;
        out->frac_digits = p;
        while (p < end && is_digit(*p))
            p++;
        out->frac_len = (size_t)(p - out->frac_digits);
    }
    if (out->int_len == 0 && out->frac_len == 0)
        return -1;
    return parse_suffix(p, end, out);
}

/* Digit i (0-based) of the concatenated integer and fraction digit runs. */
static int digit_at(const parsed_t *ps, size_t i)
{
    if (i < ps->int_len)
        return ps->int_digits[i] - '0';
    return ps->frac_digits[i - ps->int_len] - '0';
}

/*
 * value (in nano) = D * 10^p * 2^shift2, where D is the digit run read as an integer and
 * p = exp10 + 9 - frac_len. After dropping D's leading and trailing zeros (the latter raise p),
 * D has n digits and the first k = n + p of them have a weight of one nano or more:
 *
 *   value = I * 2^shift2 + F * 2^shift2,   I = those k digits * 10^max(p, 0),  0 <= F < 1
 *
 * The result is I * 2^shift2 + ceil(F * 2^shift2): Kubernetes rounds sub-nano values away
 * from zero. ceil(F * 2^shift2) is found by multiplying F's digits by 2^shift2 from the right,
 * long-multiplication style; the final carry is the integer part and any non-zero digit left
 * behind means the product had a fraction.
 */
static err_t parsed_to_nano(const parsed_t *ps, u128 *out)
{
    size_t total = ps->int_len + ps->frac_len, first = 0, last = total;

    while (first < total && digit_at(ps, first) == 0)
        first++;
    if (first == total) {
        *out = 0;
        return ERR_OK;
    }
    while (digit_at(ps, last - 1) == 0)
        last--;
    int64_t n = (int64_t)(last - first);
    int64_t p = ps->exp10 + 9 - (int64_t)ps->frac_len + (int64_t)(total - last);
    int64_t k = n + p;

    /* The leading digit alone is worth at least 10^(k-1) nano. */
    if (k > 37)
        return ERR_OVERFLOW;

    u128 whole = 0;
    for (int64_t i = 0; i < k && i < n; i++)
        whole = whole * 10 + (u128)digit_at(ps, first + (size_t)i);
    if (k > n)
        whole *= pow10_u((int)(k - n)); /* k <= 37, so whole < 10^37 */

    u128 frac_int = 0; /* floor(F * 2^shift2), below 2^shift2 */
    int frac_left = 0; /* F * 2^shift2 is not an integer */
    if (k < n) {
        const u128 mul = (u128)1 << ps->shift2;
        u128 carry = 0;
        int64_t lo = k > 0 ? k : 0;
        for (int64_t i = n - 1; i >= lo; i--) {
            u128 t = (u128)digit_at(ps, first + (size_t)i) * mul + carry;
            if (t % 10 != 0)
                frac_left = 1;
            carry = t / 10;
        }
        /* Leading fraction zeros (k < 0) only shift the carry right; 40 of them clear it. */
        for (int64_t z = k; z < 0 && carry != 0; z++) {
            if (carry % 10 != 0)
                frac_left = 1;
            carry /= 10;
        }
        frac_int = carry;
    }

    if (ps->shift2 > 0) {
        if (whole > (NANO_MAX_U >> ps->shift2))
            return ERR_OVERFLOW;
        whole <<= ps->shift2;
    }
    whole += frac_int + (u128)frac_left;
    if (whole > NANO_MAX_U)
        return ERR_OVERFLOW;
    *out = whole;
    return ERR_OK;
}

err_t quantity_parse(const char *s, size_t len, quantity_t *out, err_msg_t *msg)
{
    parsed_t ps;
    u128 mag;

    if (s == NULL || len == 0)
        return err_set(msg, ERR_PARSE, "invalid quantity \"\": empty");
    if (parse_syntax(s, len, &ps) != 0)
        return quote_error(msg, ERR_PARSE, "", s, len);
    if (parsed_to_nano(&ps, &mag) != ERR_OK)
        return quote_error(msg, ERR_OVERFLOW, "is too large", s, len);

    /* Kubernetes: a binary-SI value strictly between 0 and 1 switches to decimal SI. */
    if (ps.format == QUANTITY_BINARY_SI && mag != 0 && mag < NANO_PER_UNIT)
        ps.format = QUANTITY_DECIMAL_SI;
    out->nano = ps.negative ? -(qnano_t)mag : (qnano_t)mag;
    out->format = ps.format;
    return ERR_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Constructors and arithmetic                                                                */
/* ------------------------------------------------------------------------------------------ */

quantity_t quantity_from_int(int64_t units, quantity_format_t format)
{
    quantity_t q = {(qnano_t)units * NANO_PER_UNIT, format};
    return q;
}

quantity_t quantity_from_milli(int64_t milli)
{
    quantity_t q = {(qnano_t)milli * 1000000, QUANTITY_DECIMAL_SI};
    return q;
}

quantity_t quantity_zero(void)
{
    quantity_t q = {0, QUANTITY_DECIMAL_SI};
    return q;
}

static int in_range(qnano_t v)
{
    return v >= QUANTITY_NANO_MIN && v <= QUANTITY_NANO_MAX;
}

static err_t range_error(err_msg_t *msg, const char *op, quantity_t a, quantity_t b)
{
    char x[QUANTITY_STR_MAX], y[QUANTITY_STR_MAX];
    return err_set(msg, ERR_OVERFLOW, "quantity %s of %s and %s is out of range", op,
                   quantity_format(a, x), quantity_format(b, y));
}

err_t quantity_add(quantity_t a, quantity_t b, quantity_t *out, err_msg_t *msg)
{
    qnano_t sum;

    if (!in_range(a.nano) || !in_range(b.nano) || __builtin_add_overflow(a.nano, b.nano, &sum) ||
        !in_range(sum))
        return range_error(msg, "sum", a, b);
    out->nano = sum;
    out->format = a.nano == 0 ? b.format : a.format;
    return ERR_OK;
}

err_t quantity_sub(quantity_t a, quantity_t b, quantity_t *out, err_msg_t *msg)
{
    qnano_t diff;

    if (!in_range(a.nano) || !in_range(b.nano) || __builtin_sub_overflow(a.nano, b.nano, &diff) ||
        !in_range(diff))
        return range_error(msg, "difference", a, b);
    out->nano = diff;
    out->format = a.nano == 0 ? b.format : a.format;
    return ERR_OK;
}

err_t quantity_mul(quantity_t q, int64_t n, quantity_t *out, err_msg_t *msg)
{
    u128 mag_q, mag_n;
    char x[QUANTITY_STR_MAX];

    if (!in_range(q.nano))
        goto overflow;
    mag_q = q.nano < 0 ? (u128)-q.nano : (u128)q.nano;
    mag_n = n < 0 ? (u128)0 - (u128)(qnano_t)n : (u128)n;
    /* Check before multiplying: |q| * |n| <= max  <=>  |q| <= max / |n|. */
    if (mag_n != 0 && mag_q > NANO_MAX_U / mag_n)
        goto overflow;
    out->nano = q.nano * (qnano_t)n;
    out->format = q.format;
    return ERR_OK;
overflow:
    return err_set(msg, ERR_OVERFLOW, "quantity %s times %lld is out of range",
                   quantity_format(q, x), (long long)n);
}

/*
 * |a| * |b| / 10^9 in nano-units, with a and b each below 10^36 + 1: the plain product can reach
 * 10^72 and overflow 128 bits, so each factor is split at 10^9 (a = ah*10^9 + al, b likewise):
 *
 *   a*b / 10^9 = ah*bh*10^9 + ah*bl + al*bh + al*bl / 10^9
 *
 * Every term but the first is below 10^37 on its own (al, bl < 10^9; ah, bh <= 10^27). The
 * first is checked against the bound before it is formed. Returns false when the result
 * exceeds `max`; `*inexact` says whether al*bl left a remainder (a fraction of a nano-unit).
 */
static bool mul_nano(u128 a, u128 b, u128 max, u128 *out, bool *inexact)
{
    const u128 g = 1000000000u;
    u128 ah = a / g, al = a % g, bh = b / g, bl = b % g, sum;

    if (ah != 0 && bh != 0 && (bh > max / ah || ah * bh > max / g))
        return false;
    sum = ah * bh * g;
    /* each remaining term is < 10^37 and max is 10^36: check after each addition */
    sum += ah * bl;
    if (sum > max)
        return false;
    sum += al * bh;
    if (sum > max)
        return false;
    sum += al * bl / g;
    *inexact = al * bl % g != 0;
    if (sum > max || (*inexact && sum == max))
        return false;
    *out = sum + (*inexact ? 1 : 0);
    return true;
}

err_t quantity_mul_quantity(quantity_t a, quantity_t b, quantity_t *out, err_msg_t *msg)
{
    char x[QUANTITY_STR_MAX], y[QUANTITY_STR_MAX];
    u128 mag;
    bool inexact = false;

    if (!in_range(a.nano) || !in_range(b.nano))
        goto overflow;
    if (!mul_nano(a.nano < 0 ? (u128)-a.nano : (u128)a.nano,
                  b.nano < 0 ? (u128)-b.nano : (u128)b.nano, NANO_MAX_U, &mag, &inexact))
        goto overflow;
    out->nano = ((a.nano < 0) != (b.nano < 0)) ? -(qnano_t)mag : (qnano_t)mag;
    out->format = b.nano != 0 ? b.format : a.format;
    return ERR_OK;
overflow:
    return err_set(msg, ERR_OVERFLOW, "quantity %s times %s is out of range", quantity_format(a, x),
                   quantity_format(b, y));
}

int quantity_cmp(quantity_t a, quantity_t b)
{
    return (a.nano > b.nano) - (a.nano < b.nano);
}

int quantity_sign(quantity_t q)
{
    return (q.nano > 0) - (q.nano < 0);
}

quantity_t quantity_max(quantity_t a, quantity_t b)
{
    return quantity_cmp(a, b) >= 0 ? a : b;
}

quantity_t quantity_min(quantity_t a, quantity_t b)
{
    return quantity_cmp(a, b) <= 0 ? a : b;
}

/* q / div rounded away from zero (Kubernetes ScaledValue on an int64 amount), as int64. */
static err_t scaled_value(quantity_t q, qnano_t div, int64_t *out)
{
    qnano_t r = q.nano / div; /* truncates toward zero */
    if (q.nano % div != 0)
        r += q.nano > 0 ? 1 : -1;
    if (r > INT64_MAX || r < INT64_MIN)
        return ERR_OVERFLOW;
    *out = (int64_t)r;
    return ERR_OK;
}

err_t quantity_value(quantity_t q, int64_t *out)
{
    return scaled_value(q, NANO_PER_UNIT, out);
}

err_t quantity_milli_value(quantity_t q, int64_t *out)
{
    return scaled_value(q, 1000000, out);
}

/* ------------------------------------------------------------------------------------------ */
/* Canonical format (Quantity.String() / CanonicalizeBytes)                                    */
/* ------------------------------------------------------------------------------------------ */

/* Append the decimal digits of v at buf+pos; returns the new position. */
static size_t put_u128(char *buf, size_t pos, u128 v)
{
    char tmp[48];
    size_t n = 0;

    do {
        tmp[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v != 0);
    while (n > 0)
        buf[pos++] = tmp[--n];
    return pos;
}

static const char *decimal_suffix(int exp)
{
    static const char *const names[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
    if (exp < -9 || exp > 18)
        return NULL;
    return names[(exp + 9) / 3];
}

char *quantity_format(quantity_t q, char *buf)
{
    static const char *const bin_suffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    u128 mag;
    size_t pos = 0;
    quantity_format_t format = q.format;

    if (q.nano == 0) {
        memcpy(buf, "0", 2);
        return buf;
    }
    /* Out-of-range values only come from callers that built the struct by hand; the
     * magnitude still fits (the sign bit is spare), so they print the same way. */
    mag = q.nano < 0 ? (u128)0 - (u128)q.nano : (u128)q.nano;
    if (q.nano < 0)
        buf[pos++] = '-';

    if (format == QUANTITY_BINARY_SI) {
        /* Below 1024 (in magnitude) or fractional: shown as decimal SI, like Kubernetes. */
        if (mag < (u128)1024 * NANO_PER_UNIT || mag % NANO_PER_UNIT != 0) {
            format = QUANTITY_DECIMAL_SI;
        } else {
            u128 units = mag / NANO_PER_UNIT;
            int times = 0;
            while (times < 6 && units >= 1024 && units % 1024 == 0) {
                units /= 1024;
                times++;
            }
            pos = put_u128(buf, pos, units);
            strcpy(buf + pos, bin_suffix[times]);
            return buf;
        }
    } else if (format != QUANTITY_DECIMAL_SI) {
        format = QUANTITY_DECIMAL_EXP;
    }

    /* mantissa * 10^exp: drop factors of ten, then step the exponent down to a multiple of
     * three (the mantissa grows by at most 100, within 127 bits since mag <= 10^36). */
    int exp = -9;
    while (mag >= 10 && mag % 10 == 0) {
        mag /= 10;
        exp++;
    }
    while (exp % 3 != 0) {
        mag *= 10;
        exp--;
    }
    pos = put_u128(buf, pos, mag);
    const char *suffix = format == QUANTITY_DECIMAL_SI ? decimal_suffix(exp) : NULL;
    if (suffix != NULL)
        strcpy(buf + pos, suffix);
    else if (exp == 0)
        buf[pos] = '\0';
    else
        snprintf(buf + pos, QUANTITY_STR_MAX - pos, "e%d", exp);
    return buf;
}
