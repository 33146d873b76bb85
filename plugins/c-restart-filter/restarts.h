/* c-restart-filter's logic, apart from the bindings so that it is tested
 * natively (test_restarts.c). */
#ifndef RESTARTS_H
#define RESTARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reads the configuration `{"minRestarts": N}` (N an integer >= 0, default
 * 1; blank text is `{}`) into `*min_restarts`. On a bad configuration it
 * writes a message naming the key into `error` (`error_size` bytes, NUL
 * included) and returns false. */
bool restarts_config(const char *config, size_t len, uint64_t *min_restarts, char *error,
                     size_t error_size);

/* The `restartCount`s in a JSON array of container statuses, added up;
 * counts that are not integers >= 0, and anything but an array, add
 * nothing. */
uint64_t restarts_in(const char *statuses, size_t len);

#endif
