/* catalog.c — a file's own lists of per-head fields and predictors, checked and grown by appending.
 *
 * The `fields` and `predictors` tables of version 6, read and checked as
 * data; views_sql.c makes the views from them.
 *
 * Why the lists live in the file: a view names every field and predictor,
 * so views generated from this build's lists would change their stored text
 * whenever a field or predictor is added, and every file an older build
 * wrote would look tampered with. Generated from the file's own rows, the
 * views are the same for every build that reads the file; a writer whose
 * build knows more appends its rows (and a field's column) and remakes the
 * views, which hold no data. Nothing here needs a schema version. */
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"

/* Version 6's lists as it froze them: every file holds these rows first. */
static const StoreCatField BASE_FIELDS[] = {
    {"gate", STORE_FIELD_INT},          {"score", STORE_FIELD_BITS},          {"oracle_logit", STORE_FIELD_BITS},
    {"oracle_err", STORE_FIELD_BITS},   {"qada_logit", STORE_FIELD_BITS},     {"qada_bulk_logit", STORE_FIELD_BITS},
    {"keys_read", STORE_FIELD_DERIVED}, {"qada_rem_logit", STORE_FIELD_BITS}, {"qada_rem_bulk_logit", STORE_FIELD_BITS},
    {"far_mean", STORE_FIELD_BITS},     {"far_std", STORE_FIELD_BITS},
};
static const StoreCatPred BASE_PREDS[] = {
    {"executed", "gate", PRED_THR_GATE, 0},
    {"aha", "score", PRED_THR_TAU, 0},
    {"oracle", "oracle_logit", PRED_THR_THETA, 1},
    {"qada", "qada_logit", PRED_THR_THETA, 0},
    {"qada_bulk", "qada_bulk_logit", PRED_THR_THETA, 0},
    {"qada_rem", "qada_rem_logit", PRED_THR_THETA, 0},
    {"qada_rem_bulk", "qada_rem_bulk_logit", PRED_THR_THETA, 0},
};
#define N_BASE_FIELDS (int)(sizeof BASE_FIELDS / sizeof BASE_FIELDS[0])
#define N_BASE_PREDS (int)(sizeof BASE_PREDS / sizeof BASE_PREDS[0])

static const char *const KIND_WORDS[] = {"bits", "int", "derived"};
static const char *const RULE_WORDS[] = {[PRED_THR_GATE] = "gate", [PRED_THR_TAU] = "tau", [PRED_THR_THETA] = "theta"};

void store_catalog_base(StoreCatalog *c) {
    memset(c, 0, sizeof *c);
    memcpy(c->field, BASE_FIELDS, sizeof BASE_FIELDS);
    memcpy(c->pred, BASE_PREDS, sizeof BASE_PREDS);
    c->n_fields = N_BASE_FIELDS, c->n_preds = N_BASE_PREDS;
}

/* How decision_bits keeps a field of engine/trace.h (STORE_KIND's rule). */
#define CAT_KIND_BITS STORE_FIELD_BITS
#define CAT_KIND_KEPT STORE_FIELD_INT
#define CAT_KIND_DERIVED STORE_FIELD_DERIVED
#define CAT_FIELD(name, type, missing, sql, show, title, short_name, doc) \
    {#name, STORE_CAT(CAT_KIND_, STORE_KIND(sql, show))},
static const StoreCatField OWN_FIELDS[] = {TRACE_HEAD_FIELDS(CAT_FIELD)};

static int find_field(const StoreCatalog *c, const char *name) {
    for (int i = 0; i < c->n_fields; i++)
        if (!strcmp(c->field[i].name, name)) return i;
    return -1;
}

static int find_pred(const StoreCatalog *c, const char *name) {
    for (int i = 0; i < c->n_preds; i++)
        if (!strcmp(c->pred[i].name, name)) return i;
    return -1;
}

void store_catalog_own(StoreCatalog *c) {
    store_catalog_base(c);
    for (size_t i = 0; i < sizeof OWN_FIELDS / sizeof OWN_FIELDS[0]; i++)
        if (find_field(c, OWN_FIELDS[i].name) < 0 && c->n_fields < STORE_CAT_MAX) c->field[c->n_fields++] = OWN_FIELDS[i];
    for (int p = 0; p < DECIDE_COUNT; p++) {
        if (find_pred(c, decide_name((DecidePred)p)) >= 0 || c->n_preds >= STORE_CAT_MAX) continue;
        StoreCatPred *r = &c->pred[c->n_preds++];
        snprintf(r->name, sizeof r->name, "%s", decide_name((DecidePred)p));
        snprintf(r->field, sizeof r->field, "%s", decide_field((DecidePred)p));
        r->rule = decide_threshold((DecidePred)p);
        r->label = p == DECIDE_ORACLE;
    }
}

/* A name the file may hold: what it names goes into SQL text unquoted. */
static int good_name(const unsigned char *s) {
    if (!s || *s < 'a' || *s > 'z') return 0;
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '_')) return 0;
    return n < STORE_CAT_NAME;
}

