/* test_workdir.c: archives made here with libarchive's writer are unpacked
 * once into the cache, reused, linked into a working directory; entries that
 * would escape the tree are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/artifact.h"
#include "launch/workdir.h"
#include "lib/fs.h"

static char root[256];

struct entry {
	const char *path;
	const char *data; /* NULL: a directory */
	const char *symlink;
};

/* format: "zip" or "tar.gz" */
static void make_archive(const char *file, const char *format, const struct entry *entries,
                         size_t n)
{
	struct archive *a = archive_write_new();
	if (!strcmp(format, "zip")) {
		archive_write_set_format_zip(a);
	} else {
		archive_write_set_format_pax_restricted(a);
		archive_write_add_filter_gzip(a);
	}
	assert_int_equal(archive_write_open_filename(a, file), ARCHIVE_OK);
	for (size_t i = 0; i < n; i++) {
		struct archive_entry *e = archive_entry_new();
		archive_entry_set_pathname(e, entries[i].path);
		if (entries[i].symlink) {
			archive_entry_set_filetype(e, AE_IFLNK);
			archive_entry_set_perm(e, 0777);
			archive_entry_set_symlink(e, entries[i].symlink);
		} else if (entries[i].data) {
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_perm(e, 0755);
			archive_entry_set_size(e, (la_int64_t)strlen(entries[i].data));
		} else {
			archive_entry_set_filetype(e, AE_IFDIR);
			archive_entry_set_perm(e, 0755);
		}
		assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
		if (entries[i].data && !entries[i].symlink)
			archive_write_data(a, entries[i].data, strlen(entries[i].data));
		archive_entry_free(e);
	}
	archive_write_close(a);
	archive_write_free(a);
}

static char *path_in(const char *name)
{
	char *p = fs_join(root, name);
	assert_non_null(p);
	return p;
}

