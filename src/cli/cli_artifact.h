/* cli_artifact.h: `weir artifact-unpack ARCHIVE NAME CACHE_DIR`, the internal
 * command the lean launcher runs to unpack an archive that is not in the
 * cache yet (see launch/workdir.h).  Not for users; not in the usage. */
#ifndef WEIR_CLI_ARTIFACT_H
#define WEIR_CLI_ARTIFACT_H

/* argv[0] is "artifact-unpack".  Prints the directory to link on the last
 * line of stdout (after "unpacked ..." when it did the unpacking) and exits
 * 0; prints the error and exits 1 otherwise, 2 on a usage error. */
int cli_artifact_unpack(int argc, char **argv);

#endif
