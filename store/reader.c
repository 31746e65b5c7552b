/* reader.c — a run's row and steps read back as traces; the ids of the runs a file holds.
 *
 * A recorded run read back: its settings and its steps, as the
 * same StepTrace the engine produced (NULL back to NAN / -1); and the ids
 * of the runs a file (or one evaluation) holds. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model.h"
#include "store/internal.h"


/* An INTEGER column as an int; a value that does not fit reads -1, which
 * every shape check refuses, instead of its low 32 bits. */
static int col_int(sqlite3_stmt *st, int i) {
    sqlite3_int64 v = sqlite3_column_int64(st, i);
    return v >= -1000000000 && v <= 1000000000 ? (int)v : -1;
}


static const char SELECT_RUN[] =
    "SELECT parent_run_id, status, created_at, ahascope_version, model, model_sha256, arch, dim, hidden_dim,"
    " n_layers, n_heads, n_kv_heads, vocab_size, seq_len, tokenizer, tokenizer_sha256, policy, window, sinks,"
    " tau, theta, p, profile, routers, routers_sha256, static_heads, prompt, steps, temperature, topp, seed,"
    " origin, n_tokens, writer_host, writer_pid, writer_start, theta_logit, ablate FROM runs WHERE run_id=?1";

/* 'running' is what the row says; whether it is still true depends on the
 * writer process, which only a reader on the same host can check. */
static void effective_status(sqlite3_stmt *st, StoreRunInfo *r) {
    if (strcmp(r->status, "running") != 0) return;
    char host[256], row_host[256];
    int64_t pid, start;
    store_writer_self(host, sizeof host, &pid, &start);
    store_col_text(st, 33, row_host, sizeof row_host);
    if (strcmp(host, row_host) != 0) return;
    if (!store_writer_alive(sqlite3_column_int64(st, 34), sqlite3_column_int64(st, 35)))
        snprintf(r->status, sizeof r->status, "interrupted");
}

static void fill_run(sqlite3_stmt *st, StoreRunInfo *r) {
    r->parent_run_id = sqlite3_column_int64(st, 0);
    store_col_text(st, 1, r->status, sizeof r->status);
    store_col_text(st, 2, r->created_at, sizeof r->created_at);
    store_col_text(st, 3, r->version, sizeof r->version);
    store_col_text(st, 4, r->model, sizeof r->model);
    store_col_text(st, 5, r->model_sha256, sizeof r->model_sha256);
    store_col_text(st, 6, r->arch, sizeof r->arch);
    int *dims[] = {&r->dim, &r->hidden_dim, &r->n_layers, &r->n_heads, &r->n_kv_heads, &r->vocab_size, &r->seq_len};
    for (int i = 0; i < 7; i++) *dims[i] = col_int(st, 7 + i);
    store_col_text(st, 14, r->tokenizer, sizeof r->tokenizer);
    store_col_text(st, 15, r->tokenizer_sha256, sizeof r->tokenizer_sha256);
    store_col_text(st, 16, r->policy, sizeof r->policy);
    r->window = sqlite3_column_int(st, 17);
    r->sinks = sqlite3_column_int(st, 18);
    r->tau = store_col_REAL(st, 19, NAN);
    r->theta_logit = store_col_REAL(st, 36, NAN); /* NULL: no threshold recorded, as a NULL theta was */
    r->p = store_col_REAL(st, 21, NAN);
    r->profile = sqlite3_column_int(st, 22);
    store_col_text(st, 23, r->routers, sizeof r->routers);
    store_col_text(st, 24, r->routers_sha256, sizeof r->routers_sha256);
    store_col_text(st, 25, r->static_heads, sizeof r->static_heads);
    const unsigned char *prompt = sqlite3_column_text(st, 26);
    r->prompt = strdup(prompt ? (const char *)prompt : "");
    r->steps = sqlite3_column_int(st, 27);
    r->temperature = store_col_REAL(st, 28, NAN);
    r->topp = store_col_REAL(st, 29, NAN);
    const unsigned char *seed = sqlite3_column_text(st, 30);
    r->seed = seed ? strtoull((const char *)seed, NULL, 10) : 0;
    store_col_text(st, 31, r->origin, sizeof r->origin);
    r->n_tokens = col_int(st, 32);
    store_col_text(st, 37, r->ablate, sizeof r->ablate);
    effective_status(st, r);
}

/* Each shape field of a run within the engine's own limits (engine/model.h;
 * 0 is a field not recorded), checked before anything is sized from them. */
