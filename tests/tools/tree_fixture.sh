# tree_fixture.sh: what the tests of the tree checks (test_check_includes.sh,
# test_check_state_doors.sh) share, sourced by them: a temporary folder
# removed at exit, the pass and fail counts, and put() to write a file of
# the tree under $tmp/src.

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0
fail=0

# put FILE LINE...: writes a file of the tree under $tmp/src.
put() {
	f=$tmp/src/$1
	shift
	mkdir -p "$(dirname "$f")"
	printf '%s\n' "$@" >"$f"
}
