/* mask.c: the streaming masker (mask.h).
 *
 * The bytes held back plus each new chunk form one window; at each position
 * the masker either finds a whole secret (the longest that starts there;
 * written as "***"), or sees that the window ends inside a possible secret
 * (it stops and keeps the rest for the next feed), or writes the byte.
 * Secrets are few and short (a task's passwords and URIs), so trying each
 * where one could start (a table of their first bytes) is cheaper than
 * building an automaton.
 */
#include "lib/mask.h"

#include "lib/grow.h"

#include <stdlib.h>
#include <string.h>

struct mask {
	char **secret;
	size_t *len;
	size_t n;
	size_t max_len;
	bool first[256]; /* the bytes a secret starts with: others are passed over fast */
	char *held;      /* bytes that may begin a secret; at most max_len - 1 */
	size_t n_held;
	char *win; /* the window: held + a chunk (grown as needed) */
	size_t win_cap;
};

struct mask *mask_create(const char *const *secrets, size_t n)
{
	struct mask *m = calloc(1, sizeof *m);

	if (!m)
		return NULL;
	m->secret = calloc(n + 1, sizeof *m->secret);
	m->len = calloc(n + 1, sizeof *m->len);
	if (!m->secret || !m->len)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		size_t l = secrets[i] ? strlen(secrets[i]) : 0;
		bool dup = false;
		for (size_t k = 0; k < m->n && !dup; k++)
			dup = m->len[k] == l && !memcmp(m->secret[k], secrets[i], l);
		if (l == 0 || dup)
			continue;
		if (!(m->secret[m->n] = strdup(secrets[i])))
			goto fail;
		m->len[m->n++] = l;
		m->first[(unsigned char)secrets[i][0]] = true;
		if (l > m->max_len)
			m->max_len = l;
	}
	if (m->max_len && !(m->held = malloc(m->max_len)))
		goto fail;
	return m;
fail:
	mask_destroy(m);
	return NULL;
}

void mask_destroy(struct mask *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		memset(m->secret[i], 0, m->len[i]);
		free(m->secret[i]);
	}
	if (m->held)
		memset(m->held, 0, m->max_len);
	if (m->win)
		memset(m->win, 0, m->win_cap);
	free(m->held);
	free(m->win);
	free(m->secret);
	free(m->len);
	free(m);
}

bool mask_active(const struct mask *m)
{
	return m && m->n > 0;
}

/* At w[i..end): the length of the longest whole secret there (0: none);
 * *partial set when the window ends inside a secret that could still
 * match (only when !final). */
static size_t match_at(const struct mask *m, const char *w, size_t i, size_t end, bool final,
                       bool *partial)
{
	size_t best = 0, left = end - i;

	*partial = false;
	for (size_t k = 0; k < m->n; k++) {
		size_t l = m->len[k];
		if (l <= left) {
			if (l > best && !memcmp(w + i, m->secret[k], l))
				best = l;
		} else if (!final && !memcmp(w + i, m->secret[k], left)) {
			*partial = true;
		}
	}
	return best;
}

/* Masks w[0..end), writing what is settled; returns where it stopped (the
 * start of the bytes to hold back; end when nothing is). */
static size_t scan(const struct mask *m, const char *w, size_t end, bool final, mask_out_fn out,
                   void *arg)
{
	size_t i = 0, run = 0; /* w[run..i) is plain text not yet written */

	while (i < end) {
		bool partial;
		size_t l;
		if (!m->first[(unsigned char)w[i]]) {
			i++;
			continue;
		}
		l = match_at(m, w, i, end, final, &partial);
		if (partial) {
			/* a longer secret may still match here: wait for more */
			break;
		}
		if (l) {
			if (i > run)
				out(arg, w + run, i - run);
			out(arg, MASK_TEXT, sizeof MASK_TEXT - 1);
			i += l;
			run = i;
			continue;
		}
		i++;
	}
	if (i > run)
		out(arg, w + run, i - run);
	return i;
}

void mask_feed(struct mask *m, const char *data, size_t n, mask_out_fn out, void *arg)
{
	size_t total, stop;

	if (n == 0)
		return;
	if (!mask_active(m)) {
		out(arg, data, n);
		return;
	}
	total = m->n_held + n;
	if (ALLOC_GROW(m->win, total, m->win_cap) < 0) {
		/* out of memory: never let a secret through; say so instead */
		static const char note[] = "\n[output dropped: out of memory while masking]\n";
		m->n_held = 0;
		out(arg, note, sizeof note - 1);
		return;
	}
	memcpy(m->win, m->held, m->n_held);
	memcpy(m->win + m->n_held, data, n);
	stop = scan(m, m->win, total, false, out, arg);
	m->n_held = total - stop;
	memcpy(m->held, m->win + stop, m->n_held);
}

void mask_flush(struct mask *m, mask_out_fn out, void *arg)
{
	if (!mask_active(m) || m->n_held == 0)
		return;
	scan(m, m->held, m->n_held, true, out, arg);
	m->n_held = 0;
}

struct sink {
	char *buf;
	size_t len, cap;
	bool failed;
};

static void sink_add(void *arg, const char *data, size_t n)
{
	struct sink *s = arg;
	if (s->failed)
		return;
	if (ALLOC_GROW(s->buf, s->len + n + 1, s->cap) < 0) {
		s->failed = true;
		return;
	}
	memcpy(s->buf + s->len, data, n);
	s->len += n;
	s->buf[s->len] = '\0';
}

char *mask_string(const struct mask *m, const char *text)
{
	struct sink s = {0};
	size_t n = strlen(text);

	sink_add(&s, "", 0);
	if (!mask_active(m))
		sink_add(&s, text, n);
	else
		scan(m, text, n, true, sink_add, &s);
	if (s.failed) {
		free(s.buf);
		return NULL;
	}
	return s.buf;
}
