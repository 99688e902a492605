/* launch_only_main.c: main() of weir-launch, the lean launcher binary.
 *
 * It runs the same code as `weir launch` but links only libc and jansson,
 * so that starting it (once per task) costs a fraction of starting the full
 * weir binary, whose libraries (libmicrohttpd, libxml2 with ICU, libarchive,
 * nettle, SQLite, libuv) we measured at several milliseconds per exec.
 * The local executor runs it when it stands beside the server's binary.
 * Archives not yet in the cache are unpacked by `weir artifact-unpack`.
 * `weir-launch agent` is the node's agent (launch/agent.h).
 */
#include <string.h>

#include "launch/agent.h"
#include "launch/airflow_warm.h"
#include "launch/launch.h"
#include "launch/workdir.h"

int main(int argc, char **argv)
{
	workdir_set_unpacker(workdir_unpack_with_helper);
	/* `weir-launch agent`: the node's agent, whose shims are forks of it,
	 * so it stays as small as this binary */
	if (argc > 1 && !strcmp(argv[1], "agent"))
		return agent_main(argc - 1, argv + 1);
	/* the client of an Airflow DAG file's warm interpreter (a task's
	 * command, launch/airflow_warm.h) */
	if (argc > 1 && !strcmp(argv[1], "airflow-warm"))
		return airflow_warm_main(argc - 1, argv + 1);
	return launch_main(argc, argv);
}
