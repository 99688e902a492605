/* yaml.c: YAML text into jansson values through libyaml's event API, with a
 * map from each node's path to its line.
 *
 * The tree is built with an explicit stack (no recursion), so a deeply nested
 * input cannot exhaust the C stack; depth is still capped because jansson's
 * dumper and every consumer walk trees recursively.  Anchors and aliases are
 * refused outright rather than expanded: expansion is what makes "billion
 * laughs" inputs explode, and no weir input needs them.
 */
#include "lib/yaml.h"

#include "lib/grow.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define YAML_MAX_DEPTH 64

struct yaml_line_entry {
	char *path;
	int line;
};

struct yaml_lines {
	struct yaml_line_entry *v;
	size_t n, cap;
};

struct frame {
	json_t *node; /* borrowed: owned by its parent (or the root) */
	char *path;
	char *key; /* a mapping's key waiting for its value */
	int key_line;
	size_t index; /* next index of a sequence */
};

struct builder {
	const char *origin;
	json_t *root;
	struct frame stack[YAML_MAX_DEPTH];
	int depth;
	struct yaml_lines *lines;
	struct weir_error *err;
};

static int lines_add(struct yaml_lines *l, const char *path, int line)
{
	if (!l)
		return 0;
	if (ALLOC_GROW(l->v, l->n + 1, l->cap) < 0)
		return -1;
	char *p = strdup(path);
	if (!p)
		return -1;
	l->v[l->n].path = p;
	l->v[l->n].line = line;
	l->n++;
	return 0;
}

void yaml_lines_destroy(struct yaml_lines *lines)
{
	if (!lines)
		return;
	for (size_t i = 0; i < lines->n; i++)
		free(lines->v[i].path);
	free(lines->v);
	free(lines);
}

static int lines_exact(const struct yaml_lines *lines, const char *path, size_t len)
{
	for (size_t i = 0; i < lines->n; i++) {
		const char *p = lines->v[i].path;
		if (strncmp(p, path, len) == 0 && p[len] == '\0')
			return lines->v[i].line;
	}
	return 0;
}

int yaml_lines_find(const struct yaml_lines *lines, const char *path)
{
	if (!lines || !path)
		return 0;
	size_t len = strlen(path);
	for (;;) {
		int line = lines_exact(lines, path, len);
		if (line > 0 || len == 0)
			return line;
		/* Drop the last component: ".key" or "[i]". */
		size_t i = len;
		if (path[len - 1] == ']') {
			while (i > 0 && path[i - 1] != '[')
				i--;
			len = i > 0 ? i - 1 : 0;
		} else {
			while (i > 0 && path[i - 1] != '.' && path[i - 1] != ']')
				i--;
			if (i > 0 && path[i - 1] == '.')
				i--;
			len = i;
		}
	}
}

static int line_of(const yaml_mark_t *m)
{
	return (int)m->line + 1;
}

static bool is_null_text(const char *s)
{
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

static bool all_digits(const char *s, int base)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		if (base == 16  ? !strchr("0123456789abcdefABCDEF", *s)
		    : base == 8 ? (*s < '0' || *s > '7')
		                : (*s < '0' || *s > '9'))
			return false;
	}
	return true;
}

/* YAML 1.2 core schema float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
 * with a '.' or an exponent (otherwise it is an integer). */
static bool is_float_text(const char *s)
{
	bool digits = false, dot = false;
	if (*s == '-' || *s == '+')
		s++;
	while (*s >= '0' && *s <= '9') {
		s++;
		digits = true;
	}
	if (*s == '.') {
		dot = true;
		s++;
		while (*s >= '0' && *s <= '9') {
			s++;
			digits = true;
		}
	}
	if (!digits)
		return false;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+')
			s++;
		if (!all_digits(s, 10))
			return false;
		return true;
	}
	return dot && *s == '\0';
}

