/* Tests of the native job spec: a full spec from a real file, defaults,
 * round-trip through JSON, every kind of bad input with its field path and
 * line, and the helpers (commands, deciding role, memory, durations). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/job_spec.h"
#include "model/job_spec_edit.h"

static const char *full_spec =
	"name: imdb\n"
	"framework: pytorch\n"
	"priority: 5\n"
	"entry_point: train.py\n"
	"params: \"--epochs 2\"\n"
	"python: venv/bin/python\n"
	"src_dir: ./src\n"
	"artifacts:\n"
	"  - {path: ./venv.zip, name: venv}\n"
	"  - /data/extra.tar.gz\n"
	"  - {path: /data/dir, archive: false}\n"
	"env: {KEY: value, NUM: 3}\n"
	"success_policy: all\n"
	"fail_on_worker_failure: true\n"
	"restart: {max_restarts: 2, retry_exit_codes: \"1-137\"}\n"
	"timeouts: {allocation: 10m, registration: 300, execution: 1h30m}\n"
	"roles:\n"
	"  worker:\n"
	"    instances: 2\n"
	"    memory: 4g\n"
	"    vcores: 2\n"
	"    gpus: 1\n"
	"    env: {ROLE_ENV: x}\n"
	"    stop_on_failure: true\n"
	"  ps: {instances: 1, memory: 2048, untracked: true}\n"
	"  tb: {command: tensorboard --logdir x, sidecar: true}\n";

static struct job_spec *parse(const char *text, struct weir_error *err)
{
	return job_spec_parse_string(text, strlen(text), "s.yaml", "/base", err);
}

static void expect_error(const char *text, const char *needle)
{
	struct weir_error err = {0};
	struct job_spec *s = parse(text, &err);
	if (s) {
		job_spec_destroy(s);
		fail_msg("parsed, expected an error containing \"%s\"", needle);
	}
	if (!strstr(err.msg, needle))
		fail_msg("error \"%s\" lacks \"%s\"", err.msg, needle);
}

static void test_full_spec(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct job_spec *s = parse(full_spec, &err);
	if (!s)
		fail_msg("%s", err.msg);
	assert_string_equal(s->name, "imdb");
	assert_int_equal(s->framework, FRAMEWORK_PYTORCH);
	assert_int_equal(s->priority, 5);
	assert_string_equal(s->src_dir, "/base/src");
	assert_int_equal(s->n_artifacts, 3);
	assert_string_equal(s->artifacts[0].path, "/base/venv.zip");
	assert_string_equal(s->artifacts[0].name, "venv");
	assert_true(s->artifacts[0].archive);
	assert_string_equal(s->artifacts[1].name, "extra");
	assert_true(s->artifacts[1].archive);
	assert_string_equal(s->artifacts[2].name, "dir");
	assert_false(s->artifacts[2].archive);
	assert_int_equal(s->n_env, 2);
	assert_string_equal(s->env[1].value, "3");
	assert_int_equal(s->success, SUCCESS_ALL_WORKERS);
	assert_true(s->fail_on_worker_failure);
	assert_int_equal(s->max_restarts, 2);
	assert_int_equal(s->retry_exit_min, 1);
	assert_int_equal(s->retry_exit_max, 137);
	assert_int_equal(s->allocation_timeout_s, 600);
	assert_int_equal(s->registration_timeout_s, 300);
	assert_int_equal(s->execution_timeout_s, 5400);
	assert_int_equal(s->n_roles, 3);
	const struct role_spec *w = job_spec_find_role(s, "worker");
	assert_non_null(w);
	assert_int_equal(w->instances, 2);
	assert_int_equal(w->memory_mb, 4096);
	assert_int_equal(w->vcores, 2);
	assert_int_equal(w->gpus, 1);
	assert_true(w->stop_on_failure);
	assert_false(w->untracked);
	const struct role_spec *ps = job_spec_find_role(s, "ps");
	assert_int_equal(ps->memory_mb, 2048);
	assert_true(ps->untracked);
	const struct role_spec *tb = job_spec_find_role(s, "tb");
	assert_true(tb->sidecar);
	assert_true(tb->untracked);
	assert_int_equal(job_spec_task_count(s), 4);
	assert_ptr_equal(job_spec_deciding_role(s), w);
	char *cmd = job_spec_role_command(s, w);
	assert_string_equal(cmd, "venv/bin/python train.py --epochs 2");
	free(cmd);
	cmd = job_spec_role_command(s, tb);
	assert_string_equal(cmd, "tensorboard --logdir x");
	free(cmd);
	job_spec_destroy(s);
}

static void test_defaults(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct job_spec *s = parse("roles:\n  worker: {command: ./run.sh}\n  ps:\n", &err);
	/* ps has no command and there is no entry point */
	assert_null(s);
	assert_non_null(strstr(err.msg, "roles.ps.command: missing"));

	s = parse("entry_point: t.py\nroles:\n  worker:\n", &err);
	if (!s)
		fail_msg("%s", err.msg);
	assert_string_equal(s->name, "job");
	assert_int_equal(s->framework, FRAMEWORK_NONE);
	assert_int_equal(s->roles[0].instances, 1);
	assert_int_equal(s->roles[0].memory_mb, 2048);
	assert_int_equal(s->roles[0].vcores, 1);
	assert_int_equal(s->roles[0].gpus, 0);
	assert_int_equal(s->success, SUCCESS_CHIEF);
	assert_int_equal(s->retry_exit_min, 128);
	assert_int_equal(s->retry_exit_max, 255);
	assert_int_equal(s->registration_timeout_s, 300);
	assert_int_equal(s->allocation_timeout_s, 0);
	assert_int_equal(s->execution_timeout_s, 0);
	assert_null(s->src_dir);
	char *cmd = job_spec_role_command(s, &s->roles[0]);
	assert_string_equal(cmd, "t.py");
	free(cmd);
	job_spec_destroy(s);
}

