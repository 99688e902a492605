#!/bin/bash
# tests/slurm/stop.sh DIR: stops the Slurm test cluster tests/slurm/start.sh started in DIR.
#
# First its jobs, through Slurm (scancel), so that no slurmstepd or task outlives the cluster;
# then exactly the daemons recorded in DIR/pids, newest first: SIGTERM, then SIGKILL after a
# grace. A pid is signalled only while its command line still names DIR, so a recycled pid is
# never touched. Then any slurmstepd of this cluster still alive (its working directory is DIR,
# inherited from slurmd: start.sh starts the daemons there) is killed, and DIR's runtime files
# (sockets, pid files, state, spool) are removed; the configuration and the logs stay for
# whoever looks into a failure. Stopping a stopped cluster does nothing and succeeds.
set -eu

grace_s=5
say() { echo "stop.sh: $*" >&2; }

[ $# -eq 1 ] || {
	echo "usage: stop.sh DIR" >&2
	exit 2
}
if [ "$(id -u)" -ne 0 ]; then
	say "error: must run as root, as tests/slurm/start.sh did"
	exit 1
fi
[ -d "$1" ] || {
	say "no directory $1: nothing to stop"
	exit 0
}
dir=$(cd "$1" && pwd -P)
[ "$dir" != / ] || { echo "DIR must not be /" >&2; exit 2; }
PATH=$PATH:/usr/sbin:/sbin

alive() {
	local st
	st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}
ours() {
	alive "$1" && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$dir/"
}

# The slurmstepd processes of this cluster: they are not our children (slurmd detaches them).
stepds() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = slurmstepd ] || continue
		[ "$(readlink "$p/cwd" 2>/dev/null)" = "$dir" ] || continue
		echo "${p#/proc/}"
	done
}

if [ -s "$dir/pids" ]; then
	# ---- jobs first, while slurmctld and the slurmds can still end them ----------------
	ctld=$(awk '$1 == "slurmctld" { print $2 }' "$dir/pids")
	if [ -n "$ctld" ] && ours "$ctld" && [ -f "$dir/etc/slurm.conf" ]; then
		export SLURM_CONF=$dir/etc/slurm.conf
		jobs=$(timeout 10 squeue -h -o %A 2>/dev/null | tr '\n' ' ' || true)
		if [ -n "${jobs// /}" ]; then
			say "cancelling jobs $jobs"
			# shellcheck disable=SC2086
			timeout 10 scancel $jobs 2>/dev/null || true
			for _ in $(seq 1 100); do
				[ -z "$(timeout 5 squeue -h -o %A 2>/dev/null || true)" ] &&
					[ -z "$(stepds)" ] && break
				sleep 0.1
			done
		fi
	fi

	# ---- the daemons, newest first -------------------------------------------------------
	tac "$dir/pids" | while read -r name pid; do
		if ! ours "$pid"; then
			continue
		fi
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 1 $((grace_s * 10))); do
			alive "$pid" || break
			sleep 0.1
		done
		if ours "$pid"; then
			say "$name (pid $pid) still runs ${grace_s}s after SIGTERM: SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done
fi

# ---- what the jobs left behind -----------------------------------------------------------
left=$(stepds)
if [ -n "$left" ]; then
	say "killing slurmstepd left behind: $(tr '\n' ' ' <<<"$left")"
	# shellcheck disable=SC2086
	kill -KILL $left 2>/dev/null || true
fi

rm -rf "${dir:?}/run" "$dir/state" "$dir/spool" "$dir/gpus" "$dir/pids" "$dir/env"
exit 0