static int check_limits(const Store *s, const StoreRunInfo *r, Err *e) {
    const struct { const char *name; long v, lo, hi; } f[] = {
        {"n_layers", r->n_layers, 1, MODEL_MAX_LAYERS},
        {"n_heads", r->n_heads, 1, MODEL_MAX_DIM / 2}, /* heads of at least two dims fill at most the width */
        {"n_kv_heads", r->n_kv_heads, 0, r->n_heads},  {"dim", r->dim, 0, MODEL_MAX_DIM},
        {"hidden_dim", r->hidden_dim, 0, 4L * MODEL_MAX_DIM}, {"vocab_size", r->vocab_size, 0, MODEL_MAX_VOCAB},
        {"seq_len", r->seq_len, 0, MODEL_MAX_SEQ},     {"n_tokens", r->n_tokens, 0, MODEL_MAX_SEQ},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].v < f[i].lo || f[i].v > f[i].hi)
            return err_set(e, "%s: run %lld: %s = %ld is impossible (%ld to %ld)", s->path, (long long)r->run_id,
                           f[i].name, f[i].v, f[i].lo, f[i].hi);
    if ((long)r->n_layers * r->n_heads > STORE_MAX_CELLS)
        return err_set(e, "%s: run %lld: %d layers x %d heads is absurdly large (max %d cells)", s->path,
                       (long long)r->run_id, r->n_layers, r->n_heads, STORE_MAX_CELLS);
    if (r->n_kv_heads > 0 && r->n_heads % r->n_kv_heads)
        return err_set(e, "%s: run %lld: n_kv_heads %d does not divide n_heads %d", s->path, (long long)r->run_id,
                       r->n_kv_heads, r->n_heads);
    return 0;
}

/* The claimed shape against the rows: the run's first recorded position
 * must hold every cell of the layers x heads grid and no other (the key
 * is unique, so count and ranges settle it). A run with no steps yet has
 * only the limits above to go by. */
static int check_rows(Store *s, const StoreRunInfo *r, Err *e) {
    sqlite3_stmt *st;
    /* version 4: the run's first key names its first position, whose keys are one range */
    static const char bits[] =
        "SELECT COUNT(*), MIN(" STORE_SQL_LAYER("b.k") "), MAX(" STORE_SQL_LAYER("b.k") "), MIN(" STORE_SQL_HEAD("b.k")
        "), MAX(" STORE_SQL_HEAD("b.k") ") FROM decision_bits b, (SELECT MIN(k) >> 28 AS p FROM decision_bits b WHERE "
        STORE_SQL_IN_RUN("1") ") f WHERE b.k BETWEEN f.p << 28 AND ((f.p + 1) << 28) - 1";
    static const char rows[] = "SELECT COUNT(*), MIN(layer), MAX(layer), MIN(head), MAX(head) FROM decisions"
                               " WHERE run_id=?1 AND pos=(SELECT MIN(pos) FROM decisions WHERE run_id=?1)";
    if (store_prepare(s, s->version >= 4 ? bits : rows, &st, e)) return -1;
    sqlite3_bind_int64(st, 1, r->run_id);
    int rc = sqlite3_step(st);
    sqlite3_int64 v[5] = {0};
    for (int i = 0; rc == SQLITE_ROW && i < 5; i++) v[i] = sqlite3_column_int64(st, i);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) return store_sql_err(s->db, s->path, "cannot read the run", e);
    if (v[0] == 0 || (v[0] == (sqlite3_int64)r->n_layers * r->n_heads && v[1] == 0 && v[2] == r->n_layers - 1 &&
                      v[3] == 0 && v[4] == r->n_heads - 1))
        return 0;
    return err_set(e, "%s: run %lld claims %d layers x %d heads, but its first step holds %lld cells (layers "
                      "%lld..%lld, heads %lld..%lld)", s->path, (long long)r->run_id, r->n_layers, r->n_heads,
                   (long long)v[0], (long long)v[1], (long long)v[2], (long long)v[3], (long long)v[4]);
}

/* The run's layer windows (run_layers; a layer without a row, as every
 * layer of a run recorded before version 7, is global: 0) into win[cap]. */
