/* Tests of templating: values, errors with their place, check mode, the
 * environment, and injection attempts through outside values that are run
 * with /bin/sh to prove each reached the program as one literal string and
 * ran nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/cron.h"
#include "model/template.h"

static char *render(const char *tmpl, const struct template_ctx *ctx, enum template_mode mode)
{
	struct weir_error err = {0};
	char *out = template_render(tmpl, ctx, mode, &err);
	if (!out)
		fail_msg("\"%s\": %s", tmpl, err.msg);
	return out;
}

static void expect_render(const struct template_ctx *ctx, enum template_mode mode,
			  const char *tmpl, const char *want)
{
	char *got = render(tmpl, ctx, mode);
	if (strcmp(got, want))
		fail_msg("\"%s\" -> \"%s\", want \"%s\"", tmpl, got, want);
	free(got);
}

static void expect_render_error(const struct template_ctx *ctx, const char *tmpl,
				const char *needle)
{
	struct weir_error err = {0};
	char *got = template_render(tmpl, ctx, TEMPLATE_SHELL, &err);
	if (got) {
		fail_msg("\"%s\" rendered as \"%s\", expected an error with \"%s\"", tmpl, got,
			 needle);
	}
	if (!strstr(err.msg, needle))
		fail_msg("\"%s\": error \"%s\" lacks \"%s\"", tmpl, err.msg, needle);
	assert_int_equal(err.kind, WEIR_E_INVALID);
}

static void fill(struct template_ctx *ctx, const char *item)
{
	json_t *params = json_pack("{s:s, s:i, s:b, s:[i,i], s:n}", "table", "events", "n", 3,
				   "flag", 1, "list", 1, 2, "nothing");
	json_t *outputs = json_pack("{s:{s:i, s:s}}", "extract", "rows", 42, "path", "/data/x");
	struct template_run run = {
		.dag_id = "recsys",
		.run_id = "scheduled__2024-01-02T00:00:00+00:00",
		.task_id = "train",
		.logical_ms = schedule_make_time(2024, 1, 2, 0, 0, 0),
		.interval_start_ms = schedule_make_time(2024, 1, 2, 0, 0, 0),
		.interval_end_ms = schedule_make_time(2024, 1, 3, 0, 0, 0),
		.try_number = 2,
		.params = params,
		.outputs = outputs,
		.item = item,
	};
	struct weir_error err = {0};
	if (template_ctx_fill(ctx, &run, &err) < 0)
		fail_msg("%s", err.msg);
	json_decref(params);
	json_decref(outputs);
}

static void test_values(void **state)
{
	(void)state;
	struct template_ctx ctx = TEMPLATE_CTX_INIT;
	fill(&ctx, "als");
	expect_render(&ctx, TEMPLATE_SHELL, "run --ds {{ ds }} --nd {{ds_nodash}}",
		      "run --ds 2024-01-02 --nd 20240102");
	expect_render(&ctx, TEMPLATE_SHELL, "{{ ts }}|{{ logical_date }}",
		      "2024-01-02T00:00:00+00:00|2024-01-02T00:00:00+00:00");
	expect_render(&ctx, TEMPLATE_SHELL, "{{ data_interval_start }} {{ data_interval_end }}",
		      "2024-01-02T00:00:00+00:00 2024-01-03T00:00:00+00:00");
	expect_render(&ctx, TEMPLATE_SHELL, "{{ dag_id }}.{{ task_id }}#{{ try_number }}",
		      "recsys.train#2");
	expect_render(&ctx, TEMPLATE_SHELL, "{{ run_id }}", "scheduled__2024-01-02T00:00:00+00:00");
	/* outside values are quoted in a command ... */
	expect_render(&ctx, TEMPLATE_SHELL, "load {{ params.table }} {{ params.n }}",
		      "load 'events' '3'");
	expect_render(&ctx, TEMPLATE_SHELL, "{{ params.flag }} {{ params.list }} [{{ params.nothing }}]",
		      "'true' '[1,2]' ['']");
	expect_render(&ctx, TEMPLATE_SHELL, "cat {{ outputs.extract.path }} # {{ ds }}",
		      "cat '/data/x' # 2024-01-02");
	expect_render(&ctx, TEMPLATE_SHELL, "train --model {{ item }}", "train --model 'als'");
	/* ... and follow the quoting they land in */
	expect_render(&ctx, TEMPLATE_SHELL, "echo \"t={{ params.table }}!\"",
		      "echo \"t=\"'events'\"!\"");
	expect_render(&ctx, TEMPLATE_SHELL, "echo 't={{ params.table }}!'", "echo 't=events!'");
	/* ... but not in an environment value */
	expect_render(&ctx, TEMPLATE_RAW, "{{ params.table }}-{{ item }}-{{ outputs.extract.rows }}",
		      "events-als-42");
	/* literals, no templates, braces that are not templates */
	expect_render(&ctx, TEMPLATE_SHELL, "echo {{ '{{' }} x {{ \"}}\" }}", "echo {{ x }}");
	expect_render(&ctx, TEMPLATE_SHELL, "awk '{ print $1 }' f", "awk '{ print $1 }' f");
	expect_render(&ctx, TEMPLATE_SHELL, "x }} y", "x }} y");
	expect_render(&ctx, TEMPLATE_SHELL, "", "");
	/* a run id a user chose is quoted although run_id is weir's */
	assert_int_equal(template_ctx_set(&ctx, "run_id", "x; touch y", TEMPLATE_TRUSTED, NULL), 0);
	expect_render(&ctx, TEMPLATE_SHELL, "echo {{ run_id }}", "echo 'x; touch y'");
	expect_render(&ctx, TEMPLATE_RAW, "{{ run_id }}", "x; touch y");
	template_ctx_release(&ctx);
	template_ctx_release(&ctx); /* released twice: still fine */
}

