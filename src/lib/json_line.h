/* json_line.h: one JSON text read fast, for lines of a fixed, simple shape
 * (the node agent's messages): objects, arrays, integers, true, false, null
 * and strings of printable ASCII without escapes are read by a scan of the
 * text; anything else (an escape, a byte past ASCII, a real number, deep
 * nesting, an error) is left to json_loads(), so the result is always
 * json_loads(text, 0, NULL)'s.
 */
#ifndef WEIR_LIB_JSON_LINE_H
#define WEIR_LIB_JSON_LINE_H

#include <jansson.h>

/* The value of the NUL-terminated JSON text `s` (an object or an array at
 * its top, as json_loads() with no flags), a new reference; NULL when `s`
 * is not one or out of memory. */
json_t *json_line_loads(const char *s);

#endif
