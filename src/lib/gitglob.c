/* gitglob.c: gitignore-style globs as POSIX extended regular expressions
 * (the translation git's wildmatch rules imply; Airflow's glob syntax of
 * .airflowignore uses the same rules). */
#include "lib/gitglob.h"

#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"

/* One name's glob (no '/') into sb. */
static void segment(struct strbuf *sb, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '\\' && i + 1 < n) {
			c = s[++i];
			if (strchr(".[]()*+?{}|^$\\", c))
				strbuf_addch(sb, '\\');
			strbuf_addch(sb, c);
		} else if (c == '*') {
			strbuf_addstr(sb, "[^/]*");
		} else if (c == '?') {
			strbuf_addstr(sb, "[^/]");
		} else if (c == '[') {
			size_t j = i + 1;
			if (j < n && (s[j] == '!' || s[j] == '^'))
				j++;
			if (j < n && s[j] == ']')
				j++;
			while (j < n && s[j] != ']')
				j++;
			if (j >= n) { /* no end: a literal '[' */
				strbuf_addstr(sb, "\\[");
				continue;
			}
			strbuf_addch(sb, '[');
			size_t k = i + 1;
			if (s[k] == '!' || s[k] == '^') {
				strbuf_addch(sb, '^');
				k++;
			}
			for (; k < j; k++)
				if (s[k] != '\\')
					strbuf_addch(sb, s[k]);
			strbuf_addch(sb, ']');
			i = j;
		} else {
			if (strchr(".()+{}|^$", c))
				strbuf_addch(sb, '\\');
			strbuf_addch(sb, c);
		}
	}
}

char *gitglob_to_ere(const char *pattern, bool *negate, bool *dir_only)
{
	struct strbuf sb;
	const char *p = pattern;
	size_t len, n_segs = 0, first = 0;
	const char *segs[256];
	size_t lens[256];
	bool need_slash = false;

	*negate = false;
	*dir_only = false;
	if (*p == '!') {
		*negate = true;
		p++;
	} else if (p[0] == '\\' && (p[1] == '!' || p[1] == '#')) {
		p++;
	}
	len = strlen(p);
	if (!len || !strcmp(p, "/"))
		return NULL;
	*dir_only = p[len - 1] == '/';
	/* the names between the slashes */
	for (const char *s = p;;) {
		const char *slash = memchr(s, '/', len - (size_t)(s - p));
		size_t n = slash ? (size_t)(slash - s) : len - (size_t)(s - p);
		if (n_segs == sizeof segs / sizeof *segs)
			return NULL;
		segs[n_segs] = s;
		lens[n_segs++] = n;
		if (!slash)
			break;
		s = slash + 1;
	}
	strbuf_init(&sb);
	strbuf_addch(&sb, '^');
	if (lens[0] == 0) {
		first = 1; /* a leading '/': anchored */
	} else if (n_segs == 1 || (n_segs == 2 && lens[1] == 0)) {
		/* no '/' but a trailing one: a name at any depth */
		if (!(lens[0] == 2 && !strncmp(segs[0], "**", 2))) {
			strbuf_addstr(&sb, "(.+/)?");
		}
	}
	/* a trailing '/': everything inside the folder */
	bool trailing = n_segs > 1 && lens[n_segs - 1] == 0;
	size_t end = n_segs - 1;
	for (size_t i = first; i < n_segs; i++) {
		bool last = i == end;
		bool stars = (lens[i] == 2 && !strncmp(segs[i], "**", 2)) || (last && trailing);
		if (stars) {
			if (i == first && last)
				strbuf_addstr(&sb, ".+");
			else if (i == first) {
				strbuf_addstr(&sb, "(.+/)?");
				need_slash = false;
				continue;
			} else if (last)
				strbuf_addstr(&sb, "/.*");
			else {
				strbuf_addstr(&sb, "(/.+)?");
				need_slash = true;
				continue;
			}
		} else {
			if (need_slash)
				strbuf_addch(&sb, '/');
			segment(&sb, segs[i], lens[i]);
			if (last)
				strbuf_addstr(&sb, "(/.*)?");
			need_slash = true;
		}
	}
	strbuf_addch(&sb, '$');
	if (sb.failed) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}