static void test_errors(void **state)
{
	(void)state;
	struct template_ctx ctx = TEMPLATE_CTX_INIT;
	fill(&ctx, NULL);
	expect_render_error(&ctx, "echo {{ foo }}", "column 6 of the template: unknown variable \"foo\"");
	expect_render_error(&ctx, "echo {{ params.missing }}", "unknown variable \"params.missing\"");
	expect_render_error(&ctx, "echo {{ item }}", "unknown variable \"item\"");
	expect_render_error(&ctx, "a\nbb {{ nope }}", "line 2, column 4 of the template");
	expect_render_error(&ctx, "echo {{ ds", "{{ without a closing }}");
	expect_render_error(&ctx, "echo {{ ds }", "{{ without a closing }}");
	expect_render_error(&ctx, "echo {{ ds | upper }}", "no filters or expressions");
	expect_render_error(&ctx, "echo {{ }}", "expected a variable name");
	expect_render_error(&ctx, "echo {{ 1ds }}", "expected a variable name");
	expect_render_error(&ctx, "echo {{ params..x }}", "expected a variable name");
	expect_render_error(&ctx, "echo {{ 'open }}", "not closed");
	/* outside values where no quoting is safe */
	expect_render_error(&ctx, "echo `echo {{ params.table }}`", "inside `...`");
	expect_render_error(&ctx, "echo ${X:-{{ params.table }}}", "inside ${...}");
	expect_render_error(&ctx, "echo \"${X:-{{ params.table }}}\"", "inside ${...}");
	expect_render_error(&ctx, "echo $'a{{ params.table }}'", "inside $'...'");
	expect_render_error(&ctx, "cat <<EOF\n{{ params.table }}\nEOF", "in a here-document");
	expect_render_error(&ctx, "cat <<'EOF'\nx {{ params.table }}\nEOF", "in a here-document");
	expect_render_error(&ctx, "true # {{ params.table }}", "in a comment");
	expect_render_error(&ctx, "true # don't\necho `{{ params.n }}`", "inside `...`");
	/* ... while trusted ones are fine there, and the tracker comes back out */
	expect_render(&ctx, TEMPLATE_SHELL, "echo `echo {{ ds }}` {{ params.n }}",
		      "echo `echo 2024-01-02` '3'");
	expect_render(&ctx, TEMPLATE_SHELL, "cat <<EOF\n{{ ds }}\nEOF\necho {{ params.n }}",
		      "cat <<EOF\n2024-01-02\nEOF\necho '3'");
	expect_render(&ctx, TEMPLATE_SHELL, "true # it's\necho {{ params.n }}",
		      "true # it's\necho '3'");
	expect_render(&ctx, TEMPLATE_SHELL, "echo ${HOME} a#b {{ params.n }}",
		      "echo ${HOME} a#b '3'");
	template_ctx_release(&ctx);
}

