/* fuzz_tony_xml.c: tony.xml bytes -> tony_conf_parse_buffer -> tony_to_spec. */
#include <stdint.h>
#include <stdlib.h>

#include "model/tony.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct weir_error err;
	struct tony_conf *c = tony_conf_parse_buffer((const char *)data, size, "fuzz.xml", &err);
	if (!c)
		return 0;
	struct strvec w = STRVEC_INIT;
	struct job_spec *s = tony_to_spec(c, NULL, &w, &err);
	job_spec_destroy(s);
	strvec_release(&w);
	tony_conf_destroy(c);
	return 0;
}
