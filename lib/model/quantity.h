/* quantity -- exact Kubernetes resource quantities (parse, arithmetic, canonical format). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_QUANTITY_H
#define SLUICE_QUANTITY_H

#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A quantity is held as a signed 128-bit count of nano-units (1e-9), so "1n" and "8Ei" are both
 * exact and there is no floating point anywhere. Values below one nano-unit are rounded away
 * from zero to the next nano-unit, as Kubernetes does. The format remembers how the value was
 * written (decimal SI, binary SI or decimal exponent) so it prints back the Kubernetes way.
 * Arithmetic that would leave [QUANTITY_NANO_MIN, QUANTITY_NANO_MAX] returns ERR_OVERFLOW.
 */
__extension__ typedef __int128 qnano_t;

typedef enum {
    QUANTITY_DECIMAL_SI = 0, /* "", k, M, G, T, P, E, m, u, n */
    QUANTITY_BINARY_SI,      /* Ki, Mi, Gi, Ti, Pi, Ei */
    QUANTITY_DECIMAL_EXP,    /* e3, E-2 */
} quantity_format_t;

typedef struct quantity_s {
    qnano_t nano;             /* value in units of 1e-9 */
    quantity_format_t format; /* how to print it */
} quantity_t;

/* Largest magnitude held: 10^36 nano-units (10^27 units), far above any real cluster. */
#define QUANTITY_NANO_MAX ((qnano_t)1000000000000000000LL * (qnano_t)1000000000000000000LL)
#define QUANTITY_NANO_MIN (-QUANTITY_NANO_MAX)

/* Longest text quantity_format() writes, including the terminating NUL. */
#define QUANTITY_STR_MAX 64

/* Parse `len` bytes of `s` as a Kubernetes quantity into `out`. Errors (ERR_PARSE,
 * ERR_OVERFLOW) quote the text in `msg`; `out` is untouched on failure. */
err_t quantity_parse(const char *s, size_t len, quantity_t *out, err_msg_t *msg);

/* A quantity of `units` whole units in `format`. */
quantity_t quantity_from_int(int64_t units, quantity_format_t format);

/* A quantity of `milli` thousandths (e.g. CPU millicores), decimal SI. */
quantity_t quantity_from_milli(int64_t milli);

/* The zero quantity (decimal SI). */
quantity_t quantity_zero(void);

/* a + b into `out` (format of `a`, or of `b` when `a` is zero); ERR_OVERFLOW when out of range. */
err_t quantity_add(quantity_t a, quantity_t b, quantity_t *out, err_msg_t *msg);

/* a - b into `out` (format of `a`, or of `b` when `a` is zero, as Kubernetes' Sub());
 * ERR_OVERFLOW when out of range. */
err_t quantity_sub(quantity_t a, quantity_t b, quantity_t *out, err_msg_t *msg);

/* q * n into `out` (format of `q`), e.g. a per-pod request times a pod count. */
err_t quantity_mul(quantity_t q, int64_t n, quantity_t *out, err_msg_t *msg);

/* a * b into `out`, both quantities (a resource transformation: an input request times an
 * output's amount per unit), exact; a product finer than one nano-unit is rounded away from zero
 * to the next nano-unit, as parsing does. The format is b's (the output's, as written in the
 * Configuration), or a's when b is zero. ERR_OVERFLOW when out of range. */
err_t quantity_mul_quantity(quantity_t a, quantity_t b, quantity_t *out, err_msg_t *msg);

/* <0, 0, >0 as a is less than, equal to, greater than b (formats ignored). */
int quantity_cmp(quantity_t a, quantity_t b);

/* -1, 0 or 1: the sign of q. */
int quantity_sign(quantity_t q);

/* The larger / smaller of a and b. */
quantity_t quantity_max(quantity_t a, quantity_t b);
quantity_t quantity_min(quantity_t a, quantity_t b);

/* Whole units, rounded away from zero (Kubernetes Quantity.Value()); ERR_OVERFLOW beyond int64. */
err_t quantity_value(quantity_t q, int64_t *out);

/* Thousandths, rounded away from zero (Kubernetes Quantity.MilliValue()); ERR_OVERFLOW beyond
 * int64. */
err_t quantity_milli_value(quantity_t q, int64_t *out);

/* Write the canonical Kubernetes form ("1500m", "2Gi", "1k", "100M", "1e3") into buf, which
 * must hold QUANTITY_STR_MAX bytes. Returns buf. */
char *quantity_format(quantity_t q, char *buf);

#endif
