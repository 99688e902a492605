#!/bin/sh
# Tests tools/check_includes.py on small trees built in a temporary folder: a
# clean tree passes; each broken rule (an include upward, a 'never' line, a
# system header a layer never uses, a lean-launcher header reached through
# another layer, an include circle) fails and names the file, line and rule.
# Run: sh tests/tools/test_check_includes.sh
set -u
script=$(cd "$(dirname "$0")/../.." && pwd)/tools/check_includes.py
. "$(dirname "$0")/tree_fixture.sh"

# A clean tree: every layer, an include down each step, a split piece
# (exec/run.c with exec/run_parse.c including each other) and a header-only
# private header.
clean_tree() {
	rm -rf "$tmp/src"
	put lib/str.h '#include <string.h>'
	put lib/str.c '#include "lib/str.h"'
	put model/spec.h '#include "lib/str.h"'
	put model/spec.c '#include "model/spec.h"' '#include <unistd.h>'
	put store/db.h '#include <sqlite3.h>' '#include "model/spec.h"'
	put store/db.c '#include "store/db.h"'
	put sched/pick.h '#include "model/spec.h"' '#include <stdint.h>'
	put sched/pick.c '#include "sched/pick.h"'
	put exec/run.h '#include "model/spec.h"'
	put exec/run.c '#include "exec/run.h"' '#include "exec/run_parse.h"' '#include <unistd.h>'
	put exec/run_parse.h '#include "exec/run.h"'
	put exec/run_parse.c '#include "exec/run_parse.h"' '#include "run_private.h"'
	put exec/run_private.h '#include "exec/run.h"'
	put launch/go.c '#include "exec/run.h"' '#include <jansson.h>' '#include <unistd.h>'
	put api/routes.c '#include "store/db.h"' '#include "sched/pick.h"'
	put server/main_loop.c '#include "api/routes.h"' '#include <uv.h>'
	put api/routes.h '#include "lib/str.h"'
	put cli/main.c '#include "server/main_loop.h"'
	put server/main_loop.h ''
	put server/jobs/ctx.h '#include "server/main_loop.h"'
	put server/jobs/ctx.c '#include "server/jobs/ctx.h"'
}

# run [ARGS...]: the script on $tmp/src, with ARGS before the folder.
run() {
	out=$(cd "$tmp" && python3 "$script" "$@" src 2>&1)
	rc=$?
}

ok() {
	pass=$((pass + 1))
}

bad() {
	fail=$((fail + 1))
	echo "FAILED: $1"
	echo "$out" | sed 's/^/    /'
}

# expect_pass NAME
expect_pass() {
	run
	if [ "$rc" -eq 0 ]; then ok; else bad "$1: expected to pass, rc=$rc"; fi
}

# expect_fail NAME TEXT...: fails with rc 1 and prints every TEXT (fixed strings).
expect_fail() {
	name=$1
	shift
	run
	if [ "$rc" -ne 1 ]; then
		bad "$name: expected rc 1, got $rc"
		return
	fi
	for want in "$@"; do
		if ! printf '%s\n' "$out" | grep -qF -- "$want"; then
			bad "$name: output lacks '$want'"
			return
		fi
	done
	ok
}

clean_tree
expect_pass "clean tree"

clean_tree
put lib/str.c '#include "lib/str.h"' '#include <stdio.h>' '#include "model/spec.h"'
expect_fail "include upward" "src/lib/str.c:3: includes \"model/spec.h\"" "model is above lib"

clean_tree
put sched/pick.c '#include "sched/pick.h"' '#include "store/db.h"'
expect_fail "sched reads the store" "src/sched/pick.c:2: includes \"store/db.h\"" \
	"sched is pure" "never reads the store"

clean_tree
put launch/go.c '#include "exec/run.h"' '#include "sched/pick.h"'
expect_fail "launcher links the scheduler" "src/launch/go.c:2: includes \"sched/pick.h\"" \
	"never links the scheduler"

clean_tree
put sched/pick.c '#include "sched/pick.h"' '#include <stdio.h>' '#include <unistd.h>'
expect_fail "sched does I/O" "src/sched/pick.c:3: includes <unistd.h>" "never spawns, sleeps"

clean_tree
put launch/go.c '#include "exec/run.h"' '#include <sqlite3.h>'
expect_fail "launcher not lean" "src/launch/go.c:2: includes <sqlite3.h>" "links libc and jansson only"

clean_tree
put model/spec.h '#include "lib/str.h"' '#include <yaml.h>'
expect_fail "launcher reaches a library through a header" \
	"src/model/spec.h:2: includes <yaml.h>, reached from src/launch/go.c" "links libc and jansson only"

clean_tree
put exec/run.c '#include "exec/run.h"' '#include "exec/nope.h"'
expect_fail "include of no file" "src/exec/run.c:2: includes \"exec/nope.h\"" "names no file"

clean_tree
put tools/x.c ''
expect_fail "file outside the layers" "src/tools/x.c: not in a layer folder"

# A circle of three pieces, one edge of it through a header: a -> b -> c -> a.
clean_tree
put api/a.h ''
put api/a.c '#include "api/a.h"' '#include "api/b.h"'
put api/b.h '#include "api/http.h"'
put api/b.c '#include "api/b.h"' '#include "api/c.h"'
put api/c.h ''
put api/c.c '#include "api/c.h"' '#include "api/a.h"'
put api/http.h ''
expect_fail "circle of three" "include circle: src/api/a -> src/api/b -> src/api/c -> src/api/a" \
	"src/api/a.c:2: #include \"api/b.h\"" "src/api/b.c:2: #include \"api/c.h\"" \
	"src/api/c.c:2: #include \"api/a.h\""
if printf '%s\n' "$out" | grep -q 'src/api/http'; then
	bad "circle of three: names src/api/http, which is outside the circle"
fi

# Two pieces that include each other only through their headers.
clean_tree
put model/spec.h '#include "lib/str.h"' '#include "model/other.h"'
put model/other.h '#include "model/spec.h"'
expect_fail "circle of headers" "include circle: src/model/other -> src/model/spec -> src/model/other"

# A split piece's parts may include each other, but not a piece that includes them back.
clean_tree
put exec/run_parse.c '#include "exec/run_parse.h"' '#include "exec/step.h"'
put exec/step.h ''
put exec/step.c '#include "exec/step.h"' '#include "exec/run_parse.h"'
expect_fail "circle through a split piece" "include circle: src/exec/run -> src/exec/step -> src/exec/run"

# The rules come from the design's tables: a design with one more 'never' line
# (api never includes store) fails the clean tree's api/routes.c, with its reason.
design=$(dirname "$script")/../docs/internals/design.md
sed 's/^| `cli` | `store` |/| `api` | `store` | the routes answer through the server, never from the store |\n&/' \
	"$design" >"$tmp/design.md"
clean_tree
run --design "$tmp/design.md"
if [ "$rc" -eq 1 ] && printf '%s\n' "$out" | grep -qF 'src/api/routes.c:1: includes "store/db.h": the routes answer'; then
	ok
else
	bad "a never line added to the design: expected api/routes.c refused, rc=$rc"
fi
run --design "$tmp/none.md"
if [ "$rc" -eq 2 ]; then ok; else bad "a design that is not there: expected rc 2, got $rc"; fi

echo "test_check_includes: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
