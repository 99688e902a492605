/* answer.c: the register answer written as text (answer.h). */
#include "server/job_manager/answer.h"

#include <stdlib.h>
#include <string.h>

#include "lib/json_util.h"
#include "model/framework.h"

/* A tree (the rare parts: resolved connections) as jansson writes it. */
static int tree_field(struct strbuf *sb, const char *k, const json_t *v)
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	json_util_write_key(sb, k);
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
                     const struct role_spec *over)
{
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		if (!over || !env_has(over->env, over->n_env, env[i].name))
			rc |= json_util_write_field(sb, env[i].name, env[i].value);
	return rc;
}

int jm_answer_write(struct strbuf *sb, const struct jm_answer *a)
{
	const struct job_spec *spec = a->spec;
	const struct role_spec *rs = a->rs;
	int rc = 0;

	strbuf_addstr(sb, "{\"job\":");
	strbuf_addi(sb, a->job_id);
	rc |= json_util_write_field(sb, "role", a->role);
	json_util_write_int_field(sb, "index", a->index);
	json_util_write_int_field(sb, "attempt", a->attempt);
	rc |= json_util_write_field(sb, "framework", framework_name(spec->framework));
	rc |= json_util_write_field(sb, "command", a->command);
	rc |= json_util_write_field(sb, "workdir", a->workdir);
	rc |= json_util_write_field(sb, "log", a->log);
	rc |= json_util_write_field(sb, "cache_dir", a->cache_dir);
	if (a->env) {
		rc |= tree_field(sb, "env", a->env);
	} else {
		/* the job's, then the role's: a name in both is the role's */
		json_util_write_key(sb, "env");
		strbuf_addch(sb, '{');
		rc |= env_pairs(sb, spec->env, spec->n_env, rs);
		rc |= env_pairs(sb, rs->env, rs->n_env, NULL);
		strbuf_addch(sb, '}');
	}
	json_util_write_int_field(sb, "memory_mb", (long long)rs->memory_mb);
	json_util_write_int_field(sb, "vcores", rs->vcores);
	json_util_write_int_field(sb, "gpu_count", rs->gpus);
	rc |= json_util_write_field(sb, "gpus", a->gpus);
	json_util_write_key(sb, "roles");
	strbuf_addch(sb, '[');
	for (size_t i = 0; i < spec->n_roles; i++) {
		const struct role_spec *r = &spec->roles[i];
		strbuf_addstr(sb, i ? ",{\"name\":" : "{\"name\":");
		rc |= json_util_write_string(sb, r->name);
		json_util_write_int_field(sb, "instances", r->instances);
		json_util_write_bool_field(sb, "untracked", r->untracked);
		json_util_write_bool_field(sb, "sidecar", r->sidecar);
		strbuf_addch(sb, '}');
	}
	strbuf_addch(sb, ']');
	json_util_write_key(sb, "artifacts");
	strbuf_addch(sb, '[');
	for (size_t i = 0; i < spec->n_artifacts; i++) {
		const struct artifact *ar = &spec->artifacts[i];
		const char *p =
		    a->artifact_paths && a->artifact_paths[i] ? a->artifact_paths[i] : ar->path;
		strbuf_addstr(sb, i ? ",{\"path\":" : "{\"path\":");
		rc |= json_util_write_string(sb, p);
		rc |= json_util_write_field(sb, "name", ar->name);
		json_util_write_bool_field(sb, "archive", ar->archive);
		strbuf_addch(sb, '}');
	}
	strbuf_addch(sb, ']');
	rc |= json_util_write_field(sb, "src_dir", spec->src_dir);
	json_util_write_int_field(sb, "registration_timeout_s",
	                          (long long)spec->registration_timeout_s);
	json_util_write_int_field(sb, "execution_timeout_s", (long long)spec->execution_timeout_s);
	rc |= json_util_write_field(sb, "server_instance", a->server_instance);
	json_util_write_bool_field(sb, "cgroup", a->cgroup);
	if (a->launch_error)
		rc |= json_util_write_field(sb, "launch_error", a->launch_error);
	if (a->mask)
		rc |= tree_field(sb, "mask", a->mask);
	strbuf_addch(sb, '}');
	return rc || sb->failed ? -1 : 0;
}

int jm_answer_add_gang(struct strbuf *sb, int port, const char *cluster_json)
{
	if (sb->len < 2 || sb->buf[sb->len - 1] != '}')
		return -1;
	/* the object's closing brace gives way to the two fields */
	strbuf_remove(sb, sb->len - 1, 1);
	if (strbuf_add(sb, ",\"port\":", 8) < 0 || strbuf_addi(sb, port) < 0 ||
	    strbuf_add(sb, ",\"cluster\":", 11) < 0 ||
	    strbuf_add(sb, cluster_json, strlen(cluster_json)) < 0 || strbuf_add(sb, "}", 1) < 0)
		return -1;
	return 0;
}
