/* grow.c: growing an array (lib/grow.h). */
#include "lib/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t grow_nr(size_t alloc, size_t nr)
{
	size_t c = alloc == 0 ? 16 : alloc > SIZE_MAX / 2 ? SIZE_MAX : alloc * 2;
	return c < nr ? nr : c;
}

int grow_array(void *arrp, size_t nr, size_t *alloc, size_t size)
{
	void *old, *arr;
	size_t c;

	if (nr <= *alloc)
		return 0;
	c = grow_nr(*alloc, nr);
	if (c > SIZE_MAX / size) {
		c = nr; /* the doubling overflows; the room asked for may not */
		if (c > SIZE_MAX / size)
			return -1;
	}
	memcpy(&old, arrp, sizeof old);
	arr = realloc(old, c * size);
	if (!arr)
		return -1;
	memcpy(arrp, &arr, sizeof arr);
	*alloc = c;
	return 0;
}
