/* unicode.h — internal to engine/tokenize/: the little Unicode the Hugging
 * Face tokenizers need beyond the UTF-8 stepping tokenize.h makes public:
 * the \p{L} / \p{N} / \s classes of their split regexes, and NFC (Qwen2's
 * normalizer). Tables come from engine/tokenize/unicode_tables.c, generated
 * by engine/tokenize/gen_unicode_tables.py from Debian's unicode-data
 * (Unicode 15.0).
 */
#ifndef AHASCOPE_UNICODE_H
#define AHASCOPE_UNICODE_H

#include <stddef.h>
#include <stdint.h>

#include "tokenize.h" /* UNI_INVALID, uni_next, uni_sanitize */

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
