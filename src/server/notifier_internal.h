/* notifier_internal.h: what notifier.c (deliveries, records, retries) and
 * notifier_send.c (one attempt: the POST, the mail, the command) share.
 * Not for use outside src/server/notifier*.c.
 */
#ifndef WEIR_SERVER_NOTIFIER_INTERNAL_H
#define WEIR_SERVER_NOTIFIER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <uv.h>

#include "lib/strvec.h"
#include "model/notify.h"
#include "store/notify_store.h"

struct delivery;

struct notifier {
	uv_loop_t *loop;
	struct notify_store *ns;
	struct secrets *secrets;
	char *base_url;
	struct delivery *deliveries; /* in progress */
	int in_pool;                 /* attempts on the thread pool */
	int closing;                 /* deliveries whose timer is closing */
	bool stopping;
};

/* One event to one target, from its first attempt to its last. */
struct delivery {
	struct notifier *n;
	struct delivery *next, **prev;
	int64_t row_id;
	const char *event; /* notify_event_name(): static */
	char *target;      /* masked, for records and logs */
	enum notify_kind kind;
	int attempt; /* attempts started */
	int retries;
	int64_t delay_ms;
	/* the target's fields, copied */
	char *url;
	json_t *headers;
	char *conn;
	struct strvec to;
	char *subject, *mail_subject, *command;
	/* what it sends */
	char *body; /* the JSON payload */
	char *text;
	struct strvec env; /* a command's environment */
	uv_timer_t timer;  /* the next attempt, or a command's time limit */
	bool running;      /* an attempt is on the pool or its process runs */
	bool as_task_user; /* a command run as the tasks' user (server/task_user.h) */
	/* the attempt in progress (notifier_send.c) */
	struct attempt_io *io;
};

/* Starts attempt d->attempt: resolves the connection, then queues the work
 * or spawns the command; delivery_attempt_done() follows.  -1 with `why`
 * when it could not start (nothing queued then). */
int delivery_attempt_start(struct delivery *d, char *why, size_t why_size);
/* The attempt's resources (a password zeroed); safe to call twice. */
void delivery_attempt_release(struct delivery *d);
/* An attempt's end, on the loop: recorded; retried, sent or failed. */
void delivery_attempt_done(struct delivery *d, bool ok, const char *error);

/* A running command is killed (stopping); nothing for other kinds. */
void notifier_kill_command(struct delivery *d);

/* Commands run at most this long, then are killed. */
#define NOTIFY_COMMAND_TIMEOUT_MS 60000
/* A POST or an SMTP exchange waits at most this long per read or write. */
#define NOTIFY_IO_TIMEOUT_MS 15000

#endif
