/* fuzz_spec.c: native spec text (YAML or JSON) -> job_spec_parse_string.
 * A spec that parses must survive to_json/from_json unchanged. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/job_spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct weir_error err;
	struct job_spec *s = job_spec_parse_string((const char *)data, size, "fuzz", "/base", &err);
	if (!s)
		return 0;
	json_t *j = job_spec_to_json(s);
	struct job_spec *t = j ? job_spec_from_json(j, &err) : NULL;
	if (j && !t)
		abort(); /* what we write we must read back */
	json_t *k = t ? job_spec_to_json(t) : NULL;
	if (t && !json_equal(j, k))
		abort();
	for (size_t i = 0; i < s->n_roles; i++)
		free(job_spec_role_command(s, &s->roles[i]));
	json_decref(j);
	json_decref(k);
	job_spec_destroy(t);
	job_spec_destroy(s);
	return 0;
}