static int word_index(const char *const *words, int n, const unsigned char *w) {
    for (int i = 0; w && i < n; i++)
        if (words[i] && !strcmp(words[i], (const char *)w)) return i;
    return -1;
}

/* The rows of one catalog table through row(), each checked; 0, 1 with why
 * set, or SQLite's code. */
static int read_rows(sqlite3 *db, const char *schema, const char *sql_fmt, StoreCatalog *c, char *why, size_t cap,
                     int (*row)(sqlite3_stmt *, StoreCatalog *, char *, size_t)) {
    char *sql = sqlite3_mprintf(sql_fmt, schema);
    sqlite3_stmt *st = NULL;
    int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) rc = row(st, c, why, cap);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int field_row(sqlite3_stmt *st, StoreCatalog *c, char *why, size_t cap) {
    const unsigned char *name = sqlite3_column_text(st, 0), *kind = sqlite3_column_text(st, 1);
    int k = word_index(KIND_WORDS, 3, kind), i = c->n_fields;
    if (i >= STORE_CAT_MAX) return snprintf(why, cap, "more than %d fields", STORE_CAT_MAX), 1;
    if (!good_name(name) || k < 0 || find_field(c, (const char *)name) >= 0)
        return snprintf(why, cap, "field row %d is not one ahascope writes", i + 1), 1;
    if (k == STORE_FIELD_DERIVED && strcmp((const char *)name, "keys_read"))
        return snprintf(why, cap, "field row %d derives a value ahascope cannot", i + 1), 1;
    snprintf(c->field[i].name, sizeof c->field[i].name, "%s", (const char *)name);
    c->field[i].kind = (StoreFieldKind)k;
    c->n_fields++;
    return SQLITE_OK;
}

static int pred_row(sqlite3_stmt *st, StoreCatalog *c, char *why, size_t cap) {
    const unsigned char *name = sqlite3_column_text(st, 0), *field = sqlite3_column_text(st, 1);
    int rule = word_index(RULE_WORDS, 4, sqlite3_column_text(st, 2)), label = sqlite3_column_int(st, 3), i = c->n_preds;
    if (i >= STORE_CAT_MAX) return snprintf(why, cap, "more than %d predictors", STORE_CAT_MAX), 1;
    int f = good_name(field) ? find_field(c, (const char *)field) : -1;
    int fits = f >= 0 && (rule == PRED_THR_GATE ? c->field[f].kind == STORE_FIELD_INT : c->field[f].kind == STORE_FIELD_BITS);
    if (!good_name(name) || rule < 0 || !fits || (label != 0 && label != 1) || find_pred(c, (const char *)name) >= 0)
        return snprintf(why, cap, "predictor row %d is not one ahascope writes", i + 1), 1;
    StoreCatPred *r = &c->pred[i];
    snprintf(r->name, sizeof r->name, "%s", (const char *)name);
    snprintf(r->field, sizeof r->field, "%s", (const char *)field);
    r->rule = (PredThr)rule, r->label = label;
    c->n_preds++;
    return SQLITE_OK;
}

/* Version 6's own rows must lead the lists, as it wrote them: every view
 * and reader relies on them. */