static int setup(void **state)
{
	(void)state;
	workdir_set_unpacker(artifact_unpack_cached);
	snprintf(root, sizeof root, "/tmp/weir-test-workdir.XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return fs_remove_tree(root);
}

static void expect_file(const char *path, const char *content)
{
	char *got = fs_read_file(path, NULL, NULL);
	if (!got)
		fail_msg("%s: missing", path);
	assert_string_equal(got, content);
	free(got);
}

static void test_zip_cached_once(void **state)
{
	(void)state;
	/* TonY's way: the venv's contents at the top level */
	struct entry venv[] = {
	    {"bin/", NULL, NULL},
	    {"bin/python", "#!/bin/sh\necho venv-python\n", NULL},
	    {"bin/python3", NULL, "python"},
	    {"lib/site.txt", "site", NULL},
	};
	char *zip = path_in("venv.zip"), *cache = path_in("cache"), *dir = NULL;
	struct weir_error err = {0};
	bool unpacked = false, hit = false;
	char hex[65];

	make_archive(zip, "zip", venv, 4);
	if (artifact_unpack_cached(zip, "venv", cache, &dir, &unpacked, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(unpacked);
	char *py = fs_join(dir, "bin/python");
	expect_file(py, "#!/bin/sh\necho venv-python\n");
	struct stat st;
	assert_int_equal(stat(py, &st), 0);
	assert_true(st.st_mode & S_IXUSR);
	assert_false(st.st_mode & 0222); /* read-only */
	assert_int_equal(stat(dir, &st), 0);
	assert_false(st.st_mode & 0222);
	free(py);
	char *link = fs_join(dir, "bin/python3");
	expect_file(link, "#!/bin/sh\necho venv-python\n");
	free(link);

	/* The second time: the memo answers the hash and nothing is unpacked. */
	assert_int_equal(artifact_hash(zip, cache, hex, &hit, &err), 0);
	assert_true(hit);
	assert_non_null(strstr(dir, hex));
	char *dir2 = NULL;
	assert_int_equal(artifact_unpack_cached(zip, "venv", cache, &dir2, &unpacked, &err), 0);
	assert_false(unpacked);
	assert_string_equal(dir, dir2);
	free(dir2);
	free(dir);
	free(zip);
	free(cache);
}

static void test_tar_gz_folder_and_workdir(void **state)
{
	(void)state;
	/* zip -r of the folder itself: one top-level "venv/" */
	struct entry conda[] = {
	    {"venv/", NULL, NULL},
	    {"venv/bin/", NULL, NULL},
	    {"venv/bin/python", "conda", NULL},
	};
	char *tgz = path_in("env.tar.gz"), *cache = path_in("cache"), *src = path_in("src");
	char *data = path_in("data"), *wd = path_in("jobs/1/1/worker-0");
	struct weir_error err = {0};

	make_archive(tgz, "tar.gz", conda, 3);
	assert_int_equal(fs_mkdir_p(src, 0755, NULL), 0);
	assert_int_equal(fs_mkdir_p(data, 0755, NULL), 0);
	char *train = fs_join(src, "train.py");
	assert_int_equal(fs_write_file_atomic(train, "print(1)\n", 9, 0644, NULL), 0);
	free(train);

	struct artifact arts[] = {
	    {tgz, "venv", true},
	    {data, "data", false},
	};
	if (workdir_prepare(wd, src, arts, 2, cache, &err) < 0)
		fail_msg("%s", err.msg);
	char *p = fs_join(wd, "venv/bin/python");
	expect_file(p, "conda");
	free(p);
	p = fs_join(wd, "train.py");
	expect_file(p, "print(1)\n");
	free(p);
	p = fs_join(wd, "data");
	struct stat st;
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	free(p);
	/* Preparing again (a relaunch) replaces the links, it does not fail. */
	if (workdir_prepare(wd, src, arts, 2, cache, &err) < 0)
		fail_msg("%s", err.msg);
	free(tgz);
	free(cache);
	free(src);
	free(data);
	free(wd);
}

static void test_traversal_refused(void **state)
{
	(void)state;
	struct entry evil[] = {
	    {"ok.txt", "fine", NULL},
	    {"../escaped.txt", "evil", NULL},
	};
	struct entry abs_entry[] = {
	    {"/tmp/weir-test-absolute.txt", "evil", NULL},
	};
	char *zip = path_in("evil.zip"), *tgz = path_in("abs.tar.gz"), *cache = path_in("cache");
	char *dir = NULL;
	struct weir_error err = {0};

	make_archive(zip, "zip", evil, 2);
	assert_int_equal(artifact_unpack_cached(zip, "venv", cache, &dir, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "../escaped.txt"));
	assert_null(dir);
	char *escaped = path_in("escaped.txt");
	assert_false(fs_exists(escaped));
	free(escaped);
	char hex[65];
	assert_int_equal(artifact_hash(zip, cache, hex, NULL, &err), 0);
	char *tree = fs_join(cache, hex);
	assert_false(fs_exists(tree)); /* nothing half-unpacked left in the cache */
	free(tree);

	make_archive(tgz, "tar.gz", abs_entry, 1);
	assert_int_equal(artifact_unpack_cached(tgz, "x", cache, &dir, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "refused"));
	assert_false(fs_exists("/tmp/weir-test-absolute.txt"));

	/* not an archive at all */
	char *junk = path_in("junk.zip");
	assert_int_equal(fs_write_file_atomic(junk, "not a zip", 9, 0644, NULL), 0);
	assert_int_equal(artifact_unpack_cached(junk, "x", cache, &dir, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "junk.zip"));
	free(junk);
	free(zip);
	free(tgz);
	free(cache);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_zip_cached_once),
	    cmocka_unit_test(test_tar_gz_folder_and_workdir),
	    cmocka_unit_test(test_traversal_refused),
	};
	return cmocka_run_group_tests_name("launch/workdir", tests, setup, teardown);
}
