/* field_reader.h: reading a parsed YAML/JSON document field by field, with
 * errors that name the field's path ("roles.worker.memory: expected ...").
 *
 * Shared by the parsers of the model layer (job specs, DAG files), so that
 * every input format words its errors the same way.  A reader is embedded
 * by value: struct field_reader r = {.subject = "spec", .err = err}.  Every
 * function returns 0, or -1 with r->err filled (WEIR_E_INVALID for bad
 * input, WEIR_E_INTERNAL when out of memory).
 */
#ifndef WEIR_MODEL_FIELD_READER_H
#define WEIR_MODEL_FIELD_READER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/error.h"

#define FIELD_PATH_MAX 320

struct field_reader {
	const char *base_dir;      /* relative paths are resolved against it; may be NULL */
	const char *subject;       /* what an error names when no field is set ("spec") */
	char path[FIELD_PATH_MAX]; /* the field an error is about */
	struct weir_error *err;
};

/* Sets r->path to prefix.key, or prefix[index] when key is NULL. */
void field_at(struct field_reader *r, const char *prefix, const char *key, size_t index);
/* "PATH: " + fmt with one string argument; returns -1. */
int field_fail(struct field_reader *r, const char *fmt, const char *arg);
int field_oom(struct field_reader *r);
/* "a mapping", "a list", "a string", ... for messages. */
const char *field_type_name(const json_t *j);

/* Every key of obj must be in the NULL-terminated `keys`; the error lists them. */
int field_check_keys(struct field_reader *r, json_t *obj, const char *prefix,
                     const char *const *keys);
/* "expected WHAT, got TYPE" unless ok. */
int field_need_type(struct field_reader *r, json_t *v, const char *what, bool ok);

/* A string without embedded NUL; *out borrowed from v. */
int field_get_string(struct field_reader *r, json_t *v, const char **out);
/* *field = a copy of s (NULL clears), the old value freed. */
int field_set_string(struct field_reader *r, char **field, const char *s);
/* An optional string: null clears. */
int field_dup_string(struct field_reader *r, json_t *v, char **field);
int field_get_int(struct field_reader *r, json_t *v, long long min, long long max, long long *out);
int field_get_bool(struct field_reader *r, json_t *v, bool *out);
/* Whole seconds, or a duration like "30s", "5m", "1h". */
int field_read_duration(struct field_reader *r, json_t *v, int64_t *out);
/* A path, made absolute against r->base_dir when there is one; null clears. */
int field_read_path(struct field_reader *r, json_t *v, char **field);

#endif
