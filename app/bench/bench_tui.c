/* bench_tui.c — `bench --tui`: how long the TUI takes to draw a full frame, off screen.
 *
 * `ahascope bench --tui`: how long the TUI takes to draw a
 * full frame, rendered into an off-screen terminal that writes to /dev/null,
 * so a pane that turns slow on a wide model or a big screen shows up as a
 * number. It drives the views only through their public headers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app/bench/bench.h"
#include "engine/clock.h"
#include "engine/decide.h"
#include "views/pattern.h"
#include "views/screen.h"

/* Deterministic pseudo-random value in [0, 1) from a position and a cell. */
static float noise(unsigned pos, unsigned cell, unsigned salt) {
    unsigned x = pos * 2654435761u ^ cell * 2246822519u ^ salt * 3266489917u;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    return (float)(x & 0xffffff) / (float)0x1000000;
}

/* A plausible step: a few heads lean global, the rest mostly local. */
static void synth_step(StepTrace *t, int pos, float tau, float theta) {
    static const char *const words[] = {" the", " cat", " sat", " on", " a", " mat", ".", "\n", " Once", " upon"};
    int cells = trace_cells(t);
    t->pos = pos;
    t->token = pos % 10;
    t->is_prompt = pos < 8;
    snprintf(t->piece, sizeof t->piece, "%s", words[pos % 10]);
    t->logprob = -noise(pos, 0, 9) * 4;
    t->entropy = noise(pos, 0, 8) * 3;
    t->step_us = 1000;
    for (int c = 0; c < cells; c++) {
        float bias = (c % 7 == 0) ? 0.45f : 0.0f;
        float s = fminf(1.0f, noise(pos, c, 1) * 0.6f + bias);
        t->score[c] = s;
        t->gate[c] = decide_router(s, tau) == 1;
        float mass = fminf(0.99f, noise(pos, c, 2) * 0.3f + bias * 0.5f);
        t->oracle_logit[c] = (float)decide_theta_logit(mass);
        t->oracle_err[c] = mass * 0.8f;
        t->qada_logit[c] = (float)decide_theta_logit(fminf(0.99f, mass + noise(pos, c, 3) * 0.1f));
        t->qada_bulk_logit[c] = (float)decide_theta_logit(fminf(0.99f, mass + noise(pos, c, 4) * 0.05f));
        t->keys_read[c] = t->gate[c] ? pos + 1 : (pos + 1 < 128 ? pos + 1 : 128);
    }
    (void)theta;
}

/* top_k far keys ranked at every head (0 none), as `record --attn-top K` keeps
 * them: every head at the cursor (E) pools them. */
static int fill_model(ViewModel *m, int n_layers, int n_heads, int n_tokens, int top_k, Err *e) {
    if (view_init(m, n_layers, n_heads, e)) return -1;
    snprintf(m->hdr.model, sizeof m->hdr.model, "synthetic-%dx%d", n_layers, n_heads);
    snprintf(m->hdr.policy, sizeof m->hdr.policy, "aha");
    snprintf(m->hdr.record, sizeof m->hdr.record, "/dev/null");
    m->hdr.window = 128;
    m->hdr.ctx_len = 4096;
    m->hdr.tok_s = 25;
    StepTrace *t = trace_new_top(n_layers, n_heads, top_k);
    if (!t) return err_set(e, "out of memory");
    int rc = 0;
    for (int i = 0; i < n_tokens && !rc; i++) {
        synth_step(t, i, m->hdr.tau, (float)m->hdr.theta_logit);
        for (int c = 0; c < n_layers * n_heads; c++)
            for (int r = 0; r < top_k; r++)
                t->top_pos[c * top_k + r] = (int)(noise(i, c, 6 + r) * i), t->top_w[c * top_k + r] = 0.4f / (r + 1);
        rc = view_push(m, t, e);
    }
    trace_free(t);
    float *w = malloc((size_t)n_tokens * sizeof *w);
    if (!rc && w) {
        for (int i = 0; i < n_tokens; i++) w[i] = 1.0f / n_tokens;
        rc = view_set_attention(m, n_tokens - 1, 0, 0, w, n_tokens, 128, 0, e);
    }
    free(w);
    m->colour = VIEW_COLOUR_256;
    m->inspector_open = 1;
    return rc;
}

