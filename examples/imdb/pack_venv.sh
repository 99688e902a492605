#!/bin/sh
# pack_venv.sh OUT.zip: packs the example's Python environment the way a TonY user does
# (`zip -r venv.zip venv`), without PyPI: the environment's bin/python runs a system
# interpreter that already has torch (Debian's python3-torch).  See examples/README.md.
set -eu
out=${1:?usage: pack_venv.sh OUT.zip}
case "$out" in /*) ;; *) out="$(pwd)/$out" ;; esac

py=""
for cand in ${PYTHON:-} /usr/bin/python3 python3; do
	if "$cand" -c 'import torch' >/dev/null 2>&1; then
		py=$(command -v "$cand")
		break
	fi
done
[ -n "$py" ] || { echo "pack_venv.sh: no python3 with torch found (apt-get install python3-torch)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/venv/bin"
cat > "$tmp/venv/bin/python" <<SCRIPT
#!/bin/sh
# A relocatable stand-in for a virtualenv's interpreter: the system one, which has torch.
exec $py "\$@"
SCRIPT
chmod 755 "$tmp/venv/bin/python"
cp "$tmp/venv/bin/python" "$tmp/venv/bin/python3"
rm -f "$out"
(cd "$tmp" && zip -q -r "$out" venv)
echo "packed $out (venv/bin/python runs $py)"
