#!/bin/sh
# demo.sh: the example end to end on the embedded default (one machine, SQLite, local
# executor).  Starts `weir server` in a temporary home on a free loopback port, generates the
# IMDB-like data, packs venv.zip, submits the 2-worker PyTorch DDP job with TonY's submit
# flags (as seed 000 does on YARN), shows the status lines and the final accuracy, stops the
# server and exits with the job's status.  Run by `make demo`; WEIR_BIN picks the binary.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
weir=${WEIR_BIN:-$top/weir}
[ -x "$weir" ] || { echo "demo: no weir binary at $weir (run make)" >&2; exit 2; }

py=""
for cand in ${PYTHON:-} /usr/bin/python3 python3; do
	if "$cand" -c 'import torch' >/dev/null 2>&1; then py=$cand; break; fi
done
[ -n "$py" ] || { echo "demo: needs a python3 with torch (apt-get install python3-torch)" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/weir-demo.XXXXXX")
server_pid=""
cleanup() {
	if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
		kill -TERM "$server_pid" 2>/dev/null
		i=0
		while kill -0 "$server_pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		kill -KILL "$server_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export WEIR_HOME="$tmp/home" WEIR_SERVER="http://127.0.0.1:$port"
unset WEIR_TOKEN

echo "== weir server on 127.0.0.1:$port, home $WEIR_HOME"
# the job reads the example's files and writes beside its home, in a folder (mktemp's, 0700)
# no other user may enter: its tasks run as this user, even as root (docs/security.md)
mkdir -p "$WEIR_HOME"
printf 'task_user: %s\n' "$(id -un)" >"$WEIR_HOME/weir.yaml"
"$weir" server --listen "127.0.0.1:$port" --home "$WEIR_HOME" >"$tmp/server.log" 2>&1 &
server_pid=$!
i=0
until "$weir" jobs list >/dev/null 2>&1; do
	i=$((i + 1))
	if ! kill -0 "$server_pid" 2>/dev/null || [ $i -ge 100 ]; then
		echo "demo: the server did not come up; its log:" >&2
		cat "$tmp/server.log" >&2
		exit 3
	fi
	sleep 0.1
done

echo "== the example: IMDB-like reviews, a 2-worker PyTorch DDP classifier"
mkdir "$tmp/imdb"
cp "$top"/examples/imdb/make_data.py "$top"/examples/imdb/train.py \
	"$top"/examples/imdb/tony.xml "$top"/examples/imdb/pack_venv.sh "$tmp/imdb/"
cd "$tmp/imdb" || exit 2
"$py" make_data.py data || exit 2
PYTHON=$py sh pack_venv.sh venv.zip || exit 2

# tony.xml asks 4g per worker, as in the seed; a small machine gets less so that it fits
conf=""
mem_mb=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo 2>/dev/null)
if [ -n "$mem_mb" ] && [ "$mem_mb" -lt 10240 ]; then
	conf="--conf=tony.worker.memory=1g"
	echo "(this machine has ${mem_mb} MiB: asking 1g per worker instead of 4g)"
fi

echo "== weir submit (TonY's flags)"
"$weir" submit --python_venv=venv.zip --src_dir=. --executes=train.py \
	--task_params="--data_dir data --epochs 5" --conf_file=tony.xml \
	--python_binary_path=venv/bin/python $conf
rc=$?

# a fresh home: the example is job 1
echo "== final accuracy, from each worker's log"
for i in 0 1; do
	line=$("$weir" logs 1 --role worker --index $i 2>/dev/null | grep 'final accuracy')
	echo "worker $i: ${line:-no accuracy line in its log}"
done
echo "== weir submit exited $rc"
exit $rc
