/* clock.c — the monotonic clock (clock.h). */
#include "clock.h"

#include <time.h>

double clock_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
