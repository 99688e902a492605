/* fuzz_submit_flags.c: the input split into argv at NUL or newline ->
 * submit_flags_parse.  --conf_file is dropped so the fuzzer cannot make the
 * harness read files of this machine. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/tony.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	char **argv = malloc((size + 1) * sizeof *argv);
	int argc = 0;
	if (!buf || !argv)
		goto out;
	memcpy(buf, data, size);
	buf[size] = '\0';
	char *start = buf;
	for (size_t i = 0; i <= size; i++) {
		if (i == size || buf[i] == '\0' || buf[i] == '\n') {
			buf[i] = '\0';
			if (strncmp(start, "--conf_file", 11) != 0)
				argv[argc++] = start;
			start = buf + i + 1;
		}
	}
	struct weir_error err;
	struct strvec w = STRVEC_INIT;
	struct job_spec *s = submit_flags_parse(argc, argv, &w, &err);
	job_spec_destroy(s);
	strvec_release(&w);
	for (int i = 0; i < argc; i++)
		submit_flag_arity(argc, argv, i);
out:
	free(buf);
	free(argv);
	return 0;
}
