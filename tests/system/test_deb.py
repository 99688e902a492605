"""`make deb` (docs/install.md): the package built by dpkg-buildpackage from a copy of the
tree, lintian-clean (no error, no warning), installed with `dpkg -i` on this machine (the user weir made, /etc/weir/weir.yaml a
conffile, /var/lib/weir its home), the packaged node agent and server started as weir with
their units' own command lines (no systemd is needed: the test machine may have none as PID 1;
the server uses the agent's unit's agent), installed
again over itself (the store and a changed conffile kept), then `dpkg -r` (the store kept)
and `dpkg -P` (the home removed).

It installs into the system, so it runs only as root, with debhelper, and where no weir
package is installed already (it would replace it); it leaves the machine as it found it."""

import glob
import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import REPO, wait_for
from test_store_upgrade import load_home, schema_version

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="dpkg -i needs root"),
    pytest.mark.skipif(not shutil.which("dh") or not shutil.which("dpkg-buildpackage"),
                       reason="debhelper is not installed (tests/install-deps.sh)"),
]


def run(*cmd, timeout=60, check=True):
    done = subprocess.run(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)
    assert not check or done.returncode == 0, "%s:\n%s" % (" ".join(cmd), done.stdout)
    return done


def installed():
    done = run("dpkg-query", "-W", "-f=${Status}", "weir", check=False)
    return "ok installed" in done.stdout or "config-files" in done.stdout


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    if installed():
        pytest.skip("a weir package is installed on this machine already")
    had_user = run("getent", "passwd", "weir", check=False).returncode == 0
    build = tmp_path_factory.mktemp("deb")
    run("make", "-s", "deb", "BUILD=%s" % build, "DEB_BUILD_OPTIONS=parallel=2", timeout=900)
    debs = glob.glob(str(build / "deb" / "weir_*.deb"))
    assert len(debs) == 1, debs
    yield debs[0]
    if installed():
        run("dpkg", "-P", "weir", check=False)
    if not had_user:
        run("deluser", "--system", "weir", check=False)


@pytest.mark.skipif(not shutil.which("lintian"), reason="lintian is not installed")
def test_lintian_clean(package):
    done = run("lintian", "--fail-on", "error,warning", package, timeout=300, check=False)
    assert done.returncode == 0, done.stdout