/* An unquoted scalar: null, boolean, integer, real or string. */
static json_t *plain_scalar(const char *s, size_t len)
{
	if (strlen(s) != len) /* an embedded NUL can only be a string */
		return json_stringn(s, len);
	if (is_null_text(s))
		return json_null();
	if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
		return json_true();
	if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
		return json_false();

	const char *d = s;
	int base = 10;
	bool neg = false;
	if (*d == '-' || *d == '+') {
		neg = *d == '-';
		d++;
	}
	if (d == s && d[0] == '0' && (d[1] == 'x' || d[1] == 'o')) {
		base = d[1] == 'x' ? 16 : 8;
		d += 2;
	}
	if (all_digits(d, base)) {
		errno = 0;
		unsigned long long u = strtoull(d, NULL, base);
		if (errno == 0 && u <= (unsigned long long)INT64_MAX)
			return json_integer(neg ? -(json_int_t)u : (json_int_t)u);
		if (errno == 0 && neg && u == (unsigned long long)INT64_MAX + 1)
			return json_integer(INT64_MIN);
		/* Too large for an integer: keep it as a real, like JSON parsers do. */
		double r = strtod(s, NULL);
		json_t *j = base == 10 ? json_real(r) : NULL;
		return j ? j : json_stringn(s, len);
	}
	if (is_float_text(s)) {
		json_t *j = json_real(strtod(s, NULL));
		return j ? j : json_stringn(s, len); /* inf: JSON has no such number */
	}
	return json_stringn(s, len);
}

static int fail_at(struct builder *b, int line, const char *fmt, const char *arg)
{
	char msg[512];
	snprintf(msg, sizeof msg, fmt, arg);
	return weir_error_set(b->err, WEIR_E_INVALID, "%s:%d: %s", b->origin, line, msg);
}

static int fail_oom(struct builder *b)
{
	return weir_error_set(b->err, WEIR_E_INTERNAL, "%s: out of memory", b->origin);
}

static char *child_path(const struct frame *parent, const char *key, size_t index)
{
	size_t plen = strlen(parent->path);
	size_t size = key ? plen + strlen(key) + 2 : plen + 24;
	char *out = malloc(size);
	if (out && key)
		snprintf(out, size, "%s%s%s", parent->path, plen ? "." : "", key);
	else if (out)
		snprintf(out, size, "%s[%zu]", parent->path, index);
	return out;
}

static const char *event_anchor(const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return (const char *)ev->data.scalar.anchor;
	case YAML_SEQUENCE_START_EVENT:
		return (const char *)ev->data.sequence_start.anchor;
	case YAML_MAPPING_START_EVENT:
		return (const char *)ev->data.mapping_start.anchor;
	default:
		return NULL;
	}
}

/* A node event: a scalar or the start of a mapping or sequence. */
static int add_node(struct builder *b, const yaml_event_t *ev)
{
	int line = line_of(&ev->start_mark);
	struct frame *top = b->depth > 0 ? &b->stack[b->depth - 1] : NULL;

	if (event_anchor(ev))
		return fail_at(b, line, "anchor &%s: anchors and aliases are not supported",
		               event_anchor(ev));

	if (top && json_is_object(top->node) && !top->key) {
		if (ev->type != YAML_SCALAR_EVENT)
			return fail_at(b, line, "%s", "a mapping key must be a plain scalar");
		const char *k = (const char *)ev->data.scalar.value;
		if (strlen(k) != ev->data.scalar.length)
			return fail_at(b, line, "%s", "a mapping key contains a NUL character");
		if (json_object_get(top->node, k))
			return fail_at(b, line, "duplicate key \"%s\"", k);
		top->key = strdup(k);
		if (!top->key)
			return fail_oom(b);
		top->key_line = line;
		return 0;
	}

	json_t *val;
	if (ev->type == YAML_SCALAR_EVENT) {
		const char *s = (const char *)ev->data.scalar.value;
		size_t len = ev->data.scalar.length;
		if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    ev->data.scalar.plain_implicit)
			val = plain_scalar(s, len);
		else
			val = json_stringn(s, len);
		if (!val)
			return fail_at(b, line, "%s", "a scalar is not valid UTF-8");
	} else if (ev->type == YAML_MAPPING_START_EVENT) {
		val = json_object();
	} else {
		val = json_array();
	}
	if (!val)
		return fail_oom(b);

	char *path;
	if (!top) {
		path = strdup("");
	} else if (json_is_object(top->node)) {
		path = child_path(top, top->key, 0);
		line = top->key_line;
	} else {
		path = child_path(top, NULL, top->index++);
	}
	if (!path || lines_add(b->lines, path, line) < 0) {
		free(path);
		json_decref(val);
		return fail_oom(b);
	}

	if (!top) {
		b->root = val;
	} else if (json_is_object(top->node)) {
		int rc = json_object_set_new(top->node, top->key, val);
		free(top->key);
		top->key = NULL;
		if (rc < 0) {
			free(path);
			return fail_oom(b);
		}
	} else if (json_array_append_new(top->node, val) < 0) {
		free(path);
		return fail_oom(b);
	}

	if (ev->type == YAML_SCALAR_EVENT) {
		free(path);
		return 0;
	}
	if (b->depth == YAML_MAX_DEPTH) {
		free(path);
		return fail_at(b, line, "nesting deeper than %s levels", "64");
	}
	struct frame *f = &b->stack[b->depth++];
	memset(f, 0, sizeof *f);
	f->node = val;
	f->path = path;
	return 0;
}

