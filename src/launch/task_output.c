/* task_output.c: masking the program's output before its log (task_output.h). */
#include "launch/task_output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"

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

/* Writes data[0..n) to fd: the bytes written (n, or fewer with errno). */
static size_t write_all(int fd, const char *data, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t w = write(fd, data + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			break;
		}
		done += (size_t)w;
	}
	return done;
}

static bool no_space(int e)
{
	return e == ENOSPC || e == EDQUOT;
}

/* The marker where bytes were lost; true when written (or none owed). */
static bool write_marker(struct task_output *o)
{
	char line[256];
	int len;

	if (!o->lost)
		return true;
	len = snprintf(line, sizeof line, "\n" TASK_OUTPUT_TRUNCATED, (unsigned long long)o->lost,
	               strerror(o->lost_errno));
	if (len < 0 || (size_t)len >= sizeof line)
		len = (int)sizeof line - 1;
	if (write_all(o->fd, line, (size_t)len) < (size_t)len)
		return false;
	o->lost = 0;
	return true;
}

/* Where masked bytes go.  What the log file refuses is counted, not waited
 * for: the program must not block on a full disk, nor fail for it. */
static void sink(void *arg, const char *data, size_t n)
{
	struct task_output *o = arg;
	size_t done;

	if (o->ship) {
		logship_write(o->ship, data, n);
		return;
	}
	if (!write_marker(o)) {
		o->lost += n;
		return;
	}
	done = write_all(o->fd, data, n);
	if (done < n) {
		o->lost += n - done;
		o->lost_errno = errno;
	}
}

void task_output_write(struct task_output *o, const char *data, size_t n)
{
	mask_feed(o->mask, data, n, sink, o);
}

void task_output_end(struct task_output *o)
{
	int64_t give_up = clock_mono_ms() + TASK_OUTPUT_MARKER_WAIT_MS, wait_ms = 50;

	mask_flush(o->mask, sink, o);
	/* a full disk may free up: the log says it is not whole */
	while (!o->ship && !write_marker(o) && no_space(errno) && clock_mono_ms() < give_up) {
		struct timespec ts = {.tv_sec = wait_ms / 1000,
		                      .tv_nsec = (wait_ms % 1000) * 1000000};
		nanosleep(&ts, NULL);
		if (wait_ms < 1000)
			wait_ms *= 2;
	}
}

void task_output_release(struct task_output *o)
{
	mask_destroy(o->mask);
	o->mask = NULL;
}