static void test_check(void **state)
{
	(void)state;
	struct strvec known = STRVEC_INIT;
	struct weir_error err = {0};
	assert_int_equal(template_known_standard(&known), 0);
	assert_int_equal(strvec_push(&known, "params.table"), 0);
	assert_int_equal(strvec_push(&known, "outputs.extract.*"), 0);

	assert_int_equal(template_check("load {{ params.table }} {{ ds }} {{ try_number }}", &known,
					TEMPLATE_SHELL, &err),
			 0);
	assert_int_equal(template_check("{{ outputs.extract.rows }}", &known, TEMPLATE_SHELL, &err),
			 0);
	assert_int_equal(template_check("{{ params.other }}", &known, TEMPLATE_SHELL, &err), -1);
	assert_non_null(strstr(err.msg, "unknown variable \"params.other\""));
	assert_non_null(strstr(err.msg, "params.table"));
	assert_non_null(strstr(err.msg, "outputs.extract.KEY"));
	assert_int_equal(template_check("{{ outputs.extract }}", &known, TEMPLATE_SHELL, &err), -1);
	assert_int_equal(template_check("{{ outputs.load.rows }}", &known, TEMPLATE_SHELL, &err),
			 -1);
	assert_int_equal(template_check("{{ item }}", &known, TEMPLATE_SHELL, &err), -1);
	assert_int_equal(template_check("{{ ds", &known, TEMPLATE_SHELL, &err), -1);
	/* check mode finds unsafe places for outside values too */
	assert_int_equal(template_check("echo `{{ params.table }}`", &known, TEMPLATE_SHELL, &err),
			 -1);
	assert_non_null(strstr(err.msg, "WEIR_PARAM_<NAME>"));
	assert_int_equal(template_check("echo `{{ params.table }}`", &known, TEMPLATE_RAW, &err), 0);
	assert_int_equal(template_check("echo `{{ ds }}`", &known, TEMPLATE_SHELL, &err), 0);
	assert_int_equal(template_name_trust("params.x"), TEMPLATE_OUTSIDE);
	assert_int_equal(template_name_trust("item"), TEMPLATE_OUTSIDE);
	assert_int_equal(template_name_trust("outputs.a.b"), TEMPLATE_OUTSIDE);
	assert_int_equal(template_name_trust("ds"), TEMPLATE_TRUSTED);
	strvec_release(&known);
}

static void test_env(void **state)
{
	(void)state;
	json_t *params = json_pack("{s:s, s:i}", "table", "ev'ents", "n", 3);
	struct template_run run = {
		.dag_id = "recsys",
		.run_id = "manual__1",
		.task_id = "train",
		.logical_ms = schedule_make_time(2024, 2, 29, 6, 0, 0),
		.interval_start_ms = schedule_make_time(2024, 2, 29, 6, 0, 0),
		.interval_end_ms = schedule_make_time(2024, 3, 1, 0, 0, 0),
		.try_number = 1,
		.params = params,
		.item = "gbdt",
	};
	struct strvec env = STRVEC_INIT;
	assert_int_equal(template_env(&run, &env, NULL), 0);
	const char *want[] = {
		"WEIR_DS=2024-02-29",
		"WEIR_DS_NODASH=20240229",
		"WEIR_TS=2024-02-29T06:00:00+00:00",
		"WEIR_LOGICAL_DATE=2024-02-29T06:00:00+00:00",
		"WEIR_DATA_INTERVAL_START=2024-02-29T06:00:00+00:00",
		"WEIR_DATA_INTERVAL_END=2024-03-01T00:00:00+00:00",
		"WEIR_RUN_ID=manual__1",
		"WEIR_DAG_ID=recsys",
		"WEIR_TASK_ID=train",
		"WEIR_TRY_NUMBER=1",
		"WEIR_PARAM_table=ev'ents",
		"WEIR_PARAM_n=3",
		"WEIR_ITEM=gbdt",
	};
	assert_int_equal(env.n, sizeof want / sizeof want[0]);
	for (size_t i = 0; i < env.n; i++)
		assert_string_equal(env.v[i], want[i]);

	/* the same entries from a context filled with the outputs and an
	 * object item too (a try's templates and environment from one fill) */
	json_t *outputs = json_pack("{s:{s:s}}", "prep", "path", "/x");
	json_t *item = json_pack("{s:s}", "name", "gbdt");
	struct template_ctx ctx = TEMPLATE_CTX_INIT;
	struct strvec env2 = STRVEC_INIT;
	run.outputs = outputs;
	run.item_value = item;
	assert_int_equal(template_ctx_fill(&ctx, &run, NULL), 0);
	assert_non_null(template_ctx_get(&ctx, "outputs.prep.path"));
	assert_int_equal(template_ctx_env(&ctx, &env2, NULL), 0);
	assert_int_equal(env2.n, env.n);
	for (size_t i = 0; i < env.n; i++)
		assert_string_equal(env2.v[i], want[i]);
	template_ctx_release(&ctx);
	strvec_release(&env2);
	json_decref(outputs);
	json_decref(item);
	strvec_release(&env);
	json_decref(params);
}

