/* internal.h — what the store's files share and nobody else sees. */
#ifndef AHASCOPE_STORE_INTERNAL_H
#define AHASCOPE_STORE_INTERNAL_H

#include <sqlite3.h>

#include "store/store.h"

struct Store {
    sqlite3 *db;
    char path[1024];
    StoreMode mode;
    int commit_every;    /* steps per transaction */
    int pending;         /* steps written in the open transaction */
    int64_t pending_run; /* run those steps belong to */
    int pending_n_tokens; /* n_tokens to record at the next commit */
    sqlite3_stmt *ins_token, *ins_decision, *upd_tokens;
    sqlite3_stmt *ins_top; /* attn_top rows, prepared on the first step that has them */
    int rows_per_insert; /* heads per decisions INSERT (the shape it was prepared for) */
};

/* ", score, gate, …": the per-head columns of `decisions`, in order, from
 * engine/trace.h's field list. */
#define STORE_HEAD_NAME(name, type, missing, sql, show, title, short_name, doc) ", " #name
#define STORE_HEAD_COLUMNS TRACE_HEAD_FIELDS(STORE_HEAD_NAME)

/* Bind a value to a REAL or INTEGER column: NULL for "not computed" (NaN
 * or ±Inf reals, negative integers), so SQL aggregates skip it. */
void store_bind_REAL(sqlite3_stmt *st, int i, double v);
void store_bind_INTEGER(sqlite3_stmt *st, int i, long v);

/* Bind text, NULL for a missing or empty string. */
void store_bind_TEXT(sqlite3_stmt *st, int i, const char *v);

/* Bind a threshold held as log-odds: NULL for NaN, but ±Inf (θ = 0 or 1)
 * is a real threshold and is kept. */
void store_bind_LOGIT(sqlite3_stmt *st, int i, double v);

/* Read a REAL or INTEGER column; NULL gives missing. */
double store_col_REAL(sqlite3_stmt *st, int i, double missing);
long store_col_INTEGER(sqlite3_stmt *st, int i, long missing);

/* Check (and with create, make) the schema; -1 with e set if unusable. */
int store_schema_check(sqlite3 *db, const char *path, int create, Err *e);

/* Set e to "<path>: <what>: <sqlite's message>" and return -1; names
 * "disk full" and "locked" plainly since those are the ones users can fix. */
int store_sql_err(sqlite3 *db, const char *path, const char *what, Err *e);

/* 1 if the process (pid, start time from /proc) is still alive on this host. */
int store_writer_alive(int64_t pid, int64_t start);

/* This host's name, this process's pid and start time. */
void store_writer_self(char *host, size_t cap, int64_t *pid, int64_t *start);

/* Current UTC time as ISO-8601 into out[32]. */
void store_now(char out[32]);

/* Prepare sql or set e. */
int store_prepare(Store *s, const char *sql, sqlite3_stmt **st, Err *e);

#endif
