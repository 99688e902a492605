/* Tests of TonY compatibility: tony.xml from real files and buffers, submit
 * flags in both spellings, --conf overrides, the keys that map to spec
 * fields, warnings for keys without meaning here, and bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/tony.h"

static char dir[] = "/tmp/weir-tony-XXXXXX";
static char xml_path[256];

static const char *seed_xml =
	"<?xml version=\"1.0\"?>\n"
	"<configuration>\n"
	"  <property>\n"
	"    <name>tony.application.name</name>\n"
	"    <value>imdb</value>\n"
	"  </property>\n"
	"  <property>\n"
	"    <name>tony.worker.instances</name>\n"
	"    <value>2</value>\n"
	"  </property>\n"
	"  <property>\n"
	"    <name>tony.worker.memory</name>\n"
	"    <value>4g</value>\n"
	"  </property>\n"
	"  <property><name>tony.application.node-label</name><value>gpu</value></property>\n"
	"  <property><name>tony.yarn.queue</name><value>ml</value></property>\n"
	"</configuration>\n";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(xml_path, sizeof xml_path, "%s/tony.xml", dir);
	write_file(xml_path, seed_xml);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(xml_path);
	rmdir(dir);
	return 0;
}

static bool has_warning(const struct strvec *w, const char *needle)
{
	for (size_t i = 0; i < w->n; i++)
		if (strstr(w->v[i], needle))
			return true;
	return false;
}

/* The NULL-ended arguments into argv[64]; their number. */
static int args_of(va_list ap, char **argv)
{
	int argc = 0;
	for (char *a; argc < 64 && (a = va_arg(ap, char *));)
		argv[argc++] = a;
	return argc;
}

static struct job_spec *submit(struct strvec *w, struct weir_error *err, ...)
{
	char *argv[64];
	va_list ap;
	va_start(ap, err);
	int argc = args_of(ap, argv);
	va_end(ap);
	return submit_flags_parse(argc, argv, w, err);
}

static void test_seed_job(void **state)
{
	(void)state;
	struct strvec w = STRVEC_INIT;
	struct weir_error err = {0};
	char conf_flag[300];
	snprintf(conf_flag, sizeof conf_flag, "--conf_file=%s", xml_path);
	struct job_spec *s = submit(&w, &err, conf_flag, "--python_venv=venv.zip",
				    "--src_dir", "MyPro01/src", "--executes=models/train.py",
				    "--task_params", "--epochs 2", "--python_binary_path",
				    "venv/bin/python", "--shell_env", "A=1", "--container_env=B=x=y",
				    (char *)NULL);
	if (!s)
		fail_msg("%s", err.msg);
	char *cwd = getcwd(NULL, 0);
	char want[512];
	assert_string_equal(s->name, "imdb");
	assert_int_equal(s->framework, FRAMEWORK_TENSORFLOW);
	assert_int_equal(s->n_roles, 1);
	assert_string_equal(s->roles[0].name, "worker");
	assert_int_equal(s->roles[0].instances, 2);
	assert_int_equal(s->roles[0].memory_mb, 4096);
	assert_int_equal(s->roles[0].vcores, 1);
	snprintf(want, sizeof want, "%s/MyPro01/src", cwd);
	assert_string_equal(s->src_dir, want);
	assert_int_equal(s->n_artifacts, 1);
	snprintf(want, sizeof want, "%s/venv.zip", cwd);
	assert_string_equal(s->artifacts[0].path, want);
	assert_string_equal(s->artifacts[0].name, "venv");
	assert_true(s->artifacts[0].archive);
	char *cmd = job_spec_role_command(s, &s->roles[0]);
	assert_string_equal(cmd, "venv/bin/python models/train.py --epochs 2");
	free(cmd);
	assert_int_equal(s->n_env, 2);
	assert_string_equal(s->env[0].name, "A");
	assert_string_equal(s->env[1].name, "B");
	assert_string_equal(s->env[1].value, "x=y");
	/* tony.yarn.queue is the server's queue */
	assert_non_null(s->queue);
	assert_string_equal(s->queue, "ml");
	/* one warning, naming the file, line and key */
	assert_int_equal(w.n, 1);
	snprintf(want, sizeof want, "%s:15: tony.application.node-label: ignored", xml_path);
	if (!strstr(w.v[0], want))
		fail_msg("warning \"%s\"", w.v[0]);
	free(cwd);
	strvec_release(&w);
	job_spec_destroy(s);
}

