/* cli_run.c: `weir run`: runs a Python program with weir's Ray- and
 * Airflow-compatible modules importable as `ray` and `airflow`.
 *
 * All the Python side (the path, running the program as __main__) is
 * python/weir/run.py; this command finds the package, says where the server
 * is in the environment and execs `python3 -m weir.run`. */
#include "cli/cli_run.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fs.h"
#include "lib/proc.h"
#include "lib/strbuf.h"

void cli_run_usage(FILE *out)
{
	fputs("usage: weir [--server URL] [--home DIR] run [--python PY] PROGRAM.py [ARGS...]\n"
	      "\n"
	      "Runs a Python program written for Ray as it is: its `import ray` gets weir's\n"
	      "Ray-compatible module, so each remote call runs as a weir job on the server\n"
	      "(found as every command finds it: --server, $WEIR_SERVER, HOME/token).\n"
	      "Everything after PROGRAM.py is the program's own arguments; its exit status is\n"
	      "the command's.\n"
	      "\n"
	      "  --python PY   the interpreter (default $WEIR_RUN_PYTHON, else python3)\n"
	      "\n"
	      "The package is $WEIR_PYTHON_DIR, else the python/ folder beside the folder of\n"
	      "this program (a build tree), else PREFIX/share/weir/python.  See docs/ray.md.\n",
	      out);
}

/* true when dir holds weir's package with its run module */
static int has_package(const char *dir)
{
	char *run = fs_join(dir, "weir/run.py");
	int ok = run && fs_exists(run) == 1;
	free(run);
	return ok;
}

/* The folder that holds weir's Python package, malloc'd; NULL when none.
 * self: this program's path ("" when unknown). */
static char *python_dir(const char *self)
{
	static const char *const rel[] = {"../python", "python", "../share/weir/python"};
	const char *env = getenv("WEIR_PYTHON_DIR");

	if (env && *env)
		return has_package(env) ? strdup(env) : NULL;
	if (!*self)
		return NULL;
	char *bin = fs_abs_dirname(self);
	if (!bin)
		return NULL;
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		char *cand = fs_join(bin, rel[i]);
		char real[PATH_MAX];
		if (cand && has_package(cand) && realpath(cand, real)) {
			free(cand);
			free(bin);
			return strdup(real);
		}
		free(cand);
	}
	free(bin);
	return NULL;
}

int cli_run_main(int argc, char **argv, const struct cli_globals *g0)
{
	struct cli_globals g = *g0;
	struct weir_error err = {0};
	const char *python = getenv("WEIR_RUN_PYTHON");
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		int rc;
		if (cli_flag_is_help(argv[i])) {
			cli_run_usage(stdout);
			return CLI_EXIT_OK;
		}
		rc = cli_flag_global(argc, argv, &i, &g, &err);
		if (rc == 0)
			rc = cli_flag_value(argc, argv, &i, "--python", &python, &err);
		if (rc == 0)
			snprintf(err.msg, sizeof err.msg,
			         "run: unknown flag %s (flags go before "
			         "PROGRAM.py; what follows it is the program's)",
			         argv[i]);
		if (rc <= 0) {
			cli_error("%s", err.msg);
			cli_run_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (i >= argc) {
		cli_error("run: expected PROGRAM.py");
		cli_run_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	return cli_python_exec(python, "weir.run", argc - i, argv + i, &g, "run");
}

int cli_python_exec(const char *python, const char *module, int argc, char **argv,
                    const struct cli_globals *g, const char *who)
{
	if (!python || !*python)
		python = "python3";

	char self[PATH_MAX];
	if (proc_self_path(self, sizeof self) < 0)
		self[0] = '\0';
	char *pydir = python_dir(self);
	if (!pydir) {
		cli_error("%s: weir's Python package not found (no weir/run.py in %s); set "
		          "WEIR_PYTHON_DIR to the folder that holds it (the repository's python/)",
		          who,
		          getenv("WEIR_PYTHON_DIR") && *getenv("WEIR_PYTHON_DIR")
		              ? getenv("WEIR_PYTHON_DIR")
		              : "python/ beside this program's folder, nor share/weir/python");
		return CLI_EXIT_USAGE;
	}
	struct strbuf path;
	const char *old = getenv("PYTHONPATH");
	strbuf_init(&path);
	int bad =
	    old && *old ? strbuf_addf(&path, "%s:%s", pydir, old) : strbuf_addstr(&path, pydir);
	free(pydir);
	if (bad < 0 || setenv("PYTHONPATH", path.buf, 1) < 0 ||
	    (g->server && setenv("WEIR_SERVER", g->server, 1) < 0) ||
	    (g->home && setenv("WEIR_HOME", g->home, 1) < 0) ||
	    /* the program a private server is started with (ray.init, docs/ray.md) */
	    (*self && setenv("WEIR_BIN", self, 0) < 0)) {
		cli_error("%s: cannot set the environment", who);
		strbuf_release(&path);
		return CLI_EXIT_FAILED;
	}
	strbuf_release(&path);

	/* PYTHON -m MODULE ARGS...: argv passed as it is */
	size_t n = argc > 0 ? (size_t)argc : 0;
	char **args = calloc(n + 4, sizeof *args);
	if (!args) {
		cli_error("%s: out of memory", who);
		return CLI_EXIT_FAILED;
	}
	args[0] = (char *)python;
	args[1] = (char *)"-m";
	args[2] = (char *)module;
	for (size_t k = 0; k < n; k++)
		args[3 + k] = argv[k];
	fflush(stdout);
	execvp(python, args);
	cli_error("%s: cannot run %s: %s", who, python, strerror(errno));
	free(args);
	return CLI_EXIT_FAILED;
}

int cli_airflow_main(int argc, char **argv)
{
	struct cli_globals g = {0};

	return cli_python_exec(getenv("WEIR_RUN_PYTHON"), "weir.compat.airflow.cli", argc - 1,
	                       argv + 1, &g, "airflow");
}
