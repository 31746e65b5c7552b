/* err.h — one-line error messages carried up to the command line.
 *
 * Every fallible function in the project takes an Err* and returns non-zero
 * on failure after filling it. An Err also says what kind of error it is:
 * a usage error (the command line itself is wrong: a bad flag or value) or
 * a failure (a file, a model, a database, the machine). The app prints
 * "ahascope CMD: <msg>" and exits 2 for the first, 1 for the second
 * (app/args.h). Messages never name the command themselves.
 */
#ifndef AHASCOPE_ERR_H
#define AHASCOPE_ERR_H

#include <stddef.h>

typedef struct {
    char msg[512];
    int usage; /* 1: the command line is wrong (exit 2); 0: a failure (exit 1) */
} Err;

/* Format a failure into e (if e is non-NULL) and return -1, so callers can
 * write `return err_set(e, "...")`. */
int err_set(Err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* As err_set, for a usage error: a flag, value or argument that is wrong
 * whatever the files say. */
int err_usage(Err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Mark the message already in e as a usage error (a lower layer parsed a
 * flag's value without knowing it came from the command line). Returns -1. */
int err_as_usage(Err *e);

/* Prefix the existing message with "<path>: " (used when a lower layer did
 * not know the file name), unless it already starts so. Keeps the kind.
 * Returns -1. */
int err_prefix(Err *e, const char *prefix);

#endif
