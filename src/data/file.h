/* file.h: rows in files: CSV (a header line of column names; RFC 4180
 * quoting: a field with a comma, quote, CR or LF, or one that is empty
 * but not NULL, is quoted, "" inside) and JSON lines (one object a line,
 * the first line's keys are the columns).
 *
 * A reader streams: one row in memory at a time.  A writer writes to a
 * temporary name beside the target (".NAME.weir-PID") and renames it over
 * the target in file_writer_commit(), after fsync, so readers see the old
 * file or the whole new one; file_writer_abort() removes it.  Errors name
 * the file and the line.
 */
#ifndef WEIR_DATA_FILE_H
#define WEIR_DATA_FILE_H

#include "data/driver.h"

enum file_format {
	FILE_CSV = 0,
	FILE_JSONL,
};

/* "csv" or "jsonl" (also "json", "ndjson"); -1 otherwise. */
int file_format_from_name(const char *name, enum file_format *out);
/* From the file name's extension (.csv, .jsonl, .ndjson, .json); -1 when none fits. */
int file_format_of_path(const char *path, enum file_format *out);

struct file_reader;

struct file_reader *file_reader_open(const char *path, enum file_format f, struct weir_error *err);
/* The columns (valid once the first row was read, or after the header). */
const struct data_columns *file_reader_columns(struct file_reader *r);
/* 1 with *row (valid until the next call), 0 at the end, -1 with err. */
int file_reader_next(struct file_reader *r, struct data_row *row, struct weir_error *err);
void file_reader_close(struct file_reader *r);

struct file_writer;

/* A writer of `path` through a temporary file beside it (renamed over it
 * at commit); the folder is made when missing. */
struct file_writer *file_writer_open(const char *path, enum file_format f,
                                     const struct data_columns *cols, struct weir_error *err);
int file_writer_row(struct file_writer *w, const struct data_row *row, struct weir_error *err);
int file_writer_commit(struct file_writer *w, struct weir_error *err);
void file_writer_abort(struct file_writer *w);

/* One CSV field, quoted when it must be (NULL: nothing). */
void csv_field(struct strbuf *out, const char *v, size_t n);

#endif
