/* sql.h: the small SQLite helpers every table module of the store shares:
 * binding the store's sentinels (0, "", -1) as NULL and reading NULL back
 * as them, so store.h and dag_store.h keep one convention. */
#ifndef WEIR_STORE_SQL_H
#define WEIR_STORE_SQL_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether `name` (NULL: no) is one of `names`. */
bool sql_name_in(const char *name, const char *const *names, size_t n);

/* Text, NULL as "". */
void sql_bind_text(sqlite3_stmt *st, int i, const char *v);
/* Text, or NULL for NULL and "". */
void sql_bind_text_or_null(sqlite3_stmt *st, int i, const char *v);
/* An integer, or NULL for 0 and below (times and ids). */
void sql_bind_pos_or_null(sqlite3_stmt *st, int i, int64_t v);

/* A newly allocated copy of a text column; NULL reads as "".  NULL only when
 * out of memory. */
char *sql_col_text(sqlite3_stmt *st, int i);
/* An integer column; NULL reads as 0. */
int64_t sql_col_i64(sqlite3_stmt *st, int i);

#endif
