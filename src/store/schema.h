/* schema.h: the store's schema as a list of migrations.  Migration i takes
 * a file from version i to i + 1 (0: the empty file); the last one leaves
 * it at STORE_SCHEMA_VERSION (store.h).  Append only: a released migration
 * never changes, so a file of any earlier version upgrades in place the
 * same way (docs/internals/store.md). */
#ifndef WEIR_STORE_SCHEMA_H
#define WEIR_STORE_SCHEMA_H

#include <stddef.h>

/* The schema version this build writes (one migration per version). */
#define STORE_SCHEMA_VERSION 20

/* A column a migration adds to a table: ALTER TABLE table ADD COLUMN
 * column decl. */
struct store_column {
	const char *table;
	const char *column;
	const char *decl;
};

/* The SQL of migration `version` -> `version + 1`; NULL past the last. */
const char *store_migration(int version);
/* The columns that migration adds first, each only where it is missing
 * (*n of them; NULL when none). */
const struct store_column *store_migration_columns(int version, size_t *n);
/* Whether that migration edits the tables' SQL in place (sqlite_master):
 * the schema cookie is then bumped in the same transaction, so that every
 * connection reads the new schema. */
int store_migration_edits_schema(int version);

#endif
