/* framework.c: framework names, both ways. */
#include "model/framework.h"

#include <stddef.h>
#include <strings.h>

static const char *const framework_names[] = {
    [FRAMEWORK_NONE] = "none",       [FRAMEWORK_TENSORFLOW] = "tensorflow",
    [FRAMEWORK_PYTORCH] = "pytorch", [FRAMEWORK_MXNET] = "mxnet",
    [FRAMEWORK_HOROVOD] = "horovod",
};

const char *framework_name(enum framework f)
{
	if ((int)f < 0 || (size_t)f >= sizeof framework_names / sizeof *framework_names)
		return "none";
	return framework_names[f];
}

int framework_from_name(const char *name, enum framework *out)
{
	for (size_t i = 0; i < sizeof framework_names / sizeof *framework_names; i++) {
		if (!strcasecmp(name, framework_names[i])) {
			*out = (enum framework)i;
			return 0;
		}
	}
	return -1;
}