static void assert_same(const struct job_spec *a, const struct job_spec *b)
{
	json_t *ja = job_spec_to_json(a), *jb = job_spec_to_json(b);
	assert_true(json_equal(ja, jb));
	json_decref(ja);
	json_decref(jb);
	assert_string_equal(a->name, b->name);
	assert_int_equal(a->n_roles, b->n_roles);
	for (size_t i = 0; i < a->n_roles; i++) {
		assert_string_equal(a->roles[i].name, b->roles[i].name);
		assert_int_equal(a->roles[i].memory_mb, b->roles[i].memory_mb);
		assert_int_equal(a->roles[i].instances, b->roles[i].instances);
		assert_int_equal(a->roles[i].untracked, b->roles[i].untracked);
		assert_int_equal(a->roles[i].sidecar, b->roles[i].sidecar);
		assert_int_equal(a->roles[i].n_env, b->roles[i].n_env);
	}
	assert_int_equal(a->n_artifacts, b->n_artifacts);
	for (size_t i = 0; i < a->n_artifacts; i++) {
		assert_string_equal(a->artifacts[i].path, b->artifacts[i].path);
		assert_int_equal(a->artifacts[i].archive, b->artifacts[i].archive);
	}
	assert_int_equal(a->execution_timeout_s, b->execution_timeout_s);
	assert_int_equal(a->retry_exit_min, b->retry_exit_min);
	assert_int_equal(a->retry_exit_max, b->retry_exit_max);
	assert_int_equal(a->success, b->success);
	assert_int_equal(a->priority, b->priority);
}

/* The text stored for a job is the writer's: what the tree built before
 * it wrote (json_dumps, JSON_COMPACT), byte for byte, with every key and
 * strings that need escaping; the tree read back from it is the same. */
