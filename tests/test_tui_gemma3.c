/* test_tui_gemma3.c — the TUI on the families whose architecture windows
 * layers (gemma2, gemma3, mistral, phi3), through tmux: a random folder of
 * Gemma-3-1B's attention shape (26 layers × 4 heads, 1 KV head, window 512
 * in 5 of every 6 layers; small width and vocabulary, so it runs fast),
 * its header, its fixed-local layers beside the routed global ones, and
 * the README tour's keys on each family. Every wait polls the screen. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test.h"
#include "tests/tmux.h"

/* `bench --arch ARCH --dims DIMS --head-dim HD --window-layers WL --save-hf
 * DIR/m --save-routers DIR/r.st` in test_tmp(name); NULL after a failed check. */
static const char *family_folder(const char *name, const char *arch, const char *dims, int head_dim, const char *wl) {
    const char *dir = test_tmp(name);
    int st;
    char *out = test_runf(&st, "mkdir -p %s && %s bench --arch %s --dims %s --head-dim %d --window-layers %s --dtype bf16 "
                               "--save-hf %s/m --save-routers %s/r.st 2>&1",
                          dir, test_bin_abs(), arch, dims, head_dim, wl, dir, dir);
    if (st != 0) test_fail(__FILE__, __LINE__, "bench --save-hf: %s", out ? out : "");
    free(out);
    return st == 0 ? dir : NULL;
}

/* The Gemma-3-1B attention shape: 26 × 4 heads, 1 KV head, window 512, 5:1. */
static const char *gemma3_folder(const char *name) {
    return family_folder(name, "gemma3", "128,256,26,4,1,512,1024", 32, "512,6");
}

static int open_tui(Tmux *t, const char *name, const char *dir, int cols, int rows, const char *flags) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s tui --model m --routers r.st --seed 1 --temperature 0 --window 8 --no-record %s",
             test_bin_abs(), flags);
    return tmux_open(t, name, dir, cols, rows, NULL, cmd, 0);
}

/* A fresh Gemma-3-1B-shaped folder test_tmp(name) and the TUI on it as
 * session name + "tui"; 0, or -1 after a failed check. */
static int open_gemma3(Tmux *t, const char *name, int cols, int rows, const char *flags) {
    const char *dir = gemma3_folder(name);
    if (!dir) return -1;
    char d[1024], session[128];
    snprintf(d, sizeof d, "%s", dir);
    snprintf(session, sizeof session, "%stui", name);
    return open_tui(t, session, d, cols, rows, flags);
}

/* The header names the architecture and its layers, in full on a wide
 * screen and briefly on a 100-column one, and says that AHA's window is
 * the global layers' only (the local ones read their own 512). */
TEST(tui_gemma3_header_names_the_layer_kinds) {
    if (!tmux_available()) { test_skip("tmux not installed"); return; }
    const char *dir = gemma3_folder("g3head");
    if (!dir) return;
    char d[1024];
    snprintf(d, sizeof d, "%s", dir);
    Tmux t;
    open_tui(&t, "g3wide", d, 160, 45, "");
    TMUX_WAIT(&t, "gemma3 \xc2\xb7 22 local (w 512) + 4 global layers", 20);
    TMUX_WAIT(&t, "w 8 (global layers only)", 5);
    tmux_keys(&t, "Space Space Space Space Space Space Space Space Space Space Space Space");
    CHECK(tmux_shows_pos(&t, 20, 20));
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 10);
    tmux_stop(&t);
    open_tui(&t, "g3narrow", d, 100, 30, "--mono");
    TMUX_WAIT(&t, "gemma3 22L/w512+4G", 20);
    TMUX_WAIT(&t, "w8 (global)", 5);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 10);
    tmux_stop(&t);
}

/* Needs the engine to fill StepTrace.layer_window (the live run's layer
 * kinds): the heatmap draws the 22 local layers' heads as fixed-local (╌)
 * beside the 4 routed global ones, the legend and the bars say so, and the
 * inspector of a local head says it had no choice, of a global one what
 * AHA did. */
TEST(tui_gemma3_fixed_local_layers_beside_routed_ones) {
    if (!tmux_available()) { test_skip("tmux not installed"); return; }
    Tmux t;
    if (open_gemma3(&t, "g3fixed", 100, 30, "--mono")) return;
    TMUX_WAIT(&t, "gemma3 22L/w512+4G", 20);
    tmux_keys(&t, "Space Space Space Space Space Space Space Space Space Space Space Space Space Space Space Space");
    CHECK(tmux_shows_pos(&t, 24, 20));
    TMUX_WAIT(&t, "fixed-local (layer window 512)", 10);
    char *scr = tmux_capture(&t);
    CHECK_MSG(scr && strstr(scr, "L1   \xe2\x95\x8c\xe2\x95\x8c\xe2\x95\x8c") != NULL, "%s", scr ? scr : ""); /* ╌ */
    free(scr);
    tmux_keys(&t, "Enter");
    TMUX_WAIT(&t, "fixed-local: the architecture's window 512 (no choice)", 10);
    tmux_keys(&t, "Down Down Down Down Down"); /* L5: global, routed */
    TMUX_WAIT(&t, "inspector \xc2\xb7 L5 H0", 10);
    TMUX_WAIT(&t, "executed ", 10);
    tmux_keys(&t, "q");
    TMUX_WAIT(&t, "EXITED 0", 10);
    tmux_stop(&t);
}

