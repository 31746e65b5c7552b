/* views_fixture.c — helpers for the views tests (see views_fixture.h). */
#include "engine/decide.h"
#include "tests/views_fixture.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>

int fx_term_open(FxTerm *t, const char *term, int cols, int rows) {
    memset(t, 0, sizeof *t);
    setlocale(LC_ALL, "C.UTF-8");
    t->out = fopen("/dev/null", "w");
    t->in = fopen("/dev/null", "r");
    if (!t->out || !t->in) return -1;
    t->scr = newterm(term, t->out, t->in);
    if (!t->scr) return -1;
    set_term(t->scr);
    resizeterm(rows, cols);
    return 0;
}

void fx_term_close(FxTerm *t) {
    if (t->scr) {
        endwin();
        delscreen(t->scr);
    }
    if (t->out) fclose(t->out);
    if (t->in) fclose(t->in);
    memset(t, 0, sizeof *t);
}

float fx_value(int pos, int cell, int k) {
    unsigned x = (unsigned)(pos * 131 + cell * 31 + k * 17);
    return (float)(x % 97) / 96.0f;
}

void fx_fill(ViewModel *m, int n) {
    static const char *const words[] = {"Once", " upon", " a", " time", ",", " there", " was", "\n"};
    StepTrace *t = trace_new(m->n_layers, m->n_heads);
    for (int p = 0; p < n; p++) {
        trace_clear(t);
        t->pos = p;
        t->token = p;
        t->is_prompt = p < 3;
        snprintf(t->piece, sizeof t->piece, "%s", words[p % 8]);
        for (int c = 0; c < trace_cells(t); c++) {
            t->score[c] = fx_value(p, c, 0);
            t->gate[c] = t->score[c] > 0.5f;
            t->oracle_logit[c] = (float)decide_theta_logit(fx_value(p, c, 1));
            t->oracle_err[c] = fx_value(p, c, 2);
            t->qada_logit[c] = (float)decide_theta_logit(fx_value(p, c, 3));
            t->qada_bulk_logit[c] = (float)decide_theta_logit(fx_value(p, c, 4));
            t->keys_read[c] = t->gate[c] ? p + 1 : (p + 1 < 4 ? p + 1 : 4);
        }
        view_push(m, t, NULL);
    }
    trace_free(t);
}

const char *fx_line(WINDOW *w, int y) {
    static char buf[4096];
    int h, wd, n = 0;
    getmaxyx(w, h, wd);
    buf[0] = '\0';
    if (y < 0 || y >= h) return buf;
    for (int x = 0; x < wd && n < (int)sizeof buf - 8; x++) {
        cchar_t cc;
        wchar_t wc[CCHARW_MAX + 1];
        attr_t a;
        short pair;
        if (mvwin_wch(w, y, x, &cc) == ERR) break;
        getcchar(&cc, wc, &a, &pair, NULL);
        char mb[16];
        mbstate_t st;
        memset(&st, 0, sizeof st);
        size_t k = wcrtomb(mb, wc[0] ? wc[0] : L' ', &st);
        if (k == (size_t)-1) mb[0] = '?', k = 1;
        memcpy(buf + n, mb, k);
        n += (int)k;
        int cw = wcwidth(wc[0]);
        if (cw > 1) x += cw - 1;
    }
    buf[n] = '\0';
    return buf;
}

int fx_contains(WINDOW *w, const char *needle) {
    int h, wd;
    getmaxyx(w, h, wd);
    (void)wd;
    for (int y = 0; y < h; y++)
        if (strstr(fx_line(w, y), needle)) return 1;
    return 0;
}

void fx_cell(WINDOW *w, int y, int x, wchar_t *ch, short *pair, attr_t *attr) {
    cchar_t cc;
    wchar_t wc[CCHARW_MAX + 1];
    mvwin_wch(w, y, x, &cc);
    getcchar(&cc, wc, attr, pair, NULL);
    *ch = wc[0];
}
