/* agent_proto.c: the agent protocol's framing and task keys (agent_proto.h). */
#include "exec/agent_proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int agent_proto_frame(struct strbuf *out, const json_t *msg)
{
	char *text = json_dumps(msg, JSON_COMPACT);
	size_t at = out->len;

	if (!text)
		return -1;
	strbuf_addstr(out, text);
	strbuf_addch(out, '\n');
	free(text);
	if (out->failed) {
		out->len = at;
		if (out->buf)
			out->buf[at] = '\0';
		return -1;
	}
	return 0;
}

char *agent_proto_next_line(struct strbuf *in, size_t *start, size_t *len)
{
	char *line, *nl;

	if (!in->buf || *start >= in->len)
		return NULL;
	line = in->buf + *start;
	nl = memchr(line, '\n', in->len - *start);
	if (!nl)
		return NULL;
	*nl = '\0';
	*len = (size_t)(nl - line);
	*start = (size_t)(nl - in->buf) + 1;
	return line;
}

const char *agent_proto_kind(const json_t *msg)
{
	return json_string_value(json_object_get(msg, AGENT_KEY_KIND));
}

int agent_proto_task_key(char *buf, size_t size, long long job, const char *role, int index,
                         int attempt)
{
	char num[3][24];
	size_t nlen[3], rlen = strlen(role), at = 0;
	long long v[3] = {job, index, attempt};

	for (int i = 0; i < 3; i++) {
		unsigned long long u =
		    v[i] < 0 ? 0ULL - (unsigned long long)v[i] : (unsigned long long)v[i];
		char t[24];
		size_t n = 0, k = 0;
		do
			t[n++] = (char)('0' + u % 10);
		while (u /= 10);
		if (v[i] < 0)
			num[i][k++] = '-';
		while (n)
			num[i][k++] = t[--n];
		nlen[i] = k;
	}
	if (nlen[0] + rlen + nlen[1] + nlen[2] + 4 > size) {
		if (size)
			snprintf(buf, size, "%lld.%s.%d.%d", job, role, index, attempt);
		return -1;
	}
	memcpy(buf, num[0], nlen[0]);
	at = nlen[0];
	buf[at++] = '.';
	memcpy(buf + at, role, rlen);
	at += rlen;
	for (int i = 1; i < 3; i++) {
		buf[at++] = '.';
		memcpy(buf + at, num[i], nlen[i]);
		at += nlen[i];
	}
	buf[at] = '\0';
	return 0;
}

int agent_proto_msg_key(const json_t *msg, char *buf, size_t size)
{
	const char *role = json_string_value(json_object_get(msg, AGENT_KEY_ROLE));

	if (!role) {
		if (size)
			buf[0] = '\0';
		return -1;
	}
	return agent_proto_task_key(
	    buf, size, (long long)json_integer_value(json_object_get(msg, AGENT_KEY_JOB)), role,
	    (int)json_integer_value(json_object_get(msg, AGENT_KEY_INDEX)),
	    (int)json_integer_value(json_object_get(msg, AGENT_KEY_ATTEMPT)));
}
