#!/bin/sh
# run.sh: every benchmark, one after the other (`make bench`).  Figures, not assertions:
# docs/benchmarks.md records them with the method and the machine.
#   WEIR_BIN=path/to/weir RUNS=11 JOBS=1000 sh bench/run.sh
set -e
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
runs=${RUNS:-11}
echo "machine: $(nproc) cores, $(awk '/^MemTotal:/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -sr)"
"$py" "$here/submit_latency.py" --runs "$runs"
echo
"$py" "$here/server_rss.py" --jobs "${JOBS:-1000}" --running "${RUNNING:-32}"
echo
"$py" "$here/venv_start.py" --runs "${VENV_RUNS:-10}" --size-mb "${VENV_MB:-200}"
