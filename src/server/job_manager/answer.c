/* answer.c: the register answer written as text (answer.h). */
#include "server/job_manager/answer.h"

#include <stdlib.h>
#include <string.h>

#include "lib/json_util.h"
#include "model/framework.h"

/* ,"key": */
static void key(struct strbuf *sb, const char *k)
{
	strbuf_addch(sb, ',');
	json_util_write_string(sb, k);
	strbuf_addch(sb, ':');
}

static int str_field(struct strbuf *sb, const char *k, const char *v)
{
	key(sb, k);
	return json_util_write_string(sb, v);
}

static void int_field(struct strbuf *sb, const char *k, long long v)
{
	key(sb, k);
	strbuf_addi(sb, v);
}

static void bool_field(struct strbuf *sb, const char *k, bool v)
{
	key(sb, k);
	strbuf_addstr(sb, v ? "true" : "false");
}

/* A tree (the rare parts: resolved connections) as jansson writes it. */
static int tree_field(struct strbuf *sb, const char *k, const json_t *v)
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	key(sb, k);
	if (!text)
		return -1;
	strbuf_addstr(sb, text);
	free(text);
	return 0;
}

/* Whether `name` is one of env's. */
static bool env_has(const struct env_var *env, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(env[i].name, name))
			return true;
	return false;
}

/* env's pairs, but those `over` sets (its own come after). */
static int env_pairs(struct strbuf *sb, const struct env_var *env, size_t n,
                     const struct role_spec *over, bool *first)
{
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		if (over && env_has(over->env, over->n_env, env[i].name))
			continue;
		if (!*first)
			strbuf_addch(sb, ',');
		*first = false;
		rc |= json_util_write_string(sb, env[i].name);
		strbuf_addch(sb, ':');
		rc |= json_util_write_string(sb, env[i].value);
	}
	return rc;
}

int jm_answer_write(struct strbuf *sb, const struct jm_answer *a)
{
	const struct job_spec *spec = a->spec;
	const struct role_spec *rs = a->rs;
	bool first = true;
	int rc = 0;

	strbuf_addstr(sb, "{\"job\":");
	strbuf_addi(sb, a->job_id);
	rc |= str_field(sb, "role", a->role);
	int_field(sb, "index", a->index);
	int_field(sb, "attempt", a->attempt);
	rc |= str_field(sb, "framework", framework_name(spec->framework));
	rc |= str_field(sb, "command", a->command);
	rc |= str_field(sb, "workdir", a->workdir);
	rc |= str_field(sb, "log", a->log);
	rc |= str_field(sb, "cache_dir", a->cache_dir);
	if (a->env) {
		rc |= tree_field(sb, "env", a->env);
	} else {
		/* the job's, then the role's: a name in both is the role's */
		key(sb, "env");
		strbuf_addch(sb, '{');
		rc |= env_pairs(sb, spec->env, spec->n_env, rs, &first);
		rc |= env_pairs(sb, rs->env, rs->n_env, NULL, &first);
		strbuf_addch(sb, '}');
	}
	int_field(sb, "memory_mb", (long long)rs->memory_mb);
	int_field(sb, "vcores", rs->vcores);
	int_field(sb, "gpu_count", rs->gpus);
	rc |= str_field(sb, "gpus", a->gpus);
	key(sb, "roles");
	strbuf_addch(sb, '[');
	for (size_t i = 0; i < spec->n_roles; i++) {
		const struct role_spec *r = &spec->roles[i];
		strbuf_addstr(sb, i ? ",{\"name\":" : "{\"name\":");
		rc |= json_util_write_string(sb, r->name);
		int_field(sb, "instances", r->instances);
		bool_field(sb, "untracked", r->untracked);
		bool_field(sb, "sidecar", r->sidecar);
		strbuf_addch(sb, '}');
	}
	strbuf_addch(sb, ']');
	key(sb, "artifacts");
	strbuf_addch(sb, '[');
	for (size_t i = 0; i < spec->n_artifacts; i++) {
		const struct artifact *ar = &spec->artifacts[i];
		const char *p = a->artifact_paths && a->artifact_paths[i] ? a->artifact_paths[i]
		                                                          : ar->path;
		strbuf_addstr(sb, i ? ",{\"path\":" : "{\"path\":");
		rc |= json_util_write_string(sb, p);
		rc |= str_field(sb, "name", ar->name);
		bool_field(sb, "archive", ar->archive);
		strbuf_addch(sb, '}');
	}
	strbuf_addch(sb, ']');
	rc |= str_field(sb, "src_dir", spec->src_dir);
	int_field(sb, "registration_timeout_s", (long long)spec->registration_timeout_s);
	int_field(sb, "execution_timeout_s", (long long)spec->execution_timeout_s);
	rc |= str_field(sb, "server_instance", a->server_instance);
	bool_field(sb, "cgroup", a->cgroup);
	if (a->launch_error)
		rc |= str_field(sb, "launch_error", a->launch_error);
	if (a->mask)
		rc |= tree_field(sb, "mask", a->mask);
	strbuf_addch(sb, '}');
	return rc || sb->failed ? -1 : 0;
}