static void test_keys(void **state)
{
	(void)state;
	struct strvec w = STRVEC_INIT;
	struct weir_error err = {0};
	struct job_spec *s = submit(
		&w, &err, "--executes", "t.py", "--conf", "tony.application.framework=pytorch",
		"--conf", "tony.chief.instances=1", "--conf", "tony.worker.instances=3", "--conf",
		"tony.worker.gpus=1", "--conf", "tony.worker.vcores=2", "--conf",
		"tony.worker.memory=3072", "--conf", "tony.ps.instances=2", "--conf",
		"tony.evaluator.instances=1", "--conf", "tony.evaluator.command=python eval.py",
		"--conf", "tony.tb.instances=1", "--conf", "tony.tb.command=tensorboard",
		"--conf", "tony.application.sidecar.jobtypes=tb", "--conf",
		"tony.application.untracked.jobtypes=ps,evaluator", "--conf",
		"tony.application.stop-on-failure-jobtypes=chief", "--conf",
		"tony.application.fail-on-worker-failure-enabled=true", "--conf",
		"tony.application.timeout=90500", "--conf",
		"tony.task.executor.execution-timeout-ms=120000", "--conf", "tony.am.retry-count=3",
		"--conf", "tony.container.allocation.timeout=60000", "--conf",
		"tony.worker.resources=/data/a.zip,/data/b#bee,/data/c.tgz::cee", "--conf",
		"tony.containers.envs=X=1,Y=2", "--conf", "tony.docker.enabled=true", "--conf",
		"tony.application.security.enabled=true", "--conf", "tony.worker.node-label=gpu",
		"--conf", "yarn.nodemanager.x=1", "--conf", "tony.gpu.memory=2g", (char *)NULL);
	if (!s)
		fail_msg("%s", err.msg);
	assert_int_equal(s->framework, FRAMEWORK_PYTORCH);
	assert_int_equal(s->n_roles, 5);
	assert_string_equal(s->roles[0].name, "chief");
	assert_true(s->roles[0].stop_on_failure);
	const struct role_spec *wk = job_spec_find_role(s, "worker");
	assert_int_equal(wk->instances, 3);
	assert_int_equal(wk->gpus, 1);
	assert_int_equal(wk->vcores, 2);
	assert_int_equal(wk->memory_mb, 3072);
	assert_false(wk->untracked);
	assert_true(job_spec_find_role(s, "ps")->untracked);
	assert_false(job_spec_find_role(s, "ps")->stop_on_failure); /* list given: ps not in it */
	assert_true(job_spec_find_role(s, "evaluator")->untracked);
	assert_string_equal(job_spec_find_role(s, "evaluator")->command, "python eval.py");
	assert_true(job_spec_find_role(s, "tb")->sidecar);
	assert_true(job_spec_find_role(s, "tb")->untracked);
	assert_true(s->fail_on_worker_failure);
	assert_int_equal(s->execution_timeout_s, 91); /* the smaller, rounded up */
	assert_int_equal(s->max_restarts, 3);
	assert_int_equal(s->allocation_timeout_s, 60);
	assert_int_equal(s->n_artifacts, 3);
	assert_string_equal(s->artifacts[0].name, "a");
	assert_true(s->artifacts[0].archive);
	assert_string_equal(s->artifacts[1].name, "bee");
	assert_false(s->artifacts[1].archive);
	assert_string_equal(s->artifacts[2].name, "cee");
	assert_true(s->artifacts[2].archive);
	assert_int_equal(s->n_env, 2);
	assert_true(has_warning(&w, "--conf tony.docker.enabled: ignored"));
	assert_true(has_warning(&w, "tony.application.security.enabled: ignored"));
	assert_true(has_warning(&w, "tony.worker.node-label: ignored"));
	assert_true(has_warning(&w, "yarn.nodemanager.x: ignored: not a TonY key"));
	assert_true(has_warning(&w, "tony.gpu.memory: ignored: no tony.gpu.instances"));
	assert_int_equal(w.n, 5);
	strvec_release(&w);
	job_spec_destroy(s);
}

