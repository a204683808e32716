/* alloc -- the one allocator: sluice's code, jansson, libuv and libcurl allocate through it. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_UTIL_ALLOC_H
#define SLUICE_UTIL_ALLOC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * malloc(3) and friends, compiled into sluice's own library: a test linked with
 * -Wl,--wrap=malloc,... (test/oom_wrap.h) counts and fails what the libraries allocate through
 * these exactly as it does sluice's own allocations, and a process that wants a different heap
 * changes one place. libyaml has no allocator hook (its yaml_malloc is internal), so it calls
 * the C library directly.
 *
 * Wiring, once, before the library is used (cmd/sluice/main.c; the OOM tests):
 *   util_alloc_install()                      jansson (json_set_alloc_funcs)
 *   uv_replace_allocator(util_malloc, util_realloc, util_calloc, util_free)
 *   curl_global_init_mem(CURL_GLOBAL_DEFAULT, util_malloc, util_free, util_realloc,
 *                        util_alloc_strdup, util_calloc)
 */
void *util_malloc(size_t n);
void *util_calloc(size_t n, size_t size);
void *util_realloc(void *p, size_t n);
void util_free(void *p);
char *util_alloc_strdup(const char *s);

/* Give the heap's free pages back to the system now (glibc: malloc_trim(0), which also returns
 * whole free pages inside the heap and every thread's arena, not only the top; elsewhere a
 * no-op). For a long-running process after a large, short-lived allocation such as the
 * start-time estimate's copy of the engine (lib/ctrl/estimate.c): without it glibc keeps those
 * pages, and the resident size stays at the peak of the copy. */
void util_alloc_trim(void);

/* Route jansson's allocations through util_malloc/util_free with the parse guard below. Done
 * before main() by this file's constructor; call it again after a json_set_alloc_funcs(). */
void util_alloc_install(void);

/*
 * json_loadb()/json_loads() that survive an allocation failure. jansson 2.14's lexer (and
 * 2.15's) ignores a failure to grow the buffer it saves a token in: the byte is dropped and the
 * lexer goes on, so the parse returns a value with a changed key or string (`"queue-name"` read
 * as `"queue-nme"`), fails an assertion (a number), or writes past the end of the string it
 * decodes (the closing quote dropped) -- jansson issue #362, docs/reliability.md. Here the input
 * is fed to jansson a byte at a time while a reserve sized by the input's longest token stands
 * by: the first allocation that fails is served from the reserve instead (so no byte is
 * dropped), the input ends at once, later allocations of the parse come from the reserve or
 * fail, and the half-built value is thrown away. The result is NULL with the error code
 * json_error_out_of_memory and the text "out of memory" (util_json_nomem()).
 */
json_t *util_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *error);
json_t *util_json_loads(const char *s, size_t flags, json_error_t *error);

/*
 * json_dumps() that never returns a wrong text. jansson 2.14's dumper ignores the answer of the
 * piece that writes an object's key (dump.c), so when the buffer cannot grow there, json_dumps()
 * returns the text without that key -- `{"":{...}}` or a key cut short, sometimes still valid
 * JSON. Here the pieces go to a buffer of our own that refuses every piece after a failure, and
 * any failed allocation during the dump (jansson's own included) makes the result NULL. Free
 * the text with free().
 */
char *util_json_dumps(const json_t *json, size_t flags);

/* Whether a failed util_json_load*() ran out of memory (as opposed to malformed input). */
bool util_json_nomem(const json_error_t *error);

#endif
