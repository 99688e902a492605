/* launch.h: `weir launch`, the parent of every task's user program.
 *
 *   weir launch --job ID --role R --index I --attempt A [--host ADDR]
 *               [--log-to-server]
 *   weir launch --job ID --tasks ROLE:I[-J],... --attempt A ...  (Slurm: the
 *               task is the SLURM_PROCID-th of the list)
 *   env: WEIR_SERVER (base URL), WEIR_LAUNCH_SECRET (its proof on the launch
 *        routes, exec/launch_secret.h); optional WEIR_KILL_GRACE (s)
 *
 * --log-to-server: the program's stdout and stderr go to the server over
 * HTTP (launch/logship.h) instead of the launcher's own stdout and stderr.
 *
 * Reserves the task's port, registers with the server, prepares the working
 * directory (src_dir, artifacts through the shared cache), waits for the
 * whole gang, sets the framework's environment, runs the command (its words
 * exec'd directly when it has no shell syntax, else under /bin/sh -c) in its
 * own process group and cgroup, forwards signals, enforces
 * the memory limit and the execution timeout, and reports started/exited.
 * The protocol is docs/api.md's "Launch protocol"; the design is
 * docs/internals/launch.md.
 *
 * Exit status: the program's (128+signal when signalled, 137 when killed
 * for memory); 124 when the gang did not assemble within the registration
 * timeout; 125 when the launch itself failed (bad arguments, refused by the
 * server, working directory or artifact errors); 2 for a usage error.
 */
#ifndef WEIR_LAUNCH_LAUNCH_H
#define WEIR_LAUNCH_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

struct cgroup; /* launch/cgroup.h */

/* argv[0] is "launch".  Returns the process's exit status. */
int launch_main(int argc, char **argv);

/* A shim: the launcher forked by the node's agent (launch/agent.h) for one
 * task, instead of an exec'd `weir launch`.  Everything is borrowed. */
struct launch_shim {
	long long job;
	const char *role;
	int index;
	int attempt;
	const char *key; /* the journal's key (launch/journal.h) */
	/* The register answer, given by the server when it started the task (a
	 * one-task job: no gang to wait for; started and exited go to the
	 * journal and the agent delivers them).  NULL: the task registers,
	 * waits for its gang and reports over HTTP as `weir launch` does, and
	 * journals its events as well. */
	json_t *task;
	bool log_to_server;
	int journal_fd;       /* the task's journal, open for appending */
	int notify_fd;        /* the agent's pipe: "KEY\n" when the journal grew; -1: none */
	struct cgroup *cg;    /* made ahead by the agent (the shim is in it; the caller's, not
	                         freed here); NULL: none */
	const char *group;    /* its name, journalled for an agent that adopts the shim */
	uint64_t start_ticks; /* the shim's start time (lib/proc.h), read ahead; 0: not yet */
	/* set true once the task's "exited" is in its journal; NULL: not asked */
	bool *end_journalled;
	pid_t pid; /* the shim's own pid, read once by its caller; 0: not known */
	/* the task's work folder is there already, put in place with the log
	 * from the spare's folder (launch/spare_dirs.h): not made again */
	bool workdir_placed;
	/* the task's launch secret (the start's "secret": its proof on the
	 * launch routes), and the server's token (the hello's "mask"): both
	 * masked in the task's output; NULL: none */
	const char *secret, *token;
	long long nonce; /* the job's (the start's): journalled in the "shim" line */
	/* where an Airflow Python task finds its DAG file's warm interpreter
	 * (launch/airflow_warm.h): the client's binary and the zygotes'
	 * folder; NULL: its tasks run cold */
	const char *airflow_warm_bin, *airflow_warm_dir;
};

/* Runs the shim's task to its end (WEIR_SERVER from the environment, the
 * launch secret from the start, as `weir launch` has them).  Returns the
 * exit status. */
int launch_shim_run(const struct launch_shim *shim);

/* --tasks LIST (one srun step running many tasks): the entry number
 * `procid` (SLURM_PROCID) of LIST, "ROLE:I" or "ROLE:I-J" entries joined by
 * commas ("worker:0-3,ps:0": procid 4 is ps:0).  0, or -1 when LIST is
 * malformed or too short (or the role does not fit role_size). */
int launch_pick_task(const char *list, long procid, char *role, size_t role_size, int *index);

/* `--host auto`: this machine's first address as `hostname -I` lists them
 * (an up, non-loopback IPv4 address, else a global IPv6 one), written into
 * out.  0, or -1 when there is none. */
int launch_first_address(char *out, size_t size);

#endif
