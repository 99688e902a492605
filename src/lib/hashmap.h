/* hashmap.h: a hash map from int64 or string keys to `void *` values.
 *
 * One implementation with two typed front-ends: a map made for
 * HASHMAP_KEY_INT takes the *_int calls, one made for HASHMAP_KEY_STR the
 * *_str calls (mixing them is a programming error, caught by assert).
 * Lookups, puts and removes take constant time on average; the table
 * doubles when it holds more than 3/4 of its buckets' worth.
 *
 * Ownership: a string map keeps its own copy of each key.  Values are the
 * caller's: the map never frees one (remove hands it back;
 * hashmap_destroy_free() frees them with the map).  NULL is a valid value, so get
 * tells "absent" apart through its return.
 *
 * Iteration visits every entry once, in no particular order.  During it,
 * the entry just visited may be removed (hashmap_iter_remove or a remove
 * call for its key); any other put or remove leaves the iteration
 * undefined.
 */
#ifndef WEIR_LIB_HASHMAP_H
#define WEIR_LIB_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum hashmap_key_kind {
	HASHMAP_KEY_INT,
	HASHMAP_KEY_STR,
};

struct hashmap; /* opaque */
struct hashmap_node;

/* An empty map, or NULL when out of memory. */
struct hashmap *hashmap_create(enum hashmap_key_kind kind);
/* Frees the map and its keys (not the values).  NULL: nothing. */
void hashmap_destroy(struct hashmap *m);
/* Frees the map and its keys, and hands each value to `free_value` first
 * (values the map holds: NULL ones too, so free_value must take NULL as
 * free() does).  NULL map: nothing. */
void hashmap_destroy_free(struct hashmap *m, void (*free_value)(void *value));

size_t hashmap_count(const struct hashmap *m);

/* Sets key -> value, replacing a present value (*old, if not NULL, gets
 * the one replaced, or NULL).  0, or -1 when out of memory (map unchanged). */
int hashmap_put_int(struct hashmap *m, int64_t key, void *value, void **old);
int hashmap_put_str(struct hashmap *m, const char *key, void *value, void **old);

/* true and *value (if not NULL) when the key is present. */
bool hashmap_find_int(const struct hashmap *m, int64_t key, void **value);
bool hashmap_find_str(const struct hashmap *m, const char *key, void **value);

/* The value, or NULL when absent (or when NULL was stored). */
void *hashmap_get_int(const struct hashmap *m, int64_t key);
void *hashmap_get_str(const struct hashmap *m, const char *key);

/* Removes the key; returns its value, or NULL when absent. */
void *hashmap_remove_int(struct hashmap *m, int64_t key);
void *hashmap_remove_str(struct hashmap *m, const char *key);

struct hashmap_iter {
	struct hashmap *map;
	size_t bucket;             /* the next bucket to look into */
	struct hashmap_node *cur;  /* the entry last returned */
	struct hashmap_node *next; /* the one after it in its bucket */
	/* the entry last returned (valid until it is removed) */
	int64_t key_int;
	const char *key_str;
	void *value;
};

void hashmap_iter_init(struct hashmap_iter *it, struct hashmap *m);
/* Moves to the next entry and fills key_int or key_str, and value.
 * false when every entry was visited. */
bool hashmap_iter_next(struct hashmap_iter *it);
/* Removes the entry last returned by hashmap_iter_next. */
void hashmap_iter_remove(struct hashmap_iter *it);

#endif
