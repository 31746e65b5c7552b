/* test_typed.c — settings typed as numbers (`z`), and `y`'s file and OSC 52 sequence.
 *
 * Settings typed as numbers (`z`): each form, θ read as a
 * probability or as log-odds (checked against the log-odds computed here),
 * refusals saying why; and `y`'s file name and OSC 52 sequence (its base64
 * checked against known encodings). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app/tui/typed.h"
#include "app/tui/yank_ctl.h"
#include "tests/test.h"

TEST(typed_settings_parse_every_form) {
    TuiTyped g = tui_typed_parse("tau 0.42", 512);
    CHECK(g.kind == TUI_TYPED_TAU && fabsf(g.tau - 0.42f) < 1e-6f);
    g = tui_typed_parse("  T 1 ", 512);
    CHECK(g.kind == TUI_TYPED_TAU && g.tau == 1.0f);
    g = tui_typed_parse("theta 0.9", 512); /* a probability: log(0.9 / 0.1) */
    CHECK(g.kind == TUI_TYPED_THETA && !g.logit_form);
    CHECK_NEAR(g.theta_logit, log(9.0), 1e-9);
    g = tui_typed_parse("theta -2.2", 512); /* outside [0, 1]: log-odds as stored */
    CHECK(g.kind == TUI_TYPED_THETA && g.logit_form);
    CHECK_NEAR(g.theta_logit, -2.2, 1e-12);
    g = tui_typed_parse("theta logit 0.5", 512); /* log-odds asked for by name */
    CHECK(g.kind == TUI_TYPED_THETA && g.logit_form);
    CHECK_NEAR(g.theta_logit, 0.5, 1e-12);
    g = tui_typed_parse("THETA 0.5", 512);
    CHECK(g.kind == TUI_TYPED_THETA && !g.logit_form && fabs(g.theta_logit) < 1e-12);
    g = tui_typed_parse("window 64", 512);
    CHECK(g.kind == TUI_TYPED_WINDOW && g.window == 64);
    g = tui_typed_parse("w 512", 512);
    CHECK(g.kind == TUI_TYPED_WINDOW && g.window == 512);
}

TEST(typed_settings_refuse_saying_why) {
    static const struct { const char *in, *why; } bad[] = {
        {"tau 1.5", "tau 1.5 is out of range (0 to 1)"},
        {"tau -0.1", "out of range (0 to 1)"},
        {"tau x", "\"x\" is not a number: write tau 0.42"},
        {"tau", "is not a number"},
        {"theta 1e9", "out of range (log-odds -40 to 40)"},
        {"theta nan", "is not a number"},
        {"theta inf", "is not a number"},
        {"window 0", "window 0 is out of range (1 to 512)"},
        {"window 513", "out of range (1 to 512)"},
        {"window 6.5", "is not a whole number"},
        {"taux 0.4", "write tau 0.42, theta 0.9"},
        {"", "write tau 0.42"},
        {"tau 0.4 0.5", "is not a number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        TuiTyped g = tui_typed_parse(bad[i].in, 512);
        CHECK_MSG(g.kind == TUI_TYPED_BAD && strstr(g.why, bad[i].why) && !strncmp(g.why, "set: ", 5),
                  "\"%s\": kind %d \"%s\"", bad[i].in, g.kind, g.why);
    }
}

TEST(yank_path_and_osc52_sequence) {
    CHECK(!strcmp(tui_yank_path(NULL), "ahascope-yank.txt"));
    CHECK(!strcmp(tui_yank_path(""), "ahascope-yank.txt"));
    CHECK(!strcmp(tui_yank_path("/tmp/x.txt"), "/tmp/x.txt"));
    static const struct { const char *in, *b64; } enc[] = {
        {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foobar", "Zm9vYmFy"},
        {"L1 H0\n", "TDEgSDAK"},
    };
    for (size_t i = 0; i < sizeof enc / sizeof enc[0]; i++) {
        char *s = tui_yank_osc52(enc[i].in, strlen(enc[i].in)), want[64];
        snprintf(want, sizeof want, "\033]52;c;%s\a", enc[i].b64);
        CHECK_MSG(s && !strcmp(s, want), "\"%s\": %s", enc[i].in, s ? s + 1 : "(null)");
        free(s);
    }
}
