/* fuzz_shell_contexts.c: a command template made of shell fragments
 * (arithmetic, [[ ]], case, here-documents, ${}, quotes, $(), backticks,
 * eval, sh -c, ...) with {{ params.x }} among them, and a hostile value
 * whose every way of running code creates a marker file.  When the
 * template renders, the command runs under /bin/sh and /bin/bash in a
 * temporary directory (2 s at most each); the marker must never appear.
 *
 * Input: the first byte picks the value; each later byte picks a fragment
 * (or {{ params.x }}).  Only fixed fragments reach the shell, so nothing
 * but the value's own `touch` can touch a file outside that directory,
 * which is emptied and removed at exit.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/strbuf.h"
#include "model/template.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* No fragment reads a variable back ($NAME, $1, a bare name in
 * arithmetic), prints the environment or feeds a value to standard input
 * (<<<, a pipe): a value stored and read back, or fed to a program that
 * reads it as code (bash -c 'bash -c 'sh <<< VALUE runs it), is the
 * command's own doing and beyond what a template can see
 * (docs/security.md). */
static const char *const fragments[] = {
    "{{ params.x }}",
    "{{ params.x }}",
    "{{ params.x }}",
    "{{ params.x }}",
    "${{ params.x }}",
    "$((",
    "))",
    "$(",
    ")",
    "((",
    "[[ ",
    " ]]",
    "\"",
    "'",
    "`",
    "${HOME:-",
    "}",
    "$[",
    "]",
    "case ",
    " in ",
    ") ",
    ";; esac",
    "<<EOF\n",
    "\nEOF\n",
    "<<'E'\n",
    "\nE\n",
    "<<-EOF\n",
    "eval ",
    "trap ",
    "let ",
    "sh -c '",
    "bash -c '",
    "dash -c '",
    "env bash -ec '",
    "command eval ",
    "echo ",
    "printf %s ",
    "true ",
    ": ",
    "; ",
    "\n",
    " && ",
    " || ",
    "#",
    "$'",
    "\\",
    "export X=",
    "local X=",
    "declare -i N=",
    "declare ",
    "test -v ",
    "[ ",
    " ]",
    " -eq 1",
    " -lt ",
    "PS4=",
    "BASH_ENV=",
    "alias y=",
    "{ ",
    " }",
    "for ((",
    "if ",
    "then ",
    "fi",
    " ",
    "=",
    "-c ",
    "-e ",
    "(",
    "1",
    "+",
    "b[",
    "]=1 ",
    "set -x; ",
    "do ",
    "done",
    "while false; ",
    "for i in ",
    "2>&1 ",
    "< /dev/null ",
    "{{ 'lit' }}",
    "{{ '(' }}",
    "{{ ds }}",
    "$(printf %s ",
    "eval \"$(printf %s ",
    "f() { ",
    "; }; f ",
    "[[ -v ",
};
#define N_FRAGMENTS (sizeof fragments / sizeof fragments[0])

/* Each form, with %s the marker's path, runs `touch marker` if any part
 * of it is ever read as code. */
static const char *const forms[] = {
    "a[$(touch %s)]",
    "$(touch %s)",
    "`touch %s`",
    "'; touch %s #",
    "\"; touch %s #",
    "x\ntouch %s\n",
    "1)); touch %s; ((1",
    "1 ]] || touch %s; [[ 1",
    "\\'; touch %s; \\'",
    "x) touch %s;; (y",
    "EOF\ntouch %s\nEOF\nE\ntouch %s\nE\n",
    ";touch %s",
    "|touch %s",
    "&touch %s&",
    "1 + $(touch %s)",
    "a[`touch %s`]",
    "}; touch %s; {",
    "$'\\x27'; touch %s",
};
#define N_FORMS (sizeof forms / sizeof forms[0])

static char dir[64];
static char marker[128];

static void cleanup(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char path[400];
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static void setup(void)
{
	if (dir[0])
		return;
	snprintf(dir, sizeof dir, "/tmp/weir-fuzz-shell-XXXXXX");
	if (!mkdtemp(dir))
		abort();
	snprintf(marker, sizeof marker, "%s/PWNED", dir);
	atexit(cleanup);
}

/* Runs cmd with `shell -c` in dir: no input, output dropped, killed
 * (its process group too) after 2 s. */
static void run(const char *shell, const char *cmd)
{
	pid_t pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		setpgid(0, 0);
		if (null < 0 || chdir(dir) < 0)
			_exit(127);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		alarm(2);
		execl(shell, shell, "-c", cmd, (char *)NULL);
		_exit(127);
	}
	/* wait without reaping, so that the group's id stays ours while
	 * whatever it left behind is killed */
	siginfo_t info;
	int status;
	while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) < 0)
		;
	kill(-pid, SIGKILL);
	waitpid(pid, &status, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2 || size > 64)
		return 0;
	setup();

	char value[512];
	const char *form = forms[data[0] % N_FORMS];
	snprintf(value, sizeof value, form, marker, marker);

	struct strbuf tmpl = STRBUF_INIT;
	for (size_t i = 1; i < size; i++)
		strbuf_addstr(&tmpl, fragments[data[i] % N_FRAGMENTS]);
	if (tmpl.failed)
		abort();

	struct template_ctx ctx = TEMPLATE_CTX_INIT;
	struct strvec known = STRVEC_INIT;
	struct weir_error err;
	if (template_ctx_set(&ctx, "params.x", value, TEMPLATE_OUTSIDE, &err) < 0 ||
	    template_ctx_set(&ctx, "ds", "2024-01-01", TEMPLATE_TRUSTED, &err) < 0 ||
	    strvec_push(&known, "params.x") < 0 || strvec_push(&known, "ds") < 0)
		abort();
	char *cmd = template_render(tmpl.buf, &ctx, TEMPLATE_SHELL, &err);
	/* check and render agree */
	if ((cmd != NULL) != (template_check(tmpl.buf, &known, TEMPLATE_SHELL, &err) == 0))
		abort();
	if (cmd && strstr(tmpl.buf, "{{ params.x }}")) {
		static const char *const shells[] = {"/bin/sh", "/bin/bash"};
		for (size_t s = 0; s < 2; s++) {
			run(shells[s], cmd);
			if (access(marker, F_OK) == 0) {
				fprintf(stderr,
				        "%s ran code from the value\n  template: %s\n  value: %s\n"
				        "  command: %s\n",
				        shells[s], tmpl.buf, value, cmd);
				unlink(marker);
				abort();
			}
		}
	}
	free(cmd);
	strvec_release(&known);
	template_ctx_release(&ctx);
	strbuf_release(&tmpl);
	return 0;
}