static void pop_frame(struct builder *b)
{
	struct frame *f = &b->stack[--b->depth];
	free(f->path);
	free(f->key);
}

static int parser_error(struct builder *b, const yaml_parser_t *p)
{
	const yaml_mark_t *m = p->problem ? &p->problem_mark : &p->mark;
	int line = (int)m->line + 1;
	if (p->error == YAML_MEMORY_ERROR)
		return fail_oom(b);
	if (p->context)
		return weir_error_set(b->err, WEIR_E_INVALID, "%s:%d: %s (%s at line %d)",
		                      b->origin, line, p->problem ? p->problem : "syntax error",
		                      p->context, (int)p->context_mark.line + 1);
	return weir_error_set(b->err, WEIR_E_INVALID, "%s:%d: %s", b->origin, line,
	                      p->problem ? p->problem : "syntax error");
}

json_t *yaml_parse(const char *text, size_t len, const char *origin, struct yaml_lines **lines,
                   struct weir_error *err)
{
	yaml_parser_t parser;
	struct builder b;
	bool done = false;
	int docs = 0;

	memset(&b, 0, sizeof b);
	b.origin = origin ? origin : "<input>";
	b.err = err;
	if (lines) {
		*lines = NULL;
		b.lines = calloc(1, sizeof *b.lines);
		if (!b.lines) {
			fail_oom(&b);
			return NULL;
		}
	}
	if (!yaml_parser_initialize(&parser)) {
		yaml_lines_destroy(b.lines);
		fail_oom(&b);
		return NULL;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);

	int rc = 0;
	while (!done && rc == 0) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev)) {
			rc = parser_error(&b, &parser);
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1)
				rc = fail_at(&b, line_of(&ev.start_mark), "%s",
				             "more than one document; expected exactly one");
			break;
		case YAML_ALIAS_EVENT:
			rc = fail_at(&b, line_of(&ev.start_mark),
			             "alias *%s: anchors and aliases are not supported",
			             (const char *)ev.data.alias.anchor);
			break;
		case YAML_SCALAR_EVENT:
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			rc = add_node(&b, &ev);
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			if (b.depth > 0)
				pop_frame(&b);
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}

	if (rc == 0 && (!b.root || json_is_null(b.root)))
		rc = weir_error_set(err, WEIR_E_INVALID, "%s:1: empty document", b.origin);

	while (b.depth > 0)
		pop_frame(&b);
	yaml_parser_delete(&parser);
	if (rc < 0) {
		json_decref(b.root);
		yaml_lines_destroy(b.lines);
		return NULL;
	}
	if (lines)
		*lines = b.lines;
	else
		yaml_lines_destroy(b.lines);
	return b.root;
}