/* The frames themselves: cursor and selection move so every frame differs. */
static int run_frames(ViewModel *m, int cols, int rows, int frames, double *ms, Err *e) {
    ViewScreen s;
    resizeterm(rows, cols);
    if (view_screen_init(&s, m, e)) return -1;
    int rc = 0;
    for (int f = 0; f < frames && !rc; f++) {
        m->cursor = m->n_hist - 1 - f % (m->n_hist < 40 ? m->n_hist : 40);
        m->sel_layer = f % m->n_layers;
        m->sel_head = (f / 3) % m->n_heads;
        m->attn.layer = m->sel_layer;
        m->attn.head = m->sel_head;
        m->attn.pos = m->cursor;
        double t0 = clock_now() * 1e3;
        rc = view_frame(&s, m, e);
        ms[f] = clock_now() * 1e3 - t0;
    }
    view_screen_free(&s);
    return rc;
}

/* The pattern view's data for --tui-view pattern: a softmax-like row per
 * position, the heaviest weight on the first key (a sink) and on recent ones. */
static int open_pattern(ViewModel *m, ViewPattern *p, Err *e) {
    int n = m->n_hist;
    float *w = malloc((size_t)n * n * sizeof *w);
    if (!w) return err_set(e, "out of memory");
    for (int q = 0; q < n; q++)
        for (int k = 0; k < n; k++)
            w[(size_t)q * n + k] = k > q ? -1 : (k == 0 ? 0.5f : 0.5f * noise(q, k, 5) / (float)(q + 1 - k));
    memset(p, 0, sizeof *p);
    p->open = 1;
    view_pattern_set(p, 0, 0, n, 1, w, m->hdr.window, m->hdr.sinks);
    m->pattern = p;
    return 0;
}

/* bench_tui_frames, with the pattern view (view 1) or every head at the cursor (view 2) open. */
static int frames_of(int cols, int rows, int n_layers, int n_heads, int n_tokens, int frames, int view,
                     double *median_ms, Err *e) {
    if (cols < 1 || rows < 1 || n_tokens < 1 || frames < 1)
        return err_set(e, "bad arguments (%dx%d, %d tokens, %d frames)", cols, rows, n_tokens, frames);
    ViewModel m;
    memset(&m, 0, sizeof m);
    double *ms = calloc((size_t)frames, sizeof *ms);
    FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
    int rc = (!ms || !out || !in) ? err_set(e, "cannot open /dev/null or allocate") : 0;
    ViewPattern pat = {0};
    if (!rc) rc = fill_model(&m, n_layers, n_heads, n_tokens, view == 2 ? 4 : 0, e);
    if (!rc && view == 1) rc = open_pattern(&m, &pat, e);
    m.allheads_open = view == 2;
    SCREEN *scr = NULL;
    if (!rc && !(scr = newterm("xterm-256color", out, in)) && !(scr = newterm("xterm", out, in)))
        rc = err_set(e, "no terminfo entry for xterm-256color or xterm");
    if (!rc) rc = run_frames(&m, cols, rows, frames, ms, e);
    if (scr) {
        endwin();
        delscreen(scr);
    }
    if (!rc) {
        *median_ms = bench_median(ms, frames);
    }
    view_pattern_free(&pat);
    view_free(&m);
    free(ms);
    if (out) fclose(out);
    if (in) fclose(in);
    return rc;
}

int bench_tui_frames(int cols, int rows, int n_layers, int n_heads, int n_tokens, int frames, double *median_ms,
                     Err *e) {
    return frames_of(cols, rows, n_layers, n_heads, n_tokens, frames, 0, median_ms, e);
}

int bench_tui(const BenchOpts *b, Err *e) {
    double ms;
    int L = b->tui_layers ? b->tui_layers : 16, H = b->tui_heads ? b->tui_heads : 16;
    int cols = b->tui_cols ? b->tui_cols : 200, rows = b->tui_rows ? b->tui_rows : 60;
    static const char *const views[] = {"main", "pattern", "allheads"};
    const char *view = views[b->tui_view >= 0 && b->tui_view < 3 ? b->tui_view : 0];
    int n = b->tui_tokens ? b->tui_tokens : 200;
    if (frames_of(cols, rows, L, H, n, 50 * b->runs, b->tui_view, &ms, e) != 0) return -1;
    if (b->json)
        printf("{\"frame_ms\": %.3f, \"cols\": %d, \"rows\": %d, \"layers\": %d, \"heads\": %d, \"tokens\": %d, "
               "\"view\": \"%s\"}\n",
               ms, cols, rows, L, H, n, view);
    else
        printf("TUI frame (%dx%d, %dx%d heads, %d tokens, %s view, off-screen): %.3f ms median\n", cols, rows, L, H, n,
               view, ms);
    return 0;
}
