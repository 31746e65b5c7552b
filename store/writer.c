/* writer.c — recording: the runs row, one transaction per step (or per N), the totals and the commit.
 *
 * Recording runs: one runs row, then one transaction per step
 * (or per commit_every steps) holding its token row and every head's row.
 * Steps committed N at a time wait in TEMP tables of the writer's own
 * connection, so the file's write lock is held only while they are copied
 * in: a writer that kept its transaction open across N profiled steps
 * starved every other writer of the file past its lock wait. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"

#define PENDING_BITS "ahascope_pending_bits"
#define PENDING_TOKENS "ahascope_pending_tokens"
#define TOKEN_COLUMNS                                                                                            \
    "run_id, pos, token_id, piece, is_prompt, logprob, entropy, step_us, n_far, kv_read, n_gate, n_global,"       \
    " n_oracle, n_oracle_global, keys_read_sum, gates"

static const char INSERT_RUN[] =
    "INSERT INTO runs(parent_run_id, status, created_at, ahascope_version, writer_host, writer_pid, writer_start,"
    " model, model_sha256, arch, dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len,"
    " tokenizer, tokenizer_sha256, policy, window, sinks, tau, theta, p, profile, routers, routers_sha256,"
    " static_heads, prompt, steps, temperature, topp, seed, origin, eval_id, theta_logit, ablate)"
    " VALUES(?1,'running',?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23,?24,?25,"
    "?26,?27,?28,?29,?30,?31,?32,?33,?34,?35,?36,?37)";

static void bind_run(sqlite3_stmt *st, const StoreRunInfo *r) {
    char host[256], seed[24];
    int64_t pid, start;
    store_writer_self(host, sizeof host, &pid, &start);
    if (r->parent_run_id > 0) sqlite3_bind_int64(st, 1, r->parent_run_id);
    sqlite3_bind_text(st, 2, r->created_at, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, r->program_version, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, host, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 5, pid);
    sqlite3_bind_int64(st, 6, start);
    sqlite3_bind_text(st, 7, r->model, -1, SQLITE_TRANSIENT);
    store_bind_TEXT(st, 8, r->model_sha256);
    store_bind_TEXT(st, 9, r->arch);
    const int dims[] = {r->dim, r->hidden_dim, r->n_layers, r->n_heads, r->n_kv_heads, r->vocab_size, r->seq_len};
    for (int i = 0; i < 7; i++) sqlite3_bind_int(st, 10 + i, dims[i]);
    store_bind_TEXT(st, 17, r->tokenizer);
    store_bind_TEXT(st, 18, r->tokenizer_sha256);
    sqlite3_bind_text(st, 19, r->policy, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 20, r->window);
    sqlite3_bind_int(st, 21, r->sinks);
    store_bind_REAL(st, 22, r->tau);
    store_bind_REAL(st, 23, decide_prob(r->theta_logit)); /* θ for people; the decisions use theta_logit */
    store_bind_REAL(st, 24, r->p);
    sqlite3_bind_int(st, 25, r->profile);
    store_bind_TEXT(st, 26, r->routers);
    store_bind_TEXT(st, 27, r->routers_sha256);
    store_bind_TEXT(st, 28, r->static_heads);
    sqlite3_bind_text(st, 29, r->prompt ? r->prompt : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 30, r->steps);
    store_bind_REAL(st, 31, r->temperature);
    store_bind_REAL(st, 32, r->topp);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)r->seed);
    sqlite3_bind_text(st, 33, seed, -1, SQLITE_TRANSIENT);
    store_bind_TEXT(st, 34, r->origin);
    if (r->eval_id > 0) sqlite3_bind_int64(st, 35, r->eval_id);
    store_bind_LOGIT(st, 36, r->theta_logit);
    store_bind_TEXT(st, 37, r->ablate);
}

