#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int err_set(Err *e, const char *fmt, ...) {
    if (!e) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int err_prefix(Err *e, const char *prefix) {
    if (!e) return -1;
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
