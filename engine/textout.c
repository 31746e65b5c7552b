/* textout.c — the one road for strings into JSON and CSV output: made valid
 * UTF-8 by uni_sanitize, escaped by cJSON or by the CSV quoting rule. */
#include "textout.h"

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
    fputs(p ? p : "null", out); /* null only when out of memory */
    free(p);
    cJSON_Delete(j);
}

void textout_csv(FILE *out, const char *s) {
    char *v = textout_utf8(s, strlen(s));
    const char *p = v ? v : "\xEF\xBF\xBD"; /* out of memory: a lone U+FFFD, never raw bytes */
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
    free(v);
}