/* The run's run_layers rows, one a layer, inside the caller's transaction. */
static int insert_layers(Store *s, const StoreRunInfo *info) {
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(s->db, "INSERT INTO run_layers(run_id, layer, kind, window) VALUES(?1, ?2, ?3, ?4)", -1,
                                &st, NULL);
    for (int l = 0; rc == SQLITE_OK && l < info->n_layers; l++) {
        int w = info->layer_window[l] > 0 ? info->layer_window[l] : 0;
        sqlite3_bind_int64(st, 1, info->run_id);
        sqlite3_bind_int(st, 2, l);
        sqlite3_bind_text(st, 3, trace_layer_kind(w), -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 4, w);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(s->db);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}

/* The run's run_heads rows, one a query head, when it had per-head
 * windows; inside the caller's transaction. */
static int insert_heads(Store *s, const StoreRunInfo *info) {
    if (!info->head_span) return SQLITE_OK;
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(s->db, "INSERT INTO run_heads(run_id, layer, head, alpha, beta) VALUES(?1, ?2, ?3, ?4, ?5)",
                                -1, &st, NULL);
    for (int c = 0; rc == SQLITE_OK && c < info->n_layers * info->n_heads; c++) {
        sqlite3_bind_int64(st, 1, info->run_id);
        sqlite3_bind_int(st, 2, c / info->n_heads);
        sqlite3_bind_int(st, 3, c % info->n_heads);
        sqlite3_bind_double(st, 4, info->head_span[2 * c]);
        sqlite3_bind_double(st, 5, info->head_span[2 * c + 1]);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(s->db);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}

/* Whether every value of a run's per-head windows is finite (a NAN would
 * be stored as NULL and refused by the table, an infinity read as no span). */
static int spans_finite(const StoreRunInfo *info) {
    for (long i = 0; info->head_span && i < 2L * info->n_layers * info->n_heads; i++)
        if (!isfinite(info->head_span[i])) return 0;
    return 1;
}

int store_run_begin(Store *s, StoreRunInfo *info, Err *e) {
    if (s->mode != STORE_WRITE) return err_set(e, "%s: opened read-only", s->path);
    if (!info->program_version || !*info->program_version)
        return err_set(e, "%s: cannot start a run: no program version given", s->path);
    if (store_flush(s, e)) return -1;
    if (!info->created_at[0]) store_now(info->created_at);
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT COALESCE(MAX(run_id), 0) FROM runs", &st, e)) return -1;
    int64_t last = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    if (last >= STORE_MAX_RUNS)
        return err_set(e, "%s: holds run %lld, and a database keeps at most %d runs: record into another file", s->path,
                       (long long)last, STORE_MAX_RUNS);
    if (info->n_layers < 1 || info->n_layers > MODEL_MAX_LAYERS)
        return err_set(e, "%s: cannot start a run of %d layers", s->path, info->n_layers);
    if (!spans_finite(info)) return err_set(e, "%s: cannot start a run whose per-head windows are not finite", s->path);
    if (store_prepare(s, INSERT_RUN, &st, e)) return -1;
    bind_run(st, info);
    int rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL); /* the row and its layers, or neither */
    if (rc == SQLITE_OK) rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(s->db);
    sqlite3_finalize(st);
    if (rc == SQLITE_OK) info->run_id = sqlite3_last_insert_rowid(s->db), rc = insert_layers(s, info);
    if (rc == SQLITE_OK) rc = insert_heads(s, info);
    if (rc == SQLITE_OK) rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        int err = store_sql_err(s->db, s->path, "cannot start a run", e);
        if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return err;
    }
    snprintf(info->status, sizeof info->status, "running");
    return 0;
}

/* One statement inserts a whole layer's heads: the per-statement work of
 * SQLite is paid once per layer instead of once per head, which is most of
 * what stands between the writer and 500k rows/s. */
