/* task_output.c: masking the program's output before its log (task_output.h). */
#include "launch/task_output.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

int task_output_set_mask(struct task_output *o, const json_t *list, const char *const *extra,
                         size_t n_extra)
{
	size_t n = json_array_size(list), k = 0;
	const char **v;

	if (n + n_extra == 0)
		return 0;
	v = calloc(n + n_extra, sizeof *v);
	if (!v)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (json_is_string(json_array_get(list, i)))
			v[k++] = json_string_value(json_array_get(list, i));
	for (size_t i = 0; i < n_extra; i++)
		if (extra[i])
			v[k++] = extra[i];
	mask_destroy(o->mask);
	o->mask = mask_create(v, k);
	free(v);
	return o->mask ? 0 : -1;
}

bool task_output_needs_pipe(const struct task_output *o)
{
	return o->ship || mask_active(o->mask);
}

/* Where masked bytes go. */
static void sink(void *arg, const char *data, size_t n)
{
	struct task_output *o = arg;

	if (o->ship) {
		logship_write(o->ship, data, n);
		return;
	}
	while (n > 0) {
		ssize_t w = write(o->fd, data, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* the log file is gone: nothing better to do */
		data += w;
		n -= (size_t)w;
	}
}

void task_output_write(struct task_output *o, const char *data, size_t n)
{
	mask_feed(o->mask, data, n, sink, o);
}

void task_output_end(struct task_output *o)
{
	mask_flush(o->mask, sink, o);
}

void task_output_release(struct task_output *o)
{
	mask_destroy(o->mask);
	o->mask = NULL;
}