static const char *written_spec =
	"name: \"imdb \\\"q\\\" é\"\n"
	"framework: tensorflow\n"
	"priority: -3\n"
	"entry_point: train.py\n"
	"params: \"--epochs 2\\t--x \\\\y\"\n"
	"python: venv/bin/python\n"
	"src_dir: ./src\n"
	"artifacts:\n"
	"  - {path: ./venv.zip, name: venv}\n"
	"  - {path: /data/dir, archive: false}\n"
	"env: {KEY: \"va\\\"lue\\n\", NUM: 3}\n"
	"success_policy: all\n"
	"fail_on_worker_failure: true\n"
	"restart: {max_restarts: 2, retry_exit_codes: \"1-137\"}\n"
	"timeouts: {allocation: 10m, registration: 300, execution: 1h30m}\n"
	"queue: gpu.q\n"
	"slurm: {partition: p1, account: acc, qos: high, time: \"2:00:00\", sbatch_options: [\"--exclusive\", \"--mem=0\"]}\n"
	"connections: [db1, warehouse]\n"
	"roles:\n"
	"  chief: {command: \"echo \\\"hi\\\" && exit 0\", memory: 1536m}\n"
	"  worker:\n"
	"    instances: 2\n"
	"    memory: 4g\n"
	"    vcores: 2\n"
	"    gpus: 1\n"
	"    env: {ROLE_ENV: x}\n"
	"    stop_on_failure: true\n"
	"  tb: {command: tensorboard --logdir x, sidecar: true}\n";

static void expect_written(const char *yaml, const char *want)
{
	struct weir_error err = {0};
	struct job_spec *s = parse(yaml, &err);
	struct strbuf sb = STRBUF_INIT;
	json_t *tree, *back;

	if (!s)
		fail_msg("%s", err.msg);
	assert_int_equal(job_spec_write_json(&sb, s), 0);
	assert_string_equal(sb.buf, want);
	tree = job_spec_to_json(s);
	back = json_loads(want, 0, NULL);
	assert_non_null(tree);
	assert_non_null(back);
	assert_true(json_equal(tree, back));
	json_decref(tree);
	json_decref(back);
	strbuf_release(&sb);
	job_spec_destroy(s);
}

static void test_written_text(void **state)
{
	(void)state;
	expect_written(written_spec,
	               "{\"name\":\"imdb \\\"q\\\" é\",\"framework\":\"tensorflow\",\"priority\":-3,"
	               "\"entry_point\":\"train.py\",\"params\":\"--epochs 2\\t--x \\\\y\","
	               "\"python\":\"venv/bin/python\",\"src_dir\":\"/base/src\","
	               "\"artifacts\":[{\"path\":\"/base/venv.zip\",\"name\":\"venv\",\"archive\":true},"
	               "{\"path\":\"/data/dir\",\"name\":\"dir\",\"archive\":false}],"
	               "\"env\":{\"KEY\":\"va\\\"lue\\n\",\"NUM\":\"3\"},\"success_policy\":\"all\","
	               "\"fail_on_worker_failure\":true,\"restart\":{\"max_restarts\":2,"
	               "\"retry_exit_codes\":\"1-137\"},\"timeouts\":{\"allocation\":600,"
	               "\"registration\":300,\"execution\":5400},\"roles\":{\"chief\":{\"instances\":1,"
	               "\"memory\":\"1536m\",\"vcores\":1,\"gpus\":0,"
	               "\"command\":\"echo \\\"hi\\\" && exit 0\",\"env\":{},\"untracked\":false,"
	               "\"stop_on_failure\":false,\"sidecar\":false},\"worker\":{\"instances\":2,"
	               "\"memory\":\"4g\",\"vcores\":2,\"gpus\":1,\"command\":null,"
	               "\"env\":{\"ROLE_ENV\":\"x\"},\"untracked\":false,\"stop_on_failure\":true,"
	               "\"sidecar\":false},\"tb\":{\"instances\":1,\"memory\":\"2g\",\"vcores\":1,"
	               "\"gpus\":0,\"command\":\"tensorboard --logdir x\",\"env\":{},\"untracked\":true,"
	               "\"stop_on_failure\":false,\"sidecar\":true}},\"connections\":[\"db1\","
	               "\"warehouse\"],\"queue\":\"gpu.q\",\"slurm\":{\"partition\":\"p1\","
	               "\"account\":\"acc\",\"qos\":\"high\",\"time\":\"2:00:00\","
	               "\"sbatch_options\":[\"--exclusive\",\"--mem=0\"]}}");
	expect_written("entry_point: t.py\nroles: {worker: {memory: 1536m}}\n",
	               "{\"name\":\"job\",\"framework\":\"none\",\"priority\":0,"
	               "\"entry_point\":\"t.py\",\"params\":null,\"python\":null,\"src_dir\":null,"
	               "\"artifacts\":[],\"env\":{},\"success_policy\":\"chief\","
	               "\"fail_on_worker_failure\":false,\"restart\":{\"max_restarts\":0,"
	               "\"retry_exit_codes\":\"128-255\"},\"timeouts\":{\"allocation\":0,"
	               "\"registration\":300,\"execution\":0},\"roles\":{\"worker\":{\"instances\":1,"
	               "\"memory\":\"1536m\",\"vcores\":1,\"gpus\":0,\"command\":null,\"env\":{},"
	               "\"untracked\":false,\"stop_on_failure\":false,\"sidecar\":false}}}");
}