static int prepare_decisions(Store *s, int n_heads, Err *e) {
    static const char head[] = "INSERT INTO %s(" STORE_BITS_COLUMNS ") VALUES";
    const char *table = s->buffered ? "temp." PENDING_BITS : "main.decision_bits";
    int values = store_bits_row_values();
    /* the column list grows with every field a build knows: it is counted, not guessed */
    size_t cap = sizeof head + strlen(table) + (size_t)n_heads * (3 + 2 * (size_t)values) + 1;
    char *sql = malloc(cap);
    if (!sql) return err_set(e, "%s: out of memory", s->path);
    size_t o = (size_t)snprintf(sql, cap, head, table);
    for (int h = 0; h < n_heads; h++) {
        o += (size_t)snprintf(sql + o, cap - o, "%s(?", h ? "," : "");
        for (int v = 1; v < values; v++) o += (size_t)snprintf(sql + o, cap - o, ",?");
        o += (size_t)snprintf(sql + o, cap - o, ")");
    }
    int rc = store_prepare(s, sql, &s->ins_decision, e);
    free(sql);
    s->rows_per_insert = n_heads;
    return rc;
}

/* Where buffered steps wait: untyped columns, so each value reaches the
 * file's tables exactly as a direct INSERT would bind it. */
static int create_pending(Store *s, Err *e) {
    /* no journal: a failed step drops every pending one anyway */
    const char *sql = "PRAGMA temp.journal_mode=OFF; PRAGMA temp.cache_size=-65536;"
                      "CREATE TEMP TABLE IF NOT EXISTS " PENDING_BITS "(" STORE_BITS_COLUMNS ");"
                      "CREATE TEMP TABLE IF NOT EXISTS " PENDING_TOKENS "(" TOKEN_COLUMNS ");";
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return store_sql_err(s->db, s->path, "cannot prepare the writer", e);
    return 0;
}

static int prepare_writer(Store *s, int n_layers, int n_heads, Err *e) {
    size_t gates = store_gate_bytes(n_layers * n_heads);
    if (gates > s->gate_cap) { /* a step's gate bitmap, kept between steps */
        uint8_t *g = realloc(s->gate_buf, gates);
        if (!g) return err_set(e, "%s: out of memory", s->path);
        s->gate_buf = g, s->gate_cap = gates;
    }
    int buffered = s->commit_every > 1;
    if (s->ins_token && s->rows_per_insert == n_heads && s->buffered == buffered) return 0;
    if (s->ins_token) {
        sqlite3_finalize(s->ins_token), sqlite3_finalize(s->ins_decision), sqlite3_finalize(s->upd_tokens);
        s->ins_token = s->ins_decision = s->upd_tokens = NULL;
    }
    s->buffered = buffered;
    if (buffered && create_pending(s, e)) return -1;
    char ins[512];
    snprintf(ins, sizeof ins, "INSERT INTO %s(" TOKEN_COLUMNS ") VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,"
             "?14,?15,?16)", buffered ? "temp." PENDING_TOKENS : "main.tokens");
    if (store_prepare(s, ins, &s->ins_token, e) || prepare_decisions(s, n_heads, e) ||
        store_prepare(s, "UPDATE runs SET n_tokens=MAX(n_tokens,?2), top_k=MAX(COALESCE(top_k,0),?3) WHERE run_id=?1",
                      &s->upd_tokens, e))
        return -1;
    return 0;
}

