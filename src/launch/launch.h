/* launch.h: `weir launch`, the parent of every task's user program.
 *
 *   weir launch --job ID --role R --index I --attempt A [--host ADDR]
 *   env: WEIR_SERVER (base URL), WEIR_TOKEN; optional WEIR_KILL_GRACE (s)
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

/* argv[0] is "launch".  Returns the process's exit status. */
int launch_main(int argc, char **argv);

#endif