static void test_defaults_and_overrides(void **state)
{
	(void)state;
	struct strvec w = STRVEC_INIT;
	struct weir_error err = {0};
	/* --conf overrides the file; ps is untracked and stop-on-failure by default */
	struct job_spec *s = submit(&w, &err, "--conf_file", xml_path, "--executes", "t.py",
				    "--conf", "tony.worker.instances=4", "--conf",
				    "tony.ps.instances=1", "--framework", "mxnet", (char *)NULL);
	if (!s)
		fail_msg("%s", err.msg);
	assert_int_equal(job_spec_find_role(s, "worker")->instances, 4);
	assert_true(job_spec_find_role(s, "ps")->untracked);
	assert_true(job_spec_find_role(s, "ps")->stop_on_failure);
	assert_int_equal(s->framework, FRAMEWORK_MXNET);
	strvec_release(&w);
	job_spec_destroy(s);
	/* instances 0 drops the role */
	s = submit(NULL, &err, "--executes", "t.py", "--conf", "tony.worker.instances=1",
		   "--conf", "tony.ps.instances=0", "--conf", "tony.ps.memory=8g", (char *)NULL);
	assert_non_null(s);
	assert_int_equal(s->n_roles, 1);
	job_spec_destroy(s);
}

static void expect_submit_error(const char *needle, ...)
{
	char *argv[64];
	int argc = 0;
	va_list ap;
	va_start(ap, needle);
	for (char *a; argc < 64 && (a = va_arg(ap, char *));)
		argv[argc++] = a;
	va_end(ap);
	struct strvec w = STRVEC_INIT;
	struct weir_error err = {0};
	struct job_spec *s = submit_flags_parse(argc, argv, &w, &err);
	strvec_release(&w);
	if (s) {
		job_spec_destroy(s);
		fail_msg("parsed, expected \"%s\"", needle);
	}
	if (!strstr(err.msg, needle))
		fail_msg("error \"%s\" lacks \"%s\"", err.msg, needle);
}

static void test_bad_flags(void **state)
{
	(void)state;
	expect_submit_error("--queue: unknown flag", "--queue", "q", (char *)NULL);
	expect_submit_error("-x: unknown flag", "-x", (char *)NULL);
	expect_submit_error("--executes: missing value", "--executes", (char *)NULL);
	expect_submit_error("--src_dir: expected a value", "--src_dir=", (char *)NULL);
	expect_submit_error("--shell_env: expected NAME=VALUE", "--shell_env", "NOEQUALS",
			    (char *)NULL);
	expect_submit_error("--container_env: expected NAME=VALUE", "--container_env=1A=b",
			    (char *)NULL);
	expect_submit_error("--conf: expected key=value", "--conf", "tony.worker.instances",
			    (char *)NULL);
	expect_submit_error("--framework: expected tensorflow", "--executes", "t", "--conf",
			    "tony.worker.instances=1", "--framework", "caffe", (char *)NULL);
	expect_submit_error("--conf tony.worker.instances: expected an integer from 0 to 1024, "
			    "got \"two\"",
			    "--executes", "t", "--conf", "tony.worker.instances=two", (char *)NULL);
	expect_submit_error("tony.worker.memory: expected an amount", "--executes", "t", "--conf",
			    "tony.worker.instances=1", "--conf", "tony.worker.memory=lots",
			    (char *)NULL);
	expect_submit_error("tony.worker.gpus: expected an integer from 0 to 64", "--executes",
			    "t", "--conf", "tony.worker.instances=1", "--conf",
			    "tony.worker.gpus=99", (char *)NULL);
	expect_submit_error("tony.Worker.instances: the role name", "--executes", "t", "--conf",
			    "tony.Worker.instances=1", (char *)NULL);
	expect_submit_error("fail-on-worker-failure-enabled: expected true or false",
			    "--executes", "t", "--conf", "tony.worker.instances=1", "--conf",
			    "tony.application.fail-on-worker-failure-enabled=maybe", (char *)NULL);
	expect_submit_error("no roles: set tony.<role>.instances", "--executes", "t",
			    (char *)NULL);
	expect_submit_error("tony.worker.command: missing; pass --executes", "--conf",
			    "tony.worker.instances=1", (char *)NULL);
	expect_submit_error("at least one role must be tracked", "--executes", "t", "--conf",
			    "tony.ps.instances=1", (char *)NULL);
	expect_submit_error("tony.task.max-total-instances: the roles ask for 3 tasks",
			    "--executes", "t", "--conf", "tony.worker.instances=3", "--conf",
			    "tony.task.max-total-instances=2", (char *)NULL);
	expect_submit_error("/nonexistent/tony.xml: cannot open", "--conf_file",
			    "/nonexistent/tony.xml", (char *)NULL);
}

