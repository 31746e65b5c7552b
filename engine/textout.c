/* textout.c — strings bound for JSON, CSV and the terminal: valid UTF-8, raw bytes kept, controls escaped.
 *
 * The one road for strings into JSON and CSV output (made valid
 * UTF-8 by uni_sanitize, escaped by cJSON or by the CSV quoting rule) and
 * onto a terminal (the terminal rule of textout.h). */
#include "textout.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tokenize/tokenize.h"

int textout_valid(const char *s, size_t n) {
    for (size_t i = 0, len; i < n; i += len)
        if (uni_next((const unsigned char *)s + i, n - i, &len) == UNI_INVALID) return 0;
    return 1;
}

char *textout_utf8(const char *s, size_t n) {
    if (n > ((size_t)-1 - 1) / 3) return NULL;
    size_t cap = 3 * n + 1; /* each invalid byte grows to the 3 of U+FFFD */
    char *out = malloc(cap);
    if (out) uni_sanitize(s, n, 0, out, cap);
    return out;
}

cJSON *textout_json(const char *s, size_t n) {
    char *v = textout_utf8(s, n);
    cJSON *j = v ? cJSON_CreateString(v) : NULL;
    free(v);
    return j;
}

static char *hex_of(const char *s, size_t n) {
    char *h = n < ((size_t)-1 - 1) / 2 ? malloc(2 * n + 1) : NULL;
    for (size_t i = 0; h && i < n; i++) snprintf(h + 2 * i, 3, "%02x", (unsigned char)s[i]);
    if (h) h[2 * n] = 0;
    return h;
}

int textout_json_add_item(cJSON *o, const char *key, cJSON *item) {
    char *k = item ? textout_utf8(key, strlen(key)) : NULL;
    int ok = k && cJSON_AddItemToObject(o, k, item);
    if (!ok) cJSON_Delete(item);
    free(k);
    return ok ? 0 : -1;
}

int textout_json_add(cJSON *o, const char *key, const char *s, size_t n) {
    size_t kl = strlen(key);
    if (textout_json_add_item(o, key, textout_json(s, n))) return -1;
    if (textout_valid(s, n)) return 0;
    char *hex = hex_of(s, n), *hkey = malloc(kl + 5);
    int r = -1;
    if (hex && hkey) {
        memcpy(hkey, key, kl), memcpy(hkey + kl, "_hex", 5);
        r = textout_json_add_item(o, hkey, cJSON_CreateString(hex));
    }
    free(hex), free(hkey);
    return r;
}

void textout_json_print(FILE *out, const char *s) {
    cJSON *j = textout_json(s, strlen(s));
    char *p = j ? cJSON_PrintUnformatted(j) : NULL;
    textout_json_write(out, p ? p : "null"); /* null only when out of memory */
    free(p);
    cJSON_Delete(j);
}

void textout_json_write(FILE *out, const char *json) {
    for (const char *p = json;;) {
        size_t run = strcspn(p, "\x7f\xc2"); /* in valid UTF-8, 0xc2 leads U+0080 … U+00BF */
        fwrite(p, 1, run, out);
        p += run;
        if (!*p) return;
        unsigned char c = (unsigned char)p[0], c1 = (unsigned char)p[1];
        if (c == 0x7f) fputs("\\u007f", out), p++;
        else if (c1 >= 0x80 && c1 < 0xa0) fprintf(out, "\\u%04x", c1), p += 2;
        else fputc(c, out), p++;
    }
}

/* Write p as one CSV field: quoted when it holds a comma, quote or line break. */
static void csv_field(FILE *out, const char *p) {
    if (!strpbrk(p, ",\"\r\n")) {
        fputs(p, out);
    } else {
        fputc('"', out);
        for (; *p; p++) {
            if (*p == '"') fputc('"', out);
            fputc(*p, out);
        }
        fputc('"', out);
    }
}

void textout_csv(FILE *out, const char *s) {
    char *v = textout_utf8(s, strlen(s));
    csv_field(out, v ? v : "\xEF\xBF\xBD"); /* out of memory: a lone U+FFFD, never raw bytes */
    free(v);
}

size_t textout_term_char(const char *s, size_t n, char *out, size_t *used) {
    uint32_t cp = uni_next((const unsigned char *)s, n, used);
    int bad = cp == UNI_INVALID || cp < 0x20 || (cp >= 0x7f && cp < 0xa0);
    if (!bad) return memcpy(out, s, *used), *used;
    if (cp == '\n') return memcpy(out, "\\n", 2), 2;
    static const char hex[] = "0123456789abcdef";
    size_t o = 0; /* a C1 code point shows both its bytes: what was there, exactly */
    for (size_t i = 0; i < *used; i++) {
        unsigned char b = (unsigned char)s[i];
        out[o++] = '\\', out[o++] = 'x', out[o++] = hex[b >> 4], out[o++] = hex[b & 15];
    }
    return o;
}

char *textout_term(const char *s, char *out, size_t cap) {
    size_t n = strlen(s), o = 0, used;
    char tmp[TEXTOUT_TERM_MAX];
    for (size_t i = 0; i < n; i += used) {
        size_t m = textout_term_char(s + i, n - i, tmp, &used);
        if (o + m + 1 > cap) break;
        memcpy(out + o, tmp, m);
        o += m;
    }
    out[o] = 0;
    return out;
}

void textout_csv_term(FILE *out, const char *s) {
    size_t n = strlen(s);
    char *v = n < ((size_t)-1 - 1) / 4 ? malloc(4 * n + 1) : NULL;
    csv_field(out, v ? textout_term(s, v, 4 * n + 1) : "\\x??"); /* out of memory: never the raw bytes */
    free(v);
}
