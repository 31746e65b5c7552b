/* paint.c — drawing primitives (see paint.h). */
#include "views/paint.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engine/trace.h"

void view_put(WINDOW *w, int y, int x, wchar_t ch, attr_t attr, short pair) {
    cchar_t cc;
    wchar_t s[2] = {ch, L'\0'};
    setcchar(&cc, s, attr, pair, NULL);
    mvwadd_wch(w, y, x, &cc);
}

void view_fill(WINDOW *w, int y, int x, int n, wchar_t ch, attr_t attr, short pair) {
    if (n <= 0) return;
    cchar_t cc;
    wchar_t s[2] = {ch, L'\0'};
    setcchar(&cc, s, attr, pair, NULL);
    wmove(w, y, x);
    for (int i = 0; i < n; i++) wadd_wch(w, &cc);
}

/* Next character of s (advancing *s) and its column width; NUL-free. Bytes
 * the locale cannot decode, controls and unprintables come back as '?'. */
static wchar_t next_char(const char **s, int *cw) {
    unsigned char c = (unsigned char)**s;
    wchar_t wc;
    *cw = 1;
    if (c < 0x80) {
        (*s)++;
        return (c < 0x20 || c == 0x7f) ? L'?' : (wchar_t)c;
    }
    mbstate_t st;
    memset(&st, 0, sizeof st);
    size_t n = mbrtowc(&wc, *s, 8, &st);
    if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
        (*s)++;
        return L'?';
    }
    *s += n;
    int width = wcwidth(wc);
    if (width < 0) return L'?';
    *cw = width;
    return wc;
}

/* ASCII spelling of the few non-ASCII symbols the views print, so --ascii
 * output stays readable; anything else becomes '?'. */
static const char *ascii_fallback(wchar_t wc) {
    static const struct {
        wchar_t wc;
        const char *s;
    } table[] = {
        {0x00b7, "-"},  {0x00ab, "\""}, {0x00bb, "\""}, {0x03c4, "tau"}, {0x03b8, "theta"}, {0x2265, ">="},
        {0x2502, "|"},  {0x2192, "->"}, {0x2190, "<-"}, {0x2191, "^"},   {0x2193, "v"},     {0x00d7, "x"},
        {0x2026, "..."}, {0x25b6, ">"}, {0x23ce, "Enter"}, {0x2014, "-"}, {0x2013, "-"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].wc == wc) return table[i].s;
    return "?";
}

int view_puts(WINDOW *w, int y, int x, int maxw, const char *s, int ascii, attr_t attr, short pair) {
    int used = 0, cw;
    while (*s && used < maxw) {
        wchar_t wc = next_char(&s, &cw);
        if (ascii && wc >= 0x80) {
            const char *f = ascii_fallback(wc);
            int n = (int)strlen(f);
            if (used + n > maxw) break;
            for (int i = 0; i < n; i++) view_put(w, y, x + used + i, (wchar_t)f[i], attr, pair);
            used += n;
            continue;
        }
        if (cw == 0) continue; /* combining marks would need the previous cell */
        if (used + cw > maxw) break;
        view_put(w, y, x + used, wc, attr, pair);
        used += cw;
    }
    return used;
}

int view_puts_fit(WINDOW *w, int y, int x, int maxw, const char *s, int ascii, attr_t attr, short pair) {
    if (maxw <= 0) return 0;
    if (view_text_width(s, ascii) <= maxw) return view_puts(w, y, x, maxw, s, ascii, attr, pair);
    /* cut short: at the last word that fits with room for the mark, and the
     * last column says so, rather than a word ending mid-way unmarked */
    char buf[1024];
    size_t keep = view_fit_words(s, maxw - 1, ascii);
    if (keep >= sizeof buf) keep = sizeof buf - 1;
    memcpy(buf, s, keep);
    buf[keep] = '\0';
    int used = view_puts(w, y, x, maxw - 1, buf, ascii, attr, pair);
    view_put(w, y, x + used, ascii ? L'~' : L'\u2026', attr, pair);
    return used + 1;
}

/* 1 for the bytes a cut may leave at the end of the kept text: spaces and
 * the separators between a title's parts (· | , : ;). */
static int trailing_junk(const char *s, size_t at, size_t *len) {
    unsigned char c = (unsigned char)s[at];
    if (c == ' ' || c == '|' || c == ',' || c == ':' || c == ';' || c == '-') return *len = 1, 1;
    if (at >= 1 && (unsigned char)s[at - 1] == 0xc2 && c == 0xb7) return *len = 2, 1; /* · */
    return 0;
}

