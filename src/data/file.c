/* file.c: CSV and JSON-lines readers and writers (file.h). */
#include "data/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/fs.h"

struct file_reader {
	FILE *f;
	char *path;
	enum file_format fmt;
	long line;
	struct data_columns cols;
	bool have_cols;
	struct strbuf cells; /* the row's cells, NUL-separated */
	size_t *off;         /* per column: offset in cells, (size_t)-1 for NULL */
	const char **v;
	size_t *len;
	json_t *pending; /* JSONL: the first object, read to learn the columns */
};

struct file_writer {
	FILE *f;
	char *path, *tmp;
	enum file_format fmt;
	struct data_columns cols;
	struct strbuf line;
};

int file_format_from_name(const char *name, enum file_format *out)
{
	if (!strcasecmp(name, "csv"))
		*out = FILE_CSV;
	else if (!strcasecmp(name, "jsonl") || !strcasecmp(name, "json") ||
	         !strcasecmp(name, "ndjson"))
		*out = FILE_JSONL;
	else
		return -1;
	return 0;
}

int file_format_of_path(const char *path, enum file_format *out)
{
	const char *dot = strrchr(path, '.');

	return dot && !strchr(dot, '/') ? file_format_from_name(dot + 1, out) : -1;
}

static int read_fail(struct file_reader *r, const char *what, struct weir_error *err)
{
	return weir_error_set(err, WEIR_E_INVALID, "%s:%ld: %s", r->path, r->line, what);
}

/* Room for n columns. */
static int reader_size(struct file_reader *r, size_t n)
{
	r->off = calloc(n + 1, sizeof *r->off);
	r->v = calloc(n + 1, sizeof *r->v);
	r->len = calloc(n + 1, sizeof *r->len);
	return r->off && r->v && r->len ? 0 : -1;
}

/* One CSV record (which may span lines) into r->cells/off; its field count
 * into *n.  0 at the end of the file, 1 with a record, -1 on error. */
static int csv_record(struct file_reader *r, size_t *n, size_t max, struct weir_error *err)
{
	int c, quoted = 0, any = 0, was_quoted = 0;
	size_t f = 0, start = 0;

	strbuf_reset(&r->cells);
	r->line++;
	for (;;) {
		c = getc(r->f);
		if (c == EOF && !any)
			return 0;
		any = 1;
		if (quoted) {
			if (c == EOF)
				return read_fail(r, "a quoted field never ends", err);
			if (c == '"') {
				int d = getc(r->f);
				if (d == '"') {
					strbuf_addch(&r->cells, '"');
					continue;
				}
				quoted = 0;
				if (d != EOF)
					ungetc(d, r->f);
				continue;
			}
			if (c == '\n')
				r->line++;
			strbuf_addch(&r->cells, (char)c);
			continue;
		}
		if (c == '"' && r->cells.len == start) {
			quoted = was_quoted = 1;
			continue;
		}
		if (c == ',' || c == '\n' || c == EOF) {
			size_t end = r->cells.len;
			if (end > start && r->cells.buf[end - 1] == '\r' && c != ',') {
				strbuf_remove(&r->cells, end - 1, 1);
				end--;
			}
			if (f < max) {
				r->off[f] = (end == start && !was_quoted) ? (size_t)-1 : start;
				r->len[f] = end - start;
			}
			f++;
			strbuf_addch(&r->cells, '\0');
			start = r->cells.len;
			was_quoted = 0;
			if (c != ',')
				break;
			continue;
		}
		strbuf_addch(&r->cells, (char)c);
	}
	if (r->cells.failed)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	*n = f;
	return 1;
}

static int csv_header(struct file_reader *r, struct weir_error *err)
{
	size_t n = 0, cap = 4096;
	int rc;

	if (reader_size(r, cap) < 0)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	rc = csv_record(r, &n, cap, err);
	if (rc <= 0)
		return rc < 0 ? -1 : read_fail(r, "expected a header line of column names", err);
	if (n > cap)
		return read_fail(r, "more than 4096 columns", err);
	for (size_t i = 0; i < n; i++)
		if (data_columns_add(&r->cols,
		                     r->off[i] == (size_t)-1 ? "" : r->cells.buf + r->off[i],
		                     DATA_TEXT) < 0)
			return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	r->have_cols = true;
	return 0;
}