/* Runs `cmd` with /bin/sh (popen) and returns what it printed. */
static char *sh_output(const char *cmd)
{
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	size_t cap = 4096, n = 0;
	char *out = malloc(cap);
	assert_non_null(out);
	size_t r;
	while ((r = fread(out + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (n + 1 == cap) {
			cap *= 2;
			out = realloc(out, cap);
			assert_non_null(out);
		}
	}
	out[n] = '\0';
	pclose(f);
	return out;
}

static void test_injection(void **state)
{
	(void)state;
	char dir[] = "/tmp/weir-template-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char pwned[128];
	snprintf(pwned, sizeof pwned, "%s/PWNED", dir);

	char p_sub[200], p_tick[200], p_semi[200], p_dq[200], p_nl[200], p_amp[200];
	snprintf(p_sub, sizeof p_sub, "$(touch %s)", pwned);
	snprintf(p_tick, sizeof p_tick, "`touch %s`", pwned);
	snprintf(p_semi, sizeof p_semi, "'; touch %s; '", pwned);
	snprintf(p_dq, sizeof p_dq, "\"; touch %s; \"", pwned);
	snprintf(p_nl, sizeof p_nl, "x\ntouch %s\n", pwned);
	snprintf(p_amp, sizeof p_amp, "a' && touch %s #", pwned);
	const char *payloads[] = {
		"'; rm -rf /; '", p_sub, p_tick, p_semi, p_dq, p_nl, p_amp,
		"$(...)", "`...`", "line1\nline2", "'", "''", "\\", "\\'", "'\\''",
		"$HOME", "*", " a  b ", "x' 'y", "}}", "{{ ds }}", "-n", "", "%s%d", "!",
		"\t", "\"", "a\"b'c`d$e\\f", "${IFS}", "#", ")", "$(", "'\"'\"'",
	};
	/* printf '%s|' prints each argument followed by |: one argument in,
	 * exactly "value|" out. */
	struct {
		const char *tmpl;
		const char *pre, *post;
		bool strip_nl; /* $(...) drops trailing newlines */
	} shapes[] = {
		{"printf '%s|' {{ params.x }}", "", "|", false},
		{"printf '%s|' \"pre {{ params.x }} post\"", "pre ", " post|", false},
		{"printf '%s|' 'pre {{ params.x }} post'", "pre ", " post|", false},
		{"printf '%s|' \"a\"{{ params.x }}\"b\"", "a", "b|", false},
		{"x={{ params.x }}; printf '%s|' \"$x\"", "", "|", false},
		{"printf '%s|' \"$(printf '%s' {{ params.x }})\"", "", "|", true},
		{"printf '%s|' \"$(printf '%s' \"{{ params.x }}\")\"", "", "|", true},
		{"printf '%s|' $(true) \"{{ params.x }}\"", "", "|", false},
		{"f() { printf '%s|' \"$1\"; }; f {{ params.x }}", "", "|", false},
		{"printf '%s|' \"it's \"{{ params.x }}", "it's ", "|", false},
		{"printf '%s|' {{ params.x }}{{ params.x }}", NULL, NULL, false},
	};
	for (size_t i = 0; i < sizeof payloads / sizeof payloads[0]; i++) {
		struct template_ctx ctx = TEMPLATE_CTX_INIT;
		assert_int_equal(
			template_ctx_set(&ctx, "params.x", payloads[i], TEMPLATE_OUTSIDE, NULL), 0);
		for (size_t j = 0; j < sizeof shapes / sizeof shapes[0]; j++) {
			char *cmd = render(shapes[j].tmpl, &ctx, TEMPLATE_SHELL);
			char *got = sh_output(cmd);
			char want[600];
			size_t vlen = strlen(payloads[i]);
			if (shapes[j].strip_nl)
				while (vlen > 0 && payloads[i][vlen - 1] == '\n')
					vlen--;
			if (shapes[j].pre)
				snprintf(want, sizeof want, "%s%.*s%s", shapes[j].pre, (int)vlen,
					 payloads[i], shapes[j].post);
			else
				snprintf(want, sizeof want, "%s%s|", payloads[i], payloads[i]);
			if (strcmp(got, want))
				fail_msg("payload \"%s\" in \"%s\": ran \"%s\", printed \"%s\", "
					 "want \"%s\"",
					 payloads[i], shapes[j].tmpl, cmd, got, want);
			free(got);
			free(cmd);
		}
		template_ctx_release(&ctx);
	}
	/* nothing the payloads asked for ran */
	assert_int_equal(access(pwned, F_OK), -1);

	/* the test can fail: the same payload unquoted does run */
	char raw[300];
	snprintf(raw, sizeof raw, "printf '%%s|' %s", p_sub);
	free(sh_output(raw));
	assert_int_equal(access(pwned, F_OK), 0);
	unlink(pwned);
	rmdir(dir);
}

/* ---- every shell context x hostile values (docs/security.md) ---- */

/* Runs `cmd` with `shell -c` in `dir`, its output to /dev/null, killed
 * after 10 s. */
static void run_shell(const char *shell, const char *dir, const char *cmd)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		if (null < 0 || chdir(dir) < 0)
			_exit(127);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		alarm(10);
		execl(shell, shell, "-c", cmd, (char *)NULL);
		_exit(127);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
}

static void test_shell_contexts(void **state)
{
	(void)state;
	char dir[] = "/tmp/weir-contexts-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char pwned[128];
	snprintf(pwned, sizeof pwned, "%s/PWNED", dir);

	/* each would create PWNED if the shell ran code from it */
	const char *forms[] = {
	    "a[$(touch %s)]", /* the probe's: bash runs a subscript's $() */
	    "$(touch %s)",
	    "`touch %s`",
	    "'; touch %s; '",
	    "\"; touch %s; \"",
	    "x\ntouch %s\n",
	    "1)); touch %s; ((1",
	    "1 ]] || touch %s; [[ 1",
	    "\\'; touch %s; \\'",
	    "x) touch %s;; (y",
	    "EOF\ntouch %s\nEOF",
	    "1 + $(touch %s)",
	    "a[`touch %s`]",
	};
	enum { N = sizeof forms / sizeof forms[0] };
	char values[N][300];
	for (size_t i = 0; i < N; i++)
		snprintf(values[i], sizeof values[i], forms[i], pwned);

	/* where a value is refused: no quoting makes it safe */
	const char *refused[] = {
	    "echo result=$(( {{ params.x }} + 1 ))", /* the probe's two */
	    "echo \"$(( {{ params.x }} ))\"",
	    "echo $(({{ params.x }}))",
	    "echo $(( $(echo {{ params.x }}) + 1 ))",
	    "echo $[ {{ params.x }} + 1 ]",
	    "(( {{ params.x }} > 1 )) && echo big",
	    "for ((i = 0; i < {{ params.x }}; i++)); do :; done",
	    "[[ {{ params.x }} -eq 1 ]]",
	    "[[ -v {{ params.x }} ]]",
	    "[[ \"{{ params.x }}\" == y && 1 -lt {{ params.x }} ]]",
	    "[[ a == a && {{ params.x }} -eq 1 ]]",
	    "eval echo {{ params.x }}",
	    "command eval \"echo {{ params.x }}\"",
	    "`echo `command eval echo {{ params.x }}",
	    "time -p eval echo {{ params.x }}",
	    "coproc eval echo {{ params.x }}",
	    "function f { eval echo {{ params.x }}; }; f",
	    "printf -v PS4 %s {{ params.x }}; set -x; :",
	    "/a/very/long/path/that/goes/on/and/on/for/a/while/bin/bash -c {{ params.x }}",
	    "bash -c >/dev/null {{ params.x }}",
	    "bash -c -- {{ params.x }}",
	    "bash <<< {{ params.x }}",
	    "bash -c 'bash -c sh' <<< {{ params.x }}",
	    "bash {{ params.x }} {{ params.x }}",
	    "$(true)eval echo {{ params.x }}",
	    "eval \"$(printf %s {{ params.x }})\"",
	    "eval `printf %s {{ params.x }}`",
	    "sh -c \"$(echo {{ params.x }})\"",
	    "declare -i n=$(echo {{ params.x }})",
	    "PS4=$(echo {{ params.x }}); set -x; :",
	    "trap {{ params.x }} EXIT",
	    "trap -- 'echo {{ params.x }}' EXIT",
	    "let n={{ params.x }}",
	    "alias a={{ params.x }}\na",
	    "alias e=eval\ne {{ params.x }}",
	    "read {{ params.x }} </dev/null",
	    "unset {{ params.x }}",
	    "printf -v {{ params.x }} %s y",
	    "test -v {{ params.x }}",
	    "[ -v {{ params.x }} ]",
	    "declare {{ params.x }}=1",
	    "declare -i n={{ params.x }}",
	    "2>&1 declare -i n={{ params.x }}",
	    ">/dev/null eval {{ params.x }}",
	    "typeset -i n; n={{ params.x }}",
	    "f() { local -n r={{ params.x }}; r=1; }; f",
	    "a[{{ params.x }}]=1",
	    "sh -c {{ params.x }}",
	    "sh -c 'echo {{ params.x }}'",
	    "bash -c \"echo {{ params.x }}\"",
	    "bash -ec 'echo {{ params.x }}'",
	    "env bash -o errexit -c 'echo {{ params.x }}'",
	    "echo | xargs sh -c 'echo {{ params.x }}'",
	    "/bin/dash -c 'echo '{{ params.x }}",
	    "ssh localhost echo {{ params.x }}",
	    "PS4={{ params.x }}; set -x; :",
	    "export BASH_ENV={{ params.x }}; bash -c :",
	    "env BASH_ENV={{ params.x }} bash -c :",
	    "echo ${{ params.x }}",
	    "echo \\{{ params.x }}",
	    "echo \"\\{{ params.x }}\"",
	    "cat <<{{ params.x }}\nx\n",
	    "echo $({{ '(' }} {{ params.x }} ))",
	    "cat <<EOF\n{{ params.x }}\nEOF",
	    "echo `echo {{ params.x }}`",
	    "echo ${X:-{{ params.x }}}",
	    "export X=((PS4=(({{ params.x }}",
	    "X=(a; {{ params.x }})",
	    "X=(a [{{ params.x }}]=1)",
	    "echo $[1] {{ params.x }}",
	    "echo $(( ')' )) {{ params.x }}",
	    "$(()command eval ; {{ params.x }}\n))",
	    "(( 1 ' )) {{ params.x }}'",
	    "echo $'\\'' {{ params.x }}",
	};
	/* where a quoted value is one literal string */
	const char *accepted[] = {
	    "echo {{ params.x }}",
	    "echo \"v={{ params.x }}\"",
	    "echo 'v={{ params.x }}'",
	    "case {{ params.x }} in a) echo a;; *) echo other;; esac",
	    "case y in {{ params.x }}) echo hit;; *) echo miss;; esac",
	    "case y in \"{{ params.x }}\"|z) echo hit;; esac",
	    "[ {{ params.x }} -eq 1 ]",
	    "test {{ params.x }} -lt 2",
	    "[ \"{{ params.x }}\" = y ]",
	    "export X={{ params.x }}; echo \"$X\"",
	    "f() { local v={{ params.x }}; echo \"$v\"; }; f",
	    "readonly R={{ params.x }}",
	    "X={{ params.x }} env",
	    "cat < {{ params.x }}",
	    "cat <<< {{ params.x }}",
	    "sh -c 'echo \"$1\"' sh {{ params.x }}",
	    "bash -c 'printf \"%s\\n\" \"$@\"' bash {{ params.x }}",
	    "x=$(echo {{ params.x }}); echo \"$x\"",
	    "echo \"$(sh -c 'echo \"$1\"' sh {{ params.x }})\"",
	    "export X=$(echo {{ params.x }}); echo \"$X\"",
	    "X=(a {{ params.x }} \"{{ params.x }}\"); echo \"${X[1]}\"",
	    "printf '%d\\n' {{ params.x }}",
	    "printf -v out %s {{ params.x }}",
	    "echo $(( 1 + 2 )) {{ params.x }}",
	    "echo $(( (1 + 2) * 3 )) {{ params.x }}",
	    "[[ 1 -eq 1 ]] && echo {{ params.x }}",
	    "eval 'echo hi'; echo {{ params.x }}",
	    "sh -c 'echo hi'; echo {{ params.x }}",
	    "bash -c 'echo \"$1\"' -- {{ params.x }}",
	    "sh -e -c 'echo \"$1\"' sh {{ params.x }} {{ params.x }}",
	    "echo {{ params.x }} >/dev/null; sh -c 'echo hi'",
	    "a[1]=2; echo {{ params.x }}",
	    ": $((x = 1)); echo \"{{ params.x }}\"",
	    "echo \"$HOME\"{{ params.x }}",
	    "echo $HOME {{ params.x }}",
	    "cat <<EOF\nbody\nEOF\necho {{ params.x }}",
	};
	const char *shells[] = {"/bin/sh", "/bin/bash"};
	struct strvec known = STRVEC_INIT;
	assert_int_equal(strvec_push(&known, "params.x"), 0);
	for (size_t v = 0; v < N; v++) {
		struct template_ctx ctx = TEMPLATE_CTX_INIT;
		assert_int_equal(
		    template_ctx_set(&ctx, "params.x", values[v], TEMPLATE_OUTSIDE, NULL), 0);
		for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
			struct weir_error err = {0};
			char *cmd = template_render(refused[i], &ctx, TEMPLATE_SHELL, &err);
			if (cmd) {
				for (size_t sh = 0; sh < 2; sh++)
					run_shell(shells[sh], dir, cmd);
				fail_msg(
				    "\"%s\" rendered as \"%s\" (%s a marker), expected a refusal",
				    refused[i], cmd,
				    access(pwned, F_OK) == 0 ? "and it created" : "without");
			}
			assert_int_equal(err.kind, WEIR_E_INVALID);
			assert_non_null(strstr(err.msg, "cannot be quoted safely"));
			assert_non_null(strstr(err.msg, "of the template"));
			assert_int_equal(template_check(refused[i], &known, TEMPLATE_SHELL, &err),
			                 -1);
		}
		for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
			char *cmd = render(accepted[i], &ctx, TEMPLATE_SHELL);
			assert_int_equal(template_check(accepted[i], &known, TEMPLATE_SHELL, NULL),
			                 0);
			for (size_t sh = 0; sh < 2; sh++) {
				run_shell(shells[sh], dir, cmd);
				if (access(pwned, F_OK) == 0)
					fail_msg("%s ran code from value \"%s\" in \"%s\": \"%s\"",
					         shells[sh], values[v], accepted[i], cmd);
			}
			free(cmd);
		}
		template_ctx_release(&ctx);
	}
	strvec_release(&known);
	/* the test can fail: the probe's command as weir rendered it before
	 * (its value single-quoted in the arithmetic) runs the value's command */
	char probe[400];
	snprintf(probe, sizeof probe, "echo result=$(( 'a[$(touch %s)]' + 1 ))", pwned);
	run_shell("/bin/sh", dir, probe);
	assert_int_equal(access(pwned, F_OK), 0);
	char rm[200];
	snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
	assert_int_equal(system(rm), 0);
}

