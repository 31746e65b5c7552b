/* export.c — one run out of the database as JSON or CSV.
 *
 * JSON is {"run": {...}, "tokens": [...], "decisions": [...]}, the three
 * tables' rows as objects. It is streamed row by row (each row built with
 * cJSON) so a long run of a big model does not need its whole tree in
 * memory. CSV is one row per decision joined with its token's columns: the
 * long format pandas and R read directly. Both are valid UTF-8: a piece
 * that is not (a byte-fallback token) is written with U+FFFD, and in JSON
 * also as "piece_hex", its raw bytes (engine/textout.h).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/textout.h"
#include "store/internal.h"
#include "store/print.h"

static int print_object(cJSON *o, FILE *out) {
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!s) return -1;
    textout_json_write(out, s);
    free(s);
    return 0;
}

/* Rows of a query as a JSON array, one object per line. */
static int stream_array(Store *s, const char *sql, int64_t run_id, FILE *out, Err *e) {
    sqlite3_stmt *st;
    if (store_prepare(s, sql, &st, e)) return -1;
    sqlite3_bind_int64(st, 1, run_id);
    fputc('[', out);
    int rc, n = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        fputs(n++ ? ",\n" : "\n", out);
        if (print_object(print_json_row(st), out)) { rc = SQLITE_NOMEM; break; }
    }
    fputs(n ? "\n]" : "]", out);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return store_sql_err(s->db, s->path, "cannot export", e);
    return 0;
}

static int export_json(Store *s, int64_t run_id, FILE *out, Err *e) {
    sqlite3_stmt *st;
    if (store_prepare(s, "SELECT run_id, parent_run_id,"
                         " ahascope_status(status, writer_host, writer_pid, writer_start) AS status,"
                         " created_at, finished_at, ahascope_version, model, model_sha256, arch, dim, hidden_dim,"
                         " n_layers, n_heads, n_kv_heads, vocab_size, seq_len, tokenizer, tokenizer_sha256, policy,"
                         " window, sinks, tau, theta, p, profile, routers, routers_sha256, static_heads, prompt,"
                         " steps, temperature, topp, seed, origin, n_tokens, theta_logit FROM runs WHERE run_id=?1",
                      &st, e))
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    int rc = sqlite3_step(st);
    cJSON *run = rc == SQLITE_ROW ? print_json_row(st) : NULL;
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE) return err_set(e, "%s: no run %lld", s->path, (long long)run_id);
    if (rc != SQLITE_ROW) return store_sql_err(s->db, s->path, "cannot export", e);
    fputs("{\"run\": ", out);
    if (print_object(run, out)) return err_set(e, "out of memory");
    fputs(",\n\"tokens\": ", out);
    if (stream_array(s, "SELECT pos, token_id, piece, is_prompt, logprob, entropy, step_us, n_far, kv_read FROM tokens"
                        " WHERE run_id=?1 ORDER BY pos", run_id, out, e))
        return -1;
    fputs(",\n\"decisions\": ", out);
    if (stream_array(s, s->version >= 4 ? "SELECT pos, layer, head" STORE_HEAD_COLUMNS " FROM "
                                          STORE_SQL_RUN_DECISIONS("1") " ORDER BY pos, layer, head"
                                        : "SELECT pos, layer, head" STORE_HEAD_COLUMNS " FROM decisions WHERE run_id=?1"
                                          " ORDER BY pos, layer, head", run_id, out, e))
        return -1;
    fputs("}\n", out);
    return 0;
}

static int export_csv(Store *s, int64_t run_id, StoreFormat fmt, FILE *out, Err *e) {
    sqlite3_stmt *st;
    /* version 4: the run's keys, each row finding its token (never the reverse: the view has no index) */
    static const char bits[] =
        "SELECT t.run_id, t.pos, t.token_id, t.piece, t.is_prompt, t.logprob, t.entropy, t.step_us,"
        " t.n_far, t.kv_read, d.layer, d.head" STORE_HEAD_COLUMNS " FROM " STORE_SQL_RUN_DECISIONS("1") " d"
        " CROSS JOIN tokens t ON t.run_id = d.run_id AND t.pos = d.pos ORDER BY d.pos, d.layer, d.head";
    static const char rows[] =
        "SELECT t.run_id, t.pos, t.token_id, t.piece, t.is_prompt, t.logprob, t.entropy, t.step_us,"
        " t.n_far, t.kv_read, d.layer, d.head" STORE_HEAD_COLUMNS " FROM tokens t"
        " JOIN decisions d USING(run_id, pos) WHERE t.run_id=?1 ORDER BY t.pos, d.layer, d.head";
    if (store_prepare(s, s->version >= 4 ? bits : rows, &st, e)) return -1;
    sqlite3_bind_int64(st, 1, run_id);
    int rc = print_result(st, fmt, out);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return store_sql_err(s->db, s->path, "cannot export", e);
    return 0;
}

int store_export(Store *s, int64_t run_id, StoreFormat fmt, FILE *out, Err *e) {
    StoreRunInfo r; /* a run that does not exist, or whose shape is impossible, is refused before any output */
    if (store_run_info(s, run_id, &r, e)) return -1;
    store_run_info_free(&r);
    if (fmt == STORE_FMT_JSON) return export_json(s, run_id, out, e);
    if (fmt == STORE_FMT_CSV || fmt == STORE_FMT_CSV_TERM) return export_csv(s, run_id, fmt, out, e);
    return err_set(e, "choose --json or --csv");
}
