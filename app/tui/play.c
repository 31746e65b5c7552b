/* play.c — the play speed and state, which every controller file may call.
 *
 * The play speed and the play state (state.h): the one file of
 * the controller every other one may call, and which calls none of them. */
#include "app/tui/state.h"

static const double SPEEDS[] = {0.5, 1, 2, 5, 10, 20, 50, 100, 200, 0}; /* 0: as fast as it goes */
#define N_SPEEDS (int)(sizeof SPEEDS / sizeof SPEEDS[0])

double tui_speed(const Tui *t) { return SPEEDS[t->speed_i]; }

void tui_speed_step(Tui *t, int up) {
    if (up) t->speed_i = t->speed_i + 1 < N_SPEEDS ? t->speed_i + 1 : t->speed_i;
    else t->speed_i = t->speed_i > 0 ? t->speed_i - 1 : 0;
}

void tui_set_play(Tui *t, int playing) {
    t->playing = tui_worker_play(&t->w, playing, tui_speed(t));
    t->m.playing = t->playing;
    t->m.speed = tui_speed(t); /* 0: as fast as it goes */
}
