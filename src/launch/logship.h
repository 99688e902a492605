/* logship.h: shipping a task's log to the server over HTTP (`weir launch
 * --log-to-server`), for nodes that share no file system with the server.
 *
 * The launcher reads the program's stdout+stderr from a pipe (and its own
 * log lines through log_set_tee) into a bounded buffer; a thread POSTs the
 * buffered bytes to /api/v1/launch/log at the log file's offset, in chunks
 * of at most LOGSHIP_CHUNK bytes, at most every LOGSHIP_INTERVAL_MS unless a
 * whole chunk is ready.  The server appends a chunk only at its file's size,
 * so a retried POST is harmless and a gap is answered 409 with the size
 * (the launcher goes on from there).  When the server is unreachable the
 * bytes wait in the buffer; beyond its bound the oldest unsent bytes are
 * dropped and a note saying how many takes their place.  Reading never
 * waits for the network: the program is never slowed by the server.
 *
 * The buffer (logbuf_*) is pure and tested on its own; logship_* adds the
 * thread and the HTTP calls.  Protocol: docs/api.md, "Launch protocol".
 */
#ifndef WEIR_LAUNCH_LOGSHIP_H
#define WEIR_LAUNCH_LOGSHIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOGSHIP_CHUNK (64 * 1024)
#define LOGSHIP_INTERVAL_MS 200
#define LOGSHIP_BOUND (8u << 20)

/* The bytes not yet taken for sending: a ring of at most `cap` bytes. */
struct logbuf {
	char *data;
	size_t cap, start, len;
	uint64_t dropped; /* bytes dropped since the last note was taken */
};

/* 0, or -1 on out of memory. */
int logbuf_init(struct logbuf *b, size_t cap);
void logbuf_release(struct logbuf *b);
/* Appends; beyond the bound the oldest bytes go (counted in b->dropped). */
void logbuf_append(struct logbuf *b, const char *data, size_t n);
/* Takes the next chunk into out (at most max bytes): the note about dropped
 * bytes when there are any, else the oldest bytes.  Returns its length
 * (0: nothing to send). */
size_t logbuf_take(struct logbuf *b, char *out, size_t max);

struct http_client;
struct logship;

/* Starts the sending thread.  `server` and `token` as for http_client_create
 * (the thread has its own connection).  NULL on failure. */
struct logship *logship_create(const char *server, const char *token, long long job,
                               const char *role, int index, int attempt);
/* Adds bytes (any thread). */
void logship_write(struct logship *ls, const char *data, size_t n);
/* A log_tee_fn: the launcher's own lines go with the program's. */
void logship_tee(const char *line, size_t len, void *arg);
/* Sends what is left, retrying for up to give_up_ms while the server does
 * not answer, then stops the thread and frees everything.  Returns true when
 * every byte was accepted.  NULL is a no-op (true). */
bool logship_finish(struct logship *ls, int64_t give_up_ms);

#endif
