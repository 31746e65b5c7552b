/* headset.c — head sets as 0/1 maps: DuoAttention tables read, written and cut; Jaccard overlap. */
#include "headset.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"

int headset_budget_count(const HeadBudget *b, int n) {
    double k = b->percent ? b->value / 100 * n + 0.5 : b->value;
    return k <= 0 ? 0 : k >= n ? n : (int)k;
}

void headset_table_free(HeadTable *t) {
    free(t->values);
    memset(t, 0, sizeof *t);
}

/* One value of a row: a finite number within the range, filling the field. */
static int parse_value(const char *s, const char *end, int line, int col, const HeadRange *r, float *out, Err *e) {
    char num[64];
    size_t n = (size_t)(end - s);
    if (n >= sizeof num) return err_set(e, "line %d, value %d: '%.20s...' is not a number", line, col, s);
    memcpy(num, s, n), num[n] = 0;
    char *stop;
    errno = 0;
    double v = strtod(num, &stop);
    if (stop == num || *stop) return err_set(e, "line %d, value %d: '%s' is not a number", line, col, num);
    if (isnan(v)) return err_set(e, "line %d, value %d: NaN (values are in [%g, %g])", line, col, r->lo, r->hi);
    if (isinf(v) || !(v >= r->lo && v <= r->hi))
        return err_set(e, "line %d, value %d: %s is outside [%g, %g]", line, col, num, r->lo, r->hi);
    *out = (float)v;
    return 0;
}

/* Parse one line (no newline) into row; *n its values. Tabs separate
 * values; spaces around them and a trailing '\r' are tolerated. */
static int parse_row(const char *s, const char *end, int line, const HeadRange *r, float *row, int *n, Err *e) {
    *n = 0;
    if (end > s && end[-1] == '\r') end--;
    while (s < end) {
        while (s < end && (*s == ' ' || *s == '\t')) s++;
        if (s == end) break;
        const char *f = s;
        while (s < end && *s != ' ' && *s != '\t') s++;
        if (*n == HEADSET_MAX_KV) return err_set(e, "line %d: more than %d values", line, HEADSET_MAX_KV);
        if (parse_value(f, s, line, *n + 1, r, &row[*n], e)) return -1;
        (*n)++;
    }
    return 0;
}

static int blank_or_comment(const char *s, const char *end) {
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\r')) s++;
    return s == end || *s == '#';
}

int headset_table_parse(const char *text, size_t len, HeadTable *t, Err *e) {
    const HeadRange unit = {0, 1};
    return headset_table_parse_range(text, len, &unit, t, e);
}

int headset_table_parse_range(const char *text, size_t len, const HeadRange *r, HeadTable *t, Err *e) {
    memset(t, 0, sizeof *t);
    if (memchr(text, 0, len)) return err_set(e, "not a text table (a NUL byte at offset %zu)", strlen(text));
    if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) /* else "'<BOM>0.000' is not a number", the mark unseen */
        return err_set(e, "line 1 begins with a byte-order mark (save the table as UTF-8 without one)");
    float *row = malloc(HEADSET_MAX_KV * sizeof *row);
    size_t cap = 0;
    int rc = -1, line = 0;
    if (!row) return err_set(e, "out of memory");
    for (const char *s = text, *stop = text + len; s < stop;) {
        const char *nl = memchr(s, '\n', (size_t)(stop - s)), *end = nl ? nl : stop;
        line++;
        int n;
        if (!blank_or_comment(s, end)) {
            if (parse_row(s, end, line, r, row, &n, e)) goto out;
            if (t->n_layers == 0) t->n_kv = n;
            else if (n != t->n_kv)
                { err_set(e, "line %d has %d values, the rows before it %d", line, n, t->n_kv); goto out; }
            if (t->n_layers == HEADSET_MAX_LAYERS) { err_set(e, "more than %d rows", HEADSET_MAX_LAYERS); goto out; }
            if ((size_t)(t->n_layers + 1) * n > cap) {
                cap = cap ? 2 * cap : (size_t)n * 64;
                float *v = realloc(t->values, cap * sizeof *v);
                if (!v) { err_set(e, "out of memory"); goto out; }
                t->values = v;
            }
            memcpy(t->values + (size_t)t->n_layers * n, row, (size_t)n * sizeof *row);
            t->n_layers++;
        }
        s = end + (nl != NULL);
    }
    rc = t->n_layers ? 0 : err_set(e, "no rows (a row per layer, a value per KV head)");