static void expect_xml_error(const char *xml, const char *needle)
{
	struct weir_error err = {0};
	struct tony_conf *c = tony_conf_parse_buffer(xml, strlen(xml), "t.xml", &err);
	if (c) {
		tony_conf_destroy(c);
		fail_msg("parsed, expected \"%s\"", needle);
	}
	if (!strstr(err.msg, needle))
		fail_msg("error \"%s\" lacks \"%s\"", err.msg, needle);
}

static void test_bad_xml(void **state)
{
	(void)state;
	expect_xml_error("<configuration>\n<property><name>a</name>\n</configuration>\n",
			 "t.xml:4: malformed XML");
	expect_xml_error("", "t.xml:1: malformed XML");
	expect_xml_error("<conf></conf>", "t.xml:1: expected <configuration> as the root");
	expect_xml_error("<configuration>\n  <prop/>\n</configuration>",
			 "t.xml:2: unexpected <prop>");
	expect_xml_error("<configuration>\n<property><value>1</value></property>\n"
			 "</configuration>",
			 "t.xml:2: a <property> without a <name>");
	expect_xml_error("<?xml version=\"1.0\"?>\n<!DOCTYPE configuration [\n"
			 "<!ENTITY x SYSTEM \"file:///etc/passwd\">]>\n"
			 "<configuration><property><name>a</name><value>&x;</value></property>"
			 "</configuration>",
			 "a DOCTYPE is not allowed");
	expect_xml_error("<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [<!ENTITY lol \"lol\">"
			 "<!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">]>\n"
			 "<configuration><property><name>a</name><value>&lol2;</value>"
			 "</property></configuration>",
			 "DOCTYPE");
}

static void test_xml_details(void **state)
{
	(void)state;
	struct weir_error err = {0};
	const char *xml = "<configuration>\n"
			  "<property><name> tony.worker.instances </name><value>\n 2 \n</value>"
			  "<description>d</description><final>true</final></property>\n"
			  "<!-- comment -->\n"
			  "<property><name>tony.worker.instances</name><value>3</value></property>\n"
			  "<property><name>tony.x.y</name></property>\n"
			  "<property><name>tony.worker.command</name>"
			  "<value><![CDATA[echo a && echo b]]></value></property>\n"
			  "</configuration>\n";
	struct tony_conf *c = tony_conf_parse_buffer(xml, strlen(xml), "t.xml", &err);
	if (!c)
		fail_msg("%s", err.msg);
	assert_int_equal(c->n, 4);
	const struct tony_prop *p = tony_conf_get(c, "tony.worker.instances");
	assert_string_equal(p->value, "3");
	assert_int_equal(p->line, 6); /* the first value spans lines 2-4 */
	assert_string_equal(tony_conf_get(c, "tony.x.y")->value, "");
	assert_null(tony_conf_get(c, "nope"));
	struct strvec w = STRVEC_INIT;
	struct job_spec *s = tony_to_spec(c, NULL, &w, &err);
	if (!s)
		fail_msg("%s", err.msg);
	assert_int_equal(s->roles[0].instances, 3);
	assert_string_equal(s->roles[0].command, "echo a && echo b");
	assert_true(has_warning(&w, "t.xml:7: tony.x.y: ignored"));
	job_spec_destroy(s);
	strvec_release(&w);
	tony_conf_destroy(c);
	tony_conf_destroy(NULL);

	/* from a real file */
	c = tony_conf_parse_file(xml_path, &err);
	assert_non_null(c);
	assert_string_equal(tony_conf_get(c, "tony.worker.memory")->value, "4g");
	tony_conf_destroy(c);
}

static void test_arity(void **state)
{
	(void)state;
	char *argv[] = {"--detach", "--executes", "x", "--conf=a=b", "--src_dir"};
	assert_int_equal(submit_flag_arity(5, argv, 0), 0);
	assert_int_equal(submit_flag_arity(5, argv, 1), 2);
	assert_int_equal(submit_flag_arity(5, argv, 3), 1);
	assert_int_equal(submit_flag_arity(5, argv, 4), 1);
	assert_int_equal(submit_flag_arity(5, argv, 5), 0);
}

