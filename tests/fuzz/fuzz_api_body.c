/* fuzz_api_body.c: an API body as the server reads it: json_loadb ->
 * job_spec_from_json, then back to JSON. */
#include <stdint.h>
#include <stdlib.h>

#include "model/job_spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t jerr;
	json_t *body = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
	if (!body)
		return 0;
	struct weir_error err;
	struct job_spec *s = job_spec_from_json(body, &err);
	if (s) {
		json_t *j = job_spec_to_json(s);
		struct job_spec *t = job_spec_from_json(j, &err);
		if (!t)
			abort();
		job_spec_destroy(t);
		json_decref(j);
	}
	job_spec_destroy(s);
	json_decref(body);
	return 0;
}
