/* grow.h: ALLOC_GROW, room in a growing array, as git has it, except that
 * it fails instead of dying: weir never exits on out of memory, its
 * callers return an error.
 *
 *	struct x *v = NULL;
 *	size_t n = 0, cap = 0;
 *	...
 *	if (ALLOC_GROW(v, n + 1, cap) < 0)
 *		return -1;	(v and cap as they were: v still the caller's)
 *	v[n++] = x;
 */
#ifndef WEIR_LIB_GROW_H
#define WEIR_LIB_GROW_H

#include <stddef.h>

/* The room an array of `alloc` elements grows to when it must hold `nr`:
 * twice `alloc` (16 from nothing), or `nr` when that is more. */
size_t grow_nr(size_t alloc, size_t nr);

/* Makes the array *arrp (a `T **`, passed as void *: read and written with
 * memcpy, since a void ** may not alias it) of *alloc elements of `size`
 * bytes hold at least `nr`, reallocating it to grow_nr(*alloc, nr).  0; -1
 * when that many bytes overflow a size_t or the memory is not there, with
 * *arrp and *alloc as they were (the old array still valid).  `size` is
 * not 0 (a sizeof). */
int grow_array(void *arrp, size_t nr, size_t *alloc, size_t size);

/* Makes the array x (an lvalue of pointer type) of `alloc` (a size_t
 * lvalue) elements hold at least `nr`: 0, or -1 with x and alloc unchanged.
 * `nr` and `alloc` are evaluated twice. */
#define ALLOC_GROW(x, nr, alloc)                                                                   \
	((nr) <= (alloc) ? 0 : grow_array(&(x), (nr), &(alloc), sizeof(*(x))))

#endif
