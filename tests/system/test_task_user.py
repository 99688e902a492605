"""Tasks and the server's user (docs/security.md): a server running as root starts its tasks
as `nobody`, or as `task_user`, so that a task cannot read the home (the API token, the
sealing key, the store); the home is 0711/0700 with its files 0600, an older home is
tightened at start; where tasks share the server's uid the start-up line says so.

The tests run as root.  Their homes live in a folder of /tmp open to passing through (0711),
not in pytest's folders (0700), which no other user could enter."""

import os
import pwd
import shutil
import stat
import subprocess
import tempfile
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import DEFAULT_CONFIG, SERVER_USER, WEIR_BIN, spec, wait_for
from dagtest import Dags
from test_store_upgrade import load_home

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="starts tasks as other users: root")

NOBODY = pwd.getpwnam("nobody")

# What the task tries: its uid and groups, each secret of the home read (the error's name
# printed), the home listed, a file written in its working folder.
PROBE = r"""
import errno, os, sys
home = sys.argv[1]
print("uid=%d" % os.getuid())
print("groups=%s" % ",".join(str(g) for g in sorted(os.getgroups())))
for name in ("token", "secret.key", "weir.db"):
    try:
        with open(os.path.join(home, name), "rb") as f:
            f.read(1)
        print("%s: READ" % name)
    except OSError as e:
        print("%s: %s" % (name, errno.errorcode.get(e.errno, e.errno)))
try:
    os.listdir(home)
    print("home: LISTED")
except OSError as e:
    print("home: %s" % errno.errorcode.get(e.errno, e.errno))
with open("mine.txt", "w") as f:
    f.write("ok")
print("workdir: %s %s" % (os.getcwd(), open("mine.txt").read()))
print("umask=%03o" % os.umask(0o22))
"""


@pytest.fixture
def open_dir():
    """A folder under /tmp every user may pass through (0711), removed afterwards."""
    d = Path(tempfile.mkdtemp(prefix="weir-tu-", dir="/tmp"))
    d.chmod(0o711)
    (d / "probe.py").write_text(PROBE)
    (d / "probe.py").chmod(0o644)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def run_probe(srv, d):
    job = srv.submit(spec({"main": {"command": "python3 %s %s" % (d / "probe.py", srv.home)}},
                          name="probe"))
    job = srv.wait_job(job["id"], timeout=60)
    log = srv.log(job["id"], role="main")
    assert job["state"] == "succeeded", (job, log)
    lines = dict(line.split("=", 1) if "=" in line else line.split(": ", 1)
                 for line in log.splitlines() if "=" in line or ": " in line)
    return job, lines, log


def apart_server(make_server, d, config=DEFAULT_CONFIG, **env):
    srv = make_server(config=config, home=d / "home", start=False)
    srv.shared_task_user = False
    srv.extra_env.update(env)
    srv.start()
    return srv


@pytest.mark.parametrize("agent", ["1", "0"], ids=["agent", "launcher-process"])
def test_a_root_server_runs_tasks_as_nobody_apart_from_the_home(open_dir, make_server, agent):
    srv = apart_server(make_server, open_dir, WEIR_AGENT=agent)
    assert ("tasks run as user nobody (uid %d" % NOBODY.pw_uid) in srv.log_text()
    job, got, log = run_probe(srv, open_dir)
    print(log)
    assert got["uid"] == str(NOBODY.pw_uid), log
    for name in ("token", "secret.key", "weir.db"):
        assert got[name] == "EACCES", log
    assert got["home"] == "EACCES", log
    workdir = Path(got["workdir"].split()[0])
    assert got["workdir"].endswith(" ok") and workdir.parent.parent == srv.home / "jobs", log
    assert got["umask"] == "022", log
    st = os.lstat(workdir)
    assert (st.st_uid, mode(workdir)) == (NOBODY.pw_uid, 0o700)
    # the home passes tasks through to their folders and shows them nothing else
    assert mode(srv.home) == 0o711
    for name in ("token", "secret.key", "weir.db"):
        assert mode(srv.home / name) == 0o600, name
    assert mode(srv.home / "jobs") == 0o711
    assert mode(workdir.parent) == 0o711
    logs = list(workdir.parent.glob("*.log"))
    assert logs and all(mode(p) == 0o600 and os.lstat(p).st_uid == 0 for p in logs), logs


def test_a_task_user_runs_tasks_with_its_groups(open_dir, make_server):
    if not shutil.which("useradd") or not shutil.which("groupadd"):
        pytest.skip("no useradd here")
    tag = uuid.uuid4().hex[:8]
    user, group = "weirtu" + tag, "weirtg" + tag
    subprocess.run(["groupadd", group], check=True)
    try:
        subprocess.run(["useradd", "-M", "-N", "-G", group, "-s", "/bin/false", user],
                       check=True)
        try:
            pw = pwd.getpwnam(user)
            import grp
            extra = grp.getgrnam(group).gr_gid
            srv = apart_server(make_server, open_dir,
                               config=DEFAULT_CONFIG + "task_user: %s\n" % user)
            assert "tasks run as user %s (uid %d" % (user, pw.pw_uid) in srv.log_text()
            _, got, log = run_probe(srv, open_dir)
            print(log)
            assert got["uid"] == str(pw.pw_uid), log
            assert str(extra) in got["groups"].split(","), log
            assert got["token"] == "EACCES" and got["secret.key"] == "EACCES", log
            srv.terminate()
        finally:
            subprocess.run(["userdel", user], check=False)
    finally:
        subprocess.run(["groupdel", group], check=False)


