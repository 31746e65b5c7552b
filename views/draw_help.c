/* draw_help.c — the `?` help overlay (see draw.h). */
#include "views/draw.h"
#include "views/paint.h"

/* Key, what it does; a NULL key starts a section heading. */
static const char *const HELP[][2] = {
    {NULL, "stepping"},
    {"space n", "step one token (replays history when behind)"},
    {"p  + -", "play / pause, play speed"},
    {"[ ] Home End", "move the token cursor through history"},
    {"PgUp PgDn", "cursor 10 tokens (SQL pane: a page)"},
    {NULL, "selection and view"},
    {"arrows hjkl", "move the head selection (focused pane)"},
    {"Tab S-Tab", "move focus between panes"},
    {"Enter", "open / close the head inspector"},
    {"m M", "next / previous metric"},
    {"a", "agreement vs oracle: AHA/gate/QAdA/bulk"},
    {"g  L  /", "tint by share global; timeline per layer; search"},
    {"mouse", "click a head or token; wheel scrolls"},
    {NULL, "settings (re-run teacher-forced as a linked run)"},
    {"P", "change policy"},
    {"w W  t T  o O", "window, tau, theta: lower / raise"},
    {NULL, "other"},
    {"e  :  s", "edit prompt, read-only SQL, export run"},
    {"Esc  C-c", "stop a running query; \xe2\x86\x91\xe2\x86\x93 after : earlier ones"},
    {"hl \xe2\x86\x90\xe2\x86\x92", "SQL pane: scroll a wide result sideways"},
    {"v  R  D", "plots; run summary; diff against the parent run"},
    {"Esc  q", "close overlay / pane, quit"},
    {NULL, "qada_bulk is this project's ablation, not QAdA"},
};

void view_draw_help(WINDOW *w, const ViewModel *m, const ViewPalette *p) {
    (void)m;
    int h, wd;
    getmaxyx(w, h, wd);
    werase(w);
    view_frame_box(w, p, "help \xc2\xb7 any key closes", 1);
    attr_t ka, fa;
    short kp, fp;
    view_text_style(p, VIEW_TX_KEY, &ka, &kp);
    view_text_style(p, VIEW_TX_FOCUS, &fa, &fp);
    int y = 1, kw = 15, n = (int)(sizeof HELP / sizeof HELP[0]);
    for (int i = 0; i < n && y < h - 1; i++, y++) {
        if (!HELP[i][0]) {
            view_puts(w, y, 2, wd - 4, HELP[i][1], p->ascii, fa, fp);
            continue;
        }
        view_puts(w, y, 3, kw, HELP[i][0], p->ascii, ka, kp);
        view_puts(w, y, 3 + kw + 1, wd - kw - 5, HELP[i][1], p->ascii, A_NORMAL, 0);
    }
}
