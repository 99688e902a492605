/* param_schema.h: a DAG param's schema, the subset of JSON Schema that
 * Airflow's Param uses, and the check of a value against it.
 *
 * Keywords checked:
 *   type              "string", "integer", "number", "boolean", "array",
 *                     "object", "null", or a list of them (integer: a
 *                     number without a fractional part, 2.0 included)
 *   enum              a list; the value must equal one of its items
 *   minimum, maximum, exclusiveMinimum, exclusiveMaximum   numbers
 *   minLength, maxLength   strings, counted in characters (UTF-8)
 *   pattern           a POSIX extended regular expression (regcomp's
 *                     REG_EXTENDED dialect, not ECMA-262: no \d, no
 *                     lookaround), found anywhere in the string unless
 *                     anchored with ^ and $
 *   multipleOf        a number > 0; a number must be a whole multiple of it
 *   format            "date" (YYYY-MM-DD), "date-time" (RFC 3339:
 *                     YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)), "time"
 *                     (HH:MM:SS[.frac], the offset optional) or "email" (holds
 *                     an @); any other format is kept and not checked, as
 *                     jsonschema's format checker does with one it does not
 *                     know (Airflow's trigger form's "multiline")
 *   minItems, maxItems   an array's length
 *   uniqueItems       true: no two items of an array are equal
 *   required          true: the value may not be null; a list of names: an
 *                     object must have those properties (JSON Schema's)
 *   const             the value must equal it
 *   items             a schema each item of an array is checked against
 *   properties        {name: schema}: an object's property of that name,
 *                     when present, is checked against it
 * and default, description, title, which are not checked.  As in JSON
 * Schema, a keyword about numbers lets a value of another type pass (type
 * is the keyword that rules types out), and likewise for strings.
 *
 * Pure: no I/O, no state.
 */
#ifndef WEIR_MODEL_PARAM_SCHEMA_H
#define WEIR_MODEL_PARAM_SCHEMA_H

#include <jansson.h>
#include <stdbool.h>

#include "lib/error.h"

/* Whether `v`, as written for a param, is a schema rather than a plain
 * default: a non-empty mapping whose keys are all keywords above. */
bool param_schema_is(const json_t *v);

/* Checks the schema itself: each keyword's value of the right kind, type
 * and format names known, the pattern compiles, a default that passes.  0,
 * or -1 with err (WEIR_E_INVALID) "KEYWORD: expected ..., got ...". */
int param_schema_valid(const json_t *schema, struct weir_error *err);

/* Checks `value` against `schema`.  0, or -1 with err (WEIR_E_INVALID)
 * saying what was expected and what was given, e.g. "expected an integer
 * of at most 10, got 12" (the caller adds the param's name). */
int param_schema_check(const json_t *schema, const json_t *value, struct weir_error *err);

#endif
