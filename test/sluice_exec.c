/* sluice_exec -- run the built sluice binary from a test: exit status, standard output, error. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sluice_exec.h"

#include <check.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* All of `fd` from its start, NUL-terminated. */
static char *slurp(int fd)
{
    size_t cap = 4096, len = 0;
    char *s = malloc(cap);
    ssize_t n;

    ck_assert_ptr_nonnull(s);
    lseek(fd, 0, SEEK_SET);
    while ((n = read(fd, s + len, cap - len - 1)) > 0) {
        len += (size_t)n;
        if (cap - len < 2) {
            cap *= 2;
            s = realloc(s, cap);
            ck_assert_ptr_nonnull(s);
        }
    }
    s[len] = '\0';
    return s;
}

/* An anonymous temporary file: the child writes it, the parent reads it back. */
static int temp_fd(void)
{
    char name[] = "/tmp/sluice-exec-XXXXXX";
    int fd = mkstemp(name);

    ck_assert_int_ge(fd, 0);
    unlink(name);
    return fd;
}

sluice_result_t sluice_exec(const char *stdin_path, const char *sub, ...)
{
    const char *bin_dir = getenv("SLUICE_BINARY_DIR"), *src_dir = getenv("SLUICE_SOURCE_DIR");
    char bin[4096];
    const char *argv[32];
    int argc = 0, out_fd = temp_fd(), err_fd = temp_fd(), status;
    sluice_result_t r;
    va_list ap;
    pid_t pid;

    ck_assert_msg(bin_dir != NULL && src_dir != NULL,
                  "SLUICE_BINARY_DIR and SLUICE_SOURCE_DIR must be set (ctest sets them)");
    snprintf(bin, sizeof(bin), "%s/sluice", bin_dir);
    argv[argc++] = bin;
    argv[argc++] = sub;
    va_start(ap, sub);
    for (const char *a = va_arg(ap, const char *); a != NULL; a = va_arg(ap, const char *)) {
        ck_assert_int_lt(argc, 31);
        argv[argc++] = a;
    }
    va_end(ap);
    argv[argc] = NULL;

    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int in = chdir(src_dir) == 0 ? open(stdin_path ? stdin_path : "/dev/null", O_RDONLY) : -1;
        if (in < 0)
            _exit(127);
        dup2(in, 0);
        dup2(out_fd, 1);
        dup2(err_fd, 2);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status), "sluice %s did not exit normally", sub);
    r.rc = WEXITSTATUS(status);
    ck_assert_msg(r.rc != 127, "could not run %s", bin);
    r.out = slurp(out_fd);
    r.err = slurp(err_fd);
    close(out_fd);
    close(err_fd);
    return r;
}

void sluice_result_fini(sluice_result_t *r)
{
    free(r->out);
    free(r->err);
}

char *sluice_read_file(const char *path)
{
    int fd = open(path, O_RDONLY);
    char *s;

    ck_assert_int_ge(fd, 0);
    s = slurp(fd);
    close(fd);
    return s;
}