static void test_python_path(void **state)
{
	(void)state;
	static const struct {
		const char *path;
		bool venv;
		const char *want;
	} cases[] = {
		{"bin/python", true, "venv/bin/python"},  /* TonY's: under the venv */
		{"./bin/python", true, "venv/bin/python"},
		{"venv/bin/python", true, "venv/bin/python"}, /* zip -r venv.zip venv */
		{"/usr/bin/python3", true, "/usr/bin/python3"},
		{"bin/python", false, "bin/python"}, /* no venv: as given */
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *got = tony_python_path(cases[i].path, cases[i].venv);
		assert_non_null(got);
		if (strcmp(got, cases[i].want))
			fail_msg("%s (venv %d): %s, expected %s", cases[i].path, cases[i].venv, got,
				 cases[i].want);
		free(got);
	}
	/* a root-zipped venv with TonY's --python_binary_path=bin/python */
	struct weir_error err = {0};
	struct job_spec *s = submit(NULL, &err, "--python_venv=venv.zip",
				    "--python_binary_path=bin/python", "--executes", "train.py",
				    "--conf", "tony.worker.instances=1", (char *)NULL);
	if (!s)
		fail_msg("%s", err.msg);
	char *cmd = job_spec_role_command(s, &s->roles[0]);
	assert_string_equal(cmd, "venv/bin/python train.py");
	free(cmd);
	job_spec_destroy(s);
}

/* submit_flags_load with TonY's lookups, run in `cwd`. */
static struct job_spec *load_in(const char *cwd, const char *conf_dir, struct strvec *read,
				struct weir_error *err, ...)
{
	char *argv[64];
	va_list ap;
	va_start(ap, err);
	int argc = args_of(ap, argv);
	va_end(ap);
	char *back = getcwd(NULL, 0);
	assert_int_equal(chdir(cwd), 0);
	struct tony_lookup lookup = {conf_dir, read};
	struct job_spec *s = submit_flags_load(argc, argv, &lookup, NULL, err);
	assert_int_equal(chdir(back), 0);
	free(back);
	return s;
}

static const char *conf_xml(const char *k1, const char *v1, const char *k2, const char *v2,
			    char *buf, size_t size)
{
	snprintf(buf, size,
		 "<configuration><property><name>%s</name><value>%s</value></property>"
		 "<property><name>%s</name><value>%s</value></property></configuration>\n",
		 k1, v1, k2, v2);
	return buf;
}

static void test_conf_lookup(void **state)
{
	(void)state;
	char proj[300], site_dir[300], path[400], xml[512], want[400];
	struct strvec read = STRVEC_INIT;
	struct weir_error err = {0};

	snprintf(proj, sizeof proj, "%s/proj", dir);
	snprintf(site_dir, sizeof site_dir, "%s/site", dir);
	assert_int_equal(mkdir(proj, 0755), 0);
	assert_int_equal(mkdir(site_dir, 0755), 0);
	snprintf(path, sizeof path, "%s/tony.xml", proj);
	write_file(path, conf_xml("tony.worker.instances", "2", "tony.worker.memory", "1g", xml,
				  sizeof xml));
	snprintf(path, sizeof path, "%s/tony-site.xml", site_dir);
	write_file(path, conf_xml("tony.worker.memory", "3g", "tony.worker.vcores", "4", xml,
				  sizeof xml));

	/* no --conf_file: ./tony.xml, then tony-site.xml over it, then --conf */
	struct job_spec *s = load_in(proj, site_dir, &read, &err, "--executes=/bin/true",
				     "--conf", "tony.worker.vcores=2", (char *)NULL);
	if (!s)
		fail_msg("%s", err.msg);
	assert_int_equal(s->roles[0].instances, 2);
	assert_int_equal(s->roles[0].memory_mb, 3072);
	assert_int_equal(s->roles[0].vcores, 2);
	assert_int_equal(read.n, 2);
	assert_string_equal(read.v[0], "tony.xml");
	snprintf(want, sizeof want, "%s/tony-site.xml", site_dir);
	assert_string_equal(read.v[1], want);
	job_spec_destroy(s);
	strvec_release(&read);

	/* --conf_file replaces ./tony.xml; no site directory: nothing more */
	char flag[300];
	snprintf(flag, sizeof flag, "--conf_file=%s", xml_path);
	s = load_in(proj, NULL, &read, &err, flag, "--executes=/bin/true", (char *)NULL);
	if (!s)
		fail_msg("%s", err.msg);
	assert_int_equal(s->roles[0].memory_mb, 4096);
	assert_int_equal(read.n, 1);
	assert_string_equal(read.v[0], xml_path);
	job_spec_destroy(s);
	strvec_release(&read);

	/* a broken tony-site.xml is an error naming it */
	snprintf(path, sizeof path, "%s/tony-site.xml", site_dir);
	write_file(path, "<configuration><property>\n");
	s = load_in(proj, site_dir, &read, &err, "--executes=/bin/true", (char *)NULL);
	assert_null(s);
	assert_non_null(strstr(err.msg, "tony-site.xml:"));
	strvec_release(&read);
	unlink(path);
	snprintf(path, sizeof path, "%s/tony.xml", proj);
	unlink(path);
	rmdir(site_dir);
	rmdir(proj);
}

