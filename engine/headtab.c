/* headtab.c — Retrieval-Head JSON, PruLong masks, MoA spans and window tables, read and checked against a model.
 *
 * Each reader turns its authors' layout into one of two shapes (a score per
 * head, or a span per head) so the cuts, the overlap and the policy never
 * need to know which paper a table came from. */
#include "headtab.h"

#include <cjson/cJSON.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"

void headtab_spans_free(HeadSpans *sp) {
    free(sp->ab);
    memset(sp, 0, sizeof *sp);
}

int headtab_window_at(const float *ab, int t) {
    double w = floor((double)ab[0] + (double)ab[1] * (t + 1) + 0.5);
    return w < 1 ? 1 : w > t + 1 ? t + 1 : (int)w;
}

/* The file's text, NUL-free, or NULL with "PATH: problem". */
static char *read_text(const char *path, const char *noun, size_t *len, Err *e) {
    char *text = file_read_all(path, noun, noun, HEADSET_MAX_BYTES, len, e);
    if (text && memchr(text, 0, *len)) {
        err_set(e, "%s: not a text file (a NUL byte at offset %zu)", path, strlen(text));
        free(text);
        return NULL;
    }
    return text;
}

/* How many query heads share each of a table's n values a layer: 1 when
 * the table is per query head, the group size when per KV head; 0 when n is
 * neither (e set). */
static int per_value(const char *path, int n, const HeadShape *s, Err *e) {
    if (n == s->n_heads) return 1;
    if (n == s->n_kv_heads) return s->n_heads / s->n_kv_heads;
    err_set(e, "%s: %d values a layer, the model has %d query heads (%d KV heads) a layer", path, n, s->n_heads,
            s->n_kv_heads);
    return 0;
}

/* A TSV read in the range r, checked to a row per layer. */
static int read_tsv(const char *path, const char *noun, const HeadRange *r, const HeadShape *s, HeadTable *t, Err *e) {
    size_t len;
    memset(t, 0, sizeof *t);
    char *text = read_text(path, noun, &len, e);
    if (!text) return -1;
    int rc = headset_table_parse_range(text, len, r, t, e);
    free(text);
    if (rc) return err_prefix(e, path);
    if (t->n_layers != s->n_layers)
        rc = err_set(e, "%s: %d rows, the model has %d layers (a row per layer)", path, t->n_layers, s->n_layers);
    else if (!per_value(path, t->n_kv, s, e))
        rc = -1;
    if (rc) headset_table_free(t);
    return rc;
}

int headtab_read_prulong(const char *path, const HeadShape *s, HeadTable *t, Err *e) {
    const HeadRange any = {-FLT_MAX, FLT_MAX};
    return read_tsv(path, "PruLong mask table", &any, s, t, e);
}

/* "L-H" in decimal, both in range, or -1. */
static int retrieval_cell(const char *key, const HeadShape *s) {
    char *end;
    if (!key || key[0] < '0' || key[0] > '9') return -1;
    long l = strtol(key, &end, 10);
    if (*end != '-' || end[1] < '0' || end[1] > '9') return -1;
    long h = strtol(end + 1, &end, 10);
    if (*end || l >= s->n_layers || h >= s->n_heads) return -1;
    return (int)(l * s->n_heads + h);
}

/* The mean of one head's list of scores; *budget counts down the numbers
 * the whole file may still hold. */
static int retrieval_mean(const char *path, const cJSON *list, long *budget, float *out, Err *e) {
    double sum = 0;
    int n = 0;
    if (!cJSON_IsArray(list) || !list->child)
        return err_set(e, "%s: \"%s\" is not a non-empty list of scores", path, list->string);
    for (const cJSON *x = list->child; x; x = x->next, n++) {
        if (--*budget < 0) return err_set(e, "%s: more than %d scores in all", path, HEADTAB_MAX_SCORES);
        if (!cJSON_IsNumber(x) || !(fabs(x->valuedouble) <= HEADTAB_MAX_SCORE))
            return err_set(e, "%s: \"%s\": score %d is not a number within +-%g", path, list->string, n + 1,
                           HEADTAB_MAX_SCORE);
        sum += x->valuedouble;
    }
    *out = (float)(sum / n);
    return 0;
}

