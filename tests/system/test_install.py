"""`make install` into a temporary DESTDIR (docs/install.md): the tree it makes, every man page
rendered by man-db, the installed `weir` run from there (its version, `weir run` finding the
installed Python package), the systemd unit checked by systemd-analyze, and the server started
with the unit's own command line.  `make uninstall` then leaves no file behind.

The programs are the already built ones (the folder of $WEIR_BIN): nothing is compiled here."""

import os
import re
import shlex
import shutil
import signal
import subprocess
import urllib.request
from pathlib import Path

import pytest

from conftest import REPO, WEIR_BIN, wait_for

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


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="no systemd-analyze")
def test_the_unit_verifies(dest, tmp_path):
    # ExecStart must name an existing program: the unit with the DESTDIR's path
    text = (dest / "usr/lib/systemd/system/weir-server.service").read_text()
    unit = tmp_path / "weir-server.service"
    unit.write_text(text.replace("/usr/bin/weir", str(dest / "usr/bin/weir")))
    done = subprocess.run(["systemd-analyze", "verify", "--man=no", str(unit)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout
    assert "KillMode=process" in text and "Restart=on-failure" in text and "User=weir" in text


def test_the_server_starts_with_the_units_command_line(dest, tmp_path):
    text = (dest / "usr/lib/systemd/system/weir-server.service").read_text()
    cmd = shlex.split(re.search(r"^ExecStart=(.*)$", text, re.M).group(1))
    home = tmp_path / "home"
    cmd = [str(dest / "usr/bin/weir") if a == "/usr/bin/weir" else
           str(home) if a == "/var/lib/weir" else
           str(dest / "etc/weir/weir.yaml") if a == "/etc/weir/weir.yaml" else a for a in cmd]
    log = tmp_path / "server.log"
    with open(log, "w") as f:
        proc = subprocess.Popen(cmd + ["--listen", "127.0.0.1:0"], stdout=f,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = wait_for(lambda: re.search(r"listening on (http://[0-9.:]+)", log.read_text()),
                       30, "the installed server's start line").group(1)
        with urllib.request.urlopen(url + "/api/v1/health", timeout=10) as r:
            assert r.status == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, log.read_text()


def test_uninstall_leaves_only_the_configuration(tmp_path):
    root = tmp_path / "d"
    make("install", "DESTDIR=%s" % root, "INSTALL_UNITS=1")
    make("uninstall", "DESTDIR=%s" % root)
    left = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert left == ["etc/weir/weir.yaml"], left
