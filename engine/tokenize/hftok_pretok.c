/* hftok_pretok.c — the split regexes of GPT-2, cl100k and Qwen2 as hand-written scanners, and GPT-2's byte alphabet.
 *
 * The split regexes of GPT-2, Llama-3 / OLMo-2 (cl100k) and
 * Qwen2 as hand-written scanners, and GPT-2's byte alphabet.
 *
 * Each scanner returns where the regex's leftmost match starting at i ends,
 * trying the alternatives in the regex's order with its backtracking
 * outcome worked out by hand. Every character is covered by some
 * alternative, so the matches tile the text and "Isolated" and
 * "Removed + invert" splitting are the same thing. Bytes that are not valid
 * UTF-8 count as one "other" character (neither \s, \p{L} nor \p{N}).
 */
#include <limits.h>
#include <string.h>

#include "hftok_impl.h"
#include "unicode.h"

/* ---- byte-level alphabet -------------------------------------------------- */

/* Bytes that are printable Latin-1 stand for themselves; the other 68 are
 * moved, in order, to U+0100 onwards, so every token prints visibly. */
static int byte_is_printable(unsigned b) { return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174; }

uint32_t hf_byte_char(unsigned char b) {
    if (byte_is_printable(b)) return b;
    /* the moved bytes are 0..32, 127..160 and 173, numbered in that order */
    return 256u + (b <= 32 ? b : b <= 160 ? 33u + (b - 127u) : 67u);
}

int hf_char_byte(uint32_t cp) {
    if (cp < 256) return byte_is_printable(cp) ? (int)cp : -1;
    if (cp >= 256 + 68) return -1;
    uint32_t k = cp - 256;
    return k < 33 ? (int)k : k < 67 ? (int)(127 + k - 33) : 173;
}

/* ---- pattern recognition -------------------------------------------------- */

