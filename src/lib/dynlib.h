/* dynlib.h: a shared library loaded at its first use, not at start.
 *
 * weir links the libraries every command needs; the client libraries of the
 * data drivers (libpq, libmariadb), libxml2 and libarchive pull in some
 * thirty more (TLS, Kerberos, LDAP, ICU, C++, compressors) whose loading
 * was most of each command's start and most of an idle server's resident
 * memory.  A user of such a library declares its functions as a table of
 * pointers (DYNLIB_TABLE) and loads it before its first call:
 *
 *     #define PQ_FUNCS(X, t) X(t, PQclear) X(t, PQexec)
 *     DYNLIB_TABLE(pq, PQ_FUNCS, "libpq.so.5", "PostgreSQL connections");
 *     #define PQclear (pq.PQclear)
 *     ...
 *     if (dynlib_load(&pq_lib, pq_syms, DYNLIB_COUNT(pq_syms), err) < 0) ...
 *
 * A library loads once per process (the first success is kept; a failure
 * is tried again at the next use).  Not thread-safe: load from one thread
 * before others call through the table.
 */
#ifndef WEIR_LIB_DYNLIB_H
#define WEIR_LIB_DYNLIB_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"

/* One function of the library: its name and where its address goes (a
 * function pointer's storage). */
struct dynlib_sym {
	const char *name;
	void *slot;
};

struct dynlib {
	const char *soname; /* "libpq.so.5" */
	const char *what;   /* who needs it, for the error: "PostgreSQL connections" */
	void *handle;       /* NULL until loaded */
};

#define DYNLIB_INIT(soname, what)                                                                  \
	{                                                                                          \
		(soname), (what), NULL                                                             \
	}
/* A member of the table: a pointer of the function's own type. */
#define DYNLIB_FIELD(t, f) __typeof__(f) *f;
/* Its entry in the list of the table's symbols. */
#define DYNLIB_SYM(t, f) {#f, &(t).f},
#define DYNLIB_COUNT(syms) (sizeof(syms) / sizeof((syms)[0]))
/* Table `t` of the functions `funcs` names (funcs(X, t) is X(t, f) for
 * each f), its list of symbols t_syms and its library t_lib. */
#define DYNLIB_TABLE(t, funcs, soname, what)                                                       \
	static struct {                                                                            \
		funcs(DYNLIB_FIELD, t)                                                             \
	} t;                                                                                       \
	static const struct dynlib_sym t##_syms[] = {funcs(DYNLIB_SYM, t)};                        \
	static struct dynlib t##_lib = DYNLIB_INIT(soname, what)

/* Opens lib->soname (once) and fills every slot.  0, or -1 with err
 * (WEIR_E_INTERNAL: the system lacks it) naming the library, what needs it and what the loader
 * said, e.g. "PostgreSQL connections need libpq.so.5: cannot open shared
 * object file: No such file or directory". */
int dynlib_load(struct dynlib *lib, const struct dynlib_sym *syms, size_t n,
                struct weir_error *err);

/* Whether the library is loaded in this process. */
bool dynlib_loaded(const struct dynlib *lib);

#endif
