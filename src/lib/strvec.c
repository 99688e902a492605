/* strvec.c: a growable list of owned strings. */
#include "lib/strvec.h"

#include "lib/grow.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int strvec_take(struct strvec *sv, char *s)
{
	if (ALLOC_GROW(sv->v, sv->n + 2, sv->cap) < 0) {
		free(s);
		return -1;
	}
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
	return 0;
}

int strvec_push(struct strvec *sv, const char *s)
{
	char *c = strdup(s);
	return c ? strvec_take(sv, c) : -1;
}

int strvec_push_kv(struct strvec *sv, const char *prefix, const char *name, const char *value)
{
	size_t a, b, c;
	char *s;

	if (!value)
		value = "";
	a = strlen(prefix);
	b = strlen(name);
	c = strlen(value);
	if (!(s = malloc(a + b + c + 2)))
		return -1;
	memcpy(s, prefix, a);
	memcpy(s + a, name, b);
	s[a + b] = '=';
	memcpy(s + a + b + 1, value, c + 1);
	return strvec_take(sv, s);
}

int strvec_pushf(struct strvec *sv, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	int rc = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return -1;
	return strvec_take(sv, s);
}

void strvec_release(struct strvec *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}
