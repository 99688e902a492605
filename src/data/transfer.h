/* transfer.h: the pieces of a `transfer:` task (transfer.c runs them).
 *
 * A target takes the source's columns once, then rows one at a time, and
 * publishes them all in publish() (last, atomically where the store
 * allows: docs/internals/data.md); abort() leaves the target as it was.
 */
#ifndef WEIR_DATA_TRANSFER_H
#define WEIR_DATA_TRANSFER_H

#include <jansson.h>

#include "data/driver.h"

struct transfer_target {
	int (*begin)(struct transfer_target *t, const struct data_columns *cols,
	             struct weir_error *err);
	int (*row)(struct transfer_target *t, const struct data_row *row, struct weir_error *err);
	int (*publish)(struct transfer_target *t, struct weir_error *err);
	void (*destroy)(struct transfer_target *t); /* aborts what was not published */
	/* May be NULL.  Before any row: 1 and *rows when an earlier try of the
	 * same task instance already published (its marker is there; the load
	 * is skipped), 0 when not, -1 with err. */
	int (*done)(struct transfer_target *t, int64_t *rows, struct weir_error *err);
};

/* The targets, from the spec's `to` (checked here; errors "to.KEY: ..."). */
struct transfer_target *transfer_table_target(json_t *to, size_t batch, struct weir_error *err);
struct transfer_target *transfer_redis_target(json_t *to, size_t batch, struct weir_error *err);
struct transfer_target *transfer_file_target(json_t *to, struct weir_error *err);

/* A template over a row's columns: "user:{id}" ({{ and }} for braces). */
struct row_template;

/* Parsed against the columns: a name that is no column fails, naming it. */
struct row_template *row_template_parse(const char *text, const struct data_columns *cols,
                                        struct weir_error *err);
/* The row's text, appended to out. */
void row_template_render(const struct row_template *t, const struct data_row *row,
                         struct strbuf *out);
void row_template_destroy(struct row_template *t);

#endif
