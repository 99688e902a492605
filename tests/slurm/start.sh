#!/bin/bash
# tests/slurm/start.sh: a throw-away Slurm cluster on this one machine, for weir's tests.
#
#   start.sh [--nodes N] [--cpus N] [--mem MB] [--gpus N] [--ctld-port P] [--slurmd-port P]
#            [--wait SECONDS] [--max-jobs N] [--min-job-age SECONDS] DIR
#
# Everything lives in DIR: slurm.conf and gres.conf, a munge key and socket of its own, the
# controller's state, the nodes' spool directories, the fake GPU device files, the daemons'
# logs, and DIR/pids ("name pid" per line, every daemon this script started). One munged, one
# slurmctld and one `slurmd -D -N nodeI` per node run in the foreground of their own sessions,
# all on 127.0.0.1; no systemd, nothing under /etc is read or written. The ports are chosen here
# (free ones below the kernel's ephemeral range) unless given, so that two clusters, or a
# Slurm of the machine's own, do not collide. When every node is idle in `sinfo` the script
# prints the environment to use, one `export NAME=value` per line (also in DIR/env).
# Running it again on a DIR whose cluster is up prints that environment again.
# tests/slurm/stop.sh DIR stops it. docs/internals/slurm_tests.md explains every setting.
set -eu

nodes=2
cpus=4
mem_mb=8192
gpus=2
ctld_port=""
slurmd_port=""
wait_s=30
max_jobs=10000
min_job_age=600

say() { echo "start.sh: $*" >&2; }
die() {
	say "error: $*"
	exit 1
}
usage() {
	sed -n '4,5p' "$0" | sed 's/^# *//' >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	--nodes) nodes=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--mem) mem_mb=$2; shift 2 ;;
	--gpus) gpus=$2; shift 2 ;;
	--ctld-port) ctld_port=$2; shift 2 ;;
	--slurmd-port) slurmd_port=$2; shift 2 ;;
	--wait) wait_s=$2; shift 2 ;;
	--max-jobs) max_jobs=$2; shift 2 ;;
	--min-job-age) min_job_age=$2; shift 2 ;;
	-h | --help) usage ;;
	-*) say "unknown option $1"; usage ;;
	*) break ;;
	esac
done
[ $# -eq 1 ] || usage
for v in "$nodes" "$cpus" "$mem_mb" "$gpus" "$wait_s" "$max_jobs" "$min_job_age" ${ctld_port:+"$ctld_port"} \
	${slurmd_port:+"$slurmd_port"}; do
	case "$v" in '' | *[!0-9]*) die "'$v' is not a number" ;; esac
done
[ "$nodes" -ge 1 ] || die "--nodes must be at least 1"

if [ "$(id -u)" -ne 0 ]; then
	die "must run as root: slurmd starts jobs as their submitting user and slurmctld, slurmd and
  munged here all run as root with a key of their own (run it with sudo)"
fi
for b in munged munge slurmctld slurmd sinfo scontrol; do
	command -v "$b" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin
	command -v "$b" >/dev/null 2>&1 ||
		die "$b is not installed: run tests/install-deps.sh" \
			"(packages slurmctld slurmd slurm-client munge)"
done

mkdir -p "$1"
dir=$(cd "$1" && pwd -P)
[ "$dir" != / ] || { echo "DIR must not be /" >&2; exit 2; }
conf=$dir/etc/slurm.conf
export SLURM_CONF=$conf

# A pid recorded in DIR/pids is ours while it is alive, not a zombie, and its command line
# names DIR (every daemon is started with a path under DIR): a recycled pid never matches.
ours() {
	local st
	st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ] || return 1
	tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$dir/"
}

print_env() {
	cat "$dir/env"
}

# ---- already up? ---------------------------------------------------------------------------
if [ -s "$dir/pids" ]; then
	up=1
	while read -r name pid; do
		ours "$pid" || up=0
	done <"$dir/pids"
	if [ "$up" = 1 ] && [ -s "$dir/env" ] && sinfo -h >/dev/null 2>&1; then
		say "the cluster in $dir is already up"
		print_env
		exit 0
	fi
	say "$dir/pids is stale: stopping what is left of it first"
	"$(dirname "$0")/stop.sh" "$dir" >&2
fi

