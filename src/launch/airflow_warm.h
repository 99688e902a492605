/* airflow_warm.h: an Airflow Python task started from its DAG file's warm
 * interpreter (docs/internals/airflow_warm.md).
 *
 * A task that runs in Python has the command
 *   PYTHONPATH=SITE... exec ${WEIR_AIRFLOW_WARM:+"$WEIR_AIRFLOW_WARM" airflow-warm}
 *        PYTHON -m _weir_airflow.run_task FILE DAG_ID TASK_ID
 * A local task's launcher sets WEIR_AIRFLOW_WARM (this binary) and
 * WEIR_AIRFLOW_WARM_DIR (HOME/airflow-warm) where a warm start keeps the
 * task's limits (airflow_warm_env()); elsewhere the command is the cold
 * `exec PYTHON -m _weir_airflow.run_task ...`.
 *
 * `airflow-warm PYTHON -m _weir_airflow.run_task FILE DAG TASK` is the
 * client, and is the task's process as the launcher sees it: it connects to
 * the file's *zygote* (_weir_airflow/zygote.py: a Python process that
 * imported the file once), else to the *root* (one per server, user and
 * interpreter, started by the DAG processor), which forks the file's zygote
 * and hands it the request; the zygote forks the task's process, and the
 * client exits as that process ends.  Wherever a warm start is not possible (no zygote, a
 * socket of another user, a refusal) it execs the cold command itself, so a
 * task never runs twice and never misses.
 *
 * The zygote's socket: WEIR_AIRFLOW_WARM_DIR/KEY.sock, KEY the 16 hex digits
 * of the 64-bit FNV-1a hash of the text
 *   "FILE\nINO\nSIZE\nMTIME_NS\nCTIME_NS\nUID\nPYTHON"
 * (the file as stat() sees it now, the caller's uid, the interpreter named in
 * the command): a changed file, another user or interpreter has another key.
 * The root's: "any-" and the same hash of "UID\nPYTHON".
 *
 * The protocol (host byte order):
 *   client -> zygote, once: a 16-byte header of four uint32 (magic
 *     AIRFLOW_WARM_MAGIC, the byte length of what follows, the number of
 *     arguments (4), the client's umask), then NUL-terminated strings: the
 *     arguments (FILE DAG TASK and the zygote's socket name, which a zygote
 *     of another key refuses) and the client's environment, one
 *     "NAME=VALUE" each; with the header, SCM_RIGHTS: fds 0, 1, 2 and the
 *     working folder (O_PATH).
 *   zygote or its child -> client: 8-byte records {char kind, 3 pad bytes,
 *     int32 value}: 'S' pid (the task's process joined the cgroups of
 *     WEIR_AIRFLOW_WARM_CGROUP and runs), 'C' 0 (refused before the task
 *     began: run it cold), then 'E' code (it exited) or 'K' signal (it was
 *     killed).
 *   client -> zygote after 'S': 'G' signal records: send that signal to the
 *     task's process group.  The client's end closing means its launcher
 *     killed it: the zygote SIGKILLs the task's process group.
 */
#ifndef WEIR_LAUNCH_AIRFLOW_WARM_H
#define WEIR_LAUNCH_AIRFLOW_WARM_H

#include <stddef.h>
#include <stdint.h>

#include "launch/cgroup.h"

#define AIRFLOW_WARM_MAGIC 0x314d5257u /* "WRM1" read as a little-endian uint32 */

/* The socket's file name for the key text above ("%016llx.sock") into buf
 * (at least 22 bytes).  Pure. */
void airflow_warm_socket_name(const char *key_text, char *buf, size_t size);

/* `airflow-warm PYTHON -m _weir_airflow.run_task FILE DAG TASK`: runs the
 * task warm, exiting (or dying by the signal) as its process did, or execs
 * the command after the word cold.  argv[0] is "airflow-warm".  Returns only
 * when the command cannot be executed (127). */
int airflow_warm_main(int argc, char **argv);

/* The environment entries a launcher adds for its program, into out[0..2]
 * (each malloc'd "NAME=VALUE"; NULL-terminated; *n their count): when
 * `bin` or `dir` is NULL, none, or "WEIR_AIRFLOW_WARM=" where our own
 * environment has one (not ours to pass on); the same (empty: cold) when the task
 * has a memory limit but no cgroup (its RSS is polled by process group,
 * which a warm task's process is not in); else WEIR_AIRFLOW_WARM,
 * WEIR_AIRFLOW_WARM_DIR and, with a cgroup, WEIR_AIRFLOW_WARM_CGROUP (its
 * cgroup.procs files).  0, or -1 when out of memory. */
int airflow_warm_env(const char *bin, const char *dir, const struct cgroup *cg, uint64_t memory_mb,
                     char *out[4], size_t *n);

#endif
