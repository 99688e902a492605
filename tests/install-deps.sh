#!/bin/sh
# Installs what weir's build and tests need on a fresh Debian machine.
# Skips apt entirely when everything is already there, and npm when tests/ui/node_modules is.
set -e
PKGS="pkg-config libuv1-dev libmicrohttpd-dev libsqlite3-dev libjansson-dev
libyaml-dev libxml2-dev libarchive-dev nettle-dev libgnutls28-dev openssl libcmocka-dev python3-pytest python3-mypy python3-torch python3-cloudpickle python3-sklearn clang libclang-rt-14-dev
procps time zip stress-ng sqlite3 curl jq man-db debhelper lintian slurmctld slurmd slurm-client munge chromium
postgresql-15 redis-server mariadb-server mariadb-client clickhouse-server libpq-dev libmariadb-dev
python3-psycopg2 python3-mysqldb python3-redis prometheus python3-aiosmtpd python3-jinja2 python3-pendulum python3-dateutil
python3-venv"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# node runs the browser tests (tests/ui); any node >= 18 on PATH will do, else Debian's
command -v node >/dev/null 2>&1 || missing="$missing nodejs npm"
if [ -n "$missing" ]; then
	echo "installing:$missing"
	SUDO=""
	[ "$(id -u)" -ne 0 ] && SUDO="sudo"
	$SUDO apt-get update -q
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
fi
# playwright-core for the browser tests, exactly as locked; skipped when it is installed and
# the lock is not newer than the install (npm writes node_modules/.package-lock.json)
ui="$(dirname "$0")/ui"
if [ ! -f "$ui/node_modules/.package-lock.json" ] || [ "$ui/package-lock.json" -nt "$ui/node_modules/.package-lock.json" ]; then
	(cd "$ui" && npm ci --no-audit --no-fund)
fi