static int read_layers(Store *s, int64_t run_id, int32_t *win, int cap, Err *e) {
    sqlite3_stmt *st;
    memset(win, 0, (size_t)cap * sizeof *win);
    if (store_prepare(s, "SELECT layer, window FROM run_layers WHERE run_id=?1 AND kind='local'", &st, e)) return -1;
    sqlite3_bind_int64(st, 1, run_id);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int l = sqlite3_column_int(st, 0);
        sqlite3_int64 w = sqlite3_column_int64(st, 1);
        if (l >= 0 && l < cap && w > 0 && w <= MODEL_MAX_SEQ) win[l] = (int32_t)w; /* bounded: a file may lie */
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : store_sql_err(s->db, s->path, "cannot read the run's layers", e);
}

/* The writer's cap on run ids, applied when reading: a version-4 file keys
 * its rows by run id (internal.h's store_k), and a larger one is no run
 * ahascope wrote (a file edited or replayed from elsewhere). */
static int check_run_id(const Store *s, int64_t run_id, Err *e) {
    if (s->version < 4 || (run_id >= 1 && run_id <= STORE_MAX_RUNS)) return 0;
    return err_set(e, "%s: run %lld is past the %d runs a database keys: not a run ahascope wrote", s->path,
                   (long long)run_id, STORE_MAX_RUNS);
}

int store_run_info(Store *s, int64_t run_id, StoreRunInfo *info, Err *e) {
    memset(info, 0, sizeof *info);
    if (check_run_id(s, run_id, e)) return -1;
    sqlite3_stmt *st;
    if (store_prepare(s, SELECT_RUN, &st, e)) return -1;
    sqlite3_bind_int64(st, 1, run_id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        info->run_id = run_id;
        fill_run(st, info);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE) return err_set(e, "%s: no run %lld", s->path, (long long)run_id);
    if (rc != SQLITE_ROW) return store_sql_err(s->db, s->path, "cannot read the run", e);
    if (!info->prompt) return err_set(e, "%s: out of memory", s->path);
    if (check_limits(s, info, e) || check_rows(s, info, e)) return store_run_info_free(info), -1;
    if (read_layers(s, run_id, info->layer_window, MODEL_MAX_LAYERS, e)) return store_run_info_free(info), -1;
    if (store_read_spans(s->db, run_id, info->n_layers, info->n_heads, &info->head_span) != SQLITE_OK) {
        store_sql_err(s->db, s->path, "cannot read the run's head windows", e);
        return store_run_info_free(info), -1;
    }
    return 0;
}

void store_run_info_free(StoreRunInfo *info) {
    free(info->prompt), free(info->head_span);
    info->prompt = NULL, info->head_span = NULL;
}

/* Prepare sql, whose ?1 ?2 ?3 are a run and the positions [pos0, pos0+n)
 * of one chunk of steps, and bind them. */
static int prepare_steps(Store *s, const char *sql, int64_t run_id, int pos0, int n, sqlite3_stmt **st, Err *e) {
    if (store_prepare(s, sql, st, e)) return -1;
    sqlite3_bind_int64(*st, 1, run_id);
    sqlite3_bind_int(*st, 2, pos0);
    sqlite3_bind_int(*st, 3, pos0 + n);
    return 0;
}

static int read_tokens(Store *s, int64_t run_id, int pos0, int n, StepTrace **tr, Err *e) {
    sqlite3_stmt *st;
    if (prepare_steps(s, "SELECT pos, token_id, piece, is_prompt, logprob, entropy, step_us, n_far, kv_read FROM tokens"
                         " WHERE run_id=?1 AND pos>=?2 AND pos<?3 ORDER BY pos", run_id, pos0, n, &st, e))
        return -1;
    int found = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int pos = sqlite3_column_int(st, 0);
        if (pos != pos0 + found) break; /* a gap ends the contiguous run of steps */
        StepTrace *t = tr[found++];
        trace_clear(t);
        t->pos = pos;
        t->token = sqlite3_column_int(st, 1);
        store_col_text(st, 2, t->piece, sizeof t->piece);
        t->is_prompt = sqlite3_column_int(st, 3);
        t->logprob = (float)store_col_REAL(st, 4, NAN);
        t->entropy = (float)store_col_REAL(st, 5, NAN);
        t->step_us = store_col_REAL(st, 6, NAN);
        t->n_far = (int)store_col_INTEGER(st, 7, -1);
        t->kv_read[0] = (int32_t)store_col_INTEGER(st, 8, -1); /* the database keeps the step's total only */
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return store_sql_err(s->db, s->path, "cannot read tokens", e);
    return found;
}

/* Version 4: a chunk of steps is one range of keys; each row decoded in C
 * (bits to floats, keys_read by its rule, the top-k words). */