static int retrieval_fill(const char *path, const cJSON *root, const HeadShape *s, HeadTable *t, uint8_t *seen, Err *e) {
    long budget = HEADTAB_MAX_SCORES;
    int n = s->n_layers * s->n_heads;
    if (!cJSON_IsObject(root)) return err_set(e, "%s: not a JSON object of \"layer-head\": [scores]", path);
    for (const cJSON *k = root->child; k; k = k->next) {
        int c = retrieval_cell(k->string, s);
        if (c < 0)
            return err_set(e, "%s: key \"%.40s\" is not L-H with layer < %d and head < %d", path, k->string,
                           s->n_layers, s->n_heads);
        if (seen[c]) return err_set(e, "%s: head %s given twice", path, k->string);
        if (retrieval_mean(path, k, &budget, &t->values[c], e)) return -1;
        seen[c] = 1;
    }
    for (int c = 0; c < n; c++)
        if (!seen[c]) return err_set(e, "%s: head %d-%d is missing (a key per layer-head)", path, c / s->n_heads, c % s->n_heads);
    return 0;
}

int headtab_read_retrieval(const char *path, const HeadShape *s, HeadTable *t, Err *e) {
    size_t len;
    memset(t, 0, sizeof *t);
    char *text = read_text(path, "Retrieval-Head table", &len, e);
    if (!text) return -1;
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    int n = s->n_layers * s->n_heads, rc = -1;
    uint8_t *seen = calloc((size_t)n, 1);
    t->values = calloc((size_t)n, sizeof *t->values);
    t->n_layers = s->n_layers, t->n_kv = s->n_heads;
    if (!root) err_set(e, "%s: not valid JSON", path);
    else if (!seen || !t->values) err_set(e, "%s: out of memory", path);
    else rc = retrieval_fill(path, root, s, t, seen, e);
    cJSON_Delete(root);
    free(seen);
    if (rc) headset_table_free(t);
    return rc;
}

/* Room for the spans of a model's every query head. */
static int spans_alloc(const HeadShape *s, HeadSpans *out, Err *e) {
    out->n_layers = s->n_layers, out->n_heads = s->n_heads;
    out->ab = calloc((size_t)s->n_layers * s->n_heads * 2, sizeof *out->ab);
    return out->ab ? 0 : err_set(e, "out of memory");
}

/* One head's span, checked; value v of a table of per values a layer fills
 * its group of query heads. */
static int span_set(const char *path, HeadSpans *sp, int layer, int v, int per, double a, double b, Err *e) {
    if (!isfinite(a) || fabs(a) > HEADTAB_MAX_ALPHA)
        return err_set(e, "%s: layer %d head %d: alpha %g is not a finite number within +-%g", path, layer, v, a,
                       HEADTAB_MAX_ALPHA);
    if (!(b >= 0 && b <= 1)) return err_set(e, "%s: layer %d head %d: beta %g is outside [0, 1]", path, layer, v, b);
    for (int h = v * per; h < (v + 1) * per; h++) {
        float *ab = sp->ab + 2 * ((size_t)layer * sp->n_heads + h);
        ab[0] = (float)a, ab[1] = (float)b;
    }
    return 0;
}

/* MoA's JSON: the two lists of lists, a list per layer of equal lengths. */
static int moa_json(const char *path, const cJSON *root, const HeadShape *s, HeadSpans *sp, Err *e) {
    const cJSON *al = cJSON_GetObjectItemCaseSensitive(root, "alphas"), *be = cJSON_GetObjectItemCaseSensitive(root, "betas");
    if (!cJSON_IsArray(al) || !cJSON_IsArray(be)) return err_set(e, "%s: no \"alphas\" and \"betas\" lists", path);
    if (cJSON_GetArraySize(al) != s->n_layers || cJSON_GetArraySize(be) != s->n_layers)
        return err_set(e, "%s: %d alpha and %d beta rows, the model has %d layers", path, cJSON_GetArraySize(al),
                       cJSON_GetArraySize(be), s->n_layers);
    const cJSON *ra = al->child, *rb = be->child;
    for (int l = 0; l < s->n_layers; l++, ra = ra->next, rb = rb->next) {
        int n = cJSON_IsArray(ra) ? cJSON_GetArraySize(ra) : -1, per = per_value(path, n, s, e);
        if (!per) return -1;
        if (!cJSON_IsArray(rb) || cJSON_GetArraySize(rb) != n)
            return err_set(e, "%s: layer %d has %d alphas but not as many betas", path, l, n);
        const cJSON *xa = ra->child, *xb = rb->child;
        for (int v = 0; v < n; v++, xa = xa->next, xb = xb->next) {
            if (!cJSON_IsNumber(xa) || !cJSON_IsNumber(xb))
                return err_set(e, "%s: layer %d head %d: alpha and beta must be numbers", path, l, v);
            if (span_set(path, sp, l, v, per, xa->valuedouble, xb->valuedouble, e)) return -1;
        }
    }
    return 0;
}

