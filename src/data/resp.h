/* resp.h: Redis's protocol (RESP2), written and read by weir itself.
 *
 * resp_command() appends one command as an array of bulk strings; replies
 * are parsed out of a buffer as they arrive, a whole reply at a time
 * (nested arrays included), so a pipeline of many commands is read with
 * one buffer.  Pure: no I/O.
 */
#ifndef WEIR_DATA_RESP_H
#define WEIR_DATA_RESP_H

#include <stddef.h>
#include <stdint.h>

#include "lib/strbuf.h"

/* `*argc` arguments; len NULL: each is NUL-terminated. */
void resp_command(struct strbuf *out, size_t argc, const char *const *argv, const size_t *len);

struct resp_reply {
	char kind;       /* '+', '-', ':', '$', '*' */
	int64_t integer; /* ':' the number; '$' '*' the length (-1: nil) */
	const char *str; /* '+', '-', '$': the text, inside the buffer */
	size_t len;
};

/* One reply at the start of buf[0, n): the bytes it takes (> 0), 0 when
 * the buffer does not yet hold all of it, -1 when it is not RESP. */
long resp_parse(const char *buf, size_t n, struct resp_reply *r);

#endif
