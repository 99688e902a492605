/* copy_to_resp.c: the converter of bench/transfer.py's shell pipeline.  Reads PostgreSQL's
 * COPY text format (tab-separated columns, one row a line) on stdin and writes, for each row,
 * one HSET in the Redis protocol for `redis-cli --pipe`:
 *
 *     HSET PREFIX<col 1> NAME2 <col 2> NAME3 <col 3> ...
 *
 *     psql -c "COPY (SELECT id, a, b, n FROM src) TO STDOUT" | copy_to_resp user: a b n |
 *         redis-cli --pipe
 *
 * The benchmark's rows have no backslash escapes, tabs or NULLs in them, so none are undone;
 * it is a baseline, the least a converter does.  Build: cc -O2 -o copy_to_resp copy_to_resp.c */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLS 64

int main(int argc, char **argv)
{
	static char out_buf[1 << 16];
	const char *prefix, **names;
	size_t prefix_len, name_len[MAX_COLS], n_names;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	if (argc < 3 || argc - 2 > MAX_COLS - 1) {
		fprintf(stderr, "usage: copy_to_resp KEY_PREFIX NAME2 [NAME3 ...]\n");
		return 2;
	}
	setvbuf(stdout, out_buf, _IOFBF, sizeof out_buf);
	prefix = argv[1];
	prefix_len = strlen(prefix);
	names = (const char **)argv + 2;
	n_names = (size_t)argc - 2;
	for (size_t i = 0; i < n_names; i++)
		name_len[i] = strlen(names[i]);
	while ((len = getline(&line, &cap, stdin)) > 0) {
		char *col[MAX_COLS], *p = line;
		size_t col_len[MAX_COLS], n = 0;

		if (line[len - 1] == '\n')
			line[--len] = '\0';
		while (n < MAX_COLS) {
			char *tab = strchr(p, '\t');
			col[n] = p;
			col_len[n] = tab ? (size_t)(tab - p) : strlen(p);
			n++;
			if (!tab)
				break;
			p = tab + 1;
		}
		if (n != n_names + 1) {
			fprintf(stderr, "copy_to_resp: a row of %zu columns, expected %zu\n", n,
				n_names + 1);
			return 1;
		}
		printf("*%zu\r\n$4\r\nHSET\r\n$%zu\r\n%s%.*s\r\n", 2 + 2 * n_names,
		       prefix_len + col_len[0], prefix, (int)col_len[0], col[0]);
		for (size_t i = 0; i < n_names; i++)
			printf("$%zu\r\n%s\r\n$%zu\r\n%.*s\r\n", name_len[i], names[i], col_len[i + 1],
			       (int)col_len[i + 1], col[i + 1]);
	}
	free(line);
	return fflush(stdout) == 0 ? 0 : 1;
}