static void test_round_trip(void **state)
{
	(void)state;
	struct weir_error err = {0};
	const char *texts[] = {
		full_spec,
		"entry_point: t.py\nroles: {worker: {memory: 1536m}}\n",
		"roles: {chief: {command: a}, worker: {command: b, instances: 3, memory: 1t}}\n"
		"restart: {retry_exit_codes: 137}\n",
	};
	for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
		struct job_spec *a = parse(texts[i], &err);
		if (!a)
			fail_msg("%s", err.msg);
		json_t *j = job_spec_to_json(a);
		assert_non_null(j);
		/* explicit values for everything */
		assert_non_null(json_object_get(j, "timeouts"));
		assert_non_null(json_object_get(json_object_get(j, "restart"), "retry_exit_codes"));
		struct job_spec *b = job_spec_from_json(j, &err);
		if (!b)
			fail_msg("round trip: %s", err.msg);
		assert_same(a, b);
		/* and through text, as the store keeps it */
		char *text = json_dumps(j, 0);
		struct job_spec *c = job_spec_parse_string(text, strlen(text), "api", NULL, &err);
		if (!c)
			fail_msg("round trip through text: %s", err.msg);
		assert_same(a, c);
		free(text);
		json_decref(j);
		job_spec_destroy(a);
		job_spec_destroy(b);
		job_spec_destroy(c);
	}
}