def test_a_dag_task_of_another_user_writes_its_output(open_dir, make_server):
    srv = make_server(config=DEFAULT_CONFIG, home=open_dir / "home", start=False)
    srv.shared_task_user = False
    d = Dags(srv, open_dir)
    d.write("outs.yaml", """\
dag_id: outs
tasks:
  - task_id: a
    command: |
      id -u
      echo '{"k": "from-a"}' > "$WEIR_OUTPUT"
  - task_id: b
    depends_on: [a]
    command: echo b-{{ outputs.a.k }}
""")
    srv.start()
    d.wait_dag("outs")
    run = d.wait_run("outs", d.trigger("outs")["dag_run_id"])
    assert run["state"] == "success", (run, d.log("outs", run["dag_run_id"], "a"))
    assert str(NOBODY.pw_uid) in d.log("outs", run["dag_run_id"], "a").split()
    assert "b-from-a" in d.log("outs", run["dag_run_id"], "b")


def test_a_shared_uid_is_said_loudly_at_start(open_dir, make_server):
    # the fixture's servers run tasks as the server's own user (task_user: root)
    srv = make_server(home=open_dir / "home")
    text = srv.log_text()
    assert "WARNING: tasks run as the server's own user %s (uid 0)" % SERVER_USER in text, text
    assert "can read the home" in text
    _, got, log = run_probe(srv, open_dir)
    assert got["uid"] == "0" and got["token"] == "READ", log
    # the home is still its owner's alone
    assert mode(srv.home) == 0o700


def test_an_older_home_is_tightened_at_start(open_dir, make_server):
    home = open_dir / "home"
    # an older weir's home: its store (schema 3, jobs 1 to 10) and logs; a job folder the
    # store does not know would be a lost turn's, removed at the start (recovery.md)
    load_home(SimpleNamespace(home=home), open_dir / "side")
    job = home / "jobs" / "7"
    (job / "main-0.1").mkdir(parents=True)
    (home / "token").write_text("ab" * 32 + "\n")
    (job / "main-0.1.log").write_text("old output\n")
    (job / "main-0.1" / "kept.txt").write_text("a task's own file\n")
    (home / "agent.log").write_text("")
    for p, m in [(home, 0o755), (home / "token", 0o644), (home / "jobs", 0o755), (job, 0o755),
                 (job / "main-0.1.log", 0o644), (job / "main-0.1", 0o755),
                 (job / "main-0.1" / "kept.txt", 0o644), (home / "agent.log", 0o644)]:
        p.chmod(m)
    srv = apart_server(make_server, open_dir)
    assert srv.token == "ab" * 32
    assert mode(home) == 0o711
    for name in ("token", "secret.key", "weir.db", "agent.log"):
        assert mode(home / name) == 0o600, name
    assert mode(home / "jobs") == 0o711 and mode(job) == 0o711
    assert mode(job / "main-0.1.log") == 0o600
    # a task's working folder is its own business: not walked
    assert mode(job / "main-0.1") == 0o755 and mode(job / "main-0.1" / "kept.txt") == 0o644
    srv.terminate()
    # and a later start in the shared mode closes the home to everyone else
    srv.shared_task_user = True
    srv.start()
    assert mode(home) == 0o700


def run_server_once(args, config, user=None, timeout=30):
    cfg = Path(args[0]) / "c.yaml"
    cfg.write_text(config)
    cmd = [WEIR_BIN, "server", "--home", str(Path(args[0]) / "home"), "--listen",
           "127.0.0.1:0", "--config", str(cfg)]
    if user:
        cmd = ["setpriv", "--reuid=%d" % user.pw_uid, "--regid=%d" % user.pw_gid,
               "--clear-groups"] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def test_a_task_user_that_cannot_be_is_refused(open_dir):
    r = run_server_once([open_dir], DEFAULT_CONFIG + "task_user: no-such-user-here\n")
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert 'task_user: no user "no-such-user-here"' in r.stderr, r.stderr
    # a server that is not root cannot start tasks as another user
    if not shutil.which("setpriv"):
        pytest.skip("no setpriv here")
    os.chown(open_dir, NOBODY.pw_uid, NOBODY.pw_gid)
    r = run_server_once([open_dir], DEFAULT_CONFIG + "task_user: root\n", user=NOBODY)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "only a server running as root can start tasks as another user" in r.stderr, \
        r.stderr
