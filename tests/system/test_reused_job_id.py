"""A job id handed out again after a power cut lost the turns that gave it out first.

With synchronous=NORMAL a power cut may lose the store's last turns (docs/internals/recovery.md,
"A power cut"), among them a job's submission and start while its task runs on under the node's
agent; the next job submitted gets the same id, so the same task key (JOB.ROLE.INDEX.ATTEMPT).
A job's nonce (random, stored in its row, carried in every start and report) tells the two
apart: the agent kills the task of the lost job and runs the new one, and nothing the old task
says is taken for the new job's.

No power cut is needed to make the case: the store is set back, while the server is stopped,
to a copy taken before the job's submission (a lost turn, as `cp` makes it), and the agent
(which outlives the server) still holds the task.  The agent's own handling of two starts under
one key is driven over its socket, as the server speaks to it.
"""

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import time

from conftest import WEIR_BIN, spec, wait_for


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone for this purpose
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def agent_gone(home):
    """Whether no agent holds the home's lock (one that said goodbye has exited)."""
    try:
        fd = os.open(str(home / "agent" / "lock"), os.O_RDWR)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def agent_holds(home, key):
    out = subprocess.run([WEIR_BIN, "agent", "status", "--json", "--home", str(home)],
                         capture_output=True, text=True).stdout
    try:
        return key in [t["key"] for t in json.loads(out)["tasks"]]
    except (ValueError, KeyError):
        return False


def test_a_job_given_a_lost_jobs_id_runs_and_the_lost_task_is_killed(make_server, tmp_path):
    srv = make_server()
    first = srv.submit(spec({"w": {"command": "true"}}, name="before"))
    assert srv.wait_job(first["id"])["state"] == "succeeded"
    srv.terminate()  # a clean stop: everything in weir.db (checkpointed)
    saved = tmp_path / "weir.db.before"
    shutil.copy(srv.home / "weir.db", saved)
    # the agent, told goodbye with nothing held, exits: the next server starts its own
    wait_for(lambda: agent_gone(srv.home), 30, "the agent to exit")

    srv.start()
    old_pid = tmp_path / "old.pid"
    lost = srv.submit(spec({"w": {"command": "echo lost-job-ran; echo $$ > %s; exec sleep 600"
                                       % old_pid}}, name="lost"))
    srv.wait_job(lost["id"], states=("running",))
    pid = int(wait_for(lambda: old_pid.exists() and old_pid.read_text().strip(), 30,
                       "the lost job's program to start"))
    assert agent_holds(srv.home, "%d.w.0.1" % lost["id"]), "the task is not the agent's"
    # the turns since the copy are lost, as a power cut loses them; the agent and the task
    # run on
    srv.kill9()
    for suffix in ("", "-wal", "-shm"):
        p = srv.home / ("weir.db" + suffix)
        if p.exists():
            p.unlink()
    shutil.copy(saved, srv.home / "weir.db")
    assert pid_alive(pid)

    srv.start()
    new = srv.submit(spec({"w": {"command": "echo new-job-ran"}}, name="new"))
    assert new["id"] == lost["id"], "the store did not hand the lost id out again"
    end = srv.wait_job(new["id"], timeout=60)
    assert end["state"] == "succeeded", "%s: %s\n%s" % (end["state"], end["reason"],
                                                        srv.log_text())
    status, log = srv.api("GET", "/api/v1/jobs/%d/tasks/w/0/logs" % new["id"])
    assert status == 200 and "new-job-ran" in str(log), log
    # the lost job's folder was swept at the restart: nothing of it in the new job's log
    assert "lost-job-ran" not in str(log), log
    # the lost job's task is killed: the store does not know it
    wait_for(lambda: not pid_alive(pid), 30, "the lost job's program (pid %d) to be killed" % pid)
    assert "is of a job the store does not know" in srv.log_text() or \
        "of a job the server no longer knows" in (srv.home / "agent.log").read_text()
    # and nothing of it reached the new job: one attempt, its own end
    job = srv.job(new["id"])
    assert job["attempt"] == 1 and job["exit_code"] == 0, job