static int read_bits(Store *s, int64_t run_id, int pos0, int n, StepTrace **tr, Err *e) {
    sqlite3_stmt *st;
    int window = 0, sinks = 0;
    if (store_prepare(s, "SELECT window, sinks FROM runs WHERE run_id=?1", &st, e)) return -1;
    sqlite3_bind_int64(st, 1, run_id);
    if (sqlite3_step(st) == SQLITE_ROW) window = sqlite3_column_int(st, 0), sinks = sqlite3_column_int(st, 1);
    sqlite3_finalize(st);
    float *span = NULL; /* the heads' own windows, when the run had them */
    if (store_read_spans(s->db, run_id, tr[0]->n_layers, tr[0]->n_heads, &span) != SQLITE_OK)
        return store_sql_err(s->db, s->path, "cannot read the run's head windows", e);
    if (store_prepare(s, "SELECT " STORE_BITS_COLUMNS " FROM decision_bits WHERE k BETWEEN ?1 AND ?2", &st, e))
        return free(span), -1;
    sqlite3_bind_int64(st, 1, store_k(run_id, pos0, 0, 0));
    sqlite3_bind_int64(st, 2, store_k(run_id, pos0 + n, 0, 0) - 1);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t k = sqlite3_column_int64(st, 0);
        int pos = (int)(k >> STORE_K_POS & 0xFFFFF), l = (int)(k >> STORE_K_LAYER & 0x3FF), h = (int)(k & 0x3FFFF);
        StepTrace *t = tr[pos - pos0];
        if (l >= t->n_layers || h >= t->n_heads) continue; /* not this run's shape */
        int i = l * t->n_heads + h, b = 1;
#define READER_BITS(name, type, missing) t->name[i] = store_col_bits(st, b++);
#define READER_KEPT(name, type, missing) t->name[i] = (type)store_col_INTEGER(st, b++, missing);
#define READER_DERIVED(name, type, missing)
#define READER_FIELD(name, type, missing, sql, show, title, short_name, doc) \
    STORE_BY_KIND(READER_, name, type, missing, sql, show)
        TRACE_HEAD_FIELDS(READER_FIELD)
        t->keys_read[i] = store_keys_read(pos, t->gate[i], store_decision_window(t, span, i, window), sinks,
                                          t->layer_window[l]);
        for (int r = 0; r < STORE_ATTN_TOP_MAX && r < t->top_k; r++, b++) {
            if (sqlite3_column_type(st, b) == SQLITE_NULL) continue;
            int64_t w = sqlite3_column_int64(st, b);
            uint32_t u = (uint32_t)w;
            int key = (int)(w >> 32);
            if (key < 0 || key >= pos) continue; /* not a far position of pos */
            t->top_pos[(size_t)i * t->top_k + r] = key;
            memcpy(&t->top_w[(size_t)i * t->top_k + r], &u, sizeof u);
        }
    }
    sqlite3_finalize(st);
    free(span);
    if (rc != SQLITE_DONE) return store_sql_err(s->db, s->path, "cannot read decisions", e);
    return 0;
}

static int read_decisions(Store *s, int64_t run_id, int pos0, int n, StepTrace **tr, Err *e) {
    sqlite3_stmt *st;
    if (prepare_steps(s, "SELECT pos, layer, head" STORE_HEAD_COLUMNS " FROM decisions WHERE run_id=?1 AND pos>=?2"
                         " AND pos<?3", run_id, pos0, n, &st, e))
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int pos = sqlite3_column_int(st, 0), l = sqlite3_column_int(st, 1), h = sqlite3_column_int(st, 2);
        StepTrace *t = tr[pos - pos0];
        if (l < 0 || h < 0 || l >= t->n_layers || h >= t->n_heads) continue; /* not this run's shape */
        int i = l * t->n_heads + h, k = 3;
#define READER_COLUMN(name, type, missing, sql, show, title, short_name, doc) t->name[i] = (type)store_col_##sql(st, k++, missing);
        TRACE_HEAD_FIELDS(READER_COLUMN)
#undef READER_COLUMN
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return store_sql_err(s->db, s->path, "cannot read decisions", e);
    return 0;
}

/* The recorded far positions of each head, into traces with room for them
 * (ranks past a trace's top_k are left out). */
