/* param_schema.c: checks of DAG params against their schemas
 * (param_schema.h). */
#include "model/param_schema.h"

#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const keywords[] = {
    "type",        "enum",        "minimum",    "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength",   "maxLength",   "pattern",    "format",  "required",         "default",
    "description", "title",       "const",      "items",   "properties",       "minItems",
    "maxItems",    "uniqueItems", "multipleOf", NULL,
};

static const char *const type_names[] = {
    "string", "integer", "number", "boolean", "array", "object", "null", NULL,
};

static bool in_list(const char *const *list, const char *s)
{
	for (size_t i = 0; list[i]; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

bool param_schema_is(const json_t *v)
{
	const char *k;
	json_t *x;

	if (!json_is_object(v) || json_object_size(v) == 0)
		return false;
	json_object_foreach((json_t *)v, k, x) if (!in_list(keywords, k)) return false;
	return true;
}

/* `v` as compact JSON, cut at 60 bytes, for messages. */
static void shown(const json_t *v, char *buf, size_t n)
{
	char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	if (!s) {
		snprintf(buf, n, "%s", v ? "?" : "nothing");
		return;
	}
	if (strlen(s) > 60)
		snprintf(buf, n, "%.57s...", s);
	else
		snprintf(buf, n, "%s", s);
	free(s);
}

static int fail(struct weir_error *err, const char *what, const json_t *got)
{
	char g[64];
	shown(got, g, sizeof g);
	return weir_error_set(err, WEIR_E_INVALID, "expected %s, got %s", what, g);
}

static bool type_is(const char *t, const json_t *v)
{
	if (!strcmp(t, "string"))
		return json_is_string(v);
	if (!strcmp(t, "integer"))
		return json_is_integer(v) || (json_is_real(v) && isfinite(json_real_value(v)) &&
		                              json_real_value(v) == floor(json_real_value(v)));
	if (!strcmp(t, "number"))
		return json_is_number(v);
	if (!strcmp(t, "boolean"))
		return json_is_boolean(v);
	if (!strcmp(t, "array"))
		return json_is_array(v);
	if (!strcmp(t, "object"))
		return json_is_object(v);
	return json_is_null(v);
}

static const char *type_article(const char *t)
{
	return (t[0] == 'a' || t[0] == 'i' || t[0] == 'o') ? "an" : "a";
}

static int check_type(const json_t *type, const json_t *v, struct weir_error *err)
{
	char what[160] = "";
	size_t n = 0;

	if (json_is_string(type)) {
		const char *t = json_string_value(type);
		if (type_is(t, v))
			return 0;
		snprintf(what, sizeof what, "%s %s", type_article(t), t);
		return fail(err, what, v);
	}
	for (size_t i = 0; i < json_array_size(type); i++) {
		const char *t = json_string_value(json_array_get(type, i));
		if (type_is(t, v))
			return 0;
		n += (size_t)snprintf(what + n, n < sizeof what ? sizeof what - n : 0, "%s%s",
		                      i ? (i + 1 == json_array_size(type) ? " or " : ", ") : "", t);
		if (n >= sizeof what)
			n = sizeof what - 1;
	}
	return fail(err, what, v);
}

static int check_enum(const json_t *list, const json_t *v, struct weir_error *err)
{
	char what[200] = "one of ";
	size_t n = strlen(what);

	for (size_t i = 0; i < json_array_size(list); i++)
		if (json_equal((json_t *)v, json_array_get(list, i)))
			return 0;
	for (size_t i = 0; i < json_array_size(list) && n < sizeof what - 1; i++) {
		char g[64];
		shown(json_array_get(list, i), g, sizeof g);
		n += (size_t)snprintf(what + n, sizeof what - n, "%s%s", i ? ", " : "", g);
	}
	return fail(err, what, v);
}

static int check_number(const json_t *schema, const json_t *v, struct weir_error *err)
{
	static const struct {
		const char *key;
		const char *what;
		int sign; /* the value must be >= (1) or <= (-1) the bound */
		bool strict;
	} bounds[] = {
	    {"minimum", "a number >=", 1, false},
	    {"maximum", "a number <=", -1, false},
	    {"exclusiveMinimum", "a number >", 1, true},
	    {"exclusiveMaximum", "a number <", -1, true},
	};
	double x = json_number_value(v);

	for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
		const json_t *b = json_object_get(schema, bounds[i].key);
		if (!b)
			continue;
		double d = (x - json_number_value(b)) * bounds[i].sign;
		if (d > 0 || (d == 0 && !bounds[i].strict))
			continue;
		char what[96], g[64];
		shown(b, g, sizeof g);
		snprintf(what, sizeof what, "%s %s", bounds[i].what, g);
		return fail(err, what, v);
	}
	const json_t *m = json_object_get(schema, "multipleOf");
	if (m) {
		double q = x / json_number_value(m);
		if (fabs(q - nearbyint(q)) > 1e-9 * fmax(1.0, fabs(q))) {
			char what[96], g[64];
			shown(m, g, sizeof g);
			snprintf(what, sizeof what, "a multiple of %s", g);
			return fail(err, what, v);
		}
	}
	return 0;
}

static size_t utf8_chars(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static bool digits(const char *s, int n)
{
	for (int i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static int num(const char *s, int n)
{
	int x = 0;
	for (int i = 0; i < n; i++)
		x = x * 10 + (s[i] - '0');
	return x;
}

/* YYYY-MM-DD at s, a real day; the length read (10) or 0. */
static size_t date_at(const char *s)
{
	static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (!digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' || !digits(s + 8, 2))
		return 0;
	int y = num(s, 4), m = num(s + 5, 2), d = num(s + 8, 2);
	if (m < 1 || m > 12 || d < 1)
		return 0;
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return d <= days[m - 1] + (m == 2 && leap) ? 10 : 0;
}

/* HH:MM:SS[.frac] then Z, +HH:MM or -HH:MM (RFC 3339's time), or nothing
 * when the offset is not `needed` (a time as the trigger form gives it). */
static bool is_time(const char *s, bool needed)
{
	if (!digits(s, 2) || s[2] != ':' || !digits(s + 3, 2) || s[5] != ':' || !digits(s + 6, 2) ||
	    num(s, 2) > 23 || num(s + 3, 2) > 59 || num(s + 6, 2) > 60)
		return false;
	s += 8;
	if (*s == '.') {
		if (!digits(++s, 1))
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if ((!*s && !needed) || ((*s == 'Z' || *s == 'z') && !s[1]))
		return true;
	return (*s == '+' || *s == '-') && digits(s + 1, 2) && s[3] == ':' && digits(s + 4, 2) &&
	       !s[6] && num(s + 1, 2) <= 23 && num(s + 4, 2) <= 59;
}

static bool is_date_time(const char *s)
{
	return date_at(s) && (s[10] == 'T' || s[10] == 't') && is_time(s + 11, true);
}

static int check_string(const json_t *schema, const json_t *v, struct weir_error *err)
{
	const char *s = json_string_value(v);
	size_t len = utf8_chars(s);
	const json_t *lo = json_object_get(schema, "minLength");
	const json_t *hi = json_object_get(schema, "maxLength");
	const char *pattern = json_string_value(json_object_get(schema, "pattern"));
	const char *format = json_string_value(json_object_get(schema, "format"));
	char what[160];

	if (lo && (json_int_t)len < json_integer_value(lo)) {
		snprintf(what, sizeof what, "a string of at least %lld characters",
		         (long long)json_integer_value(lo));
		return fail(err, what, v);
	}
	if (hi && (json_int_t)len > json_integer_value(hi)) {
		snprintf(what, sizeof what, "a string of at most %lld characters",
		         (long long)json_integer_value(hi));
		return fail(err, what, v);
	}
	if (pattern) {
		regex_t re;
		if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
			return weir_error_set(err, WEIR_E_INVALID, "pattern: does not compile");
		int m = regexec(&re, s, 0, NULL, 0);
		regfree(&re);
		if (m != 0) {
			snprintf(what, sizeof what, "a string matching %.100s", pattern);
			return fail(err, what, v);
		}
	}
	if (format && !strcmp(format, "date") && !(date_at(s) && !s[10]))
		return fail(err, "a date (YYYY-MM-DD)", v);
	if (format && !strcmp(format, "date-time") && !is_date_time(s))
		return fail(err, "a date-time (RFC 3339, YYYY-MM-DDTHH:MM:SSZ)", v);
	if (format && !strcmp(format, "time") && !is_time(s, false))
		return fail(err, "a time (HH:MM:SS)", v);
	if (format && !strcmp(format, "email") && !strchr(s, '@'))
		return fail(err, "an email address (with an @)", v);
	return 0;
}

/* An array's items against `items`; an object's properties against
 * `properties`, and the names a `required` list gives present. */
static int check_parts(const json_t *schema, const json_t *v, struct weir_error *err)
{
	const json_t *items = json_object_get(schema, "items");
	const json_t *props = json_object_get(schema, "properties");
	const json_t *req = json_object_get(schema, "required");
	const json_t *lo = json_object_get(schema, "minItems");
	const json_t *hi = json_object_get(schema, "maxItems");
	const char *k;
	json_t *x;
	size_t i;
	char what[160];

	if (json_is_array(v) && lo && (json_int_t)json_array_size(v) < json_integer_value(lo)) {
		snprintf(what, sizeof what, "a list of at least %lld items",
		         (long long)json_integer_value(lo));
		return fail(err, what, v);
	}
	if (json_is_array(v) && hi && (json_int_t)json_array_size(v) > json_integer_value(hi)) {
		snprintf(what, sizeof what, "a list of at most %lld items",
		         (long long)json_integer_value(hi));
		return fail(err, what, v);
	}
	if (json_is_array(v) && json_is_true(json_object_get(schema, "uniqueItems")))
		for (i = 1; i < json_array_size(v); i++)
			for (size_t j = 0; j < i; j++)
				if (json_equal(json_array_get(v, i), json_array_get(v, j))) {
					snprintf(
					    what, sizeof what,
					    "a list of unique items (items %zu and %zu are equal)",
					    j, i);
					return fail(err, what, v);
				}
	if (json_is_array(v) && json_is_object(items))
		json_array_foreach((json_t *)v, i, x)
		{
			if (param_schema_check(items, x, err) < 0) {
				weir_error_prefix(err, "item %zu", i);
				return -1;
			}
		}
	if (!json_is_object(v))
		return 0;
	if (json_is_object(props))
		json_object_foreach((json_t *)props, k, x)
		{
			json_t *got = json_object_get(v, k);
			if (got && param_schema_check(x, got, err) < 0) {
				weir_error_prefix(err, "%s", k);
				return -1;
			}
		}
	if (json_is_array(req))
		json_array_foreach((json_t *)req, i, x)
		{
			const char *name = json_string_value(x);
			if (name && !json_object_get(v, name)) {
				snprintf(what, sizeof what, "an object with %.100s", name);
				return fail(err, what, v);
			}
		}
	return 0;
}

int param_schema_check(const json_t *schema, const json_t *value, struct weir_error *err)
{
	const json_t *t = json_object_get(schema, "type");
	const json_t *e = json_object_get(schema, "enum");

	if (!value || (json_is_null(value) && json_is_true(json_object_get(schema, "required"))))
		return fail(err, "a value (the param is required)", value);
	if (t && check_type(t, value, err) < 0)
		return -1;
	if (e && check_enum(e, value, err) < 0)
		return -1;
	const json_t *c = json_object_get(schema, "const");
	if (c && !json_equal((json_t *)c, (json_t *)value)) {
		char what[160], want[80];
		shown(c, want, sizeof want);
		snprintf(what, sizeof what, "%s (const)", want);
		return fail(err, what, value);
	}
	if (check_parts(schema, value, err) < 0)
		return -1;
	if (json_is_number(value))
		return check_number(schema, value, err);
	if (json_is_string(value))
		return check_string(schema, value, err);
	return 0;
}

/* ---- the schema's own check ---- */

static bool valid_type(const json_t *t)
{
	if (json_is_string(t))
		return in_list(type_names, json_string_value(t));
	if (!json_is_array(t) || json_array_size(t) == 0)
		return false;
	for (size_t i = 0; i < json_array_size(t); i++) {
		const char *s = json_string_value(json_array_get(t, i));
		if (!s || !in_list(type_names, s))
			return false;
	}
	return true;
}

int param_schema_valid(const json_t *schema, struct weir_error *err)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)schema, k, v)
	{
		const char *want = NULL;
		if (!strcmp(k, "items")) {
			if (!json_is_object(v))
				want = "a schema (a mapping)";
			else if (param_schema_valid(v, err) < 0) {
				weir_error_prefix(err, "items");
				return -1;
			}
		} else if (!strcmp(k, "properties")) {
			const char *name;
			json_t *sub;
			if (!json_is_object(v))
				want = "a mapping of names to schemas";
			else
				json_object_foreach(v, name, sub)
				{
					if (!json_is_object(sub)) {
						want = "a mapping of names to schemas";
						break;
					}
					if (param_schema_valid(sub, err) < 0) {
						weir_error_prefix(err, "properties.%s", name);
						return -1;
					}
				}
		} else if (!strcmp(k, "type")) {
			if (!valid_type(v))
				want = "string, integer, number, boolean, array, object, null or a "
				       "list of them";
		} else if (!strcmp(k, "enum")) {
			if (!json_is_array(v) || json_array_size(v) == 0)
				want = "a non-empty list";
		} else if (!strncmp(k, "minimum", 7) || !strncmp(k, "maximum", 7) ||
		           !strncmp(k, "exclusive", 9)) {
			if (!json_is_number(v))
				want = "a number";
		} else if (!strcmp(k, "minLength") || !strcmp(k, "maxLength") ||
		           !strcmp(k, "minItems") || !strcmp(k, "maxItems")) {
			if (!json_is_integer(v) || json_integer_value(v) < 0)
				want = "a whole number >= 0";
		} else if (!strcmp(k, "pattern")) {
			regex_t re;
			if (!json_is_string(v))
				want = "a regular expression (POSIX extended)";
			else if (regcomp(&re, json_string_value(v), REG_EXTENDED | REG_NOSUB) != 0)
				want = "a regular expression that compiles (POSIX extended)";
			else
				regfree(&re);
		} else if (!strcmp(k, "multipleOf")) {
			if (!json_is_number(v) || json_number_value(v) <= 0)
				want = "a number > 0";
		} else if (!strcmp(k, "uniqueItems")) {
			if (!json_is_boolean(v))
				want = "true or false";
		} else if (!strcmp(k, "format")) {
			/* as jsonschema's format checker: a format it does not know
			 * (Airflow's form's "multiline") is not checked */
			if (!json_is_string(v))
				want = "a string (date, date-time, time, email, ...)";
		} else if (!strcmp(k, "required")) {
			if (!json_is_boolean(v) && !json_is_array(v))
				want = "true or false, or a list of property names";
		} else if (!strcmp(k, "description") || !strcmp(k, "title")) {
			if (!json_is_string(v))
				want = "a string";
		}
		if (want) {
			fail(err, want, v);
			weir_error_prefix(err, "%s", k);
			return -1;
		}
	}
	v = json_object_get(schema, "default");
	if (v && !json_is_null(v) && param_schema_check(schema, v, err) < 0) {
		weir_error_prefix(err, "default");
		return -1;
	}
	return 0;
}
