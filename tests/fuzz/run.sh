#!/bin/sh
# tests/fuzz/run.sh [SECONDS]: builds each libFuzzer harness with clang
# (ASan + UBSan), linking the lib, model and pure sched sources, into
# build-fuzz/, and runs each for SECONDS (default 20) on a copy of its seed
# corpus.  Fails on the first crash, leak or sanitizer report.
set -eu
secs=${1:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/build-fuzz
mkdir -p "$out"
CC=${FUZZ_CC:-clang}
pkgs="jansson yaml-0.1 libxml-2.0"
cflags="-std=c11 -D_GNU_SOURCE -g -O1 -I$root/src $(pkg-config --cflags $pkgs)
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all"
libs="$(pkg-config --libs $pkgs) -lm"
srcs="src/lib/clock.c src/lib/dynlib.c src/lib/error.c src/lib/fs.c src/lib/grow.c src/lib/json_util.c src/lib/mask.c src/lib/shell.c
	src/lib/str.c src/lib/strbuf.c src/lib/strvec.c src/lib/tz.c src/lib/yaml.c src/model/framework.c
	src/model/job_spec.c src/model/job_spec_edit.c src/model/duration.c src/model/field_reader.c src/model/tony.c
	src/model/cron.c src/model/shell_context.c src/model/template.c src/model/dag_spec.c src/model/dag_spec_task.c
	src/model/dag_spec_check.c src/model/dag_spec_json.c src/model/dag_spec_data.c src/model/dag_spec_flow.c src/model/dag_spec_sensor.c src/model/dag_spec_dataset.c src/model/dag_spec_timetable.c src/model/dag_access.c src/model/role.c src/model/variable.c src/model/dataset.c src/model/param_schema.c src/model/connection.c src/model/notify.c
	src/model/dag_job.c src/model/states.c src/model/end_cause.c
	src/sched/dag_run.c src/sched/dag_states.c src/sched/dag_trigger.c"

status=0
for name in spec tony_xml submit_flags api_body dag cron template shell_contexts dag_run dag_job connection; do
	bin=$out/fuzz_$name
	set -- 
	for s in $srcs; do set -- "$@" "$root/$s"; done
	# shellcheck disable=SC2086
	$CC $cflags -o "$bin" "$root/tests/fuzz/fuzz_$name.c" "$@" $libs
	work=$out/corpus_$name
	mkdir -p "$work"
	cp -n "$root/tests/fuzz/corpus/$name"/* "$work"/ 2>/dev/null || true
	echo "fuzz_$name: ${secs}s"
	if ! (cd "$out" && "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-max_len=8192 -print_final_stats=0 "$work" \
		"$root/tests/fuzz/corpus/$name" >"$out/fuzz_$name.log" 2>&1); then
		echo "fuzz_$name FAILED; see $out/fuzz_$name.log"
		tail -40 "$out/fuzz_$name.log"
		status=1
	else
		tail -1 "$out/fuzz_$name.log"
	fi
done
exit $status