out:
    free(row);
    if (rc) headset_table_free(t);
    return rc;
}

int headset_table_read(const char *path, int n_layers, int n_kv, HeadTable *t, Err *e) {
    size_t len;
    memset(t, 0, sizeof *t);
    char *text = file_read_all(path, "head table", "a DuoAttention head table", HEADSET_MAX_BYTES, &len, e);
    if (!text) return -1;
    int rc = headset_table_parse(text, len, t, e);
    free(text);
    if (rc) return err_prefix(e, path);
    if (t->n_layers != n_layers)
        rc = err_set(e, "%s: %d rows, the model has %d layers (a row per layer)", path, t->n_layers, n_layers);
    else if (t->n_kv != n_kv)
        rc = err_set(e, "%s: %d values a row, the model has %d KV heads a layer", path, t->n_kv, n_kv);
    if (rc) headset_table_free(t);
    return rc;
}

int headset_table_write(const char *path, const HeadTable *t, const char *comment, Err *e) {
    FileAtomic a;
    FILE *f = file_atomic_open(&a, path, e);
    if (!f) return -1;
    if (comment) { /* one line whatever it holds: a newline in a path must not start a row */
        fputs("# ", f);
        for (const char *c = comment; *c; c++) fputc((unsigned char)*c < ' ' ? ' ' : *c, f);
        fputc('\n', f);
    }
    for (int l = 0; l < t->n_layers; l++)
        for (int k = 0; k < t->n_kv; k++)
            fprintf(f, "%.6f%c", t->values[(size_t)l * t->n_kv + k], k + 1 < t->n_kv ? '\t' : '\n');
    return file_atomic_commit(&a, e);
}

/* Query heads ranked for a budget: by value, highest first, then by cell. */
typedef struct {
    float v;
    int cell;
} Ranked;

static int by_value(const void *a, const void *b) {
    const Ranked *x = a, *y = b;
    if (x->v != y->v) return x->v < y->v ? 1 : -1;
    return x->cell - y->cell;
}

int headset_from_table(const HeadTable *t, int n_heads, const HeadPick *pick, uint8_t **out, Err *e) {
    *out = NULL;
    if (t->n_kv < 1 || n_heads < t->n_kv || n_heads % t->n_kv)
        return err_set(e, "%d query heads do not split into groups of the table's %d KV heads", n_heads, t->n_kv);
    int n = t->n_layers * n_heads, group = n_heads / t->n_kv;
    uint8_t *m = calloc((size_t)n, 1);
    Ranked *r = malloc((size_t)n * sizeof *r);
    if (!m || !r) { free(m), free(r); return err_set(e, "out of memory"); }
    for (int c = 0; c < n; c++) {
        int l = c / n_heads, h = c % n_heads;
        r[c].v = t->values[(size_t)l * t->n_kv + h / group], r[c].cell = c;
    }
    if (pick->by_threshold) {
        float x = (float)pick->threshold; /* as the values were read: 0.3 in the file is not above 0.3 */
        for (int c = 0; c < n; c++) m[c] = r[c].v > x;
    } else if (!pick->budget.percent && pick->budget.value > n) {
        free(m), free(r);
        return err_set(e, "a budget of %.0f heads exceeds the model's %d", pick->budget.value, n);
    } else {
        qsort(r, (size_t)n, sizeof *r, by_value);
        for (int i = 0, k = headset_budget_count(&pick->budget, n); i < k; i++) m[r[i].cell] = 1;
    }
    free(r);
    *out = m;
    return 0;
}

double headset_jaccard(const uint8_t *a, const uint8_t *b, int n, int *inter, int *uni) {
    int both = 0, any = 0;
    for (int i = 0; i < n; i++) both += a[i] && b[i], any += a[i] || b[i];
    if (inter) *inter = both;
    if (uni) *uni = any;
    return any ? (double)both / any : 1.0;
}
