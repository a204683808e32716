/* oom_wrap -- fail the n-th allocation of a test (link with -Wl,--wrap=malloc,calloc,realloc). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_TEST_OOM_WRAP_H
#define SLUICE_TEST_OOM_WRAP_H

/*
 * Include in exactly one file of a test executable linked with
 * -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc (target_link_options in the test's
 * .cmake file): every allocation the program's own objects make, the sluice libraries under test
 * included, passes through the wrappers. oom_fail_at(n) makes the n-th allocation from now fail
 * (0: none fails); oom_count() tells how many allocations were made since. A test fails each
 * allocation of an operation in turn, the way SQLite's tests do, until the operation makes fewer
 * allocations than the one failed:
 *
 *     for (n = 1;; n++) {
 *         oom_fail_at(n);
 *         rc = op();
 *         made = oom_count();
 *         oom_fail_at(0);
 *         if (made < n)
 *             break;                     -- nothing failed: rc is ERR_OK
 *         ck_assert_int_eq(rc, ERR_NOMEM); -- and ASan sees no leak
 *     }
 *
 * Shared libraries call the real malloc; jansson's allocations are counted too after
 * json_set_alloc_funcs(oom_malloc, free). Code that calls strdup() directly (lib/model) is
 * counted when the test also links with -Wl,--wrap=strdup and defines OOM_WRAP_STRDUP before
 * including this file.
 */

#include <stdbool.h>
#include <stddef.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

/* Per thread: a test whose helpers run on another thread (an API server) fails only the
 * allocations of the thread that called oom_fail_at(). */
static _Thread_local long oom__count, oom__fail_at;

static inline void oom_fail_at(long n)
{
    oom__count = 0;
    oom__fail_at = n;
}

static inline long oom_count(void)
{
    return oom__count;
}

/* Called (when set) as the failing allocation fails, e.g. to print where it was made. */
static void (*oom_on_fail)(void);

static inline bool oom__fails(void)
{
    if (++oom__count != oom__fail_at)
        return false;
    if (oom_on_fail != NULL)
        oom_on_fail();
    return true;
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

/* malloc for allocators set at run time (json_set_alloc_funcs), counted like the rest. */
static inline void *oom_malloc(size_t n)
{
    return __wrap_malloc(n);
}

#ifdef OOM_WRAP_STRDUP
char *__real_strdup(const char *s);
char *__wrap_strdup(const char *s);

char *__wrap_strdup(const char *s)
{
    return oom__fails() ? NULL : __real_strdup(s);
}
#endif

#endif
