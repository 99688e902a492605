"""`make install` into a temporary DESTDIR (docs/install.md): the tree it makes, every man page
rendered by man-db, the installed `weir` run from there (its version, `weir run` finding the
installed Python package), the systemd units (the server's, the node agent's) checked by
systemd-analyze, the server started with its unit's own command line, and the agent with its
own: the server uses it, and a task outlives a restart of the server.  `make uninstall` then
leaves no file behind.

The programs are the already built ones (the folder of $WEIR_BIN): nothing is compiled here."""

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import urllib.request
from pathlib import Path

import pytest

from conftest import REPO, WEIR_BIN, wait_for, with_task_user

PREFIX = "/usr"


def build_dir():
    """The build folder of $WEIR_BIN, relative to the repository (build or build-san)."""
    real = Path(os.path.realpath(WEIR_BIN))
    try:
        return str(real.parent.relative_to(REPO))
    except ValueError:
        pytest.skip("$WEIR_BIN is not a build of this source tree")


def make(*args):
    done = subprocess.run(["make", "-s", "BUILD=" + build_dir(), "PREFIX=" + PREFIX] + list(args),
                          cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=120)
    assert done.returncode == 0, "make %s:\n%s" % (" ".join(args), done.stdout)
    return done.stdout


@pytest.fixture(scope="module")
def dest(tmp_path_factory):
    root = tmp_path_factory.mktemp("destdir")
    make("install", "DESTDIR=%s" % root, "INSTALL_UNITS=1")
    return root


