/* err.h — one-line error messages carried up to the command line.
 *
 * Every fallible function in the project takes an Err* and returns non-zero
 * on failure after filling it; the app prints "ahascope: <msg>" and exits 1.
 */
#ifndef AHASCOPE_ERR_H
#define AHASCOPE_ERR_H

#include <stddef.h>

typedef struct {
    char msg[512];
} Err;

/* Format a message into e (if e is non-NULL) and return -1, so callers can
 * write `return err_set(e, "...")`. */
int err_set(Err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prefix the existing message with "<path>: " (used when a lower layer did
 * not know the file name). Returns -1. */
int err_prefix(Err *e, const char *prefix);

#endif
