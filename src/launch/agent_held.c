/* agent_held.c: what the agent holds, as it tells it (agent_state.h): the
 * tasks of "held" (the answer to a server's hello) and "status" (`weir
 * agent status`). */
#include "launch/agent_state.h"

#include <string.h>
#include <unistd.h>

#include "lib/proc.h"

json_t *agent_held_json(struct agent *a)
{
	json_t *list = json_array();
	struct hashmap_iter it;

	hashmap_iter_init(&it, a->tasks);
	while (hashmap_iter_next(&it)) {
		struct agent_task *t = it.value;
		struct journal_state st;
		/* a stale task (of a job the server lost) is not the server's:
		 * the start that waits for its end is sent again if need be */
		if (t->stale)
			continue;
		json_t *e = agent_task_key_json(t);
		bool read = journal_read(a->dir, t->key, &st) == 0;
		const char *state =
		    agent_task_state_alive(t->state)
		        ? (read && st.started ? "running" : "starting")
		        : (t->result && !strcmp(json_string_value(json_object_get(t->result, "t")),
		                                "lost")
		               ? "lost"
		               : "ended");
		json_object_set_new(e, "key", json_string(t->key));
		json_object_set_new(e, "shim_pid", json_integer(t->pid));
		json_object_set_new(e, "pid", json_integer(read ? st.pid : 0));
		json_object_set_new(e, "state", json_string(state));
		json_object_set_new(e, "adopted", json_boolean(t->pidfd >= 0));
		if (read)
			journal_state_release(&st);
		json_array_append_new(list, e);
	}
	return list;
}

static long self_rss_kb(void)
{
	struct proc_stat ps;
	return proc_read_stat((int)getpid(), &ps) == 0 ? (long)(ps.rss_bytes / 1024) : -1;
}

json_t *agent_status_json(struct agent *a)
{
	return json_pack("{s:s,s:i,s:I,s:b,s:o}", AGENT_KEY_KIND, AGENT_MSG_STATUS, "agent_pid",
	                 (int)getpid(), "rss_kb", (json_int_t)self_rss_kb(), "server",
	                 a->server >= 0, "tasks", agent_held_json(a));
}