static int base_leads(const StoreCatalog *c, char *why, size_t cap) {
    int ok = c->n_fields >= N_BASE_FIELDS && c->n_preds >= N_BASE_PREDS;
    for (int i = 0; ok && i < N_BASE_FIELDS; i++)
        ok = !strcmp(c->field[i].name, BASE_FIELDS[i].name) && c->field[i].kind == BASE_FIELDS[i].kind;
    for (int i = 0; ok && i < N_BASE_PREDS; i++)
        ok = !strcmp(c->pred[i].name, BASE_PREDS[i].name) && !strcmp(c->pred[i].field, BASE_PREDS[i].field) &&
             c->pred[i].rule == BASE_PREDS[i].rule && c->pred[i].label == BASE_PREDS[i].label;
    for (int i = N_BASE_PREDS; ok && i < c->n_preds; i++) ok = !c->pred[i].label && c->pred[i].rule != PRED_THR_GATE;
    if (!ok) snprintf(why, cap, "its lists of fields and predictors are not the ones ahascope writes");
    return !ok;
}

int store_catalog_read(sqlite3 *db, const char *schema, StoreCatalog *c, char *why, size_t cap) {
    memset(c, 0, sizeof *c);
    int rc = read_rows(db, schema, "SELECT name, kind FROM \"%w\".fields ORDER BY ord", c, why, cap, field_row);
    if (rc == SQLITE_OK)
        rc = read_rows(db, schema, "SELECT name, field, rule, role = 'label' FROM \"%w\".predictors ORDER BY ord", c, why,
                       cap, pred_row);
    return rc == SQLITE_OK ? base_leads(c, why, cap) : rc;
}

/* One field's row and, unless derived, its column; inside the caller's
 * transaction. */
static int add_field(sqlite3 *db, const StoreCatField *f, int ord, int column) {
    char *sql = sqlite3_mprintf("%s%s%sINSERT INTO fields(ord, name, kind) VALUES(%d, '%s', '%s');",
                                column ? "ALTER TABLE decision_bits ADD COLUMN " : "", column ? f->name : "",
                                column ? " INTEGER;\n" : "", ord, f->name, KIND_WORDS[f->kind]);
    int rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    return rc;
}

static int add_pred(sqlite3 *db, const StoreCatPred *p, int ord) {
    char *sql = sqlite3_mprintf("INSERT INTO predictors(ord, name, field, rule, role) VALUES(%d, '%s', '%s', '%s', '%s');",
                                ord, p->name, p->field, RULE_WORDS[p->rule], p->label ? "label" : "scored");
    int rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    return rc;
}

int store_catalog_rows(sqlite3 *db, const StoreCatalog *c) {
    int rc = SQLITE_OK;
    for (int i = 0; rc == SQLITE_OK && i < c->n_fields; i++) rc = add_field(db, &c->field[i], i, 0);
    for (int i = 0; rc == SQLITE_OK && i < c->n_preds; i++) rc = add_pred(db, &c->pred[i], i);
    return rc;
}

int store_catalog_extend(sqlite3 *db, StoreCatalog *file, const StoreCatalog *own, int *changed) {
    int rc = SQLITE_OK;
    *changed = 0;
    for (int i = 0; rc == SQLITE_OK && i < own->n_fields; i++) {
        if (find_field(file, own->field[i].name) >= 0 || file->n_fields >= STORE_CAT_MAX) continue;
        rc = add_field(db, &own->field[i], file->n_fields, own->field[i].kind != STORE_FIELD_DERIVED);
        file->field[file->n_fields++] = own->field[i], *changed = 1;
    }
    for (int i = 0; rc == SQLITE_OK && i < own->n_preds; i++) {
        if (find_pred(file, own->pred[i].name) >= 0 || file->n_preds >= STORE_CAT_MAX) continue;
        rc = add_pred(db, &own->pred[i], file->n_preds);
        file->pred[file->n_preds++] = own->pred[i], *changed = 1;
    }
    return rc;
}

int store_catalog_columns(const StoreCatalog *c, sqlite3_str *out) {
    for (int i = N_BASE_FIELDS; i < c->n_fields; i++)
        if (c->field[i].kind != STORE_FIELD_DERIVED)
            sqlite3_str_appendf(out, "ALTER TABLE decision_bits ADD COLUMN %s INTEGER;\n", c->field[i].name);
    return sqlite3_str_errcode(out);
}

int store_catalog_has_field(const StoreCatalog *c, const char *name) { return find_field(c, name) >= 0; }