class AgentSocket:
    """The agent's socket, spoken to as the server does (exec/agent_proto.h)."""

    def __init__(self, home):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        wait_for(lambda: self._connect(home), 10, "the agent's socket")
        self.buf = b""

    def _connect(self, home):
        try:
            self.sock.connect(str(home / "agent.sock"))
            return True
        except OSError:
            return False

    def send(self, **msg):
        self.sock.sendall(json.dumps(msg).encode() + b"\n")

    def read_until(self, pred, timeout=30):
        """The messages read until one for which pred holds (that one last)."""
        seen = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                m = json.loads(line)
                seen.append(m)
                if pred(m):
                    return seen
            self.sock.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            assert data, "the agent closed the connection; saw %s" % seen
            self.buf += data
        raise AssertionError("timed out; the agent said: %s" % json.dumps(seen, indent=1))


def answer(job, command, workdir, log):
    """A register answer as the server writes it (job_manager/answer.c)."""
    return {"job": job, "role": "w", "index": 0, "attempt": 1, "framework": "none",
            "command": command, "workdir": str(workdir), "log": str(log),
            "cache_dir": str(workdir), "env": {}, "memory_mb": 0, "vcores": 1,
            "gpu_count": 0, "gpus": "", "roles": [{"name": "w", "instances": 1,
                                                   "untracked": False, "sidecar": False}],
            "artifacts": [], "src_dir": "", "registration_timeout_s": 0,
            "execution_timeout_s": 0, "server_instance": "test", "cgroup": False}


def test_the_agent_kills_the_task_of_a_start_under_another_nonce(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, WEIR_AGENT_IDLE_S="5")
    for k in ("WEIR_TOKEN", "WEIR_SERVER"):
        env.pop(k, None)
    agent = subprocess.Popen([WEIR_BIN, "agent", "--home", str(home)], env=env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=open(tmp_path / "agent.log", "wb"), start_new_session=True)
    old_pid = tmp_path / "old.pid"
    try:
        a = AgentSocket(home)
        a.send(t="hello", version=2, env=["PATH=" + os.environ["PATH"]], kill_grace_s=1,
               mask=["not-a-token"])
        held = a.read_until(lambda m: m.get("t") == "held")[-1]
        assert held["version"] == 2 and held["tasks"] == []
        key = dict(job=7, role="w", index=0, attempt=1)
        work = tmp_path / "work"
        work.mkdir()
        a.send(t="start", nonce=111, log=str(tmp_path / "old.log"), log_to_server=False,
               task=answer(7, "echo $$ > %s; exec sleep 600" % old_pid, work,
                           tmp_path / "old.log"), **key)
        a.read_until(lambda m: m.get("t") == "started" and m.get("nonce") == 111)
        pid = int(wait_for(lambda: old_pid.exists() and old_pid.read_text().strip(), 30,
                           "the first task's program"))
        # the same key, another job (a lost turn's id handed out again)
        a.send(t="start", nonce=222, log=str(tmp_path / "new.log"), log_to_server=False,
               task=answer(7, "echo new-task-ran", work, tmp_path / "new.log"), **key)
        seen = a.read_until(lambda m: m.get("t") in ("exited", "lost") and m.get("nonce") == 222)
        end = seen[-1]
        assert end["t"] == "exited" and end.get("exit_code") == 0, seen
        assert "new-task-ran" in (tmp_path / "new.log").read_text()
        # nothing of the first task after the second start: no report under its nonce
        assert not [m for m in seen if m.get("nonce") == 111], seen
        wait_for(lambda: not pid_alive(pid), 10, "the first task's program to be killed")
        # the acknowledgement of the second's result, with its nonce, is the last word
        a.send(t="ack", keys=["7.w.0.1"], nonces=[222])

        def holds_nothing():
            a.send(t="status")
            return a.read_until(lambda m: m.get("t") == "status")[-1]["tasks"] == []
        # dropped once acknowledged and its shim is gone (back in the pool)
        wait_for(holds_nothing, 10, "the agent to forget the task")
        a.send(t="bye")
    finally:
        if agent.poll() is None:
            agent.send_signal(signal.SIGTERM)
            agent.wait(10)
        if old_pid.exists():
            try:
                os.kill(int(old_pid.read_text().strip()), signal.SIGKILL)
            except (OSError, ValueError):
                pass
