/* powercut_disk.h: a disk that loses power, for the power-cut tests.
 *
 * For each file it follows (by path) it keeps what the disk holds for sure:
 * the file as of its last sync (its durable image), and the writes and
 * truncations made since, in order.  The caller does the real operation and
 * tells it here (pc_event() first, then pc_op_add() or pc_synced()).  At the
 * power cut (the Nth write, truncation or sync since pc_arm(), or pc_cut()
 * called by hand) each file is rewritten as a disk could have left it: its
 * durable image, with none, some or all of the unsynced operations applied
 * (pc_mode), a write applied whole, torn (a prefix of its 512-byte sectors)
 * or sector by sector at random; and pc.dead says the machine is off.
 *
 * Used by the unit test's VFS (store/powercut_vfs.h) and by the system
 * test's preloaded library (tests/system/powercut_preload.c).  Header only,
 * like store_tmp.h; one thread.  It reads and rewrites the files with
 * open(2), pread(2), pwrite(2) and ftruncate(2), not their 64-bit names,
 * which the preloaded library takes over. */
#ifndef WEIR_TESTS_POWERCUT_DISK_H
#define WEIR_TESTS_POWERCUT_DISK_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PC_SECTOR 512

/* What a power cut keeps of the operations made since a file's last sync. */
enum pc_mode {
	PC_DROP_ALL,    /* none: the durable image only */
	PC_PREFIX_TORN, /* the first k operations in order, the next one torn */
	PC_SECTORS,     /* each write's sectors, each truncation, kept or not at random */
	PC_KEEP_ALL,    /* every one (what a process's death leaves) */
	PC_MODES
};

struct pc_op {
	bool truncate;
	int64_t off; /* the write's offset, or the truncation's size */
	size_t len;
	char *data;
};

/* One path's simulated disk. */
struct pc_node {
	char *path;
	char *img; /* the durable image */
	size_t img_len, img_cap;
	struct pc_op *ops; /* since the last sync, in order */
	size_t n_ops, cap_ops;
	bool wal;
	struct pc_node *next;
};

static struct {
	struct pc_node *nodes;
	uint64_t events;    /* writes, truncations and syncs since pc_arm() */
	uint64_t cut_at;    /* the event that is cut (0: none) */
	uint64_t wal_syncs; /* syncs of a WAL that completed */
	uint64_t rng;
	enum pc_mode mode;
	bool armed, dead;
} pc;

