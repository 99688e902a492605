/* log_stream.c: log bodies, followers, and their wake-ups on appends, the
 * kernel's notice of a write, task ends and the fallback look at the file
 * (log_stream.h). */
#include "api/logs/log_stream.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/logs/log_append.h"
#include "lib/clock.h"

struct follower {
	struct log_stream *ls; /* NULL once the streamer is gone */
	struct http_request *req;
	struct log_stream_source src;
	uint64_t sent;        /* bytes handed to MHD so far */
	bool fed;             /* the server has appended to the file since this follow began */
	bool heard;           /* the kernel told of a write to the file (inotify) */
	uv_fs_event_t *watch; /* the file watched while waiting; NULL: none */
	bool waiting;         /* the response waits for bytes (HTTP_STREAM_WAIT) */
	int64_t next_look_ms; /* while waiting: when to look at the file again */
	struct follower *prev, *next;
};

struct log_stream {
	uv_timer_t timer;
	int64_t poll_ms, recheck_ms; /* LOG_STREAM_POLL_MS, LOG_STREAM_RECHECK_MS */
	struct follower *followers;
};

static void on_timer(uv_timer_t *t);

/* The timer goes off when the first waiting follower is due a look. */
static void timer_arm(struct log_stream *ls)
{
	int64_t first = INT64_MAX, now;

	for (struct follower *f = ls->followers; f; f = f->next)
		if (f->waiting && f->next_look_ms < first)
			first = f->next_look_ms;
	if (first == INT64_MAX) {
		uv_timer_stop(&ls->timer);
		return;
	}
	now = clock_mono_ms();
	uv_timer_start(&ls->timer, on_timer, first > now ? (uint64_t)(first - now) : 0, 0);
}

/* How long a waiting follower goes before it looks at its file again:
 * long when it is told of writes (the server's appends, or the kernel's
 * notice of a write on this machine), short for a file written where this
 * machine's kernel cannot see it (a Slurm step on another node writing to
 * a shared file system). */
static int64_t look_after_ms(const struct follower *f)
{
	const struct log_stream *ls = f->ls;
	if (!ls)
		return LOG_STREAM_POLL_MS;
	return f->fed || f->heard ? ls->recheck_ms : ls->poll_ms;
}

static void look(struct follower *f);

static void on_file_event(uv_fs_event_t *h, const char *name, int events, int status)
{
	struct follower *f = h->data;

	(void)name;
	(void)events;
	if (!f || status < 0)
		return;
	f->heard = true;
	look(f);
	if (f->ls)
		timer_arm(f->ls);
}

static void watch_closed(uv_handle_t *h)
{
	free(h);
}

static void watch_stop(struct follower *f)
{
	if (!f->watch)
		return;
	f->watch->data = NULL;
	uv_close((uv_handle_t *)f->watch, watch_closed);
	f->watch = NULL;
}

/* A follower of a file the server does not write waits for the kernel's
 * notice of a write (inotify through libuv); without a watch (the file is
 * not there yet, or no watch could be made) the looks alone find bytes. */
static void watch_start(struct follower *f)
{
	if (f->watch || f->fed || !f->ls || !f->src.path || f->src.fd < 0)
		return;
	f->watch = malloc(sizeof *f->watch);
	if (!f->watch)
		return;
	if (uv_fs_event_init(f->ls->timer.loop, f->watch) < 0) {
		free(f->watch);
		f->watch = NULL;
		return;
	}
	f->watch->data = f;
	if (uv_fs_event_start(f->watch, on_file_event, f->src.path, 0) < 0)
		watch_stop(f);
}

static void wake(struct follower *f)
{
	f->waiting = false;
	http_request_resume(f->req);
}

/* Resumes the response when the task has ended or the file has grown. */
static void look(struct follower *f)
{
	struct stat st;
	bool resume = false;

	if (!f->waiting)
		return;
	if (f->src.ended_fn && !f->src.ended && f->src.ended_fn(f->src.ended_arg)) {
		f->src.ended = true;
		resume = true;
	}
	if (f->src.fd < 0 && f->src.path)
		f->src.fd = open(f->src.path, O_RDONLY | O_CLOEXEC);
	if (f->src.fd >= 0 && fstat(f->src.fd, &st) == 0 &&
	    (uint64_t)st.st_size > f->src.start + f->sent)
		resume = true;
	if (resume) {
		wake(f);
	} else {
		watch_start(f);
		f->next_look_ms = clock_mono_ms() + look_after_ms(f);
	}
}