static void test_bad_inputs(void **state)
{
	(void)state;
	const char *base = "entry_point: t.py\n";
	char buf[512];
	struct {
		const char *body;
		const char *needle;
	} cases[] = {
		{"roles:\n  worker:\n    memory: lots\n",
		 "s.yaml:4: roles.worker.memory: expected an amount like 4g or 512m"},
		{"roles:\n  worker:\n    instance: 2\n",
		 "s.yaml:4: roles.worker.instance: unknown key; expected one of: instances, memory"},
		{"colour: red\nroles: {w: }\n", "s.yaml:2: colour: unknown key; expected one of: name"},
		{"roles:\n  worker:\n    instances: two\n",
		 "roles.worker.instances: expected an integer, got a string"},
		{"roles:\n  worker:\n    instances: 0\n",
		 "roles.worker.instances: expected an integer from 1 to 1024, got 0"},
		{"roles:\n  worker:\n    instances: 1025\n", "from 1 to 1024"},
		{"roles:\n  worker:\n    gpus: 65\n", "s.yaml:4: roles.worker.gpus: expected an integer from 0 to 64"},
		{"roles:\n  worker:\n    gpus: -1\n", "roles.worker.gpus"},
		{"roles:\n  worker:\n    vcores: 0\n", "roles.worker.vcores"},
		{"roles:\n  worker:\n    memory: 0g\n", "roles.worker.memory"},
		{"roles:\n  worker:\n    memory: 99t\n", "roles.worker.memory"},
		{"roles:\n  worker:\n    memory: [1]\n", "roles.worker.memory: expected an amount"},
		{"roles:\n  Worker: {}\n", "s.yaml:3: roles.Worker: a role name must be"},
		{"roles:\n  9w: {}\n", "roles.9w: a role name"},
		{"roles:\n  w: {}\n  w: {}\n", "duplicate key \"w\""},
		{"roles: {}\n", "roles: missing; a job needs at least one role"},
		{"name: x\n", "roles: missing"},
		{"roles:\n  ps: {untracked: true}\n", "at least one role must be tracked"},
		{"roles:\n  tb: {sidecar: true}\n", "at least one role must be tracked"},
		{"roles:\n  tb: {sidecar: true, untracked: false}\n", "roles.tb.untracked: a sidecar"},
		{"roles: [worker]\n", "s.yaml:2: roles: expected a mapping of role name to role"},
		{"roles: {w: 3}\n", "roles.w: expected a mapping"},
		{"framework: caffe\nroles: {w: }\n", "s.yaml:2: framework: expected tensorflow"},
		{"priority: high\nroles: {w: }\n", "priority: expected an integer"},
		{"priority: 1.5\nroles: {w: }\n", "priority: expected an integer, got a number"},
		{"env: {1BAD: x}\nroles: {w: }\n", "s.yaml:2: env.1BAD: expected an environment"},
		{"env: {A: [1]}\nroles: {w: }\n", "env.A: expected a string value"},
		{"env: [A]\nroles: {w: }\n", "env: expected a mapping"},
		{"roles:\n  w:\n    env: {\"A-B\": x}\n", "s.yaml:4: roles.w.env.A-B"},
		{"success_policy: most\nroles: {w: }\n", "success_policy: expected chief or all"},
		{"fail_on_worker_failure: yes\nroles: {w: }\n",
		 "fail_on_worker_failure: expected true or false"},
		{"restart: {max_restarts: -1}\nroles: {w: }\n", "restart.max_restarts"},
		{"restart: {retry_exit_codes: \"255-128\"}\nroles: {w: }\n",
		 "restart.retry_exit_codes: expected an exit code or a range"},
		{"restart: {retry_exit_codes: \"1-300\"}\nroles: {w: }\n", "restart.retry_exit_codes"},
		{"restart: {tries: 3}\nroles: {w: }\n", "restart.tries: unknown key"},
		{"timeouts: {execution: soon}\nroles: {w: }\n",
		 "s.yaml:2: timeouts.execution: expected a duration"},
		{"timeouts: {execution: -5}\nroles: {w: }\n", "timeouts.execution"},
		{"timeouts: {execution: 1h30}\nroles: {w: }\n", "timeouts.execution"},
		{"timeouts: {total: 5}\nroles: {w: }\n", "timeouts.total: unknown key"},
		{"artifacts: [{path: /a/x.zip, name: ..}]\nroles: {w: }\n",
		 "s.yaml:2: artifacts[0].name: expected one path component"},
		{"artifacts: [{path: /a/x.zip, name: a/b}]\nroles: {w: }\n", "artifacts[0].name"},
		{"artifacts: [/a/x.zip, /b/x.tgz]\nroles: {w: }\n",
		 "artifacts[1].name: \"x\" is used by another artifact"},
		{"artifacts: [{name: x}]\nroles: {w: }\n", "artifacts[0].path: missing"},
		{"artifacts: [{path: /x, size: 3}]\nroles: {w: }\n", "artifacts[0].size: unknown key"},
		{"artifacts: [3]\nroles: {w: }\n", "artifacts[0]: expected a path or a mapping"},
		{"artifacts: {a: b}\nroles: {w: }\n", "artifacts: expected a list"},
		{"name: \"\"\nroles: {w: }\n", "name: expected a name of 1 to 128"},
		{"name: [x]\nroles: {w: }\n", "name: expected a string, got a list"},
		{"name: \"a\\0b\"\nroles: {w: }\n", "name: a string must not contain NUL"},
		{"roles: {w: }\nroles: {x: }\n", "duplicate key \"roles\""},
		{"roles: {w: {instances: 2}\n", "s.yaml:"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		snprintf(buf, sizeof buf, "%s%s", base, cases[i].body);
		expect_error(buf, cases[i].needle);
	}
	expect_error("- a\n- b\n", "s.yaml:1: spec: expected a mapping of job fields, got a list");
	expect_error("just text\n", "expected a mapping of job fields, got a string");
	/* relative paths need a base directory */
	struct weir_error err = {0};
	const char *rel = "entry_point: t.py\nsrc_dir: src\nroles: {w: }\n";
	assert_null(job_spec_parse_string(rel, strlen(rel), "api", NULL, &err));
	assert_non_null(strstr(err.msg, "api:2: src_dir: expected an absolute path"));
}

static void test_from_json_api(void **state)
{
	(void)state;
	struct weir_error err = {0};
	json_t *j = json_pack("{s:s, s:{s:{s:i, s:s}}}", "entry_point", "t.py", "roles", "worker",
			      "instances", 2, "memory", "lots");
	assert_null(job_spec_from_json(j, &err));
	assert_string_equal(err.msg,
			    "roles.worker.memory: expected an amount like 4g or 512m (a plain "
			    "number is MiB; 1m to 16t), got \"lots\"");
	assert_int_equal(err.kind, WEIR_E_INVALID);
	json_decref(j);
	assert_null(job_spec_from_json(NULL, &err));
	j = json_array();
	assert_null(job_spec_from_json(j, &err));
	json_decref(j);
}

static void test_parse_file_lines(void **state)
{
	(void)state;
	char dir[] = "/tmp/weir-spec-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof path, "%s/job.yaml", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("name: t\nentry_point: t.py\nsrc_dir: ./src\nroles:\n  worker:\n    memory: lots\n", f);
	fclose(f);
	struct weir_error err = {0};
	assert_null(job_spec_parse_file(path, &err));
	char want[512];
	snprintf(want, sizeof want, "%s:6: roles.worker.memory: expected", path);
	if (strncmp(err.msg, want, strlen(want)))
		fail_msg("got \"%s\"", err.msg);

	f = fopen(path, "w");
	fputs("name: t\nentry_point: t.py\nsrc_dir: ./src\nartifacts: [../v.zip]\nroles: {w: }\n",
	      f);
	fclose(f);
	struct job_spec *s = job_spec_parse_file(path, &err);
	if (!s)
		fail_msg("%s", err.msg);
	snprintf(want, sizeof want, "%s/src", dir);
	assert_string_equal(s->src_dir, want);
	snprintf(want, sizeof want, "%s/../v.zip", dir);
	assert_string_equal(s->artifacts[0].path, want);
	assert_string_equal(s->artifacts[0].name, "v");
	job_spec_destroy(s);

	/* a relative file name resolves against the current directory */
	char *cwd = getcwd(NULL, 0);
	assert_int_equal(chdir(dir), 0);
	s = job_spec_parse_file("job.yaml", &err);
	assert_int_equal(chdir(cwd), 0);
	free(cwd);
	if (!s)
		fail_msg("%s", err.msg);
	snprintf(want, sizeof want, "%s/src", dir);
	assert_string_equal(s->src_dir, want);
	job_spec_destroy(s);

	unlink(path);
	rmdir(dir);
	assert_null(job_spec_parse_file(path, &err));
	assert_non_null(strstr(err.msg, "cannot open"));
}

static void test_validate_built(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct job_spec *s = job_spec_create();
	assert_int_equal(job_spec_validate(s, &err), -1);
	struct role_spec *r = job_spec_add_role(s, "worker", &err);
	r->command = strdup("true");
	assert_int_equal(job_spec_validate(s, &err), 0);
	s->roles[0].instances = 0;
	assert_int_equal(job_spec_validate(s, &err), -1);
	assert_non_null(strstr(err.msg, "roles.worker.instances"));
	s->roles[0].instances = 1;
	assert_int_equal(env_list_set(&s->env, &s->n_env, "A", "1", &err), 0);
	assert_int_equal(env_list_set(&s->env, &s->n_env, "A", "2", &err), 0);
	assert_int_equal(s->n_env, 1);
	assert_string_equal(s->env[0].value, "2");
	assert_int_equal(job_spec_add_artifact(s, "relative.zip", NULL, -1, &err), 0);
	assert_int_equal(job_spec_validate(s, &err), -1);
	assert_non_null(strstr(err.msg, "artifacts[0].path: expected an absolute path"));
	job_spec_destroy(s);
	job_spec_destroy(NULL);
}

static void test_deciding_role(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct job_spec *s = parse("roles: {ps: {command: a, untracked: true}, "
				   "evaluator: {command: b}, worker: {command: c}, chief: {command: d}}",
				   &err);
	assert_non_null(s);
	assert_string_equal(job_spec_deciding_role(s)->name, "chief");
	job_spec_destroy(s);
	s = parse("roles: {ps: {command: a, untracked: true}, evaluator: {command: b}}", &err);
	assert_string_equal(job_spec_deciding_role(s)->name, "evaluator");
	assert_null(job_spec_find_role(s, "worker"));
	job_spec_destroy(s);
}

static void test_values(void **state)
{
	(void)state;
	struct weir_error err = {0};
	uint64_t mb;
	struct {
		const char *text;
		uint64_t mb;
	} ok[] = {{"4g", 4096}, {"512m", 512}, {"1.5g", 1536}, {"2048", 2048}, {"1t", 1048576},
		  {"4G", 4096}, {"4gb", 4096}, {"4Gi", 4096}, {"512k", 1}, {"100MiB", 100}};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		assert_int_equal(parse_memory_mb(ok[i].text, "m", &mb, &err), 0);
		assert_int_equal(mb, ok[i].mb);
	}
	const char *bad[] = {"", "lots", "4x", "-1g", "0", "1e3", "0x10", "4 g", "g", "17t"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		if (parse_memory_mb(bad[i], "roles.w.memory", &mb, &err) == 0)
			fail_msg("\"%s\" parsed as memory", bad[i]);
		assert_non_null(strstr(err.msg, "roles.w.memory: expected an amount"));
	}
	int64_t s;
	assert_int_equal(duration_parse_s("600", "t", &s, &err), 0);
	assert_int_equal(s, 600);
	assert_int_equal(duration_parse_s("1h30m", "t", &s, &err), 0);
	assert_int_equal(s, 5400);
	assert_int_equal(duration_parse_s("2d", "t", &s, &err), 0);
	assert_int_equal(s, 172800);
	assert_int_equal(duration_parse_s("1y", "t", &s, &err), -1);
	assert_int_equal(duration_parse_s("", "t", &s, &err), -1);
	assert_int_equal(duration_parse_s("400d", "t", &s, &err), -1);
	int lo, hi;
	assert_int_equal(parse_exit_range("137", "r", &lo, &hi, &err), 0);
	assert_int_equal(lo, 137);
	assert_int_equal(hi, 137);
	assert_int_equal(parse_exit_range("-1", "r", &lo, &hi, &err), -1);
	char buf[32];
	assert_string_equal(format_memory_mb(4096, buf, sizeof buf), "4g");
	assert_string_equal(format_memory_mb(1536, buf, sizeof buf), "1536m");
	enum framework fw;
	assert_int_equal(framework_from_name("TensorFlow", &fw), 0);
	assert_int_equal(fw, FRAMEWORK_TENSORFLOW);
	assert_int_equal(framework_from_name("caffe", &fw), -1);
	assert_string_equal(framework_name(FRAMEWORK_HOROVOD), "horovod");
	char *n = artifact_default_name("/a/b/venv.tar.gz");
	assert_string_equal(n, "venv");
	free(n);
	assert_false(artifact_is_archive("/a/dir"));
	assert_true(artifact_is_archive("/a/x.TGZ"));
}