/* The attention pattern (A) of a local layer's head marks that layer's own
 * window (512) and says so; a global layer's marks AHA's (8). */
TEST(tui_gemma3_pattern_marks_the_layers_own_window) {
    if (!tmux_available()) { test_skip("tmux not installed"); return; }
    Tmux t;
    if (open_gemma3(&t, "g3pattern", 150, 40, "--mono")) return;
    TMUX_WAIT(&t, "pos ", 20);
    tmux_keys(&t, "Space Space Space Space Space Space Space Space Space Space Space Space");
    CHECK(tmux_shows_pos(&t, 16, 20));
    tmux_keys(&t, "A");
    TMUX_WAIT(&t, "pattern L0 H0", 10);
    TMUX_WAIT(&t, "f fixed-local \xc2\xb7 \xe2\x94\x86 layer window 512", 10);
    tmux_keys(&t, "Escape"); /* inside the pattern the arrows pan it */
    CHECK_MSG(tmux_gone(&t, "pattern L0 H0", 5), "Esc left the pattern open");
    tmux_keys(&t, "Down Down Down Down Down A"); /* L5: global, routed */
    TMUX_WAIT(&t, "pattern L5 H0", 10);
    TMUX_WAIT(&t, "\xe2\x94\x86 window 8 ", 10);
    tmux_keys(&t, "Escape q");
    TMUX_WAIT(&t, "EXITED 0", 10);
    tmux_stop(&t);
}

/* The README's tour in the TUI on each family with windowed layers:
 * steps, every metric (m), the inspector (Enter), the agreement's
 * predictor (a), a pin (x), a re-evaluation at a larger window (W), the
 * help (?), and a clean exit. */
TEST(tui_gemma3_tour_on_each_family) {
    if (!tmux_available()) { test_skip("tmux not installed"); return; }
    static const struct {
        const char *arch, *wl, *header, *full; /* the header's compact and full forms */
        int head_dim;
    } fam[] = {
        {"gemma2", "64,2", "gemma2 3L/w64+3G", "gemma2 \xc2\xb7 3 local (w 64) + 3 global layers", 16},
        {"gemma3", "512,6", "gemma3 22L/w512+4G", "gemma3 \xc2\xb7 22 local (w 512) + 4 global layers", 32},
        {"mistral", "64", "mistral all 6L w64", "mistral \xc2\xb7 all 6 layers local (w 64)", 16},
        {"phi3", "64", "phi3 all 6L w64", "phi3 \xc2\xb7 all 6 layers local (w 64)", 16},
    };
    for (size_t i = 0; i < sizeof fam / sizeof fam[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "tour_%s", fam[i].arch);
        int gemma3 = !strcmp(fam[i].arch, "gemma3");
        const char *dir = family_folder(name, fam[i].arch, gemma3 ? "128,256,26,4,1,512,1024" : "64,128,6,4,2,512,256",
                                        fam[i].head_dim, fam[i].wl);
        if (!dir) return;
        char d[1024];
        snprintf(d, sizeof d, "%s", dir);
        Tmux t;
        snprintf(name, sizeof name, "tour_%s_tui", fam[i].arch);
        open_tui(&t, name, d, 100, 30, "--mono");
        if (!tmux_shows(&t, "pos ", 20) || (!tmux_shows(&t, fam[i].header, 2) && !tmux_shows(&t, fam[i].full, 1))) {
            test_fail(__FILE__, __LINE__, "%s: the header never showed '%s'", fam[i].arch, fam[i].header);
            tmux_stop(&t);
            continue;
        }
        tmux_keys(&t, "Space Space Space Space Space Space Space Space Space Space Space Space");
        CHECK_MSG(tmux_shows_pos(&t, 16, 20), "%s", fam[i].arch);
        tmux_keys(&t, "m m m m m m m m m m m m m m m m m m");
        tmux_keys(&t, "Enter a x");
        CHECK_MSG(tmux_shows(&t, "inspector", 10), "%s", fam[i].arch);
        tmux_keys(&t, "W");
        CHECK_MSG(tmux_shows(&t, "w=16", 20) || tmux_shows(&t, "w16", 1) || tmux_shows(&t, "w 16", 1),
                  "%s: the re-evaluation at w 16 never showed", fam[i].arch); /* the header's compact or full w */
        tmux_keys(&t, "Space Space Space ?");
        CHECK_MSG(tmux_shows(&t, "help \xc2\xb7", 10), "%s: no help", fam[i].arch);
        tmux_keys(&t, "q"); /* q closes the help (an Esc might stop the re-evaluation first), */
        CHECK_MSG(tmux_gone(&t, "help \xc2\xb7", 10), "%s: q left the help open", fam[i].arch);
        tmux_keys(&t, "q"); /* then quits: the inspector is part of the main screen */
        CHECK_MSG(tmux_shows(&t, "EXITED 0", 15), "%s: no clean exit", fam[i].arch);
        tmux_stop(&t);
    }
}