# ---- ports ---------------------------------------------------------------------------------
# Ports any socket of this machine uses (any state), from the kernel's tables.
used_ports() {
	local _ local_addr _rest
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | while read -r _ local_addr _rest; do
		case "$local_addr" in *:*) echo $((16#${local_addr##*:})) ;; esac
	done | sort -un
}
read -r eph_low _ </proc/sys/net/ipv4/ip_local_port_range || eph_low=32768
used=" $(used_ports | tr '\n' ' ') "
taken=" "
pick_port() {
	local p tries=0
	while :; do
		p=$((15000 + (RANDOM * 32768 + RANDOM) % (eph_low - 15000)))
		case "$used$taken" in *" $p "*) ;; *) break ;; esac
		tries=$((tries + 1))
		[ $tries -lt 1000 ] || die "no free port found below $eph_low"
	done
	taken="$taken$p "
	echo "$p"
}
if [ -z "$ctld_port" ]; then
	ctld_port=$(pick_port)
fi
taken=" $ctld_port "
port_of=()
for i in $(seq 1 "$nodes"); do
	if [ -n "$slurmd_port" ]; then
		port_of[i]=$((slurmd_port + i - 1))
	else
		port_of[i]=$(pick_port)
		taken="$taken${port_of[i]} "
	fi
done
for p in "$ctld_port" "${port_of[@]}"; do
	case "$used" in *" $p "*) die "port $p is already in use on this machine" ;; esac
done

# ---- a fresh layout ------------------------------------------------------------------------
rm -rf "${dir:?}/state" "$dir/spool" "$dir/run" "$dir/log" "$dir/gpus" "$dir/pids" "$dir/env"
mkdir -p "$dir/etc" "$dir/state" "$dir/spool" "$dir/run" "$dir/log" "$dir/gpus" "$dir/munge"
# munged refuses a key directory others can write to, and clients need to reach the socket.
chmod 0755 "$dir" "$dir/run"
chmod 0700 "$dir/munge"
: >"$dir/pids"

