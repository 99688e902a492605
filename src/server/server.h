/* server.h: `weir server`: the one process that owns the store, the event
 * loop, the HTTP API and the local executor.
 *
 * Start-up: flags and config (server/config.h), the home (created 0700),
 * the token, the store, the HTTP listener, recovery, then the loop.
 * SIGTERM/SIGINT: stop accepting, leave running tasks running (their
 * launchers are detached and report when the server is back), close the
 * store, exit 0.
 */
#ifndef WEIR_SERVER_SERVER_H
#define WEIR_SERVER_SERVER_H

/* argv[0] is "server".  Returns the process exit status: 0 after a clean
 * stop, 2 for bad flags or configuration, 1 when start-up fails. */
int server_main(int argc, char **argv);

#endif