def test_install_start_remove_purge(package, tmp_path):
    run("dpkg", "-i", package, timeout=120)
    assert run("id", "-un", "weir").stdout.strip() == "weir"
    home = Path("/var/lib/weir")
    assert home.is_dir() and home.stat().st_uid == int(run("id", "-u", "weir").stdout)
    conffiles = run("dpkg-query", "-W", "-f=${Conffiles}", "weir").stdout
    assert "/etc/weir/weir.yaml" in conffiles
    # it may hold password hashes: root's, readable by the group weir only
    st = Path("/etc/weir/weir.yaml").stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o777) == (0, int(run("id", "-g", "weir").stdout),
                                                         0o640), st
    assert run("/usr/bin/weir", "--version").stdout.startswith("weir ")
    assert run("man", "-w", "weir-dags").stdout.strip().startswith("/usr/share/man/man1/")

    # the packaged agent and server, as their units start them: their user, their command
    # lines, their home; the server's unit wants the agent's
    def as_weir(unit, extra, log):
        text = Path("/lib/systemd/system/%s.service" % unit).read_text()
        cmd = shlex.split(re.search(r"^ExecStart=(.*)$", text, re.M).group(1))
        with open(log, "w") as f:
            # setpriv execs the program (runuser would stay its parent): its exit status is ours
            return subprocess.Popen(["setpriv", "--reuid=weir", "--regid=weir", "--init-groups"] +
                                    cmd + extra, cwd="/var/lib/weir", stdout=f,
                                    stderr=subprocess.STDOUT, start_new_session=True,
                                    env=dict(PATH=os.environ["PATH"], WEIR_HOME="/var/lib/weir"))

    def agent_pid():
        done = run("/usr/bin/weir", "agent", "status", "--json", "--home", "/var/lib/weir",
                   check=False)
        return done.returncode == 0 and json.loads(done.stdout)["agent_pid"]

    assert re.search(r"^Wants=.*weir-agent\.service",
                     Path("/lib/systemd/system/weir-server.service").read_text(), re.M)
    agent_log = tmp_path / "agent.log"
    agent = as_weir("weir-agent", [], agent_log)
    log = tmp_path / "server.log"
    proc = None
    try:
        wait_for(lambda: agent_pid() == agent.pid, 30, "the packaged agent to answer")
        proc = as_weir("weir-server", ["--listen", "127.0.0.1:0"], log)
        url = wait_for(lambda: re.search(r"listening on (http://[0-9.:]+)", log.read_text()),
                       30, "the packaged server's start line").group(1)
        with urllib.request.urlopen(url + "/api/v1/health", timeout=10) as r:
            assert r.status == 200
        assert (home / "token").stat().st_uid == home.stat().st_uid
        assert agent_pid() == agent.pid  # the server started none of its own
    finally:
        if proc is not None:
            proc.terminate()
            assert proc.wait(timeout=30) == 0, log.read_text()
        assert agent.poll() is None, agent_log.read_text()  # --stay: a goodbye does not end it
        agent.terminate()
        assert agent.wait(timeout=30) == 0, agent_log.read_text()
    wait_for(lambda: run("pgrep", "-u", "weir", check=False).returncode != 0, 30,
             "the weir user's processes (the agent) to end")

    # installed again over itself (dpkg's upgrade path: prerm upgrade, postinst configure
    # with the old version): the store, its token and a changed conffile stay; the store
    # here is one an old weir wrote (schema 3, with its jobs and logs), which the upgraded
    # server migrates at its start
    token = (home / "token").read_text()
    conf = Path("/etc/weir/weir.yaml")
    conf.write_text(conf.read_text() + "# changed here\n")
    for f in ("weir.db", "weir.db-wal", "weir.db-shm"):
        (home / f).unlink(missing_ok=True)
    shutil.rmtree(home / "jobs", ignore_errors=True)
    load_home(SimpleNamespace(home=home), tmp_path / "side")
    with sqlite3.connect(home / "weir.db") as c:
        old_jobs = sorted(r[0] for r in c.execute("SELECT id FROM jobs"))
    run("chown", "-R", "weir:weir", str(home))
    run("dpkg", "-i", "--force-confold", package, timeout=120)
    assert (home / "token").read_text() == token and (home / "weir.db").exists()
    assert conf.read_text().endswith("# changed here\n")
    proc = as_weir("weir-server", ["--listen", "127.0.0.1:0"], log)
    try:
        url = wait_for(lambda: re.search(r"listening on (http://[0-9.:]+)", log.read_text()),
                       30, "the upgraded server's start line").group(1)
        req = urllib.request.Request(url + "/api/v1/jobs?limit=1000",
                                     headers={"Authorization": "Bearer " + token.strip()})
        with urllib.request.urlopen(req, timeout=10) as r:
            assert sorted(j["id"] for j in json.loads(r.read())["jobs"]) == old_jobs
        with sqlite3.connect("file:%s?mode=ro" % (home / "weir.db"), uri=True) as c:
            assert c.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] \
                == schema_version()
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0, log.read_text()
    wait_for(lambda: run("pgrep", "-u", "weir", check=False).returncode != 0, 30,
             "the weir user's processes (the agent) to end")

    run("dpkg", "-r", "weir", timeout=120)
    assert not Path("/usr/bin/weir").exists()
    assert (home / "weir.db").exists() and Path("/etc/weir/weir.yaml").exists()
    run("dpkg", "-P", "weir", timeout=120)
    assert not home.exists() and not Path("/etc/weir").exists()
    assert run("dpkg-statoverride", "--list", "/etc/weir/weir.yaml", check=False).returncode != 0