/* A JSON value as a cell. */
static void json_cell(struct strbuf *out, json_t *v)
{
	if (json_is_string(v))
		strbuf_add(out, json_string_value(v), json_string_length(v));
	else if (json_is_integer(v))
		strbuf_addf(out, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		strbuf_addf(out, "%.17g", json_real_value(v));
	else if (json_is_true(v))
		strbuf_addstr(out, "true");
	else if (json_is_false(v))
		strbuf_addstr(out, "false");
	else {
		char *s = json_dumps(v, JSON_COMPACT);
		strbuf_addstr(out, s ? s : "");
		free(s);
	}
}

static json_t *jsonl_line(struct file_reader *r, struct weir_error *err, int *eof)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	json_t *j;
	json_error_t je;

	*eof = 0;
	for (;;) {
		n = getline(&line, &cap, r->f);
		if (n < 0) {
			free(line);
			*eof = 1;
			return NULL;
		}
		r->line++;
		if (strspn(line, " \t\r\n") != (size_t)n)
			break;
	}
	j = json_loadb(line, (size_t)n, 0, &je);
	free(line);
	if (!json_is_object(j)) {
		json_decref(j);
		read_fail(r, j ? "expected a JSON object" : je.text, err);
		return NULL;
	}
	return j;
}

static int jsonl_header(struct file_reader *r, struct weir_error *err)
{
	int eof;
	const char *k;
	json_t *v;

	r->pending = jsonl_line(r, err, &eof);
	if (!r->pending)
		return eof ? 0 : -1;
	json_object_foreach(r->pending, k, v) if (data_columns_add(&r->cols, k,
	                                                           json_is_integer(v) ? DATA_INT
	                                                           : json_is_real(v)  ? DATA_FLOAT
	                                                                              : DATA_TEXT) <
	                                          0) return weir_error_set(err, WEIR_E_INTERNAL,
	                                                                   "out of memory");
	r->have_cols = true;
	if (reader_size(r, r->cols.n) < 0)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	return 0;
}

struct file_reader *file_reader_open(const char *path, enum file_format f, struct weir_error *err)
{
	struct file_reader *r = calloc(1, sizeof *r);

