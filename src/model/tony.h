/* tony.h: TonY compatibility: Hadoop-style tony.xml and TonY's submit flags
 * (ClusterSubmitter / TonyClient) into a struct job_spec.
 *
 * Keys that mean something here become spec fields; keys that have no
 * meaning on weir (YARN queues, Kerberos, docker, node labels, history
 * server...) become one warning line each, never an error.  docs/tony.md
 * maps every key.
 *
 * Ownership: a tony_conf owns its properties; a returned job_spec belongs to
 * the caller (job_spec_destroy()); warnings are appended to a caller's
 * strvec as owned strings.
 */
#ifndef WEIR_MODEL_TONY_H
#define WEIR_MODEL_TONY_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"
#include "lib/strvec.h"
#include "model/job_spec.h"

struct tony_prop {
	char *name;
	char *value;  /* "" when the property has no <value> */
	char *origin; /* the file, or "--conf" */
	int line;     /* 1-based line in origin; 0 when not from a file */
};

/* Properties in the order read; a later one of the same name wins (as in
 * Hadoop's Configuration). */
struct tony_conf {
	struct tony_prop *props;
	size_t n;
};

/* An empty configuration.  NULL when out of memory. */
struct tony_conf *tony_conf_create(void);
void tony_conf_destroy(struct tony_conf *conf);

/* Reads a Hadoop configuration file (<configuration><property><name>
 * <value>...).  No network, no external entities, no DTD at all.  NULL with
 * err ("FILE:LINE: ...") when unreadable or malformed. */
struct tony_conf *tony_conf_parse_file(const char *path, struct weir_error *err);

/* Same from memory; `origin` names it in errors. */
struct tony_conf *tony_conf_parse_buffer(const char *buf, size_t len, const char *origin,
                                         struct weir_error *err);

/* Appends (overrides) one property.  0, or -1 with err when out of memory. */
int tony_conf_set(struct tony_conf *conf, const char *name, const char *value, const char *origin,
                  int line, struct weir_error *err);

/* The winning property of that name, or NULL. */
const struct tony_prop *tony_conf_get(const struct tony_conf *conf, const char *name);

/* Everything TonY's submit flags carry, after parsing. */
struct tony_submit {
	char *conf_file;
	char *src_dir; /* absolute */
	char *executes;
	char *task_params;
	char *python_venv; /* absolute */
	char *python_binary_path;
	char *framework;
	struct strvec shell_env;     /* "K=V" */
	struct strvec container_env; /* "K=V" */
	struct strvec conf;          /* "k=v" */
};

void tony_submit_release(struct tony_submit *s);

/* How many of argv[i..] the TonY flag at argv[i] uses: 1 (--flag=value),
 * 2 (--flag value), or 0 when argv[i] is not a TonY submit flag.  Lets the
 * CLI separate its own flags from TonY's. */
int submit_flag_arity(int argc, char **argv, int i);

/* Parses TonY submit flags into `out` (zeroed by the caller).  argv holds
 * only flags: no program or subcommand name.  `--flag value` and
 * `--flag=value` both work; paths become absolute against the current
 * directory.  0, or -1 with err naming the flag (unknown flag, missing
 * value); `out` is released on error. */
int tony_submit_parse(int argc, char **argv, struct tony_submit *out, struct weir_error *err);

/* The job a TonY configuration and submit flags describe.  `flags` may be
 * NULL (the configuration alone).  Warnings for keys without meaning here
 * are appended to `warnings` (may be NULL).  Validates.  NULL with err
 * naming the key and where it was set. */
struct job_spec *tony_to_spec(const struct tony_conf *conf, const struct tony_submit *flags,
                              struct strvec *warnings, struct weir_error *err);

/* The interpreter that runs --executes, as TonY's client resolves
 * --python_binary_path (docs/tony.md, "The interpreter"): an absolute path,
 * or any path without --python_venv, as given; a relative one under the
 * unpacked venv, `venv/PATH`, except that a PATH already starting with
 * `venv/` is kept (a zip of the folder `venv` itself is linked at that
 * folder, so TonY's `venv/venv/bin/python` is `venv/bin/python` here).  A
 * leading "./" is dropped.  Caller frees; NULL when out of memory. */
char *tony_python_path(const char *python_binary_path, bool have_venv);

/* TonY's client's default for $TONY_CONF_DIR. */
#define TONY_DEFAULT_CONF_DIR "/export/apps/tony/conf"

/* What `weir submit` looks for beyond its flags, as TonY's client does. */
struct tony_lookup {
	const char *conf_dir; /* $TONY_CONF_DIR (or TONY_DEFAULT_CONF_DIR); NULL: none */
	struct strvec *read;  /* gets each configuration file read, in order; may be NULL */
};

/* TonY's configuration layers, each overriding the one before:
 * --conf_file F, or without it `tony.xml` in the current directory when
 * there is one (lookup only); then CONF_DIR/tony-site.xml when there is one
 * (lookup only); then the --conf flags.  An empty configuration when none
 * is there.  NULL with err naming the file that cannot be read. */
struct tony_conf *tony_conf_load(const struct tony_submit *flags, const struct tony_lookup *lookup,
                                 struct weir_error *err);

/* The whole of `weir submit --conf_file F ...`: parses the flags, reads the
 * configuration (tony_conf_load), and builds the spec.  With a lookup, also
 * as a local TonY user expects: an --executes given without --src_dir
 * ships what it names from the current directory (its first path component,
 * linked into each task's working directory as that name), and one that
 * names nothing there is refused naming the flags.  lookup NULL: only
 * --conf_file is read and --executes is taken as given. */
struct job_spec *submit_flags_load(int argc, char **argv, const struct tony_lookup *lookup,
                                   struct strvec *warnings, struct weir_error *err);

/* submit_flags_load(argc, argv, NULL, warnings, err). */
struct job_spec *submit_flags_parse(int argc, char **argv, struct strvec *warnings,
                                    struct weir_error *err);

#endif
