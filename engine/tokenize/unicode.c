/* unicode.c — the Unicode classes of the split regexes, and NFC. */
#include "unicode.h"

#include <stdlib.h>
#include <string.h>

uint32_t uni_next(const unsigned char *s, size_t n, size_t *len) {
    unsigned c = s[0];
    *len = 1;
    if (c < 0x80) return c;
    size_t k;
    uint32_t cp, min;
    if (c >= 0xC2 && c <= 0xDF) k = 2, cp = c & 0x1F, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF) k = 3, cp = c & 0x0F, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4) k = 4, cp = c & 0x07, min = 0x10000;
    else return UNI_INVALID;
    if (n < k) return UNI_INVALID;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80) return UNI_INVALID;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    /* Overlong forms and surrogates would let two spellings of one text
     * tokenize differently, so they stay opaque bytes. */
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return UNI_INVALID;
    *len = k;
    return cp;
}

size_t uni_put(uint32_t cp, char *out) {
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) { o[0] = (unsigned char)cp; return 1; }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | cp >> 6);
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | cp >> 12);
        o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | cp >> 18);
    o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Index of the row of a sorted [lo, hi, ...] table (stride words per row)
 * containing cp, or -1. */
static long range_find(const uint32_t *t, size_t rows, size_t stride, uint32_t cp) {
    size_t lo = 0, hi = rows;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < t[mid * stride]) hi = mid;
        else if (cp > t[mid * stride + 1]) lo = mid + 1;
        else return (long)mid;
    }
    return -1;
}

int uni_is_letter(uint32_t cp) {
    if (cp < 0x80) return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
    return range_find(uni_letter_tab, uni_letter_tab_n, 2, cp) >= 0;
}

int uni_is_number(uint32_t cp) {
    if (cp < 0x80) return cp >= '0' && cp <= '9';
    return range_find(uni_number_tab, uni_number_tab_n, 2, cp) >= 0;
}

int uni_is_space(uint32_t cp) {
    if (cp < 0x80) return cp == ' ' || (cp >= 9 && cp <= 13);
    return range_find(uni_space_tab, uni_space_tab_n, 2, cp) >= 0;
}

int uni_ccc(uint32_t cp) {
    if (cp < 0x300 || cp == UNI_INVALID) return 0;
    long r = range_find(uni_ccc_tab, uni_ccc_tab_n, 3, cp);
    return r < 0 ? 0 : (int)uni_ccc_tab[r * 3 + 2];
}

size_t uni_complete_prefix(const char *s, size_t n) {
    /* Only the last three bytes can start an unfinished sequence. */
    size_t start = n > 3 ? n - 3 : 0;
    for (size_t i = start; i < n; i++) {
        unsigned c = (unsigned char)s[i];
        size_t need = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
        if (!need || i + need <= n) continue;
        int ok = 1;
        for (size_t j = i + 1; j < n; j++) ok &= ((unsigned char)s[j] & 0xC0) == 0x80;
        /* The second byte of E0/ED/F0/F4 has a narrower range; a tail that can
         * never become valid is printed (as U+FFFD) rather than held. */
        if (ok && i + 1 < n) {
            unsigned c1 = (unsigned char)s[i + 1];
            if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) || (c == 0xF0 && c1 < 0x90) ||
                (c == 0xF4 && c1 > 0x8F))
                ok = 0;
        }
        if (ok) return i;
    }
    return n;
}

size_t uni_sanitize(const char *s, size_t n, int printable, char *out, size_t cap) {
    size_t o = 0, i = 0;
    if (cap == 0) return 0;
    while (i < n) {
        size_t len;
        uint32_t cp = uni_next((const unsigned char *)s + i, n - i, &len);
        char buf[4];
        size_t m;
        if (cp == UNI_INVALID) m = uni_put(0xFFFD, buf);
        else if (printable && ((cp < 0x20 && cp != '\n' && cp != '\t') || (cp >= 0x7F && cp < 0xA0))) m = 0;
        else m = len, memcpy(buf, s + i, len);
        if (o + m + 1 > cap) break;
        memcpy(out + o, buf, m);
        o += m;
        i += len;
    }
    out[o] = 0;
    return o;
}

/* ---- NFC ---------------------------------------------------------------- */

/* Invalid input bytes ride through normalisation as these pseudo code points
 * (ccc 0, no decomposition, never composed) and are written back raw. */
#define RAW_BYTE(b) (0x110000u + (b))
#define IS_RAW(c) ((c) >= 0x110000u && (c) < 0x110100u)

#define HANGUL_S 0xAC00u
#define HANGUL_L 0x1100u
#define HANGUL_V 0x1161u
#define HANGUL_T 0x11A7u
#define HANGUL_NV 21u
#define HANGUL_NT 28u
#define HANGUL_N (19u * HANGUL_NV * HANGUL_NT)

typedef struct {
    uint32_t *v;
    size_t n, cap;
} CpBuf;