/* The long CSV's columns ahascope reads, by their header names. */
enum { COL_LAYER, COL_HEAD, COL_ALPHA, COL_BETA, N_COLS };
#define CSV_MAX_FIELDS 64

/* Split one line (no newline) at commas into at most CSV_MAX_FIELDS
 * NUL-terminated fields, in place; returns their count or -1. */
static int csv_split(char *line, char **f) {
    int n = 0;
    size_t len = strlen(line);
    if (len && line[len - 1] == '\r') line[len - 1] = 0;
    for (char *p = line;; p++) {
        if (n == CSV_MAX_FIELDS) return -1;
        f[n++] = p;
        p = strchr(p, ',');
        if (!p) return n;
        *p = 0;
    }
}

static int csv_header(const char *path, char **f, int n, int *col, Err *e) {
    static const char *const names[N_COLS][2] = {
        {"layer", "layer_id"}, {"head", "head_id"}, {"alpha", "alpha_value"}, {"beta", "beta_value"}};
    for (int c = 0; c < N_COLS; c++) {
        col[c] = -1;
        for (int i = 0; i < n && col[c] < 0; i++)
            if (!strcmp(f[i], names[c][0]) || !strcmp(f[i], names[c][1])) col[c] = i;
        if (col[c] < 0) return err_set(e, "%s: line 1: no column %s (or %s)", path, names[c][0], names[c][1]);
    }
    return 0;
}

/* A finite number filling a CSV field. */
static int csv_number(const char *s, double *out) {
    char *end;
    if (!*s) return -1;
    *out = strtod(s, &end);
    return *end || !isfinite(*out) ? -1 : 0;
}

/* One data row into the spans; per the KV/query granularity once known. */
static int csv_row(const char *path, int line, char **f, int n, const int *col, const HeadShape *s, HeadSpans *sp,
                   uint8_t *seen, int *max_head, Err *e) {
    double v[N_COLS];
    for (int c = 0; c < N_COLS; c++)
        if (col[c] >= n || csv_number(f[col[c]], &v[c]))
            return err_set(e, "%s: line %d: column %d is not a number", path, line, col[c] + 1);
    /* in range as doubles first: converting 1e52 to int is undefined */
    if (!(v[COL_LAYER] >= 0 && v[COL_LAYER] < s->n_layers) || v[COL_LAYER] != floor(v[COL_LAYER]))
        return err_set(e, "%s: line %d: layer %g is not one of the model's %d", path, line, v[COL_LAYER], s->n_layers);
    if (!(v[COL_HEAD] >= 0 && v[COL_HEAD] < s->n_heads) || v[COL_HEAD] != floor(v[COL_HEAD]))
        return err_set(e, "%s: line %d: head %g is not one of the model's %d", path, line, v[COL_HEAD], s->n_heads);
    int l = (int)v[COL_LAYER], h = (int)v[COL_HEAD];
    size_t c = (size_t)l * s->n_heads + h;
    if (seen[c]) return err_set(e, "%s: line %d: layer %d head %d given twice (one plan a file)", path, line, l, h);
    seen[c] = 1;
    if (h > *max_head) *max_head = h;
    return span_set(path, sp, l, h, 1, v[COL_ALPHA], v[COL_BETA], e);
}

/* Every head of every layer named; a table that named KV heads only has
 * head k's span copied to its group, from the top down so that no span is
 * overwritten before it is copied (k * per >= k). */
