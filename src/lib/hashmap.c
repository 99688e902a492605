/* hashmap.c: separate chaining over a power-of-two bucket array.
 *
 * Chains keep nodes where they were allocated, so growing only relinks
 * them and an iterator's saved `next` stays valid when the entry it just
 * returned is removed.
 */
#include "lib/hashmap.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

struct hashmap_node {
	struct hashmap_node *next;
	uint64_t hash;
	int64_t key_int;
	char *key_str;
	void *value;
};

struct hashmap {
	enum hashmap_key_kind kind;
	struct hashmap_node **buckets;
	size_t n_buckets; /* a power of two */
	size_t count;
};

#define HASHMAP_MIN_BUCKETS 16

/* A 64-bit integer mixer (the finalizer of splitmix64), so that keys that
 * differ only in high bits still spread over the low bits we index by. */
static uint64_t hash_int(int64_t key)
{
	uint64_t x = (uint64_t)key;
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* FNV-1a, 64-bit. */
static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

struct hashmap *hashmap_create(enum hashmap_key_kind kind)
{
	struct hashmap *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->kind = kind;
	m->n_buckets = HASHMAP_MIN_BUCKETS;
	m->buckets = calloc(m->n_buckets, sizeof *m->buckets);
	if (!m->buckets) {
		free(m);
		return NULL;
	}
	return m;
}

void hashmap_destroy(struct hashmap *m)
{
	hashmap_destroy_free(m, NULL);
}

void hashmap_destroy_free(struct hashmap *m, void (*free_value)(void *value))
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_buckets; i++) {
		struct hashmap_node *n = m->buckets[i];
		while (n) {
			struct hashmap_node *next = n->next;
			if (free_value)
				free_value(n->value);
			free(n->key_str);
			free(n);
			n = next;
		}
	}
	free(m->buckets);
	free(m);
}

size_t hashmap_count(const struct hashmap *m)
{
	return m->count;
}

static bool node_matches(const struct hashmap *m, const struct hashmap_node *n, uint64_t hash,
                         int64_t key_int, const char *key_str)
{
	if (n->hash != hash)
		return false;
	return m->kind == HASHMAP_KEY_INT ? n->key_int == key_int : !strcmp(n->key_str, key_str);
}

/* The link that points at the key's node (or the NULL ending its chain). */
static struct hashmap_node **find_link(const struct hashmap *m, uint64_t hash, int64_t key_int,
                                       const char *key_str)
{
	struct hashmap_node **link = &m->buckets[hash & (m->n_buckets - 1)];
	while (*link && !node_matches(m, *link, hash, key_int, key_str))
		link = &(*link)->next;
	return link;
}

/* Doubles the buckets; a failed allocation leaves the map as it was (only
 * slower). */
static void grow(struct hashmap *m)
{
	size_t nb = m->n_buckets * 2;
	struct hashmap_node **b = calloc(nb, sizeof *b);
	if (!b)
		return;
	for (size_t i = 0; i < m->n_buckets; i++) {
		struct hashmap_node *n = m->buckets[i];
		while (n) {
			struct hashmap_node *next = n->next;
			struct hashmap_node **head = &b[n->hash & (nb - 1)];
			n->next = *head;
			*head = n;
			n = next;
		}
	}
	free(m->buckets);
	m->buckets = b;
	m->n_buckets = nb;
}

static int put(struct hashmap *m, uint64_t hash, int64_t key_int, const char *key_str, void *value,
               void **old)
{
	struct hashmap_node **link = find_link(m, hash, key_int, key_str);
	if (*link) {
		if (old)
			*old = (*link)->value;
		(*link)->value = value;
		return 0;
	}
	struct hashmap_node *n = calloc(1, sizeof *n);
	if (!n || (key_str && !(n->key_str = strdup(key_str)))) {
		free(n);
		return -1;
	}
	n->hash = hash;
	n->key_int = key_int;
	n->value = value;
	*link = n;
	m->count++;
	if (old)
		*old = NULL;
	if (m->count > m->n_buckets / 4 * 3)
		grow(m);
	return 0;
}

static bool find(const struct hashmap *m, uint64_t hash, int64_t key_int, const char *key_str,
                 void **value)
{
	struct hashmap_node *n = *find_link(m, hash, key_int, key_str);
	if (n && value)
		*value = n->value;
	return n != NULL;
}

static void *remove_node(struct hashmap *m, uint64_t hash, int64_t key_int, const char *key_str)
{
	struct hashmap_node **link = find_link(m, hash, key_int, key_str);
	struct hashmap_node *n = *link;
	if (!n)
		return NULL;
	void *value = n->value;
	*link = n->next;
	free(n->key_str);
	free(n);
	m->count--;
	return value;
}

int hashmap_put_int(struct hashmap *m, int64_t key, void *value, void **old)
{
	assert(m->kind == HASHMAP_KEY_INT);
	return put(m, hash_int(key), key, NULL, value, old);
}

int hashmap_put_str(struct hashmap *m, const char *key, void *value, void **old)
{
	assert(m->kind == HASHMAP_KEY_STR);
	return put(m, hash_str(key), 0, key, value, old);
}

bool hashmap_find_int(const struct hashmap *m, int64_t key, void **value)
{
	assert(m->kind == HASHMAP_KEY_INT);
	return find(m, hash_int(key), key, NULL, value);
}

bool hashmap_find_str(const struct hashmap *m, const char *key, void **value)
{
	assert(m->kind == HASHMAP_KEY_STR);
	return find(m, hash_str(key), 0, key, value);
}

void *hashmap_get_int(const struct hashmap *m, int64_t key)
{
	void *v = NULL;
	hashmap_find_int(m, key, &v);
	return v;
}

void *hashmap_get_str(const struct hashmap *m, const char *key)
{
	void *v = NULL;
	hashmap_find_str(m, key, &v);
	return v;
}

void *hashmap_remove_int(struct hashmap *m, int64_t key)
{
	assert(m->kind == HASHMAP_KEY_INT);
	return remove_node(m, hash_int(key), key, NULL);
}

void *hashmap_remove_str(struct hashmap *m, const char *key)
{
	assert(m->kind == HASHMAP_KEY_STR);
	return remove_node(m, hash_str(key), 0, key);
}

void hashmap_iter_init(struct hashmap_iter *it, struct hashmap *m)
{
	memset(it, 0, sizeof *it);
	it->map = m;
}

bool hashmap_iter_next(struct hashmap_iter *it)
{
	struct hashmap *m = it->map;
	struct hashmap_node *n = it->next;
	while (!n && it->bucket < m->n_buckets)
		n = m->buckets[it->bucket++];
	it->cur = n;
	if (!n)
		return false;
	it->next = n->next;
	it->key_int = n->key_int;
	it->key_str = n->key_str;
	it->value = n->value;
	return true;
}

void hashmap_iter_remove(struct hashmap_iter *it)
{
	struct hashmap_node *n = it->cur;
	if (!n)
		return;
	remove_node(it->map, n->hash, n->key_int, n->key_str);
	it->cur = NULL;
	it->key_str = NULL;
}
