/* row_template.c: templates over a row's columns, "user:{id}"
 * (transfer.h): literal pieces and column indices, parsed once. */
#include "data/transfer.h"

#include <stdlib.h>
#include <string.h>

struct piece {
	char *text; /* a literal, or NULL for a column */
	size_t len;
	size_t col;
};

struct row_template {
	struct piece *p;
	size_t n;
};

static int add_piece(struct row_template *t, const char *text, size_t len, size_t col)
{
	struct piece *p = realloc(t->p, (t->n + 1) * sizeof *p);

	if (!p)
		return -1;
	t->p = p;
	p[t->n].text = text ? strndup(text, len) : NULL;
	p[t->n].len = len;
	p[t->n].col = col;
	if (text && !p[t->n].text)
		return -1;
	t->n++;
	return 0;
}

struct row_template *row_template_parse(const char *s, const struct data_columns *cols,
                                        struct weir_error *err)
{
	struct row_template *t = calloc(1, sizeof *t);
	struct strbuf lit = STRBUF_INIT;

	if (!t)
		goto oom;
	for (size_t i = 0; s[i];) {
		if ((s[i] == '{' && s[i + 1] == '{') || (s[i] == '}' && s[i + 1] == '}')) {
			strbuf_addch(&lit, s[i]);
			i += 2;
			continue;
		}
		if (s[i] == '}') {
			weir_error_set(err, WEIR_E_INVALID,
			               "\"%s\": a '}' without '{' (write }} for one)", s);
			goto fail;
		}
		if (s[i] != '{') {
			strbuf_addch(&lit, s[i++]);
			continue;
		}
		const char *end = strchr(s + i, '}');
		size_t n, c;
		if (!end) {
			weir_error_set(err, WEIR_E_INVALID, "\"%s\": a '{' without '}'", s);
			goto fail;
		}
		n = (size_t)(end - s) - i - 1;
		for (c = 0; c < cols->n; c++)
			if (strlen(cols->names[c]) == n && !strncmp(cols->names[c], s + i + 1, n))
				break;
		if (c == cols->n) {
			weir_error_set(err, WEIR_E_INVALID,
			               "\"%s\": {%.*s} is not a column of the source", s, (int)n,
			               s + i + 1);
			goto fail;
		}
		if ((lit.len && add_piece(t, lit.buf, lit.len, 0) < 0) ||
		    add_piece(t, NULL, 0, c) < 0)
			goto oom;
		strbuf_reset(&lit);
		i = (size_t)(end - s) + 1;
	}
	if (lit.len && add_piece(t, lit.buf, lit.len, 0) < 0)
		goto oom;
	strbuf_release(&lit);
	return t;
oom:
	weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
fail:
	strbuf_release(&lit);
	row_template_destroy(t);
	return NULL;
}

void row_template_render(const struct row_template *t, const struct data_row *row,
                         struct strbuf *out)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct piece *p = &t->p[i];
		if (p->text)
			strbuf_add(out, p->text, p->len);
		else if (p->col < row->n && row->v[p->col])
			strbuf_add(out, row->v[p->col], row->len[p->col]);
	}
}

void row_template_destroy(struct row_template *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->p[i].text);
	free(t->p);
	free(t);
}