static int csv_groups(const char *path, const HeadShape *s, HeadSpans *sp, const uint8_t *seen, int max_head, Err *e) {
    int per = per_value(path, max_head + 1, s, e);
    if (!per) return -1;
    for (int l = 0; l < s->n_layers; l++)
        for (int k = 0; k <= max_head; k++)
            if (!seen[(size_t)l * s->n_heads + k])
                return err_set(e, "%s: layer %d head %d is missing (a row per head)", path, l, k);
    for (int l = 0; per > 1 && l < s->n_layers; l++)
        for (int k = max_head; k >= 0; k--) {
            const float *ab = sp->ab + 2 * ((size_t)l * s->n_heads + k);
            span_set(path, sp, l, k, per, ab[0], ab[1], e);
        }
    return 0;
}

static int moa_csv(const char *path, char *text, const HeadShape *s, HeadSpans *sp, Err *e) {
    char *f[CSV_MAX_FIELDS];
    int col[N_COLS], line = 0, max_head = -1, rc = 0;
    uint8_t *seen = calloc((size_t)s->n_layers * s->n_heads, 1);
    if (!seen) return err_set(e, "out of memory");
    for (char *p = text, *nl; p && *p && !rc; p = nl ? nl + 1 : NULL) {
        nl = strchr(p, '\n');
        if (nl) *nl = 0;
        line++;
        int n = csv_split(p, f);
        if (n < 0) rc = err_set(e, "%s: line %d: more than %d columns", path, line, CSV_MAX_FIELDS);
        else if (line == 1) rc = csv_header(path, f, n, col, e);
        else if (n > 1 || f[0][0]) rc = csv_row(path, line, f, n, col, s, sp, seen, &max_head, e);
    }
    if (!rc && max_head < 0) rc = err_set(e, "%s: no rows under the header", path);
    if (!rc) rc = csv_groups(path, s, sp, seen, max_head, e);
    free(seen);
    return rc;
}

int headtab_read_moa(const char *path, const HeadShape *s, HeadSpans *out, Err *e) {
    size_t len;
    memset(out, 0, sizeof *out);
    char *text = read_text(path, "MoA span table", &len, e);
    if (!text) return -1;
    int rc = spans_alloc(s, out, e);
    const char *p = text;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    if (!rc && *p == '{') {
        cJSON *root = cJSON_ParseWithLength(text, len);
        rc = root ? moa_json(path, root, s, out, e) : err_set(e, "%s: not valid JSON", path);
        cJSON_Delete(root);
    } else if (!rc) {
        rc = moa_csv(path, text, s, out, e);
    }
    free(text);
    if (rc) headtab_spans_free(out);
    return rc;
}

int headtab_read_windows(const char *path, const HeadShape *s, HeadSpans *out, Err *e) {
    const HeadRange keys = {1, HEADTAB_MAX_WINDOW};
    HeadTable t;
    memset(out, 0, sizeof *out);
    if (read_tsv(path, "window table", &keys, s, &t, e)) return -1;
    int per = t.n_kv == s->n_heads ? 1 : s->n_heads / t.n_kv, rc = spans_alloc(s, out, e);
    for (int i = 0; !rc && i < t.n_layers * t.n_kv; i++) {
        float w = t.values[i];
        if (w != floorf(w))
            rc = err_set(e, "%s: layer %d head %d: %g is not a whole number of keys", path, i / t.n_kv, i % t.n_kv, w);
        else
            rc = span_set(path, out, i / t.n_kv, i % t.n_kv, per, w, 0, e);
    }
    headset_table_free(&t);
    if (rc) headtab_spans_free(out);
    return rc;
}

int headtab_spans_scores(const HeadSpans *sp, double n, HeadTable *t, Err *e) {
    size_t cells = (size_t)sp->n_layers * sp->n_heads;
    t->n_layers = sp->n_layers, t->n_kv = sp->n_heads;
    if (!(t->values = malloc(cells * sizeof *t->values))) return err_set(e, "out of memory");
    for (size_t c = 0; c < cells; c++) t->values[c] = (float)(sp->ab[2 * c] + (double)sp->ab[2 * c + 1] * n);
    return 0;
}
