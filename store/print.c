/* print.c — result sets as a table, CSV or JSON.
 *
 * Result sets as an aligned table, CSV (RFC 4180) or JSON, for
 * `query`, `runs` and `compare`. Text bound for CSV or JSON goes through
 * engine/textout.h, so those files are always valid UTF-8. CSV and JSON
 * are written row by row as SQLite yields them; only the table, which must
 * see every row to size its columns, holds rows, and at most
 * PRINT_TABLE_MAX_ROWS of them in PRINT_TABLE_MAX_BYTES. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/textout.h"
#include "store/print.h"

#define CELL_MAX 64 /* table cells wider than this are cut with "…" */

/* Text of one value for the table: NULL shown as NULL, text escaped by the
 * terminal rule (engine/textout.h), so a piece like "\n" cannot break the
 * layout nor a recorded escape sequence drive the terminal. */
static void cell_text(sqlite3_stmt *st, int i, char *out, size_t cap) {
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL: snprintf(out, cap, "NULL"); return;
    case SQLITE_INTEGER: snprintf(out, cap, "%lld", (long long)sqlite3_column_int64(st, i)); return;
    case SQLITE_FLOAT: snprintf(out, cap, "%.6g", sqlite3_column_double(st, i)); return;
    case SQLITE_BLOB: snprintf(out, cap, "<blob %d bytes>", sqlite3_column_bytes(st, i)); return;
    default: break;
    }
    const char *s = (const char *)sqlite3_column_text(st, i);
    size_t n = s ? strlen(s) : 0, o = 0, used;
    char tmp[TEXTOUT_TERM_MAX];
    int chars = 0;
    for (size_t k = 0; k < n; k += used) {
        if (++chars > CELL_MAX) { memcpy(out + o, "\xE2\x80\xA6", 3), o += 3; break; }
        size_t m = textout_term_char(s + k, n - k, tmp, &used);
        if (o + m + 4 > cap) break; /* room for the NUL, or the … above */
        memcpy(out + o, tmp, m), o += m;
    }
    out[o] = 0;
}

/* A column name as the table's header shows it: escaped as the cells are
 * (the SQL names it, so it may hold anything); NULL when out of memory. */
static char *term_dup(const char *s) {
    size_t cap = 4 * strlen(s) + 1;
    char *d = malloc(cap);
    return d ? textout_term(s, d, cap) : NULL;
}

static int display_width(const char *s) {
    int w = 0;
    for (; *s; s++) w += (*s & 0xC0) != 0x80;
    return w;
}

typedef struct {
    char **cells; /* [rows + 1][cols], row 0 the header */
    int rows, cols, cap;
    size_t bytes; /* held in cells, pointers included */
} Table;

/* Add the current row; 1 (nothing added) when the table is full. */
static int table_add_row(Table *t, sqlite3_stmt *st) {
    if (t->rows >= PRINT_TABLE_MAX_ROWS || t->bytes > PRINT_TABLE_MAX_BYTES) return 1;
    if (t->rows + 1 >= t->cap) {
        int cap = t->cap ? 2 * t->cap : 64;
        char **grown = realloc(t->cells, (size_t)cap * t->cols * sizeof *grown);
        if (!grown) return -1;
        memset(grown + (size_t)t->cap * t->cols, 0, (size_t)(cap - t->cap) * t->cols * sizeof *grown);
        t->cells = grown, t->cap = cap;
    }
    char buf[CELL_MAX * TEXTOUT_TERM_MAX + 16];
    for (int c = 0; c < t->cols; c++) {
        cell_text(st, c, buf, sizeof buf);
        if (!(t->cells[(size_t)(t->rows + 1) * t->cols + c] = strdup(buf))) return -1;
        t->bytes += strlen(buf) + 1 + sizeof(char *);
    }
    t->rows++;
    return 0;
}

static void table_print(const Table *t, const int *numeric, FILE *out) {
    int *w = calloc(t->cols, sizeof *w);
    if (!w) return;
    for (int r = 0; r <= t->rows; r++)
        for (int c = 0; c < t->cols; c++) {
            int cw = display_width(t->cells[(size_t)r * t->cols + c]);
            if (cw > w[c]) w[c] = cw;
        }
    for (int r = 0; r <= t->rows; r++) {
        for (int c = 0; c < t->cols; c++) {
            const char *v = t->cells[(size_t)r * t->cols + c];
            int pad = w[c] - display_width(v);
            if (r > 0 && numeric[c]) fprintf(out, "%*s%s", pad, "", v);
            else fprintf(out, "%s%*s", v, c + 1 < t->cols ? pad : 0, "");
            if (c + 1 < t->cols) fputs("  ", out);
        }
        fputc('\n', out);
        if (r == 0) {
            for (int c = 0; c < t->cols; c++) {
                for (int i = 0; i < w[c]; i++) fputc('-', out);
                if (c + 1 < t->cols) fputs("  ", out);
            }
            fputc('\n', out);
        }
    }
    free(w);
}

/* Column i of the current row as a CSV field; term: escaped for a terminal. */
static void csv_value(sqlite3_stmt *st, int i, int term, FILE *out) {
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL: return;
    case SQLITE_INTEGER: fprintf(out, "%lld", (long long)sqlite3_column_int64(st, i)); return;
    case SQLITE_FLOAT: fprintf(out, "%.15g", sqlite3_column_double(st, i)); return;
    default:
        if (term) textout_csv_term(out, (const char *)sqlite3_column_text(st, i));
        else textout_csv(out, (const char *)sqlite3_column_text(st, i));
    }
}

/* Column i of the current row as a JSON value (numbers kept exact); text
 * made valid UTF-8. */
