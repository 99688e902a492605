/* sql.c: binding and reading with the store's sentinels. */
#include "store/sql.h"

#include <stdlib.h>
#include <string.h>

bool sql_name_in(const char *name, const char *const *names, size_t n)
{
	for (size_t i = 0; name && i < n; i++) {
		if (strcmp(name, names[i]) == 0)
			return true;
	}
	return false;
}

void sql_bind_text(sqlite3_stmt *st, int i, const char *v)
{
	sqlite3_bind_text(st, i, v ? v : "", -1, SQLITE_TRANSIENT);
}

void sql_bind_text_or_null(sqlite3_stmt *st, int i, const char *v)
{
	if (v && *v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

void sql_bind_pos_or_null(sqlite3_stmt *st, int i, int64_t v)
{
	if (v > 0)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

char *sql_col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return strdup(t ? (const char *)t : "");
}

int64_t sql_col_i64(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, i);
}
