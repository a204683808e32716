/* oom_wrap -- fail the n-th allocation of a test (link with -Wl,--wrap=malloc,calloc,realloc). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_TEST_OOM_WRAP_H
#define SLUICE_TEST_OOM_WRAP_H

/*
 * Include in exactly one file of a test executable linked with
 * -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc (sluice_add_test(... OOM_WRAP)): every
 * allocation of the program, the libraries under test included, passes through the wrappers.
 * oom_fail_at(n) makes the n-th allocation from now fail (0: none fails); oom_count() tells how
 * many allocations were made since. A test fails each allocation of an operation in turn, the
 * way SQLite's tests do, until the operation makes fewer allocations than the one failed.
 */

#include <stdbool.h>
#include <stddef.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static long oom__count, oom__fail_at;

static inline void oom_fail_at(long n)
{
    oom__count = 0;
    oom__fail_at = n;
}

static inline long oom_count(void)
{
    return oom__count;
}

static inline bool oom__fails(void)
{
    return ++oom__count == oom__fail_at;
}

void *__wrap_malloc(size_t n)
{
    return oom__fails() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return oom__fails() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return oom__fails() ? NULL : __real_realloc(p, n);
}

#endif
