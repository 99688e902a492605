/* agent_status.c: the agent's clients that are not the server: where the
 * home is, and `weir agent status` (agent.h). */
#include "launch/agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/error.h"
#include "lib/fs.h"
#include "lib/strbuf.h"
#include "lib/usock.h"

char *agent_home(const char *given)
{
	const char *h = given && *given ? given : getenv("WEIR_HOME");

	if (h && *h)
		return strdup(h);
	h = getenv("HOME");
	return fs_join(h && *h ? h : ".", ".weir");
}

int agent_status_print(const char *home, bool as_json)
{
	struct weir_error err = {0};
	int fd = usock_connect(home, AGENT_SOCKET, &err);
	struct strbuf in = STRBUF_INIT;
	char buf[65536];
	json_t *m = NULL;

	if (fd < 0) {
		fprintf(stderr, "weir agent: no agent answers at %s/%s (%s)\n", home, AGENT_SOCKET,
		        strerror(errno));
		return 1;
	}
	static const char ask[] = "{\"" AGENT_KEY_KIND "\":\"" AGENT_MSG_STATUS "\"}\n";
	if (write(fd, ask, sizeof ask - 1) < 0) {
		close(fd);
		return 1;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n <= 0)
			break;
		strbuf_add(&in, buf, (size_t)n);
		if (memchr(in.buf, '\n', in.len))
			break;
	}
	close(fd);
	if (in.len)
		m = json_loadb(in.buf, in.len, 0, NULL);
	strbuf_release(&in);
	if (!m) {
		fprintf(stderr, "weir agent: no answer from the agent\n");
		return 1;
	}
	if (as_json) {
		char *text = json_dumps(m, JSON_COMPACT);

		if (text)
			puts(text);
		free(text);
		json_decref(m);
		return text ? 0 : 1;
	}
	json_t *tasks = json_object_get(m, "tasks"), *t;
	size_t i;
	printf("agent pid %lld, %lld KiB resident, %s, %zu task(s)\n",
	       (long long)json_integer_value(json_object_get(m, "agent_pid")),
	       (long long)json_integer_value(json_object_get(m, "rss_kb")),
	       json_is_true(json_object_get(m, "server")) ? "server connected" : "no server",
	       json_array_size(tasks));
	printf("%-32s %-9s %-9s %s\n", "TASK", "SHIM", "PID", "STATE");
	json_array_foreach(tasks, i, t)
	{
		printf("%-32s %-9lld %-9lld %s\n", json_string_value(json_object_get(t, "key")),
		       (long long)json_integer_value(json_object_get(t, "shim_pid")),
		       (long long)json_integer_value(json_object_get(t, "pid")),
		       json_string_value(json_object_get(t, "state")));
	}
	json_decref(m);
	return 0;
}
