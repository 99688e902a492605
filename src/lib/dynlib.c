/* dynlib.c: shared libraries loaded at their first use (dynlib.h). */
#include "lib/dynlib.h"

#include <dlfcn.h>
#include <string.h>

int dynlib_load(struct dynlib *lib, const struct dynlib_sym *syms, size_t n, struct weir_error *err)
{
	void *h;

	if (lib->handle)
		return 0;
	h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return weir_error_set(err, WEIR_E_INTERNAL, "%s need %s: %s", lib->what,
		                      lib->soname, dlerror());
	for (size_t i = 0; i < n; i++) {
		void *f;
		dlerror();
		f = dlsym(h, syms[i].name);
		if (!f) {
			const char *why = dlerror();
			weir_error_set(err, WEIR_E_INTERNAL, "%s need %s with %s: %s", lib->what,
			               lib->soname, syms[i].name, why ? why : "not found");
			dlclose(h);
			return -1;
		}
		/* POSIX: a function's address as dlsym returns it */
		memcpy(syms[i].slot, &f, sizeof f);
	}
	lib->handle = h;
	return 0;
}

bool dynlib_loaded(const struct dynlib *lib)
{
	return lib->handle != NULL;
}