static int read_attn_top(Store *s, int64_t run_id, int pos0, int n, StepTrace **tr, Err *e) {
    sqlite3_stmt *st;
    if (tr[0]->top_k <= 0) return 0;
    if (prepare_steps(s, "SELECT pos, layer, head, rank, key_pos, weight FROM attn_top WHERE run_id=?1 AND pos>=?2"
                         " AND pos<?3", run_id, pos0, n, &st, e))
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int pos = sqlite3_column_int(st, 0), l = sqlite3_column_int(st, 1), h = sqlite3_column_int(st, 2);
        int r = sqlite3_column_int(st, 3), key = sqlite3_column_int(st, 4);
        StepTrace *t = tr[pos - pos0];
        if (l < 0 || h < 0 || l >= t->n_layers || h >= t->n_heads || r < 0 || r >= t->top_k || key < 0 || key >= pos)
            continue; /* not this run's shape, or not a far position of pos */
        size_t i = ((size_t)l * t->n_heads + h) * t->top_k + r;
        t->top_pos[i] = key;
        t->top_w[i] = (float)store_col_REAL(st, 5, NAN);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return store_sql_err(s->db, s->path, "cannot read attn_top", e);
    return 0;
}

int store_run_attn_top(Store *s, int64_t run_id, Err *e) {
    sqlite3_stmt *st;
    /* version 4 keeps K in the runs row; an older file is scanned */
    if (store_prepare(s, s->version >= 4 ? "SELECT top_k - 1 FROM runs WHERE run_id=?1"
                                         : "SELECT MAX(rank) FROM attn_top WHERE run_id=?1", &st, e))
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    int rc = sqlite3_step(st);
    long k = rc == SQLITE_ROW ? (long)store_col_INTEGER(st, 0, -1) + 1 : -1;
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) return store_sql_err(s->db, s->path, "cannot read attn_top", e);
    return k < 0 ? 0 : k > TRACE_TOP_MAX ? TRACE_TOP_MAX : (int)k;
}

/* KV heads of a run (n_heads where it was not recorded: no GQA). */
static int run_kv_heads(Store *s, int64_t run_id, Err *e) {
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT COALESCE(n_kv_heads, n_heads) FROM runs WHERE run_id=?1", &st, e)) return -1;
    sqlite3_bind_int64(st, 1, run_id);
    int kv = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    sqlite3_finalize(st);
    return kv;
}

int store_read_steps(Store *s, int64_t run_id, int pos0, int n, StepTrace **traces, Err *e) {
    if (check_run_id(s, run_id, e)) return -1;
    if (n <= 0) return 0;
    int found = read_tokens(s, run_id, pos0, n, traces, e);
    if (found <= 0) return found;
    int32_t win[MODEL_MAX_LAYERS];
    if (read_layers(s, run_id, win, MODEL_MAX_LAYERS, e)) return -1;
    for (int i = 0; i < found; i++)
        for (int l = 0; l < traces[i]->n_layers && l < MODEL_MAX_LAYERS; l++) traces[i]->layer_window[l] = win[l];
    if (s->version >= 4 ? read_bits(s, run_id, pos0, found, traces, e)
                        : read_decisions(s, run_id, pos0, found, traces, e) ||
                              read_attn_top(s, run_id, pos0, found, traces, e))
        return -1;
    int kv = run_kv_heads(s, run_id, e);
    for (int i = 0; i < found; i++) traces[i]->n_kv_heads = kv > 0 && kv <= traces[i]->n_heads ? kv : -1;
    return found;
}

/* The ids sql selects (its ?1 bound to arg when arg > 0), in its order. */
static int ids_of(Store *s, const char *sql, int64_t arg, int64_t **ids, Err *e) {
    sqlite3_stmt *st;
    *ids = NULL;
    if (store_prepare(s, sql, &st, e)) return -1;
    if (arg > 0) sqlite3_bind_int64(st, 1, arg);
    int n = 0, cap = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            int64_t *grown = cap < (1 << 26) ? realloc(*ids, cap * sizeof **ids) : NULL;
            if (!grown) { rc = SQLITE_NOMEM; break; }
            *ids = grown;
        }
        (*ids)[n++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(*ids);
        *ids = NULL;
        return store_sql_err(s->db, s->path, "cannot list runs", e);
    }
    return n;
}

int store_run_ids(Store *s, int64_t **ids, Err *e) {
    return ids_of(s, "SELECT run_id FROM runs ORDER BY run_id", 0, ids, e);
}

int store_eval_run_ids(Store *s, int64_t eval_id, int64_t **ids, Err *e) {
    return ids_of(s, "SELECT run_id FROM runs WHERE eval_id=?1 ORDER BY run_id", eval_id, ids, e);
}
