/* fuzz_check -- what the fuzz targets share: their entry point and CHECK(). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_FUZZ_CHECK_H
#define SLUICE_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The target: libFuzzer (-DSLUICE_FUZZ=ON) or test/fuzz/replay.c calls it once per input. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort with the failed invariant's text and place. Unlike assert(), active in every build type
 * (fuzz builds may define NDEBUG); abort() is what libFuzzer and replay.c report as a crash. */
#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                     \
        }                                                                                \
    } while (0)

#endif