static void test_executes_without_src_dir(void **state)
{
	(void)state;
	char proj[300], path[400], want[400];
	struct weir_error err = {0};

	snprintf(proj, sizeof proj, "%s/run", dir);
	assert_int_equal(mkdir(proj, 0755), 0);
	snprintf(path, sizeof path, "%s/train.py", proj);
	write_file(path, "print(1)\n");
	snprintf(path, sizeof path, "%s/models", proj);
	assert_int_equal(mkdir(path, 0755), 0);

	/* the named file is shipped, linked into the task's directory by its name */
	struct job_spec *s = load_in(proj, NULL, NULL, &err, "--executes", "./train.py", "--conf",
				     "tony.worker.instances=1", (char *)NULL);
	if (!s)
		fail_msg("%s", err.msg);
	assert_int_equal(s->n_artifacts, 1);
	assert_string_equal(s->artifacts[0].name, "train.py");
	snprintf(want, sizeof want, "%s/train.py", proj);
	assert_string_equal(s->artifacts[0].path, want);
	assert_false(s->artifacts[0].archive);
	job_spec_destroy(s);

	/* a path in a folder ships the folder, so the path still holds */
	s = load_in(proj, NULL, NULL, &err, "--executes=models/m.py", "--conf",
		    "tony.worker.instances=1", (char *)NULL);
	if (!s)
		fail_msg("%s", err.msg);
	assert_int_equal(s->n_artifacts, 1);
	assert_string_equal(s->artifacts[0].name, "models");
	assert_string_equal(s->entry_point, "models/m.py");
	job_spec_destroy(s);

	/* nothing of that name here: refused, naming the flags */
	s = load_in(proj, NULL, NULL, &err, "--executes=missing.py", "--conf",
		    "tony.worker.instances=1", (char *)NULL);
	assert_null(s);
	assert_non_null(strstr(err.msg, "--executes missing.py"));
	assert_non_null(strstr(err.msg, "--src_dir"));

	/* with --src_dir, or an absolute path, nothing is shipped */
	s = load_in(proj, NULL, NULL, &err, "--executes=train.py", "--src_dir=.", "--conf",
		    "tony.worker.instances=1", (char *)NULL);
	assert_non_null(s);
	assert_int_equal(s->n_artifacts, 0);
	job_spec_destroy(s);
	s = load_in(proj, NULL, NULL, &err, "--executes=/bin/true", "--conf",
		    "tony.worker.instances=1", (char *)NULL);
	assert_non_null(s);
	assert_int_equal(s->n_artifacts, 0);
	job_spec_destroy(s);
	snprintf(path, sizeof path, "%s/train.py", proj);
	unlink(path);
	snprintf(path, sizeof path, "%s/models", proj);
	rmdir(path);
	rmdir(proj);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seed_job),    cmocka_unit_test(test_keys),
		cmocka_unit_test(test_defaults_and_overrides), cmocka_unit_test(test_bad_flags),
		cmocka_unit_test(test_bad_xml),     cmocka_unit_test(test_xml_details),
		cmocka_unit_test(test_arity),	    cmocka_unit_test(test_python_path),
		cmocka_unit_test(test_conf_lookup), cmocka_unit_test(test_executes_without_src_dir),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
