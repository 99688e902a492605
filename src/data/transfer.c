/* transfer.c: a `transfer:` task (task.h): rows from a query or a file
 * stream through to one target (transfer.h), a row at a time; progress
 * (rows so far, rows/s) goes to the task's log about once a second; the
 * target publishes last; the totals become the outputs. */
#include "data/transfer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/file.h"
#include "data/task.h"
#include "lib/clock.h"

#define TRANSFER_DEFAULT_BATCH 10000
#define TRANSFER_MAX_BATCH 1000000

struct pump {
	struct transfer_target *target;
	bool begun;
	int64_t rows;
	int64_t start_ms, last_ms;
	int64_t pause_at; /* test builds: WEIR_TEST_TRANSFER_PAUSE_AT */
};

static int pump_columns(void *arg, const struct data_columns *cols, struct weir_error *err)
{
	struct pump *p = arg;

	if (p->begun)
		return 0;
	p->begun = true;
	return p->target->begin(p->target, cols, err);
}

static int pump_row(void *arg, const struct data_row *row, struct weir_error *err)
{
	struct pump *p = arg;

	if (p->target->row(p->target, row, err) < 0)
		return -1;
#ifdef WEIR_TEST_HOOKS
	/* tests kill a transfer half-way: it stops here, rows sent, nothing published
	 * (docs/internals/data.md) */
	if (p->pause_at > 0 && p->rows + 1 == p->pause_at) {
		fprintf(stderr, "transfer: paused at %lld rows\n", (long long)p->pause_at);
		for (;;)
			clock_sleep_ms(1000);
	}
#endif
	if ((++p->rows & 4095) == 0) {
		int64_t now = clock_mono_ms();
		if (now - p->last_ms >= 1000) {
			double s = (double)(now - p->start_ms) / 1000.0;
			fprintf(stderr, "transfer: %lld rows, %.0f rows/s\n", (long long)p->rows,
			        s > 0 ? (double)p->rows / s : 0.0);
			p->last_ms = now;
		}
	}
	return 0;
}

static int from_file(json_t *from, struct pump *p, struct weir_error *err)
{
	const char *path = json_string_value(json_object_get(from, "file"));
	const char *fmt = json_string_value(json_object_get(from, "format"));
	struct file_reader *r;
	struct data_row row;
	enum file_format f;
	int rc;

	if (fmt ? file_format_from_name(fmt, &f) < 0 : file_format_of_path(path, &f) < 0)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "spec: from.format: expected csv or jsonl");
	r = file_reader_open(path, f, err);
	if (!r)
		return -1;
	rc = pump_columns(p, file_reader_columns(r), err);
	while (rc == 0 && (rc = file_reader_next(r, &row, err)) == 1)
		rc = pump_row(p, &row, err);
	file_reader_close(r);
	return rc;
}

static int from_query(json_t *from, struct pump *p, size_t batch, struct weir_error *err)
{
	const char *conn = json_string_value(json_object_get(from, "conn"));
	const char *query = json_string_value(json_object_get(from, "query"));
	struct data_rows_cb cb = {pump_columns, pump_row, p};
	struct data_params params = {0};
	struct data_conn *dc;
	int rc;

	if (!conn || !query)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "spec: from: expected conn and query, or file");
	if (data_params_from_json(json_object_get(from, "parameters"), &params, err) < 0)
		return -1;
	dc = data_open_env(conn, err);
	if (!dc) {
		data_params_release(&params);
		return -1;
	}
	dc->batch = batch;
	rc = data_run(dc, query, &params, &cb, NULL, err);
	if (rc < 0)
		weir_error_prefix(err, "from");
	data_close(dc);
	data_params_release(&params);
	return rc;
}

int data_transfer_run(json_t *spec, json_t **outputs, struct weir_error *err)
{
	json_t *from = json_object_get(spec, "from"), *to = json_object_get(spec, "to");
	json_t *b = json_object_get(spec, "batch");
	size_t batch = TRANSFER_DEFAULT_BATCH;
	struct pump p = {0};
	double secs;
	int rc;

	*outputs = NULL;
	if (!json_is_object(from) || !json_is_object(to))
		return weir_error_set(err, WEIR_E_INVALID,
		                      "spec: expected from and to, each a mapping");
	if (b) {
		if (!json_is_integer(b) || json_integer_value(b) < 1 ||
		    json_integer_value(b) > TRANSFER_MAX_BATCH)
			return weir_error_set(err, WEIR_E_INVALID,
			                      "spec: batch: expected 1 to %d rows",
			                      TRANSFER_MAX_BATCH);
		batch = (size_t)json_integer_value(b);
	}
	if (json_object_get(to, "file"))
		p.target = transfer_file_target(to, err);
	else if (json_object_get(to, "redis"))
		p.target = transfer_redis_target(to, batch, err);
	else if (json_object_get(to, "table"))
		p.target = transfer_table_target(to, batch, err);
	else
		return weir_error_set(err, WEIR_E_INVALID,
		                      "spec: to: expected table, redis or file");
	if (!p.target)
		return -1;
	p.start_ms = p.last_ms = clock_mono_ms();
	if (p.target->done) {
		int64_t earlier = 0;
		rc = p.target->done(p.target, &earlier, err);
		if (rc != 0) {
			p.target->destroy(p.target);
			if (rc < 0) {
				weir_error_prefix(err, "to");
				return -1;
			}
			fprintf(stderr,
			        "transfer: an earlier try of this task already published "
			        "%lld rows; not loading again\n",
			        (long long)earlier);
			*outputs = json_pack("{s:I, s:f, s:I, s:b}", "rows", (json_int_t)earlier,
			                     "seconds", 0.0, "rows_per_second", (json_int_t)0,
			                     "earlier_try", 1);
			return *outputs ? 0 : weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		}
	}
#ifdef WEIR_TEST_HOOKS
	if (getenv("WEIR_TEST_TRANSFER_PAUSE_AT"))
		p.pause_at = strtoll(getenv("WEIR_TEST_TRANSFER_PAUSE_AT"), NULL, 10);
#endif
	if (json_object_get(from, "file"))
		rc = from_file(from, &p, err);
	else
		rc = from_query(from, &p, batch, err);
	if (rc == 0 && !p.begun)
		rc = weir_error_set(err, WEIR_E_INVALID, "from: the source gave no columns");
	if (rc == 0) {
		rc = p.target->publish(p.target, err);
		if (rc < 0)
			weir_error_prefix(err, "to");
	}
#ifdef WEIR_TEST_HOOKS
	/* tests kill a transfer between its publish and its report (docs/internals/data.md) */
	if (rc == 0 && getenv("WEIR_TEST_TRANSFER_PAUSE_PUBLISHED")) {
		fprintf(stderr, "transfer: paused after publishing %lld rows\n", (long long)p.rows);
		for (;;)
			clock_sleep_ms(1000);
	}
#endif
	p.target->destroy(p.target);
	if (rc < 0)
		return -1;
	secs = (double)(clock_mono_ms() - p.start_ms) / 1000.0;
	fprintf(stderr, "transfer: done, %lld rows in %.2f s\n", (long long)p.rows, secs);
	*outputs = json_pack("{s:I, s:f, s:I}", "rows", (json_int_t)p.rows, "seconds", secs,
	                     "rows_per_second",
	                     (json_int_t)(secs > 0 ? (double)p.rows / secs : (double)p.rows));
	return *outputs ? 0 : weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
}
