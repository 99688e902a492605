/* answer.h: the register answer's text, written without a jansson tree.
 *
 * A launcher (or the agent's shim) gets this JSON object when its task
 * registers: what it runs, where, with what.  It is written once per task
 * start, straight into a strbuf (lib/json_util.h's json_util_write_string
 * for every string), so that a task's start does not build and dump a
 * tree.  The fields are those docs/internals/launch.md lists; the object
 * parses to what the tree of the same fields would. */
#ifndef WEIR_SERVER_JOB_MANAGER_ANSWER_H
#define WEIR_SERVER_JOB_MANAGER_ANSWER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/strbuf.h"
#include "model/job_spec.h"

struct jm_answer {
	const struct job_spec *spec;
	const struct role_spec *rs; /* the task's role, in spec */
	int64_t job_id;
	const char *role;
	int index, attempt;
	const char *command, *workdir, *log, *cache_dir;
	const char *gpus; /* NULL: null (a backend that binds devices itself) */
	/* the path given for each of spec's artifacts (a shipped archive's
	 * copy); NULL, or an entry NULL: the spec's own */
	const char *const *artifact_paths;
	const char *server_instance;
	bool cgroup;
	/* the task's environment with its connections resolved, and what the
	 * launcher masks: given when the spec has connections (NULL env: the
	 * spec's and the role's; NULL mask: no "mask") */
	const json_t *env, *mask;
	const char *launch_error; /* NULL: none */
};

/* Appends the answer, one JSON object, to sb.  0, or -1 when out of memory
 * or a string is not valid UTF-8 (sb then holds a part). */
int jm_answer_write(struct strbuf *sb, const struct jm_answer *a);

#endif
