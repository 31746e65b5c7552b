/* clock.h — the one monotonic clock of the project.
 *
 * Every duration the program measures (step times, timeouts, benchmark
 * runs, progress rates) is a difference of two readings of this clock, so
 * none of them jumps when the system's wall-clock time is set. It lives in
 * the lowest room so that every other room may read it.
 */
#ifndef AHASCOPE_CLOCK_H
#define AHASCOPE_CLOCK_H

/* Seconds on the monotonic clock since an arbitrary fixed point: only
 * differences between two readings mean anything. */
double clock_now(void);

#endif
