/* framework.h: the training framework a job declares, and its names.
 *
 * Its own piece (not job_spec's) because the launcher reads the framework
 * from its contract too, and links libc and jansson only: naming a
 * framework must not pull in the spec parser and libyaml.
 */
#ifndef WEIR_MODEL_FRAMEWORK_H
#define WEIR_MODEL_FRAMEWORK_H

enum framework {
	FRAMEWORK_NONE = 0,
	FRAMEWORK_TENSORFLOW,
	FRAMEWORK_PYTORCH,
	FRAMEWORK_MXNET,
	FRAMEWORK_HOROVOD,
};

/* "none", "tensorflow", "pytorch", "mxnet", "horovod"; "none" for a value
 * out of range. */
const char *framework_name(enum framework f);
/* Reads a name (any case).  0, or -1 if `name` is not a framework. */
int framework_from_name(const char *name, enum framework *out);

#endif
