/* cli_artifact.c: the internal `weir artifact-unpack` command. */
#include "cli/cli_artifact.h"

#include <stdio.h>
#include <stdlib.h>

#include "exec/artifact.h"

int cli_artifact_unpack(int argc, char **argv)
{
	struct weir_error err = {0};
	char *dir = NULL;
	bool unpacked = false;

	if (argc != 4) {
		fprintf(stderr, "usage: weir artifact-unpack ARCHIVE NAME CACHE_DIR\n");
		return 2;
	}
	if (artifact_unpack_cached(argv[1], argv[2], argv[3], &dir, &unpacked, &err) < 0) {
		fprintf(stdout, "%s\n", err.msg);
		return 1;
	}
	if (unpacked)
		printf("unpacked %s\n", argv[1]);
	printf("%s\n", dir);
	free(dir);
	return 0;
}