# On any failure from here on: show the daemons' last words, and stop what was started.
failed() {
	local rc=$? f
	[ $rc -eq 0 ] && return 0
	for f in "$dir"/log/*; do
		[ -s "$f" ] || continue
		echo "---- tail of $f" >&2
		tail -n 15 "$f" >&2
	done
	say "start failed; stopping the daemons it started"
	"$(dirname "$0")/stop.sh" "$dir" >&2 || true
	exit $rc
}
trap failed EXIT

# start NAME LOG COMMAND...: runs a daemon in its own session, detached from our output (the
# caller may be reading it through a pipe), and records its pid.
start() {
	local name=$1 log=$2
	shift 2
	setsid "$@" </dev/null >>"$log" 2>&1 &
	echo "$name $!" >>"$dir/pids"
}

# wait_until SECONDS WHAT COMMAND...: polls COMMAND, failing if a recorded daemon has died.
wait_until() {
	local deadline=$((SECONDS + $1)) what=$2 name pid
	shift 2
	until "$@" >/dev/null 2>&1; do
		while read -r name pid; do
			ours "$pid" || die "$name (pid $pid) has exited while waiting for $what"
		done <"$dir/pids"
		[ $SECONDS -lt $deadline ] || die "timed out after ${wait_s}s waiting for $what"
		sleep 0.1
	done
}

# ---- munge ---------------------------------------------------------------------------------
key=$dir/munge/munge.key
sock=$dir/run/munge.socket
if [ ! -s "$key" ]; then
	dd if=/dev/urandom of="$key" bs=1024 count=1 status=none
fi
chmod 0400 "$key"
start munged "$dir/log/munged.out" munged --foreground --force --socket="$sock" --key-file="$key" \
	--log-file="$dir/log/munged.log" --pid-file="$dir/run/munged.pid" \
	--seed-file="$dir/munge/seed"
munge_ok() { munge -n -S "$sock" | unmunge -S "$sock"; }
wait_until "$wait_s" "munged to answer on $sock" munge_ok

# ---- fake GPUs -----------------------------------------------------------------------------
# gres/gpu only needs a file per device for File=; CUDA_VISIBLE_DEVICES is the index of the
# device Slurm gave a step among the node's devices. One set per node, as real nodes have.
for i in $(seq 1 "$nodes"); do
	for g in $(seq 0 $((gpus - 1))); do
		f=$dir/gpus/node$i-gpu$g
		mknod "$f" c 195 "$g" 2>/dev/null || : >"$f"
	done
done

# ---- slurm.conf and gres.conf --------------------------------------------------------------
names=()
for i in $(seq 1 "$nodes"); do names+=("node$i"); done
all=$(IFS=,; echo "${names[*]}")
{
	echo "# written by tests/slurm/start.sh; see docs/internals/slurm_tests.md"
	echo "ClusterName=weirtest"
	echo "SlurmctldHost=$(hostname -s)(127.0.0.1)"
	echo "SlurmctldPort=$ctld_port"
	echo "SlurmUser=root"
	echo "SlurmdUser=root"
	echo "AuthType=auth/munge"
	echo "CredType=cred/munge"
	echo "AuthInfo=socket=$sock"
	echo "StateSaveLocation=$dir/state"
	echo "SlurmdSpoolDir=$dir/spool/%n"
	echo "SlurmctldPidFile=$dir/run/slurmctld.pid"
	echo "SlurmdPidFile=$dir/run/slurmd-%n.pid"
	echo "SlurmctldLogFile=$dir/log/slurmctld.log"
	echo "SlurmdLogFile=$dir/log/slurmd-%n.log"
	echo "SlurmctldDebug=info"
	echo "SlurmdDebug=info"
	echo "PlugStackConfig=$dir/etc/plugstack.conf"
	echo "SlurmdParameters=config_overrides"
	echo "ProctrackType=proctrack/linuxproc"
	echo "TaskPlugin=task/none"
	echo "SelectType=select/cons_tres"
	echo "SelectTypeParameters=CR_Core_Memory"
	echo "SchedulerType=sched/backfill"
	echo "SchedulerParameters=batch_sched_delay=0"
	echo "ReturnToService=2"
	echo "KillWait=2"
	echo "MinJobAge=$min_job_age"
	echo "MaxJobCount=$max_jobs"
	echo "MailProg=/bin/true"
	echo "AccountingStorageType=accounting_storage/none"
	echo "JobAcctGatherType=jobacct_gather/none"
	echo "JobCompType=jobcomp/filetxt"
	echo "JobCompLoc=$dir/log/jobcomp.txt"
	gres=""
	if [ "$gpus" -gt 0 ]; then
		echo "GresTypes=gpu"
		gres=" Gres=gpu:$gpus"
	fi
	for i in $(seq 1 "$nodes"); do
		echo "NodeName=node$i NodeHostname=$(hostname -s) NodeAddr=127.0.0.1" \
			"Port=${port_of[i]} CPUs=$cpus RealMemory=$mem_mb$gres State=UNKNOWN"
	done
	echo "PartitionName=test Nodes=$all Default=YES MaxTime=INFINITE State=UP" \
		"OverSubscribe=FORCE:4 DefMemPerCPU=256"
} >"$conf"
{
	echo "# written by tests/slurm/start.sh: fake GPUs, no NVML"
	echo "AutoDetect=off"
	if [ "$gpus" -gt 0 ]; then
		for i in $(seq 1 "$nodes"); do
			echo "NodeName=node$i Name=gpu File=$dir/gpus/node$i-gpu[0-$((gpus - 1))]"
		done
	fi
} >"$dir/etc/gres.conf"
# An empty SPANK plugin list: the machine's own /etc/slurm/plugstack.conf is not ours to read.
: >"$dir/etc/plugstack.conf"
echo "export SLURM_CONF=$conf" >"$dir/env"

# ---- the daemons ---------------------------------------------------------------------------
# Their working directory, which every slurmstepd inherits: that is how stop.sh and the tests
# find this cluster's slurmstepd processes (slurmstepd clears its environment).
cd "$dir"
start slurmctld "$dir/log/slurmctld.out" slurmctld -D -f "$conf"
wait_until "$wait_s" "slurmctld to answer on port $ctld_port" scontrol ping
for n in "${names[@]}"; do
	start "slurmd:$n" "$dir/log/slurmd-$n.out" slurmd -D -N "$n" -f "$conf"
done

all_idle() {
	local states
	states=$(sinfo -h -N -o '%T' 2>/dev/null | sort -u | tr '\n' ' ')
	[ "$states" = "idle " ] && [ "$(sinfo -h -N -o '%N' | sort -u | wc -l)" -eq "$nodes" ]
}
start_s=$SECONDS
wait_until "$wait_s" "every node to be idle in sinfo" all_idle
trap - EXIT
say "$nodes node(s) idle after $((SECONDS - start_s))s; slurmctld on 127.0.0.1:$ctld_port;" \
	"pids in $dir/pids"
print_env
