#!/bin/sh
# run.sh: every benchmark, one after the other (`make bench`).  Figures, not assertions:
# docs/benchmarks.md records them with the method and the machine.
#   WEIR_BIN=path/to/weir RUNS=11 JOBS=1000 [SLURM_START=.../start.sh] sh bench/run.sh
set -e
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
runs=${RUNS:-11}
echo "machine: $(nproc) cores, $(awk '/^MemTotal:/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -sr)"
# srun beside weir: a Slurm that answers already, or one that SLURM_START (a script like
# start.sh DIR of a throw-away local cluster, with stop.sh beside it) brings up for the run.
slurm_dir=""
if [ -n "${SLURM_START:-}" ] && ! sinfo -h >/dev/null 2>&1; then
	slurm_dir=$(mktemp -d "${TMPDIR:-/tmp}/weir-bench-slurm.XXXXXX")
	if CPUS=8 GPUS=0 OVERSUBSCRIBE=FORCE:8 bash "$SLURM_START" "$slurm_dir" >"$slurm_dir.log" 2>&1; then
		SLURM_CONF="$slurm_dir/etc/slurm.conf"
		export SLURM_CONF
	else
		echo "(could not start a local Slurm: see $slurm_dir.log)"
	fi
fi
stop_slurm() {
	[ -n "$slurm_dir" ] && bash "$(dirname "$SLURM_START")/stop.sh" "$slurm_dir" >/dev/null 2>&1 &&
		rm -rf "$slurm_dir" "$slurm_dir.log"
	true
}
trap stop_slurm EXIT
"$py" "$here/submit_latency.py" --runs "$runs"
echo
"$py" "$here/server_rss.py" --jobs "${JOBS:-1000}" --running "${RUNNING:-32}"
echo
"$py" "$here/venv_start.py" --runs "${VENV_RUNS:-10}" --size-mb "${VENV_MB:-200}"
echo
"$py" "$here/dags.py" --runs "${DAG_RUNS:-3}" --chain "${CHAIN:-100}" --fanout "${FANOUT:-2000}"
echo
"$py" "$here/log_masking.py" --runs "${MASK_RUNS:-5}" --mb "${MASK_MB:-256}"
echo
"$py" "$here/python_calls.py" --calls "${PY_CALLS:-200}" || echo "(bench/python_calls.py failed: python3-cloudpickle?)"; echo
"$py" "$here/per_task.py" --runs "${DAG_RUNS:-3}" --chain "${CHAIN:-100}" --fanout "${FANOUT:-2000}"
echo
"$py" "$here/airflow_dags.py" --runs "${DAG_RUNS:-3}" || echo "(bench/airflow_dags.py failed)"; echo
"$py" "$here/slurm.py" --runs "${SLURM_RUNS:-5}" --dag-tasks "${SLURM_DAG_TASKS:-500}" || echo "(bench/slurm.py failed)"; echo
cc -O2 -o "${TMPDIR:-/tmp}/weir-cgroup-cost" "$here/cgroup_cost.c" && "${TMPDIR:-/tmp}/weir-cgroup-cost" 200 0 &&
	"${TMPDIR:-/tmp}/weir-cgroup-cost" 100 4
echo
# transfer tasks beside psql | redis-cli --pipe, psycopg2 + redis-py and psql | psql (Debian's
# python3-psycopg2 and python3-redis, hence the system interpreter)
/usr/bin/python3 "$here/transfer.py" --runs "${TRANSFER_RUNS:-3}" --rows "${TRANSFER_ROWS:-1000000}" ||
	echo "(bench/transfer.py failed)"
