/* sluice_exec -- run the built sluice binary from a test: exit status, standard output, error. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_TEST_SLUICE_EXEC_H
#define SLUICE_TEST_SLUICE_EXEC_H

typedef struct sluice_result_s {
    int rc;    /* exit status */
    char *out; /* owned: all of standard output */
    char *err; /* owned: all of standard error */
} sluice_result_t;

/* Run `sluice SUB ARGS...` (NULL-terminated) with `stdin_path` (NULL: /dev/null) as standard
 * input. The binary is $SLUICE_BINARY_DIR/sluice and runs in $SLUICE_SOURCE_DIR (ctest sets
 * both), so that file names in its messages are the relative paths given; a relative
 * `stdin_path` is found there too. The test fails when the binary cannot be run or does not exit
 * normally. Free the result with sluice_result_fini(). */
sluice_result_t sluice_exec(const char *stdin_path, const char *sub, ...) __attribute__((sentinel));

void sluice_result_fini(sluice_result_t *r);

/* The whole of file `path` as a string (caller frees); the test fails when it cannot be read. */
char *sluice_read_file(const char *path);

#endif
