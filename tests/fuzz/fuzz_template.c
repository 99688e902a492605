/* fuzz_template.c: template text -> template_check and template_render in
 * both modes, with outside values that try to break out of their quotes.
 * Check and render must agree on whether a template is valid. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/template.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	struct template_ctx ctx = TEMPLATE_CTX_INIT;
	struct strvec known = STRVEC_INIT;
	struct weir_error err;
	if (template_ctx_set(&ctx, "ds", "2024-01-01", TEMPLATE_TRUSTED, &err) < 0 ||
	    template_ctx_set(&ctx, "run_id", "a'b$(c)", TEMPLATE_TRUSTED, &err) < 0 ||
	    template_ctx_set(&ctx, "params.x", "'; \"$(x)`y`\n", TEMPLATE_OUTSIDE, &err) < 0 ||
	    template_ctx_set(&ctx, "outputs.t.k", "}}{{ ds }}", TEMPLATE_OUTSIDE, &err) < 0 ||
	    strvec_push(&known, "ds") < 0 || strvec_push(&known, "run_id") < 0 ||
	    strvec_push(&known, "params.x") < 0 || strvec_push(&known, "outputs.t.*") < 0)
		abort();
	for (int mode = TEMPLATE_SHELL; mode <= TEMPLATE_RAW; mode++) {
		char *out = template_render(text, &ctx, (enum template_mode)mode, &err);
		int checked = template_check(text, &known, (enum template_mode)mode, &err);
		/* outputs.t.OTHER is known to check but has no value: only that may differ */
		if (out && checked < 0)
			abort();
		free(out);
	}
	strvec_release(&known);
	template_ctx_release(&ctx);
	free(text);
	return 0;
}
