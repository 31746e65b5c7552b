/* err.c — one-line errors carried up to the command line. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int err_vset(Err *e, int usage, const char *fmt, va_list ap) {
    if (!e) return -1;
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    e->usage = usage;
    return -1;
}

int err_set(Err *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    err_vset(e, 0, fmt, ap);
    va_end(ap);
    return -1;
}

int err_usage(Err *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    err_vset(e, 1, fmt, ap);
    va_end(ap);
    return -1;
}

int err_as_usage(Err *e) {
    if (e) e->usage = 1;
    return -1;
}

int err_prefix(Err *e, const char *prefix) {
    if (!e) return -1;
    size_t have = strlen(prefix); /* already named (a lower layer knew the path after all) */
    if (!strncmp(e->msg, prefix, have) && !strncmp(e->msg + have, ": ", 2)) return -1;
    char tmp[sizeof e->msg];
    memcpy(tmp, e->msg, sizeof tmp);
    size_t n = strlen(prefix);
    if (n > sizeof e->msg - 3) n = sizeof e->msg - 3;
    memcpy(e->msg, prefix, n);
    memcpy(e->msg + n, ": ", 2);
    size_t rest = sizeof e->msg - n - 3;
    size_t m = strnlen(tmp, rest);
    memcpy(e->msg + n + 2, tmp, m);
    e->msg[n + 2 + m] = '\0';
    return -1;
}
