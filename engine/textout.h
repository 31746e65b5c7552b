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

/* Write s (NUL-terminated) to out as one RFC 4180 CSV field: quoted when it
 * holds a comma, quote or line break, and made valid UTF-8. */
void textout_csv(FILE *out, const char *s);

#endif
