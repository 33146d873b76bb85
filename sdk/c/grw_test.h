/*
 * grw_test: the least a native test of plugin logic needs. CHECK(cond)
 * reports a failed condition with its line and goes on; grw_test_done()
 * ends main with the verdict:
 *
 *     int main(void) {
 *         CHECK(restarts_in("[]", 2) == 0);
 *         return grw_test_done("my-filter");
 *     }
 */
#ifndef GRW_TEST_H
#define GRW_TEST_H

#include <stdio.h>

static int grw_test_failures;

#define CHECK(cond)                                                               \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond);    \
            grw_test_failures++;                                                  \
        }                                                                         \
    } while (0)

/* Prints the verdict; the exit status for main. */
static inline int grw_test_done(const char *name) {
    if (grw_test_failures) {
        fprintf(stderr, "%s: %d checks failed\n", name, grw_test_failures);
        return 1;
    }
    printf("%s: all passed\n", name);
    return 0;
}

#endif