	if (!r || !(r->path = strdup(path))) {
		free(r);
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	strbuf_init(&r->cells);
	r->fmt = f;
	r->f = fopen(path, "re");
	if (!r->f) {
		weir_error_set(err, WEIR_E_INVALID, "%s: %s", path, strerror(errno));
		file_reader_close(r);
		return NULL;
	}
	if ((f == FILE_CSV ? csv_header(r, err) : jsonl_header(r, err)) < 0) {
		file_reader_close(r);
		return NULL;
	}
	return r;
}

const struct data_columns *file_reader_columns(struct file_reader *r)
{
	return &r->cols;
}

int file_reader_next(struct file_reader *r, struct data_row *row, struct weir_error *err)
{
	size_t n = 0;

	if (!r->have_cols)
		return 0;
	if (r->fmt == FILE_CSV) {
		int rc = csv_record(r, &n, r->cols.n, err);
		if (rc <= 0)
			return rc;
		if (n == 1 && r->cols.n != 1 && r->off[0] == (size_t)-1)
			return file_reader_next(r, row, err); /* a blank line */
		if (n != r->cols.n) {
			char what[96];
			snprintf(what, sizeof what, "expected %zu fields (the header's), got %zu",
			         r->cols.n, n);
			return read_fail(r, what, err);
		}
	} else {
		json_t *j = r->pending;
		int eof;
		r->pending = NULL;
		if (!j && !(j = jsonl_line(r, err, &eof)))
			return eof ? 0 : -1;
		strbuf_reset(&r->cells);
		for (size_t i = 0; i < r->cols.n; i++) {
			json_t *v = json_object_get(j, r->cols.names[i]);
			if (!v || json_is_null(v)) {
				r->off[i] = (size_t)-1;
				r->len[i] = 0;
			} else {
				r->off[i] = r->cells.len;
				json_cell(&r->cells, v);
				r->len[i] = r->cells.len - r->off[i];
			}
			strbuf_addch(&r->cells, '\0');
		}
		json_decref(j);
		if (r->cells.failed)
			return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	for (size_t i = 0; i < r->cols.n; i++)
		r->v[i] = r->off[i] == (size_t)-1 ? NULL : r->cells.buf + r->off[i];
	row->n = r->cols.n;
	row->v = r->v;
	row->len = r->len;
	return 1;
}

void file_reader_close(struct file_reader *r)
{
	if (!r)
		return;
	if (r->f)
		fclose(r->f);
	json_decref(r->pending);
	data_columns_release(&r->cols);
	strbuf_release(&r->cells);
	free(r->off);
	free(r->v);
	free(r->len);
	free(r->path);
	free(r);
}

void csv_field(struct strbuf *out, const char *v, size_t n)
{
	if (!v)
		return;
	if (n && !memchr(v, ',', n) && !memchr(v, '"', n) && !memchr(v, '\n', n) &&
	    !memchr(v, '\r', n)) {
		strbuf_add(out, v, n);
		return;
	}
	strbuf_addch(out, '"');
	for (size_t i = 0; i < n; i++) {
		if (v[i] == '"')
			strbuf_addch(out, '"');
		strbuf_addch(out, v[i]);
	}
	strbuf_addch(out, '"');
}

static int write_line(struct file_writer *w, struct weir_error *err)
{
	if (w->line.failed)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	if (fwrite(w->line.buf, 1, w->line.len, w->f) != w->line.len)
		return weir_error_set(err, WEIR_E_INVALID, "%s: %s", w->tmp, strerror(errno));
	strbuf_reset(&w->line);
	return 0;
}

struct file_writer *file_writer_open(const char *path, enum file_format f,
                                     const struct data_columns *cols, struct weir_error *err)
{
	struct file_writer *w = calloc(1, sizeof *w);
	const char *slash = strrchr(path, '/');
	int fd;

	if (!w) {
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		return NULL;
	}
	strbuf_init(&w->line);
	w->fmt = f;
	w->path = strdup(path);
	if (!w->path || asprintf(&w->tmp, "%.*s.%s.weir-%d", slash ? (int)(slash - path + 1) : 0,
	                         path, slash ? slash + 1 : path, (int)getpid()) < 0) {
		w->tmp = NULL;
		weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < cols->n; i++)
		if (data_columns_add(&w->cols, cols->names[i], cols->types[i]) < 0) {
			weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
			goto fail;
		}
	if (slash && slash > path) { /* its folder is made when missing, as mkdir -p */
		char *dir = strndup(path, (size_t)(slash - path));
		int rc = dir ? fs_mkdir_p(dir, 0755, err)
		             : weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
		free(dir);
		if (rc < 0)
			goto fail;
	}
	fd = open(w->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || !(w->f = fdopen(fd, "w"))) {
		weir_error_set(err, WEIR_E_INVALID, "%s: %s", w->tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	if (f == FILE_CSV) {
		for (size_t i = 0; i < cols->n; i++) {
			if (i)
				strbuf_addch(&w->line, ',');
			csv_field(&w->line, cols->names[i], strlen(cols->names[i]));
		}
		strbuf_addch(&w->line, '\n');
		if (write_line(w, err) < 0)
			goto fail;
	}
	return w;
fail:
	file_writer_abort(w);
	return NULL;
}

/* A number column's cell that reads as a JSON number goes out as one. */
static bool is_number(const char *v, size_t n)
{
	char tmp[64], *end;

	if (!n || n >= sizeof tmp)
		return false;
	memcpy(tmp, v, n);
	tmp[n] = '\0';
	strtod(tmp, &end);
	return !*end && strspn(tmp, "0123456789+-.eE") == n && tmp[0] != '+' && tmp[0] != '.';
}

int file_writer_row(struct file_writer *w, const struct data_row *row, struct weir_error *err)
{
	if (w->fmt == FILE_CSV) {
		for (size_t i = 0; i < row->n; i++) {
			if (i)
				strbuf_addch(&w->line, ',');
			if (row->v[i] && !row->len[i])
				strbuf_addstr(&w->line, "\"\"");
			else
				csv_field(&w->line, row->v[i], row->len[i]);
		}
		strbuf_addch(&w->line, '\n');
		return write_line(w, err);
	}
	json_t *o = json_object();
	for (size_t i = 0; o && i < row->n && i < w->cols.n; i++) {
		json_t *v;
		if (!row->v[i])
			v = json_null();
		else if (w->cols.types[i] != DATA_TEXT && is_number(row->v[i], row->len[i]))
			v = json_loadb(row->v[i], row->len[i], JSON_DECODE_ANY, NULL);
		else
			v = json_stringn(row->v[i], row->len[i]);
		json_object_set_new(o, w->cols.names[i], v ? v : json_null());
	}
	char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(o);
	if (!s)
		return weir_error_set(err, WEIR_E_INVALID, "%s: a row is not valid UTF-8", w->path);
	strbuf_addstr(&w->line, s);
	strbuf_addch(&w->line, '\n');
	free(s);
	return write_line(w, err);
}

int file_writer_commit(struct file_writer *w, struct weir_error *err)
{
	int rc = 0;

	if (fflush(w->f) != 0 || fsync(fileno(w->f)) != 0)
		rc = weir_error_set(err, WEIR_E_INVALID, "%s: %s", w->tmp, strerror(errno));
	fclose(w->f);
	w->f = NULL;
	if (rc == 0 && rename(w->tmp, w->path) != 0)
		rc = weir_error_set(err, WEIR_E_INVALID, "%s: %s", w->path, strerror(errno));
	if (rc == 0) {
		free(w->tmp);
		w->tmp = NULL;
	}
	file_writer_abort(w);
	return rc;
}

void file_writer_abort(struct file_writer *w)
{
	if (!w)
		return;
	if (w->f)
		fclose(w->f);
	if (w->tmp)
		unlink(w->tmp);
	free(w->tmp);
	free(w->path);
	data_columns_release(&w->cols);
	strbuf_release(&w->line);
	free(w);
}