static cJSON *json_value(sqlite3_stmt *st, int i) {
    char buf[40];
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL: return cJSON_CreateNull();
    case SQLITE_INTEGER:
        snprintf(buf, sizeof buf, "%lld", (long long)sqlite3_column_int64(st, i));
        return cJSON_CreateRaw(buf);
    case SQLITE_FLOAT: {
        double v = sqlite3_column_double(st, i);
        if (isnan(v) || isinf(v)) return cJSON_CreateNull();
        snprintf(buf, sizeof buf, "%.15g", v);
        return cJSON_CreateRaw(buf);
    }
    default: return textout_json((const char *)sqlite3_column_text(st, i), (size_t)sqlite3_column_bytes(st, i));
    }
}

cJSON *print_json_row(sqlite3_stmt *st) {
    cJSON *o = cJSON_CreateObject();
    for (int c = 0; o && c < sqlite3_column_count(st); c++) {
        const char *name = sqlite3_column_name(st, c);
        int bad = sqlite3_column_type(st, c) == SQLITE_TEXT
                      ? textout_json_add(o, name, (const char *)sqlite3_column_text(st, c), (size_t)sqlite3_column_bytes(st, c))
                      : textout_json_add_item(o, name, json_value(st, c));
        if (bad) cJSON_Delete(o), o = NULL;
    }
    return o;
}

/* The bytes of the current row's values, which its JSON text holds at
 * least once (cJSON's copy, then its print, hold each again). */
static size_t row_bytes(sqlite3_stmt *st) {
    size_t b = 0;
    for (int c = 0; c < sqlite3_column_count(st); c++) b += (size_t)sqlite3_column_bytes(st, c);
    return b;
}

/* The current row as one element of a JSON array: "[" before the first,
 * "," before the others, so the array never has to be held whole. */
static int json_element(sqlite3_stmt *st, FILE *out, long n) {
    cJSON *o = print_json_row(st);
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!text) return -1;
    fputc(n ? ',' : '[', out);
    textout_json_write(out, text); /* DEL and C1 as \u escapes: cJSON leaves them raw */
    free(text);
    return 0;
}

/* Step st, printing CSV and JSON rows as they come and holding table rows
 * in t. *n counts this statement's rows. */
static int step_rows(sqlite3_stmt *st, StoreFormat fmt, FILE *out, Table *t, PrintLimit *lim, long *n) {
    int rc, cols = sqlite3_column_count(st);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (lim->max_rows > 0 && lim->rows >= lim->max_rows) { /* one row more than the cap: say so */
            lim->capped = 1;
            return SQLITE_DONE;
        }
        if (fmt == STORE_FMT_TABLE) {
            int full = table_add_row(t, st);
            if (full < 0) return SQLITE_NOMEM;
            if (full) return lim->table_full = 1, SQLITE_TOOBIG;
        } else if (fmt == STORE_FMT_CSV || fmt == STORE_FMT_CSV_TERM) {
            for (int c = 0; c < cols; c++) {
                if (c) fputc(',', out);
                csv_value(st, c, fmt == STORE_FMT_CSV_TERM, out);
            }
            fputs("\r\n", out);
        } else if (row_bytes(st) > PRINT_JSON_ROW_MAX_BYTES) {
            return lim->row_big = 1, SQLITE_TOOBIG;
        } else if (json_element(st, out, *n)) return SQLITE_NOMEM;
        lim->rows++, (*n)++;
    }
    return rc;
}

static void table_free(Table *t) {
    for (int i = 0; i < (t->rows + 1) * t->cols; i++) free(t->cells[i]);
    free(t->cells);
}

int print_result(sqlite3_stmt *st, StoreFormat fmt, FILE *out) { return print_result_limited(st, fmt, out, NULL); }

int print_result_limited(sqlite3_stmt *st, StoreFormat fmt, FILE *out, PrintLimit *lim) {
    int cols = sqlite3_column_count(st);
    Table t = {NULL, 0, cols, 0, 0};
    PrintLimit none = {0};
    if (!lim) lim = &none;
    if (fmt == STORE_FMT_TABLE) {
        if (!(t.cells = calloc((size_t)cols * 64, sizeof *t.cells))) return SQLITE_NOMEM;
        t.cap = 64;
        for (int c = 0; c < cols; c++) t.cells[c] = term_dup(sqlite3_column_name(st, c));
    } else if (fmt == STORE_FMT_CSV || fmt == STORE_FMT_CSV_TERM) {
        for (int c = 0; c < cols; c++) {
            if (c) fputc(',', out);
            if (fmt == STORE_FMT_CSV_TERM) textout_csv_term(out, sqlite3_column_name(st, c));
            else textout_csv(out, sqlite3_column_name(st, c));
        }
        fputs("\r\n", out);
    }
    long n = 0;
    int rc = step_rows(st, fmt, out, &t, lim, &n);
    int full = rc == SQLITE_TOOBIG && lim->table_full;
    if ((rc == SQLITE_DONE || full) && fmt == STORE_FMT_TABLE) { /* a full table: the rows it holds */
        /* A column is right-aligned when its first row is a number. */
        int *numeric = calloc(cols, sizeof *numeric);
        for (int c = 0; numeric && c < cols && t.rows > 0; c++) {
            const char *v = t.cells[cols + c];
            char *end;
            strtod(v, &end);
            numeric[c] = *v && !*end;
        }
        if (numeric) table_print(&t, numeric, out);
        free(numeric);
    } else if (fmt == STORE_FMT_JSON && (rc == SQLITE_DONE || n > 0)) {
        fputs(n ? "]\n" : "[]\n", out); /* rows already out are closed into valid JSON, whatever stopped them */
    }
    if (fmt == STORE_FMT_TABLE) table_free(&t);
    return rc;
}
