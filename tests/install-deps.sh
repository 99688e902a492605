#!/bin/sh
# Installs what weir's build and tests need on a fresh Debian machine.
# Skips apt entirely when everything is already there.
set -e
PKGS="pkg-config libuv1-dev libmicrohttpd-dev libsqlite3-dev libjansson-dev
libyaml-dev libxml2-dev libarchive-dev nettle-dev libcmocka-dev python3-pytest python3-torch clang libclang-rt-14-dev
procps zip sqlite3 curl jq slurmctld slurmd slurm-client munge"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