/* ---- var.* and conn.*: a source over fixed values ---- */

static int src_var(void *arg, const char *key, char **value, struct weir_error *err)
{
	(void)arg;
	const char *v = !strcmp(key, "region") ? "eu 1"
			: !strcmp(key, "cfg")  ? "{\"limits\": {\"rows\": 10}, \"names\": [\"a\", \"b\"]}"
			: !strcmp(key, "bad")  ? "not json"
					       : NULL;
	if (!v)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "variable \"%s\" is not set", key);
	*value = strdup(v);
	return 0;
}

static int src_conn(void *arg, const char *id, struct connection *out, struct weir_error *err)
{
	(void)arg;
	if (strcmp(id, "wh"))
		return weir_error_set(err, WEIR_E_NOT_FOUND, "connection \"%s\" is not defined", id);
	return connection_from_uri(
	    "wh", "postgresql://etl:s3cret@db.x:5433/dw?sslmode=require&api_token=tok", out, err);
}

static void test_secrets(void **state)
{
	(void)state;
	struct template_source src = {.var = src_var, .conn = src_conn};
	struct template_ctx ctx = TEMPLATE_CTX_INIT;
	struct weir_error err = {0};
	struct strvec known = STRVEC_INIT;

	ctx.src = &src;
	expect_render(&ctx, TEMPLATE_RAW, "{{ var.value.region }}", "eu 1");
	expect_render(&ctx, TEMPLATE_SHELL, "echo {{ var.value.region }}", "echo 'eu 1'");
	expect_render(&ctx, TEMPLATE_RAW, "{{ var.json.cfg.limits.rows }}/{{ var.json.cfg.names.1 }}",
		      "10/b");
	expect_render(&ctx, TEMPLATE_RAW, "{{ var.json.cfg.limits }}", "{\"rows\":10}");
	expect_render(&ctx, TEMPLATE_RAW,
		      "{{ conn.wh.host }}:{{ conn.wh.port }} {{ conn.wh.login }} {{ conn.wh.schema }} "
		      "{{ conn.wh.conn_type }} {{ conn.wh.extra.sslmode }}",
		      "db.x:5433 etl dw postgres require");
	/* the whole extra, its secret-like fields masked */
	expect_render(&ctx, TEMPLATE_RAW, "{{ conn.wh.extra }}",
		      "{\"api_token\":\"***\",\"sslmode\":\"require\"}");

	/* not set: WEIR_E_NOT_FOUND, naming it */
	assert_null(template_render("{{ var.value.nope }}", &ctx, TEMPLATE_RAW, &err));
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	assert_non_null(strstr(err.msg, "\"nope\" is not set"));
	assert_null(template_render("{{ conn.other.host }}", &ctx, TEMPLATE_RAW, &err));
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	assert_null(template_render("{{ var.json.cfg.limits.cols }}", &ctx, TEMPLATE_RAW, &err));
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	assert_null(template_render("{{ var.json.bad.x }}", &ctx, TEMPLATE_RAW, &err));
	assert_int_equal(err.kind, WEIR_E_INVALID);

	/* never the password, at render or check time */
	const char *refused[] = {"{{ conn.wh.password }}", "{{ conn.wh.extra.api_token }}",
				 "{{ conn.wh.nope }}", "{{ var.value }}", "{{ var.other.k }}",
				 "{{ var.value.a.b }}"};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		assert_null(template_render(refused[i], &ctx, TEMPLATE_RAW, &err));
		assert_int_equal(err.kind, WEIR_E_INVALID);
		assert_int_equal(template_check(refused[i], &known, TEMPLATE_RAW, &err), -1);
		assert_null(strstr(err.msg, "s3cret"));
	}
	assert_non_null(strstr(err.msg, "var.value.a.b"));
	assert_int_equal(template_check("{{ conn.wh.password }}", &known, TEMPLATE_SHELL, &err), -1);
	assert_non_null(strstr(err.msg, "password is never"));
	/* any key or id passes the check: they live in the server */
	assert_int_equal(template_check("x {{ var.value.anything }} {{ conn.any-id.host }}", &known,
					TEMPLATE_SHELL, NULL),
			 0);
	/* and are outside values: where no quoting is safe they are refused */
	assert_int_equal(template_check("echo `{{ var.value.k }}`", &known, TEMPLATE_SHELL, &err),
			 -1);
	/* without a source they do not render */
	ctx.src = NULL;
	assert_null(template_render("{{ var.value.region }}", &ctx, TEMPLATE_RAW, &err));
	template_ctx_release(&ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values), cmocka_unit_test(test_errors),
		cmocka_unit_test(test_check),  cmocka_unit_test(test_env),
		cmocka_unit_test(test_injection), cmocka_unit_test(test_secrets),
		cmocka_unit_test(test_shell_contexts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