static int cp_push(CpBuf *b, uint32_t c) {
    if (b->n == b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 64;
        uint32_t *v = realloc(b->v, nc * sizeof *v);
        if (!v) return -1;
        b->v = v, b->cap = nc;
    }
    b->v[b->n++] = c;
    return 0;
}

static long decomp_find(uint32_t cp) {
    size_t lo = 0, hi = uni_decomp_tab_n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (uni_decomp_tab[mid * 3] < cp) lo = mid + 1;
        else hi = mid;
    }
    return lo < uni_decomp_tab_n && uni_decomp_tab[lo * 3] == cp ? (long)lo : -1;
}

/* Full canonical decomposition of cp appended to b (depth is bounded by the
 * data: no chain is longer than four steps). */
static int decompose(CpBuf *b, uint32_t cp, int depth) {
    if (cp - HANGUL_S < HANGUL_N) {
        uint32_t s = cp - HANGUL_S, t = s % HANGUL_NT;
        if (cp_push(b, HANGUL_L + s / (HANGUL_NV * HANGUL_NT)) || cp_push(b, HANGUL_V + s % (HANGUL_NV * HANGUL_NT) / HANGUL_NT))
            return -1;
        return t ? cp_push(b, HANGUL_T + t) : 0;
    }
    long r = cp >= 0xC0 && depth < 8 ? decomp_find(cp) : -1;
    if (r < 0) return cp_push(b, cp);
    if (decompose(b, uni_decomp_tab[r * 3 + 1], depth + 1)) return -1;
    return uni_decomp_tab[r * 3 + 2] ? decompose(b, uni_decomp_tab[r * 3 + 2], depth + 1) : 0;
}

/* The primary composite of (a, b), or 0. */
static uint32_t compose(uint32_t a, uint32_t b) {
    if (a - HANGUL_L < 19 && b - HANGUL_V < HANGUL_NV)
        return HANGUL_S + ((a - HANGUL_L) * HANGUL_NV + (b - HANGUL_V)) * HANGUL_NT;
    if (a - HANGUL_S < HANGUL_N && (a - HANGUL_S) % HANGUL_NT == 0 && b - HANGUL_T - 1 < HANGUL_NT - 1)
        return a + (b - HANGUL_T);
    size_t lo = 0, hi = uni_comp_tab_n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const uint32_t *r = uni_comp_tab + mid * 3;
        if (r[0] < a || (r[0] == a && r[1] < b)) lo = mid + 1;
        else hi = mid;
    }
    return lo < uni_comp_tab_n && uni_comp_tab[lo * 3] == a && uni_comp_tab[lo * 3 + 1] == b ? uni_comp_tab[lo * 3 + 2] : 0;
}

static int ccc_of(uint32_t c) { return IS_RAW(c) ? 0 : uni_ccc(c); }

/* Canonical ordering: stable sort of every run of non-starters by class. */
static void reorder(uint32_t *v, size_t n) {
    for (size_t i = 1; i < n; i++) {
        int cc = ccc_of(v[i]);
        if (cc == 0) continue;
        size_t j = i;
        uint32_t c = v[i];
        while (j > 0 && ccc_of(v[j - 1]) > cc) v[j] = v[j - 1], j--;
        v[j] = c;
    }
}

/* Canonical composition in place (UAX #15): a character joins the last
 * starter unless something between them blocks it. Returns the new length. */
static size_t recompose(uint32_t *v, size_t n) {
    size_t o = 0;
    long st = -1;
    int last_cc = -1; /* -1: nothing kept since the starter */
    for (size_t i = 0; i < n; i++) {
        uint32_t c = v[i];
        int cc = ccc_of(c);
        if (st >= 0 && !IS_RAW(c) && !IS_RAW(v[st]) && (last_cc == -1 || (last_cc != 0 && last_cc < cc))) {
            uint32_t k = compose(v[st], c);
            if (k) { v[st] = k; continue; }
        }
        if (cc == 0) st = (long)o, last_cc = -1;
        else last_cc = cc;
        v[o++] = c;
    }
    return o;
}

int uni_nfc(const char *s, size_t n, char **out, size_t *out_len) {
    const unsigned char *u = (const unsigned char *)s;
    CpBuf b = {0};
    int fail = 0;
    for (size_t i = 0; i < n && !fail;) {
        size_t len;
        uint32_t cp = uni_next(u + i, n - i, &len);
        fail = cp == UNI_INVALID ? cp_push(&b, RAW_BYTE(u[i])) : decompose(&b, cp, 0);
        i += len;
    }
    char *o = fail ? NULL : malloc(b.n * 4 + 1);
    if (!o) { free(b.v); return -1; }
    reorder(b.v, b.n);
    size_t m = recompose(b.v, b.n), k = 0;
    for (size_t i = 0; i < m; i++) {
        if (IS_RAW(b.v[i])) o[k++] = (char)(b.v[i] - 0x110000u);
        else k += uni_put(b.v[i], o + k);
    }
    o[k] = 0;
    free(b.v);
    *out = o;
    *out_len = k;
    return 0;
}