static void on_timer(uv_timer_t *t)
{
	struct log_stream *ls = t->data;
	int64_t now = clock_mono_ms();

	for (struct follower *f = ls->followers; f; f = f->next)
		if (f->waiting && now >= f->next_look_ms)
			look(f);
	timer_arm(ls);
}

static ssize_t follower_read(void *arg, uint64_t pos, char *buf, size_t max)
{
	struct follower *f = arg;
	uint64_t at = f->src.start + f->sent;
	ssize_t n;

	(void)pos;
	if (at >= f->src.end)
		return HTTP_STREAM_END;
	if (max > f->src.end - at)
		max = (size_t)(f->src.end - at);
	if (f->src.fd < 0 && f->src.path)
		f->src.fd = open(f->src.path, O_RDONLY | O_CLOEXEC);
	if (f->src.fd >= 0) {
		n = pread(f->src.fd, buf, max, (off_t)at);
		if (n > 0) {
			f->sent += (uint64_t)n;
			return n;
		}
		if (n < 0)
			return HTTP_STREAM_ERROR;
	}
	if (!f->src.follow || f->src.ended || !f->ls)
		return HTTP_STREAM_END;
	f->waiting = true;
	watch_start(f);
	f->next_look_ms = clock_mono_ms() + look_after_ms(f);
	timer_arm(f->ls);
	return HTTP_STREAM_WAIT;
}

static void source_release(struct log_stream_source *src)
{
	if (src->fd >= 0)
		close(src->fd);
	free(src->path);
	free(src->ended_arg);
}

static void follower_free(void *arg)
{
	struct follower *f = arg;
	struct log_stream *ls = f->ls;

	watch_stop(f);
	if (ls) {
		if (f->prev)
			f->prev->next = f->next;
		else
			ls->followers = f->next;
		if (f->next)
			f->next->prev = f->prev;
		if (f->waiting)
			timer_arm(ls);
	}
	source_release(&f->src);
	free(f);
}

int log_stream_respond(struct log_stream *ls, struct http_request *req,
                       struct log_stream_source *src)
{
	struct follower *f = calloc(1, sizeof *f);

	if (!f) {
		source_release(src);
		return -1;
	}
	f->ls = ls;
	f->req = req;
	f->src = *src;
	f->next = ls->followers;
	if (ls->followers)
		ls->followers->prev = f;
	ls->followers = f;
	http_request_respond_stream(req, 200, "text/plain; charset=utf-8", follower_read, f,
	                            follower_free);
	return 0;
}

void log_stream_notify_job(struct log_stream *ls, int64_t job)
{
	if (!ls)
		return;
	for (struct follower *f = ls->followers; f; f = f->next)
		if (f->src.job == job)
			look(f);
	timer_arm(ls);
}

int log_stream_append(struct log_stream *ls, const char *path, uint64_t offset, const char *data,
                      size_t len, uint64_t *size, struct weir_error *err)
{
	int rc = log_append_at(path, offset, data, len, size, err);

	/* a chunk sent again adds nothing: its followers read nothing new and
	 * wait again */
	if (rc != 0 || !ls || len == 0)
		return rc;
	for (struct follower *f = ls->followers; f; f = f->next) {
		if (!f->src.path || strcmp(f->src.path, path))
			continue;
		f->fed = true;
		watch_stop(f); /* the appends wake it from now on */
		if (f->waiting)
			wake(f);
	}
	timer_arm(ls);
	return rc;
}

struct log_stream *log_stream_create(uv_loop_t *loop)
{
	struct log_stream *ls = calloc(1, sizeof *ls);

	if (!ls)
		return NULL;
	uv_timer_init(loop, &ls->timer);
	ls->timer.data = ls;
	ls->poll_ms = LOG_STREAM_POLL_MS;
	ls->recheck_ms = LOG_STREAM_RECHECK_MS;
	return ls;
}

void log_stream_set_looks(struct log_stream *ls, int64_t poll_ms, int64_t recheck_ms)
{
	ls->poll_ms = poll_ms;
	ls->recheck_ms = recheck_ms;
}

static void timer_closed(uv_handle_t *h)
{
	free(h->data);
}

void log_stream_destroy(struct log_stream *ls)
{
	if (!ls)
		return;
	/* followers are freed by their responses; make them forget us */
	for (struct follower *f = ls->followers; f; f = f->next) {
		f->ls = NULL;
		f->src.ended = true;
		f->src.follow = false;
		watch_stop(f);
	}
	ls->followers = NULL;
	uv_timer_stop(&ls->timer);
	uv_close((uv_handle_t *)&ls->timer, timer_closed);
}