def groups():
    """The command groups `weir --help` lists (those with a page of their own)."""
    out = subprocess.run([WEIR_BIN, "--help"], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    section = out.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    names = re.findall(r"^  ([a-z][a-z-]*)(?: [A-Z]+)?\s+(\S.*)$", section, re.M)
    return [n for n, _ in names if n != "help"]


def render(page, width):
    """(exit status, the page as plain text, stderr) of `man -l PAGE`."""
    done = subprocess.run(["man", "-l", str(page)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True,
                          env=dict(os.environ, MANWIDTH=str(width), MANPAGER="cat",
                                   PAGER="cat"))
    # man-db's bold and underline as overstrikes (X backspace X) when stdout is no terminal
    return done.returncode, re.sub(".\b", "", done.stdout), done.stderr


def test_the_tree(dest):
    usr = dest / "usr"
    for prog in ("weir", "weir-launch"):
        assert os.access(usr / "bin" / prog, os.X_OK), prog
    # `airflow`, the link that runs Airflow's command line (docs/airflow.md)
    assert os.readlink(usr / "bin/airflow") == "weir"
    assert (usr / "share/weir/python/weir/run.py").is_file()
    assert (usr / "share/weir/python/weir/compat/ray/site/ray/__init__.py").is_file()
    assert not list((usr / "share/weir/python").rglob("__pycache__"))
    assert (usr / "share/doc/weir/README.md").is_file()
    assert (usr / "share/doc/weir/docs/install.md").is_file()
    assert (usr / "share/doc/weir/docs/configuration.md").is_file()
    pages = sorted(p.name for p in (usr / "share/man/man1").iterdir())
    assert pages == sorted(["weir.1", "airflow.1"] + ["weir-%s.1" % g for g in groups()])
    # weir-launch(1): `weir launch` and the program weir-launch alike
    assert "weir-dags.1" in pages and "weir-launch.1" in pages
    unit = usr / "lib/systemd/system/weir-server.service"
    assert "ExecStart=/usr/bin/weir server --home /var/lib/weir --config /etc/weir/weir.yaml" \
        in unit.read_text()
    agent = usr / "lib/systemd/system/weir-agent.service"
    assert "ExecStart=/usr/bin/weir-launch agent --stay --home /var/lib/weir" in agent.read_text()
    assert (dest / "etc/weir/weir.yaml").is_file()


@pytest.mark.skipif(not shutil.which("man"), reason="man-db is not installed")
def test_every_man_page_renders_the_help(dest):
    man1 = dest / "usr/share/man/man1"
    for page in sorted(man1.iterdir()):
        rc, text, err = render(page, 100)
        assert rc == 0 and not err.strip(), (page.name, err)
        assert "NAME" in text and "SEE ALSO" in text, page.name
    # the text is the help's own: every usage line of `weir help dags` is in its page
    dags = render(man1 / "weir-dags.1", 200)[1]
    helptext = subprocess.run([WEIR_BIN, "help", "dags"], stdout=subprocess.PIPE,
                              text=True).stdout
    for line in helptext.splitlines():
        if line.startswith("usage:"):
            assert line[len("usage: "):] in dags


def test_installed_weir_runs_with_its_python_package(dest, tmp_path):
    weir = str(dest / "usr/bin/weir")
    env = {k: v for k, v in os.environ.items()
           if k not in ("WEIR_PYTHON_DIR", "PYTHONPATH", "WEIR_BIN")}
    out = subprocess.run([weir, "--version"], stdout=subprocess.PIPE, text=True, env=env,
                         check=True).stdout
    assert re.match(r"weir \d+\.\d+\.\d+", out), out
    prog = tmp_path / "where.py"
    prog.write_text("import ray, weir\nprint(weir.__file__)\nprint(ray.__file__)\n")
    done = subprocess.run([weir, "run", str(prog)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    pkg = os.path.realpath(dest / "usr/share/weir/python")
    lines = done.stdout.split()
    assert len(lines) == 2 and all(os.path.realpath(p).startswith(pkg + "/") for p in lines), \
        done.stdout
    # the installed `airflow` finds the same package
    done = subprocess.run([str(dest / "usr/bin/airflow"), "version"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env, timeout=60)
    assert done.returncode == 0 and "(weir " in done.stdout, (done.stdout, done.stderr)


UNITS = ("weir-server.service", "weir-agent.service")


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="no systemd-analyze")
def test_the_units_verify(dest, tmp_path):
    # ExecStart must name an existing program: the units with the DESTDIR's paths, side by
    # side (the server's wants the agent's)
    paths = []
    for name in UNITS:
        text = (dest / "usr/lib/systemd/system" / name).read_text()
        unit = tmp_path / name
        unit.write_text(text.replace("/usr/bin/weir", str(dest / "usr/bin/weir")))
        paths.append(str(unit))
        assert "KillMode=process" in text and "Restart=on-failure" in text and \
            "User=weir" in text, name
    done = subprocess.run(["systemd-analyze", "verify", "--man=no"] + paths,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout
    server = (tmp_path / UNITS[0]).read_text()
    assert re.search(r"^Wants=.*\bweir-agent\.service\b", server, re.M), server
    assert re.search(r"^After=.*\bweir-agent\.service\b", server, re.M), server


def unit_command(dest, name, home):
    """The unit's ExecStart, with the DESTDIR's programs and configuration and `home`."""
    text = (dest / "usr/lib/systemd/system" / name).read_text()
    cmd = shlex.split(re.search(r"^ExecStart=(.*)$", text, re.M).group(1))
    return [str(dest / a.lstrip("/")) if a.startswith("/usr/bin/") else
            str(home) if a == "/var/lib/weir" else
            str(dest / "etc/weir/weir.yaml") if a == "/etc/weir/weir.yaml" else a for a in cmd]


def start_server(dest, home, log, config=None):
    """The server as its unit starts it (`config`: another configuration file)."""
    cmd = unit_command(dest, UNITS[0], home)
    if config:
        cmd = [str(config) if a == str(dest / "etc/weir/weir.yaml") else a for a in cmd]
    with open(log, "a") as f:
        proc = subprocess.Popen(cmd + ["--listen", "127.0.0.1:0"],
                                stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
    url = wait_for(lambda: proc.poll() is None and
                   re.findall(r"listening on (http://[0-9.:]+)", log.read_text())[start_server.n:],
                   30, "the installed server's start line")[0]
    start_server.n += 1
    return proc, url


start_server.n = 0


def stop(proc, log):
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0, log.read_text()


def test_the_server_starts_with_the_units_command_line(dest, tmp_path):
    log = tmp_path / "server.log"
    start_server.n = 0
    proc, url = start_server(dest, tmp_path / "home", log)
    try:
        with urllib.request.urlopen(url + "/api/v1/health", timeout=10) as r:
            assert r.status == 200
    finally:
        stop(proc, log)


def call(url, home, method, path, body=None):
    token = (home / "token").read_text().strip()
    req = urllib.request.Request(url + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Authorization": "Bearer " + token,
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read().decode())


def agent_pid(dest, home):
    done = subprocess.run([str(dest / "usr/bin/weir"), "agent", "status", "--json", "--home",
                           str(home)], stdout=subprocess.PIPE, text=True)
    return done.returncode == 0 and json.loads(done.stdout)["agent_pid"]


def test_the_agents_unit_serves_the_server_and_keeps_tasks_across_its_restart(dest, tmp_path):
    """The agent started as its unit starts it (no systemd as PID 1 needed): the server
    started with its unit's command line uses it rather than starting one; a task runs under
    it while the server is restarted (its result recorded by the next server); the agent
    stays when the server says goodbye, and ends at SIGTERM with 0 (Restart=on-failure)."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    agent_log = tmp_path / "agent.log"
    with open(agent_log, "w") as f:
        agent = subprocess.Popen(unit_command(dest, UNITS[1], home), stdout=f,
                                 stderr=subprocess.STDOUT, start_new_session=True,
                                 env=dict(PATH=os.environ["PATH"], WEIR_HOME=str(home)))
    log = tmp_path / "server.log"
    # tasks as the tests' user, who can enter the temporary home (as the other tests do)
    config = tmp_path / "weir.yaml"
    config.write_text(with_task_user((dest / "etc/weir/weir.yaml").read_text()))
    start_server.n = 0
    server = None
    try:
        wait_for(lambda: agent_pid(dest, home) == agent.pid, 30, "the unit's agent to answer")
        server, url = start_server(dest, home, log, config)
        go = tmp_path / "go"
        job = call(url, home, "POST", "/api/v1/jobs", {
            "name": "across", "roles": {"w": {"command": "while [ ! -e %s ]; do sleep 0.05; "
                                                         "done; echo done-here" % go}}})
        wait_for(lambda: call(url, home, "GET", "/api/v1/jobs/%d" % job["id"])["state"] ==
                 "running", 30, "the job to run")
        status = json.loads(subprocess.run(
            [str(dest / "usr/bin/weir"), "agent", "status", "--json", "--home", str(home)],
            stdout=subprocess.PIPE, text=True, check=True).stdout)
        assert status["agent_pid"] == agent.pid and \
            [t["key"] for t in status["tasks"]] == ["%d.w.0.1" % job["id"]], status
        stop(server, log)  # the server says goodbye; the agent, holding a task, stays
        server, url = start_server(dest, home, log, config)
        go.touch()
        end = wait_for(lambda: (lambda j: j["state"] in ("succeeded", "failed", "killed") and j)(
            call(url, home, "GET", "/api/v1/jobs/%d" % job["id"])), 60, "the job's end")
        assert end["state"] == "succeeded", (end, log.read_text(), agent_log.read_text())
        stop(server, log)
        server = None
        # --stay: idle and without a server, the unit's agent is still there
        assert agent.poll() is None and agent_pid(dest, home) == agent.pid, \
            agent_log.read_text()
    finally:
        if server is not None:
            server.kill()
            server.wait(10)
        if agent.poll() is None:
            agent.send_signal(signal.SIGTERM)
    assert agent.wait(timeout=30) == 0, agent_log.read_text()


def test_uninstall_leaves_only_the_configuration(tmp_path):
    root = tmp_path / "d"
    make("install", "DESTDIR=%s" % root, "INSTALL_UNITS=1")
    make("uninstall", "DESTDIR=%s" % root)
    left = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert left == ["etc/weir/weir.yaml"], left
