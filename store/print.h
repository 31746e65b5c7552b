/* print.h — printing SQLite result sets in the three output formats. */
#ifndef AHASCOPE_STORE_PRINT_H
#define AHASCOPE_STORE_PRINT_H

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdio.h>

#include "store/store.h"

/* What an aligned table holds to size its columns: past either, the rows
 * held are printed and the result stops (CSV and JSON hold no rows). */
#define PRINT_TABLE_MAX_ROWS 100000
#define PRINT_TABLE_MAX_BYTES ((size_t)64 << 20)

/* A JSON row is built whole before it is printed: past this many bytes of
 * values it stops the result (SQLITE_TOOBIG, row_big), as CSV streams. */
#define PRINT_JSON_ROW_MAX_BYTES ((size_t)64 << 20)

/* Step st to the end, printing its rows to out in fmt (a table is aligned
 * once every row is known). Returns SQLITE_DONE or the failing code;
 * SQLITE_TOOBIG after printing a table cut at PRINT_TABLE_MAX_ROWS/BYTES. */
int print_result(sqlite3_stmt *st, StoreFormat fmt, FILE *out);

/* A row cap for print_result_limited, and what happened under it. */
typedef struct {
    long max_rows; /* stop after this many rows; 0: no cap */
    long rows;     /* rows printed so far (counted across calls: the caller resets it) */
    int capped;    /* set when a row beyond the cap was there and left out */
    int table_full; /* set when a table stopped at PRINT_TABLE_MAX_ROWS/BYTES (SQLITE_TOOBIG) */
    int row_big;    /* set when a JSON row passed PRINT_JSON_ROW_MAX_BYTES (SQLITE_TOOBIG) */
} PrintLimit;

/* print_result stopping at lim->max_rows rows (lim may be NULL: no cap);
 * lim->rows counts as rows arrive, so a progress handler can read it. */
int print_result_limited(sqlite3_stmt *st, StoreFormat fmt, FILE *out, PrintLimit *lim);

/* The current row as a JSON object keyed by column name (numbers kept
 * exact; text valid UTF-8, with "<column>_hex" holding the raw bytes of a
 * value that was not: engine/textout.h). NULL when out of memory. */
cJSON *print_json_row(sqlite3_stmt *st);

#endif
