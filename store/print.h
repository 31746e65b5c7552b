/* print.h — printing SQLite result sets in the three output formats. */
#ifndef AHASCOPE_STORE_PRINT_H
#define AHASCOPE_STORE_PRINT_H

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdio.h>

#include "store/store.h"

/* Step st to the end, printing its rows to out in fmt (a table is aligned
 * once every row is known). Returns SQLITE_DONE or the failing code. */
int print_result(sqlite3_stmt *st, StoreFormat fmt, FILE *out);

/* Column i of the current row as a JSON value (numbers kept exact). */
cJSON *print_json_value(sqlite3_stmt *st, int i);

#endif
