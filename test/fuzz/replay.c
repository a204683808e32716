/* replay -- runs a fuzz target's checked-in corpus without libFuzzer, so that every build
 * (gcc, the sanitizer build, CI) compiles the targets and replays their corpora; with
 * -DSLUICE_FUZZ=ON the targets link libFuzzer instead and this file is not used.
 * Usage: fuzz_<parser> FILE|DIR... (directories are read one level deep). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "fuzz_check.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Feed one file to the target; -1 when it cannot be read. */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0, n;
    int rc = 0;

    if (f == NULL) {
        perror(path);
        return -1;
    }
    do {
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap ? cap * 2 : 4096);

            if (nb == NULL) {
                fprintf(stderr, "%s: out of memory\n", path);
                rc = -1;
                break;
            }
            buf = nb;
            cap = cap ? cap * 2 : 4096;
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    if (ferror(f)) {
        perror(path);
        rc = -1;
    }
    fclose(f);
    if (rc == 0)
        LLVMFuzzerTestOneInput(buf, len); /* a broken invariant aborts */
    free(buf);
    return rc;
}

/* Every regular file directly in `dir`; the number of files replayed, or -1. */
static long replay_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    long count = 0;

    if (d == NULL) {
        perror(dir);
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        struct stat st;

        if (e->d_name[0] == '.')
            continue;
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path) ||
            stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (replay_file(path) != 0) {
            closedir(d);
            return -1;
        }
        count++;
    }
    closedir(d);
    return count;
}

int main(int argc, char **argv)
{
    long total = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;
        long n;

        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 1;
        }
        n = S_ISDIR(st.st_mode) ? replay_dir(argv[i]) : (replay_file(argv[i]) == 0 ? 1 : -1);
        if (n < 0)
            return 1;
        total += n;
    }
    if (total == 0) {
        fprintf(stderr, "%s: no inputs\n", argv[0]);
        return 1;
    }
    printf("%s: %ld inputs replayed\n", argv[0], total);
    return 0;
}