static const struct {
    int pattern;
    const char *regex;
} KNOWN[] = {
    /* tokenizers' ByteLevel default, and tiktoken's r50k/p50k spellings */
    {HF_PAT_GPT2, "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"},
    {HF_PAT_GPT2, "'(?:[sdmt]|ll|ve|re)| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"},
    {HF_PAT_GPT2, "'(?:[sdmt]|ll|ve|re)| ?\\p{L}++| ?\\p{N}++| ?[^\\s\\p{L}\\p{N}]++|\\s++$|\\s+(?!\\S)|\\s"},
    /* Llama-3 and OLMo-2 (cl100k); the second is tiktoken's newer spelling,
     * whose possessive quantifiers never change a match here */
    {HF_PAT_CL100K,
     "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
     "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
    {HF_PAT_CL100K,
     "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*|"
     "\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"},
    /* Qwen2: single digits */
    {HF_PAT_QWEN2,
     "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
     "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
};

int hf_pattern_of(const char *regex) {
    for (size_t i = 0; i < sizeof KNOWN / sizeof KNOWN[0]; i++)
        if (strcmp(regex, KNOWN[i].regex) == 0) return KNOWN[i].pattern;
    return -1;
}

const char *hf_pattern_name(int pattern) {
    switch (pattern) {
    case HF_PAT_GPT2: return "GPT-2";
    case HF_PAT_CL100K: return "Llama-3/OLMo-2 (cl100k)";
    case HF_PAT_QWEN2: return "Qwen2";
    default: return "none";
    }
}

/* ---- scanners ------------------------------------------------------------- */

enum { CL_L, CL_N, CL_S, CL_O };

typedef struct {
    uint32_t cp;
    size_t len;
    int cls;
} Ch;

static Ch ch_at(const unsigned char *s, size_t n, size_t i) {
    Ch c;
    c.cp = uni_next(s + i, n - i, &c.len);
    if (c.cp == UNI_INVALID) c.cls = CL_O;
    else if (uni_is_letter(c.cp)) c.cls = CL_L;
    else if (uni_is_number(c.cp)) c.cls = CL_N;
    else if (uni_is_space(c.cp)) c.cls = CL_S;
    else c.cls = CL_O;
    return c;
}

/* End of the run of characters of class cls starting at i, at most max
 * characters long. */
static size_t run_of(const unsigned char *s, size_t n, size_t i, int cls, int max) {
    for (int k = 0; i < n && k < max; k++) {
        Ch c = ch_at(s, n, i);
        if (c.cls != cls) break;
        i += c.len;
    }
    return i;
}

/* Lower-cases for the (?i:...) contractions; U+017F (long s) case-folds to s. */
static uint32_t fold(uint32_t cp, int icase) {
    if (!icase) return cp;
    if (cp >= 'A' && cp <= 'Z') return cp + 32;
    return cp == 0x17F ? 's' : cp;
}

/* End of 's 't 're 've 'm 'll 'd at i, or 0. */
static size_t contraction(const unsigned char *s, size_t n, size_t i, int icase) {
    if (s[i] != '\'' || i + 1 >= n) return 0;
    Ch a = ch_at(s, n, i + 1);
    uint32_t x = fold(a.cp, icase);
    size_t j = i + 1 + a.len;
    if (x == 's' || x == 't' || x == 'm' || x == 'd') return j;
    if ((x != 'r' && x != 'v' && x != 'l') || j >= n) return 0;
    Ch b = ch_at(s, n, j);
    uint32_t y = fold(b.cp, icase);
    return (y == (x == 'l' ? 'l' : 'e')) ? j + b.len : 0;
}

/* \s+(?!\S) then \s+ at a whitespace character: the run, except that a run
 * of two or more followed by a non-space gives its last character up so it
 * can lead the next word. */
static size_t space_run(const unsigned char *s, size_t n, size_t i) {
    size_t k = i, last = i;
    int count = 0;
    while (k < n) {
        Ch c = ch_at(s, n, k);
        if (c.cls != CL_S) break;
        last = k;
        k += c.len;
        count++;
    }
    if (k == n || count < 2) return k;
    return last;
}

static size_t next_gpt2(const unsigned char *s, size_t n, size_t i) {
    size_t e = contraction(s, n, i, 0);
    if (e) return e;
    Ch c = ch_at(s, n, i);
    /* " ?\p{L}+", " ?\p{N}+", " ?[^\s\p{L}\p{N}]+": one leading space joins
     * whatever non-space run follows it */
    if (c.cp == ' ' && i + 1 < n) {
        Ch d = ch_at(s, n, i + 1);
        if (d.cls != CL_S) return run_of(s, n, i + 1, d.cls, INT_MAX);
    }
    if (c.cls != CL_S) return run_of(s, n, i, c.cls, INT_MAX);
    return space_run(s, n, i);
}

static size_t next_cl100k(const unsigned char *s, size_t n, size_t i, int max_digits) {
    size_t e = contraction(s, n, i, 1);
    if (e) return e;
    Ch c = ch_at(s, n, i);
    /* [^\r\n\p{L}\p{N}]?\p{L}+ */
    if (c.cls == CL_L) return run_of(s, n, i, CL_L, INT_MAX);
    if (c.cls != CL_N && c.cp != '\r' && c.cp != '\n' && i + c.len < n && ch_at(s, n, i + c.len).cls == CL_L)
        return run_of(s, n, i + c.len, CL_L, INT_MAX);
    /* \p{N}{1,3} (Qwen2: \p{N}) */
    if (c.cls == CL_N) return run_of(s, n, i, CL_N, max_digits);
    /* " ?[^\s\p{L}\p{N}]+[\r\n]*" */
    size_t j = i;
    if (c.cp == ' ' && i + 1 < n && ch_at(s, n, i + 1).cls == CL_O) j = i + 1;
    if (j > i || c.cls == CL_O) {
        size_t k = run_of(s, n, j, CL_O, INT_MAX);
        while (k < n && (s[k] == '\r' || s[k] == '\n')) k++;
        return k;
    }
    /* \s*[\r\n]+ ends after the last line break of the whitespace run */
    size_t k = i, brk = 0;
    while (k < n) {
        Ch w = ch_at(s, n, k);
        if (w.cls != CL_S) break;
        k += w.len;
        if (w.cp == '\r' || w.cp == '\n') brk = k;
    }
    return brk ? brk : space_run(s, n, i);
}

size_t hf_pretok_next(int pattern, const unsigned char *s, size_t n, size_t i) {
    switch (pattern) {
    case HF_PAT_GPT2: return next_gpt2(s, n, i);
    case HF_PAT_CL100K: return next_cl100k(s, n, i, 3);
    case HF_PAT_QWEN2: return next_cl100k(s, n, i, 1);
    default: return n;
    }
}