static uint64_t pc_rand(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Grows `img` to hold `len` bytes, the new ones zero (a hole reads as zero). */
static void pc_img_size(struct pc_node *n, size_t len)
{
	if (len > n->img_cap) {
		size_t cap = n->img_cap ? n->img_cap : 4096;
		while (cap < len)
			cap *= 2;
		n->img = realloc(n->img, cap);
		if (!n->img)
			abort();
		n->img_cap = cap;
	}
	if (len > n->img_len)
		memset(n->img + n->img_len, 0, len - n->img_len);
	n->img_len = len;
}

static void pc_img_write(struct pc_node *n, int64_t off, const char *data, size_t len)
{
	if ((size_t)off + len > n->img_len)
		pc_img_size(n, (size_t)off + len);
	memcpy(n->img + off, data, len);
}

static void pc_ops_clear(struct pc_node *n)
{
	for (size_t i = 0; i < n->n_ops; i++)
		free(n->ops[i].data);
	n->n_ops = 0;
}

static void pc_node_free(struct pc_node *n)
{
	pc_ops_clear(n);
	free(n->ops);
	free(n->img);
	free(n->path);
	free(n);
}

/* The node of `path`, made with the file's present bytes as its durable
 * image when none is followed yet. */
static struct pc_node *pc_node_of(const char *path, bool wal)
{
	struct pc_node *n;
	int fd;

	for (n = pc.nodes; n; n = n->next)
		if (!strcmp(n->path, path))
			return n;
	n = calloc(1, sizeof *n);
	if (!n || !(n->path = strdup(path)))
		abort();
	n->wal = wal;
	if ((fd = open(path, O_RDONLY)) >= 0) {
		struct stat st;
		if (fstat(fd, &st) == 0 && st.st_size > 0) {
			pc_img_size(n, (size_t)st.st_size);
			if (pread(fd, n->img, n->img_len, 0) != (ssize_t)n->img_len)
				abort();
		}
		close(fd);
	}
	n->next = pc.nodes;
	pc.nodes = n;
	return n;
}

static void pc_node_forget(const char *path)
{
	for (struct pc_node **p = &pc.nodes; *p; p = &(*p)->next)
		if (!strcmp((*p)->path, path)) {
			struct pc_node *n = *p;
			*p = n->next;
			pc_node_free(n);
			return;
		}
}

static void pc_op_add(struct pc_node *n, bool truncate, int64_t off, const void *data, size_t len)
{
	struct pc_op *op;

	if (n->n_ops == n->cap_ops) {
		n->cap_ops = n->cap_ops ? 2 * n->cap_ops : 16;
		n->ops = realloc(n->ops, n->cap_ops * sizeof *n->ops);
		if (!n->ops)
			abort();
	}
	op = &n->ops[n->n_ops++];
	op->truncate = truncate;
	op->off = off;
	op->len = len;
	op->data = NULL;
	if (len) {
		if (!(op->data = malloc(len)))
			abort();
		memcpy(op->data, data, len);
	}
}

/* Applies `op` to the image: whole (all), its first `sectors` sectors
 * (counted from the file's own sector boundaries), or each sector at random
 * (random). */
static void pc_op_apply(struct pc_node *n, const struct pc_op *op, bool all, size_t sectors,
                        bool random)
{
	if (op->truncate) {
		if (all || (random && (pc_rand(&pc.rng) & 1)))
			pc_img_size(n, (size_t)op->off);
		return;
	}
	size_t done = 0, k = 0;
	while (done < op->len) {
		int64_t at = op->off + (int64_t)done;
		size_t chunk = PC_SECTOR - (size_t)(at % PC_SECTOR);
		if (chunk > op->len - done)
			chunk = op->len - done;
		bool keep = all || (random ? (pc_rand(&pc.rng) & 1) : k < sectors);
		if (keep)
			pc_img_write(n, at, op->data + done, chunk);
		done += chunk;
		k++;
	}
}

/* The power cut: every followed file becomes what the disk kept, and the
 * machine is off. */
static void pc_cut(void)
{
	for (struct pc_node *n = pc.nodes; n; n = n->next) {
		size_t keep = n->n_ops ? (size_t)(pc_rand(&pc.rng) % (n->n_ops + 1)) : 0;
		for (size_t i = 0; i < n->n_ops; i++) {
			const struct pc_op *op = &n->ops[i];
			switch (pc.mode) {
			case PC_DROP_ALL:
			case PC_MODES:
				break;
			case PC_PREFIX_TORN:
				if (i < keep)
					pc_op_apply(n, op, true, 0, false);
				else if (i == keep)
					pc_op_apply(
					    n, op, false,
					    (size_t)(pc_rand(&pc.rng) % (op->len / PC_SECTOR + 1)),
					    false);
				break;
			case PC_SECTORS:
				pc_op_apply(n, op, false, 0, true);
				break;
			case PC_KEEP_ALL:
				pc_op_apply(n, op, true, 0, false);
				break;
			}
		}
		pc_ops_clear(n);
		int fd = open(n->path, O_WRONLY | O_CREAT, 0644);
		if (fd < 0 || ftruncate(fd, (off_t)n->img_len) != 0 ||
		    (n->img_len && pwrite(fd, n->img, n->img_len, 0) != (ssize_t)n->img_len))
			abort();
		close(fd);
	}
	pc.dead = true;
}

/* The sync of `n` completed: its operations are durable. */
static void pc_synced(struct pc_node *n)
{
	for (size_t i = 0; i < n->n_ops; i++)
		pc_op_apply(n, &n->ops[i], true, 0, false);
	pc_ops_clear(n);
	if (n->wal)
		pc.wal_syncs++;
}

/* A write, truncation or sync is about to happen: false when the power is
 * (or goes) off at it. */
static bool pc_event(void)
{
	if (pc.dead)
		return false;
	if (!pc.armed)
		return true;
	if (++pc.events == pc.cut_at) {
		pc_cut();
		return false;
	}
	return true;
}

/* The power back on: nothing followed (the files' present bytes are durable
 * from here), nothing armed. */
static void pc_reset(void)
{
	while (pc.nodes) {
		struct pc_node *n = pc.nodes;
		pc.nodes = n->next;
		pc_node_free(n);
	}
	pc.events = pc.cut_at = pc.wal_syncs = 0;
	pc.armed = pc.dead = false;
}

/* Counts writes, truncations and syncs from now on; the power goes off at
 * the `cut_at`th (0: never), and the disk keeps what `mode` says, drawn
 * with `seed`. */
static void pc_arm(uint64_t cut_at, enum pc_mode mode, uint64_t seed)
{
	pc.events = 0;
	pc.cut_at = cut_at;
	pc.mode = mode;
	pc.rng = seed;
	pc.armed = true;
}

#endif
