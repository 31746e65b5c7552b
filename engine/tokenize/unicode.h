/* unicode.h — the little Unicode the Hugging Face tokenizers need: UTF-8
 * stepping, the \p{L} / \p{N} / \s classes of their split regexes, and NFC
 * (Qwen2's normalizer). Tables come from engine/unicode_tables.c, generated
 * by engine/gen_unicode_tables.py from Debian's unicode-data (Unicode 15.0).
 */
#ifndef AHASCOPE_UNICODE_H
#define AHASCOPE_UNICODE_H

#include <stddef.h>
#include <stdint.h>

/* Returned by uni_next for a byte that does not start a valid UTF-8
 * sequence (stray continuation, overlong form, surrogate, > U+10FFFF or a
 * sequence cut short); the caller treats it as one opaque byte. */
#define UNI_INVALID 0xFFFFFFFFu

/* Decode the code point at s[0..n) (n >= 1) and store its byte length in
 * *len (1 for an invalid byte). Returns the code point or UNI_INVALID. */
uint32_t uni_next(const unsigned char *s, size_t n, size_t *len);

/* Write cp as UTF-8 into out (room for 4 bytes); returns the byte count.
 * cp must be a valid scalar value. */
size_t uni_put(uint32_t cp, char *out);

/* General category L* (any letter). */
int uni_is_letter(uint32_t cp);
/* General category N* (decimal, letter and other numbers). */
int uni_is_number(uint32_t cp);
/* The White_Space property, which is what \s matches in these regexes. */
int uni_is_space(uint32_t cp);
/* Canonical combining class (0 for starters and for UNI_INVALID). */
int uni_ccc(uint32_t cp);

/* Length of the longest prefix of s[0..n) that does not end inside a UTF-8
 * sequence which is valid so far but incomplete: the bytes after it may be
 * completed by the next piece, so a streaming printer should hold them. */
size_t uni_complete_prefix(const char *s, size_t n);

/* Copy s[0..n) to out as valid UTF-8: every invalid or incomplete sequence
 * becomes U+FFFD; with printable set, control characters other than '\n' and
 * '\t' are dropped too. Writes at most cap-1 bytes plus a NUL (cap >= 1) and
 * returns the length written. */
size_t uni_sanitize(const char *s, size_t n, int printable, char *out, size_t cap);

/* NFC-normalise s[0..n) into a malloc'd buffer (*out, length *out_len).
 * Invalid bytes pass through untouched and block composition. Returns 0, or
 * -1 when out of memory. */
int uni_nfc(const char *s, size_t n, char **out, size_t *out_len);

/* Generated tables (flat arrays of rows; *_n is the number of rows). */
extern const uint32_t uni_letter_tab[], uni_number_tab[], uni_space_tab[]; /* [lo, hi] */
extern const uint32_t uni_ccc_tab[];                                 /* [lo, hi, class] */
extern const uint32_t uni_decomp_tab[];                              /* [cp, first, second or 0] */
extern const uint32_t uni_comp_tab[];                                /* [first, second, composite] */
extern const size_t uni_letter_tab_n, uni_number_tab_n, uni_space_tab_n, uni_ccc_tab_n, uni_decomp_tab_n, uni_comp_tab_n;

#endif
