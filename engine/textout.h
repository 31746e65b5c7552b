/* textout.h — strings on their way into the JSON and CSV files the tool
 * writes, which must be valid UTF-8 (strict readers reject anything else).
 *
 * Token pieces are raw bytes: a byte-fallback piece can be one byte of a
 * multi-byte character. Every JSON or CSV writer sends its strings through
 * these calls, so there is one rule: invalid sequences are written as U+FFFD
 * (one per invalid byte), and a JSON object that received such a string
 * under "key" also gets "key_hex", the raw bytes as lowercase hex, so
 * nothing is lost. CSV has no room for an extra column per value; its
 * readers get the U+FFFD text (the raw bytes stay in the database).
 *
 * Text on a terminal has a rule of its own, and this is its one place:
 * text that came from a file, a database, the network or argv is escaped
 * before it reaches a terminal, so a recorded prompt, a config.json field
 * or a file name cannot move the cursor, set the title or clear the screen.
 * A newline is shown as the two characters \n (a message stays one line);
 * every other byte of a control character — C0 (below 0x20), DEL, the C1
 * code points U+0080–U+009F — and every byte that is not part of valid
 * UTF-8 is shown as \xNN, lowercase hex (ESC is \x1b, U+009B is \xc2\x9b,
 * a lone 0x9b byte \x9b). Everything else passes as it is. The form is for
 * eyes, not for parsing back: a backslash already in the text is not
 * doubled. Error lines (always: stderr is for people), tables, `info` and
 * CSV printed to a terminal use it; CSV written to a file or a pipe keeps
 * its bytes under the rule above. JSON needs no terminal mode: its strings
 * escape every control, DEL and C1 included (textout_json_write). The TUI
 * draws controls as glyphs of its own (views/paint.h), and curses never
 * passes them raw.
 */
#ifndef AHASCOPE_TEXTOUT_H
#define AHASCOPE_TEXTOUT_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>

/* 1 if s[0..n) is valid UTF-8 (no overlongs, surrogates or cut sequences). */
int textout_valid(const char *s, size_t n);

/* s[0..n) as a malloc'd NUL-terminated valid UTF-8 copy (invalid bytes
 * become U+FFFD); NULL when out of memory. */
char *textout_utf8(const char *s, size_t n);

/* A cJSON string holding s[0..n) made valid; NULL when out of memory. */
cJSON *textout_json(const char *s, size_t n);

/* Add item (any cJSON value) to object o under key made valid UTF-8; the
 * item is freed if that fails. Returns 0, or -1 (item NULL: out of memory). */
int textout_json_add_item(cJSON *o, const char *key, cJSON *item);

/* Add s[0..n) to object o under key (the key made valid too), and
 * "<key>_hex" with the raw bytes when s is not valid UTF-8. Returns 0, or
 * -1 when out of memory. */
int textout_json_add(cJSON *o, const char *key, const char *s, size_t n);

/* Write s (NUL-terminated) to out as a quoted, escaped JSON string. */
void textout_json_print(FILE *out, const char *s);

/* Write json, text cJSON printed from valid UTF-8 strings, to out with DEL
 * and the C1 controls as \u007f … \u009f: the same JSON value, but nothing
 * a terminal acts on (cJSON escapes only the controls below 0x20). Every
 * JSON the tool prints goes through here. */
void textout_json_write(FILE *out, const char *json);

/* Write s (NUL-terminated) to out as one RFC 4180 CSV field: quoted when it
 * holds a comma, quote or line break, and made valid UTF-8. */
void textout_csv(FILE *out, const char *s);

/* Escape the character at s[0..n) (n >= 1) by the terminal rule into out
 * (room for TEXTOUT_TERM_MAX bytes, not NUL-terminated); *used gets the
 * input bytes it took. Returns the bytes written. */
#define TEXTOUT_TERM_MAX 8 /* a C1 code point: two \xNN */
size_t textout_term_char(const char *s, size_t n, char *out, size_t *used);

/* s (NUL-terminated) escaped by the terminal rule into out, cut at a whole
 * character to fit cap bytes with the NUL (cap >= 1); returns out, so it
 * can be an argument of printf. A cap of 4 * strlen(s) + 1 never cuts. */
char *textout_term(const char *s, char *out, size_t cap);

/* textout_csv for a terminal: the field escaped by the terminal rule first
 * (so it never holds a line break), then quoted as CSV. */
void textout_csv_term(FILE *out, const char *s);

#endif