static int insert_token(Store *s, int64_t run_id, const StepTrace *t, const StoreStepCounts *sc) {
    sqlite3_stmt *st = s->ins_token;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int(st, 2, t->pos);
    sqlite3_bind_int(st, 3, t->token);
    sqlite3_bind_text(st, 4, t->piece, (int)strnlen(t->piece, TRACE_PIECE_MAX), SQLITE_STATIC);
    sqlite3_bind_int(st, 5, t->is_prompt);
    store_bind_REAL(st, 6, t->logprob);
    store_bind_REAL(st, 7, t->entropy);
    store_bind_REAL(st, 8, t->step_us);
    store_bind_INTEGER(st, 9, t->n_far);
    store_bind_INTEGER(st, 10, trace_kv_read_total(t));
    const long v[] = {sc->n_gate, sc->n_global, sc->n_oracle, sc->n_oracle_global};
    for (int i = 0; i < 4; i++) sqlite3_bind_int64(st, 11 + i, v[i]);
    if (sc->keys_read > 0) sqlite3_bind_int64(st, 15, sc->keys_read); /* any head known to have read keys */
    else sqlite3_bind_null(st, 15);
    sqlite3_bind_blob(st, 16, s->gate_buf, (int)store_gate_bytes(trace_cells(t)), SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Whether a step fits the packed key (internal.h); -1 with e set if not. */
static int check_key(Store *s, int64_t run_id, const StepTrace *t, Err *e) {
    if (run_id >= 1 && run_id <= STORE_MAX_RUNS && t->pos >= 0 && t->pos < (1 << (STORE_K_RUN - STORE_K_POS)) &&
        t->n_layers >= 1 && t->n_layers <= (1 << (STORE_K_POS - STORE_K_LAYER)) && t->n_heads >= 1 &&
        t->n_heads <= (1 << STORE_K_LAYER))
        return 0;
    return err_set(e, "%s: cannot record run %lld position %d of %d layers x %d heads: beyond what a database keys",
                   s->path, (long long)run_id, t->pos, t->n_layers, t->n_heads);
}

/* Empty the TEMP tables of buffered steps (they are the writer's alone). */
static void drop_pending(Store *s) {
    if (s->buffered)
        sqlite3_exec(s->db, "DELETE FROM temp." PENDING_BITS "; DELETE FROM temp." PENDING_TOKENS, NULL, NULL, NULL);
}

static void rollback(Store *s) {
    if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    drop_pending(s);
    s->pending = 0;
    s->pending_n_tokens = 0;
    s->top_k = 0;
    s->totals.run_id = 0; /* what it held counted the lost steps: reload the committed totals */
}

int store_write_step(Store *s, int64_t run_id, const StepTrace *t, int *committed, Err *e) {
    if (committed) *committed = 0;
    if (s->mode != STORE_WRITE) return err_set(e, "%s: opened read-only", s->path);
    if (check_key(s, run_id, t, e)) return -1;
    /* pending steps of another run, or held the other way (commit_every changed), are committed first */
    if (s->pending && (s->pending_run != run_id || s->buffered != (s->commit_every > 1)) && store_flush(s, e))
        return -1;
    if (prepare_writer(s, t->n_layers, t->n_heads, e)) return -1;
    /* buffered: a deferred transaction writing TEMP only (one commit a step, not one a layer), no lock on the file */
    const char *begin = s->buffered ? "BEGIN" : s->pending == 0 ? "BEGIN IMMEDIATE" : NULL;
    if (begin && sqlite3_exec(s->db, begin, NULL, NULL, NULL) != SQLITE_OK)
        return store_sql_err(s->db, s->path, "cannot start a transaction", e);
    int rc = s->totals.run_id == run_id ? SQLITE_OK : store_totals_load(&s->totals, s->db, run_id);
    if (rc == SQLITE_OK && (s->totals.n_layers != t->n_layers || s->totals.n_heads != t->n_heads)) {
        rollback(s);
        return err_set(e, "%s: run %lld is %d x %d heads, not the step's %d x %d", s->path, (long long)run_id,
                       s->totals.n_layers, s->totals.n_heads, t->n_layers, t->n_heads);
    }
    StoreStepCounts sc; /* the hot loop of recording: the step's rows, totals, counts and gates in one pass */
    if (rc == SQLITE_OK) rc = store_step_rows(&s->totals, s->ins_decision, run_id, t, s->gate_buf, &sc);
    if (rc == SQLITE_OK) rc = insert_token(s, run_id, t, &sc);
    if (rc == SQLITE_OK && s->buffered) rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        char what[64];
        snprintf(what, sizeof what, "cannot record position %d", t->pos);
        store_sql_err(s->db, s->path, what, e);
        rollback(s);
        return -1;
    }
    s->pending++;
    s->pending_run = run_id;
    for (int c = 0, k = t->top_k < STORE_ATTN_TOP_MAX ? t->top_k : STORE_ATTN_TOP_MAX; c < trace_cells(t); c++)
        for (int r = s->top_k; r < k && t->top_pos[(size_t)c * t->top_k + r] >= 0; r++) s->top_k = r + 1;
    if (t->pos + 1 > s->pending_n_tokens) s->pending_n_tokens = t->pos + 1;
    if (s->pending < s->commit_every) return 0;
    int n = s->pending;
    if (store_flush(s, e)) return -1;
    if (committed) *committed = n;
    return 0;
}

/* The buffered steps into the file, in the order they were written,
 * inside the caller's transaction. */
static int copy_pending(Store *s) {
    static const char sql[] = "INSERT INTO main.decision_bits(" STORE_BITS_COLUMNS ") SELECT " STORE_BITS_COLUMNS
                              " FROM temp." PENDING_BITS " ORDER BY rowid; INSERT INTO main.tokens(" TOKEN_COLUMNS
                              ") SELECT " TOKEN_COLUMNS " FROM temp." PENDING_TOKENS " ORDER BY rowid";
    return sqlite3_exec(s->db, sql, NULL, NULL, NULL);
}

int store_flush(Store *s, Err *e) {
    if (s->pending == 0) return 0;
    int rc = s->buffered ? sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) : SQLITE_OK;
    if (rc == SQLITE_OK && s->buffered) rc = copy_pending(s);
    /* the totals and n_tokens in the transaction of the steps they count */
    if (rc == SQLITE_OK) rc = store_totals_write(&s->totals, s->db);
    sqlite3_bind_int64(s->upd_tokens, 1, s->pending_run);
    sqlite3_bind_int(s->upd_tokens, 2, s->pending_n_tokens);
    sqlite3_bind_int(s->upd_tokens, 3, s->top_k);
    if (rc == SQLITE_OK) rc = sqlite3_step(s->upd_tokens) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    sqlite3_reset(s->upd_tokens);
    if (rc == SQLITE_OK) rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        store_sql_err(s->db, s->path, "cannot commit", e);
        rollback(s);
        return -1;
    }
    drop_pending(s);
    s->pending = 0;
    s->pending_n_tokens = 0;
    s->top_k = 0;
    return 0;
}

void store_set_commit_every(Store *s, int n) { s->commit_every = n > 0 ? n : 1; }

int store_writer_release(Store *s, Err *e) {
    int rc = s->pending ? store_flush(s, e) : 0;
    sqlite3_finalize(s->ins_token);
    sqlite3_finalize(s->ins_decision);
    sqlite3_finalize(s->upd_tokens);
    s->ins_token = s->ins_decision = s->upd_tokens = NULL;
    free(s->gate_buf);
    s->gate_buf = NULL, s->gate_cap = 0;
    store_totals_free(&s->totals);
    return rc;
}

int store_run_end(Store *s, int64_t run_id, const char *status, Err *e) {
    /* Steps that could not be committed (disk full) are lost, but the run
     * row is still marked: left 'running', it would look like a live run. */
    int lost = store_flush(s, e);
    if (lost) status = "failed", e = NULL;
    char now[32];
    store_now(now);
    sqlite3_stmt *st;
    if (store_prepare(s, "UPDATE runs SET status=?2, finished_at=?3 WHERE run_id=?1", &st, e)) return -1;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, status, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, now, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return store_sql_err(s->db, s->path, "cannot finish the run", e);
    return lost ? -1 : 0;
}