size_t view_fit_words(const char *s, int maxw, int ascii) {
    size_t n = strlen(s), fit = 0, last_space = 0;
    int used = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && ((unsigned char)s[j] & 0xc0) == 0x80) j++;
        char one[8] = "";
        memcpy(one, s + i, j - i < 7 ? j - i : 7);
        int cw = view_text_width(one, ascii);
        if (used + cw > maxw) break;
        used += cw;
        if (s[i] == ' ') last_space = i;
        i = fit = j;
    }
    if (fit < n && s[fit] != ' ' && last_space > 0 && (int)(last_space * 2) >= (int)fit) fit = last_space;
    size_t len;
    while (fit > 0 && trailing_junk(s, fit - 1, &len)) fit -= len;
    return fit;
}

int view_printf(WINDOW *w, int y, int x, int maxw, int ascii, attr_t attr, short pair, const char *fmt,
                ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return view_puts(w, y, x, maxw, buf, ascii, attr, pair);
}

int view_text_width(const char *s, int ascii) {
    int used = 0, cw;
    while (*s) {
        wchar_t wc = next_char(&s, &cw);
        used += (ascii && wc >= 0x80) ? (int)strlen(ascii_fallback(wc)) : cw;
    }
    return used;
}

wchar_t view_next_glyph(const char **s, int ascii, int *cw) {
    unsigned char c = (unsigned char)**s;
    if (c < 0x20 || c == 0x7f) {
        (*s)++;
        *cw = 1;
        return c == '\n' ? (ascii ? L'$' : L'\u21b5') : c == '\t' ? (ascii ? L'>' : L'\u2192')
                                                                 : (ascii ? L'.' : L'\u00b7');
    }
    wchar_t wc = next_char(s, cw);
    if (ascii && wc >= 0x80 && *cw > 0) wc = L'?', *cw = 1;
    return wc;
}

int view_token_glyphs(const char *piece, int ascii, wchar_t *out, int max, int *width, int *newline) {
    int n = 0, cw;
    *width = 0;
    *newline = 0;
    const char *s = piece;
    while (*s && n < max) {
        if (*s == '\n') *newline = 1;
        wchar_t wc = view_next_glyph(&s, ascii, &cw);
        if (cw == 0) continue;
        out[n++] = wc;
        *width += cw;
    }
    if (n == 0 && max > 0) { /* an empty piece still needs a cell to carry the cursor */
        out[n++] = ascii ? L'_' : L'\u2205';
        *width = 1;
    }
    return n;
}

/* UTF-8 encoding of one code point; returns its length (1 … 4). */
static int utf8_encode(wchar_t wc, char *out) {
    unsigned c = (unsigned)wc;
    if (c < 0x80) return out[0] = (char)c, 1;
    if (c < 0x800) return out[0] = (char)(0xc0 | c >> 6), out[1] = (char)(0x80 | (c & 0x3f)), 2;
    if (c < 0x10000) {
        out[0] = (char)(0xe0 | c >> 12);
        out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        out[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | c >> 18);
    out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
    out[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}

void view_piece_label(const char *piece, int ascii, char *out, size_t n) {
    wchar_t buf[TRACE_PIECE_MAX];
    int width, nl;
    int k = view_token_glyphs(piece, ascii, buf, TRACE_PIECE_MAX, &width, &nl);
    size_t used = 0;
    for (int i = 0; i < k && used + 5 < n; i++) used += (size_t)utf8_encode(buf[i], out + used);
    if (n) out[used < n ? used : n - 1] = '\0';
}

void view_frame_box(WINDOW *w, const ViewPalette *p, const char *title, int focused) {
    int h, wd;
    getmaxyx(w, h, wd);
    if (h < 2 || wd < 2) return;
    attr_t a = A_NORMAL;
    short pair = 0;
    view_text_style(p, focused ? VIEW_TX_FOCUS : VIEW_TX_DIM, &a, &pair);
    /* corners ┌┐└┘, edges ─│; '+', '-', '|' without UTF-8 */
    wchar_t hz = p->ascii ? L'-' : L'\u2500', vt = p->ascii ? L'|' : L'\u2502';
    view_put(w, 0, 0, p->ascii ? L'+' : L'\u250c', a, pair);
    view_fill(w, 0, 1, wd - 2, hz, a, pair);
    view_put(w, 0, wd - 1, p->ascii ? L'+' : L'\u2510', a, pair);
    for (int y = 1; y < h - 1; y++) {
        view_put(w, y, 0, vt, a, pair);
        view_put(w, y, wd - 1, vt, a, pair);
    }
    view_put(w, h - 1, 0, p->ascii ? L'+' : L'\u2514', a, pair);
    view_fill(w, h - 1, 1, wd - 2, hz, a, pair);
    view_put(w, h - 1, wd - 1, p->ascii ? L'+' : L'\u2518', a, pair);
    if (title && *title && wd > 6) {
        view_put(w, 0, 1, L' ', a, pair);
        int n = view_puts_fit(w, 0, 2, wd - 5, title, p->ascii, a | (focused ? A_BOLD : 0), pair);
        view_put(w, 0, 2 + n, L' ', a, pair);
    }
}