/* A job's env and a DAG task's env are read by one function
 * (env_list_read, model/job_spec_edit.h): a number is written as YAML wrote it, a null is
 * refused naming the entry. */
static void test_env_values_as_written(void **state)
{
	static const char text[] = "entry_point: t.py\n"
	                           "env: {LR: 0.1, N: 3, ON: true, NAME: x}\n"
	                           "roles: {worker: {instances: 1, env: {R: 2.5}}}\n";
	static const char bad[] = "entry_point: t.py\nenv: {X: null}\nroles: {worker: {}}\n";
	struct weir_error err = {0};
	struct job_spec *s;

	(void)state;
	s = parse(text, &err);
	if (!s)
		fail_msg("%s", err.msg);
	assert_int_equal(s->n_env, 4);
	for (size_t i = 0; i < s->n_env; i++)
		if (!strcmp(s->env[i].name, "LR"))
			assert_string_equal(s->env[i].value, "0.1");
	assert_string_equal(s->roles[0].env[0].value, "2.5");
	job_spec_destroy(s);
	assert_null(parse(bad, &err));
	assert_non_null(strstr(err.msg, "env.X"));
	assert_non_null(strstr(err.msg, "expected a string value, got null"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_spec),      cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_round_trip),     cmocka_unit_test(test_written_text),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_from_json_api),  cmocka_unit_test(test_parse_file_lines),
		cmocka_unit_test(test_validate_built), cmocka_unit_test(test_deciding_role),
		cmocka_unit_test(test_values), cmocka_unit_test(test_env_values_as_written),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
