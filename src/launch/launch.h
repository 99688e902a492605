/* launch.h: `weir launch`, the parent of every task's user program.
 *
 *   weir launch --job ID --role R --index I --attempt A [--host ADDR]
 *               [--log-to-server]
 *   weir launch --job ID --tasks ROLE:I[-J],... --attempt A ...  (Slurm: the
 *               task is the SLURM_PROCID-th of the list)
 *   env: WEIR_SERVER (base URL), WEIR_TOKEN; optional WEIR_KILL_GRACE (s)
 *
 * --log-to-server: the program's stdout and stderr go to the server over
 * HTTP (launch/logship.h) instead of the launcher's own stdout and stderr.
 *
 * Reserves the task's port, registers with the server, prepares the working
 * directory (src_dir, artifacts through the shared cache), waits for the
 * whole gang, sets the framework's environment, runs the command under
 * /bin/sh -c in its own process group and cgroup, forwards signals, enforces
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

#include <stddef.h>

/* argv[0] is "launch".  Returns the process's exit status. */
int launch_main(int argc, char **argv);

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
