/* generate_run.c — `ahascope generate`'s run (app/generate_run.h). */
#include "app/generate_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app/progress.h"
#include "app/run_info.h"
#include "app/setup.h"
#include "engine/session.h"

/* Prints each new token as it is produced so a long generation streams. */
static void print_piece(const Session *s, int i) {
    char buf[256];
    size_t n = tok_piece_printable(s->tok, i > 0 ? s->ids[i - 1] : -1, s->ids[i], buf, sizeof buf);
    fwrite(buf, 1, n, stdout);
    fflush(stdout);
}

int generate_run(RunOpts *o, int print_ids, int progress, int threads, Err *e) {
    AppLoaded L;
    Session s;
    int rc = 1;
    if (app_load(o, &L, 1, e) != 0) goto out_unload;
    app_window_note(&L, o);
    const char *prompt = o->prompt ? o->prompt : "";
    int steps = app_cli_steps(o, &L, prompt);
    if (session_init(&s, &L.model, &L.tok, &o->attn, steps, o->temperature, o->topp, o->seed, threads, e)) goto out_unload;
    if (session_start_text(&s, prompt, strlen(prompt), e) != 0) goto out_session;
    double t0 = clock_now();
    int n_pre = progress_prefill(&s, NULL, progress, NULL);
    double t1 = clock_now();
    int printed = 1, more = 1;
    while (more) {
        if (!print_ids)
            for (; printed < s.n_ids; printed++) print_piece(&s, printed);
        more = session_step(&s, NULL);
    }
    if (!print_ids)
        for (; printed < s.n_ids; printed++) print_piece(&s, printed);
    double t2 = clock_now();
    if (print_ids) {
        for (int i = 0; i < s.n_ids; i++) printf(i ? " %d" : "%d", s.ids[i]);
        putchar('\n');
    } else {
        putchar('\n');
    }
    fflush(stdout);
    if (app_session_error(&s, e)) goto out_session;
    int n_dec = s.n_fed - n_pre;
    if (getenv("AHASCOPE_VERBOSE"))
        fprintf(stderr, "prefill %d tok in %.3fs, decode %d tok at %.1f tok/s\n", n_pre, t1 - t0, n_dec,
                n_dec > 0 ? n_dec / (t2 - t1) : 0.0);
    rc = 0;
out_session:
    session_free(&s);
out_unload:
    app_unload(&L);
    return rc;
}

