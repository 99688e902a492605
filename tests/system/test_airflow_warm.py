"""An Airflow DAG file's warm interpreter (docs/internals/airflow_warm.md): its Python tasks
are forked from a process that imported the file once, and end, fail, time out, keep their
memory limit and leave nothing behind as the tasks started cold do."""

import json
import os
import pwd
import shutil
import sys
import tempfile
from pathlib import Path

from conftest import cli_describe, wait_for
from dagtest import Dags, dag_config

CHAIN = '''\
import os
from datetime import datetime
from airflow import DAG
from airflow.models.baseoperator import chain
from airflow.operators.python import PythonOperator

IMPORTED_IN = os.getpid()  # the process that imported the file: the zygote's, warm
VERSION = %(version)d

def step(n, **kwargs):
    return {"n": n, "pid": os.getpid(), "imported_in": IMPORTED_IN, "version": VERSION}

def done(context):
    with open(%(side)r + "/success_" + context["task"].task_id, "w") as f:
        f.write(str(os.getpid()))

with DAG("warm_chain", description="v%(version)d", start_date=datetime(2024, 1, 1),
         schedule=None):
    chain(*[PythonOperator(task_id="t%%d" %% i, python_callable=step, op_args=[i],
                           on_success_callback=done) for i in range(3)])
'''

ENDINGS = '''\
import os, subprocess, time
from datetime import datetime, timedelta
from airflow import DAG
from airflow.exceptions import AirflowFailException, AirflowSkipException
from airflow.operators.python import PythonOperator

IMPORTED_IN = os.getpid()
SIDE = %(side)r

def note(name, text):
    with open(os.path.join(SIDE, name), "w") as f:
        f.write(text)

def hangs():
    # a child of its own too: neither may outlive the task
    child = subprocess.Popen(["sleep", "300"])
    note("hangs", "%%d %%d %%d" %% (os.getpid(), child.pid, IMPORTED_IN))
    time.sleep(300)

def failed(context):
    note("failed_" + context["task"].task_id, str(os.getpid()))

def skips():
    raise AirflowSkipException("not today")

def gives_up():
    raise AirflowFailException("no retry")

def greedy():
    note("greedy", "%%d %%d" %% (os.getpid(), IMPORTED_IN))
    hold = []
    for _ in range(64):  # 4 GiB in 64 MiB pieces, each touched: past the 512 MiB limit
        hold.append(bytearray(64 << 20))
    note("greedy_done", "allocated")

def flaky(ti):
    if ti.try_number == 1:
        raise ValueError("first try fails")
    return {"try": ti.try_number, "pid": os.getpid(), "imported_in": IMPORTED_IN}

with DAG("warm_killed", start_date=datetime(2024, 1, 1), schedule=None):
    PythonOperator(task_id="hangs", python_callable=hangs, on_failure_callback=failed)

with DAG("warm_endings", start_date=datetime(2024, 1, 1), schedule=None):
    PythonOperator(task_id="flaky", python_callable=flaky, retries=1,
                   retry_delay=timedelta(seconds=1))
    PythonOperator(task_id="hangs", python_callable=hangs, on_failure_callback=failed,
                   execution_timeout=timedelta(seconds=3))
    PythonOperator(task_id="skips", python_callable=skips)
    PythonOperator(task_id="gives_up", python_callable=gives_up, retries=2,
                   retry_delay=timedelta(seconds=1))
    PythonOperator(task_id="greedy", python_callable=greedy)
'''


def warm_server(make_server, tmp_path, env=None):
    srv = make_server(config=dag_config(), start=False)
    srv.extra_env["WEIR_AIRFLOW_PYTHON"] = sys.executable
    srv.extra_env.update(env or {})
    d = Dags(srv, tmp_path)
    srv.start()
    return d


def sockets(d):
    """The sockets of the home's warm interpreters."""
    try:
        return sorted(p.name for p in (d.srv.home / "airflow-warm").iterdir()
                      if p.name.endswith(".sock"))
    except FileNotFoundError:
        return []


def zygotes(d):
    """The sockets of the files' zygotes (not the root's, `any-...`)."""
    return [n for n in sockets(d) if not n.startswith("any-")]


def wait_root(d):
    """Waits for the root the DAG processor starts (a file's zygote comes at its first task)."""
    wait_for(lambda: [n for n in sockets(d) if n.startswith("any-")], 30, "the root")


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def xcom(d, dag_id, run_id, task):
    return d.get("/dags/%s/dagRuns/%s/taskInstances/%s/xcomEntries/return_value?stringify=false"
                 % (dag_id, run_id, task))["value"]


def run_chain(d):
    run = d.trigger("warm_chain")
    assert d.wait_run("warm_chain", run["dag_run_id"])["state"] == "success", \
        d.tis("warm_chain", run["dag_run_id"])
    return [xcom(d, "warm_chain", run["dag_run_id"], "t%d" % i) for i in range(3)]


def test_a_chain_runs_warm_and_a_changed_file_runs_its_new_code(make_server, tmp_path):
    d = warm_server(make_server, tmp_path)
    d.write("warm_chain.py", CHAIN % {"version": 1, "side": str(d.side)})
    d.wait_dag("warm_chain")
    wait_root(d)
    out = run_chain(d)
    assert [o["n"] for o in out] == [0, 1, 2] and {o["version"] for o in out} == {1}, out
    # every task forked from one process that imported the file once, still there
    zygote = out[0]["imported_in"]
    assert all(o["imported_in"] == zygote and o["pid"] != zygote for o in out), out
    assert alive(zygote)
    # the callbacks ran in the task's process, as cold
    assert [int(d.side_lines("success_t%d" % i)[0]) for i in range(3)] == \
        [o["pid"] for o in out]

    first = zygotes(d)
    assert len(first) == 1, first

    # a new version of the file: its runs run the new code; the old zygote leaves
    d.write("warm_chain.py", CHAIN % {"version": 22, "side": str(d.side)})
    d.wait_dag("warm_chain", pred=lambda dag: dag["description"] == "v22")
    out = run_chain(d)
    assert {o["version"] for o in out} == {22}, out
    wait_for(lambda: not alive(zygote), 30, "the old zygote's end")
    assert len({o["imported_in"] for o in out}) == 1 and out[0]["imported_in"] != zygote, out
    assert len(zygotes(d)) == 1 and zygotes(d) != first, zygotes(d)

    # the file removed: its zygote leaves, socket and all
    zygote = out[0]["imported_in"]
    os.unlink(d.dir / "warm_chain.py")
    wait_for(lambda: not alive(zygote), 30, "the deleted file's zygote's end")
    wait_for(lambda: not zygotes(d), 30, "its socket removed")


def test_warm_tasks_end_as_cold_ones(make_server, tmp_path):
    d = warm_server(make_server, tmp_path)
    d.write("warm_endings.py", ENDINGS % {"side": str(d.side)})
    d.wait_dag("warm_endings")
    wait_root(d)
    run = d.trigger("warm_endings")
    rid = run["dag_run_id"]
    d.wait_run("warm_endings", rid, timeout=120)
    tis = d.tis("warm_endings", rid)
    states = {t: ti["state"] for t, ti in tis.items()}
    assert states == {"hangs": "failed", "skips": "skipped", "gives_up": "failed",
                      "greedy": "failed", "flaky": "success"}, tis
    # a failed try is retried, warm again, and its return value kept
    out = xcom(d, "warm_endings", rid, "flaky")
    assert out["try"] == 2 and out["imported_in"] != out["pid"], out
    assert tis["flaky"]["try_number"] == 2, tis["flaky"]
    # no retry for AirflowFailException; the skip and the failure said so in their logs
    assert tis["gives_up"]["try_number"] == 1, tis["gives_up"]
    assert "AirflowSkipException (not today): skipped" in d.log("warm_endings", rid, "skips")
    assert "failed without a retry" in d.log("warm_endings", rid, "gives_up")

    # the timed-out task ran warm, got SIGTERM (its failure callback ran in it) and left
    # no process behind: neither itself nor its child
    task_pid, child_pid, zygote = (int(x) for x in d.side_lines("hangs")[0].split())
    assert task_pid != zygote
    # the TI failed at its timeout; its process runs the callback as it ends, maybe after
    wait_for(lambda: d.side_lines("failed_hangs"), 30, "the failure callback")
    assert int(d.side_lines("failed_hangs")[0]) == task_pid
    wait_for(lambda: not alive(task_pid) and not alive(child_pid), 30, "no orphan")

    # the memory limit held for the warm task: killed before its 4 GiB (the file's first
    # tasks started at once: each was forked from a fork of the root that imported the file)
    greedy_pid, zygote2 = (int(x) for x in d.side_lines("greedy")[0].split())
    assert greedy_pid != zygote2
    assert d.side_lines("greedy_done") == []
    assert not alive(greedy_pid)


def test_without_warm_interpreter_tasks_run_cold(make_server, tmp_path):
    d = warm_server(make_server, tmp_path, env={"WEIR_AIRFLOW_WARM_IDLE_S": "0"})
    d.write("warm_chain.py", CHAIN % {"version": 1, "side": str(d.side)})
    d.wait_dag("warm_chain")
    out = run_chain(d)
    assert all(o["imported_in"] == o["pid"] for o in out), out
    assert sockets(d) == []


def test_a_warm_task_killed_ends_as_a_cold_one(make_server, tmp_path):
    d = warm_server(make_server, tmp_path)
    d.write("warm_endings.py", ENDINGS % {"side": str(d.side)})
    d.wait_dag("warm_killed")
    wait_root(d)
    run = d.trigger("warm_killed")
    wait_for(lambda: d.side_lines("hangs"), 60, "the task running")
    task_pid, child_pid, zygote = (int(x) for x in d.side_lines("hangs")[0].split())
    assert task_pid != zygote and alive(task_pid)
    r = d.srv.cli("jobs", "list", "--json")
    assert r.returncode == 0, cli_describe(r)
    listed = json.loads(r.stdout)
    listed = listed.get("jobs", listed) if isinstance(listed, dict) else listed
    jobs = [j for j in listed if j["state"] == "running"]
    assert len(jobs) == 1, jobs
    r = d.srv.cli("jobs", "kill", jobs[0]["id"], timeout=60)
    assert r.returncode == 0, cli_describe(r)
    assert d.wait_run("warm_killed", run["dag_run_id"])["state"] == "failed"
    # SIGTERM first, raised in the task: its failure callback ran, in its own process
    wait_for(lambda: d.side_lines("failed_hangs"), 30, "the failure callback")
    assert int(d.side_lines("failed_hangs")[0]) == task_pid
    wait_for(lambda: not alive(task_pid) and not alive(child_pid), 30, "no orphan")
    assert alive(zygote)


def test_tasks_of_another_user_run_warm(make_server):
    """A root server whose tasks run as nobody: the root and the zygote are nobody's, in a
    folder of nobody's, and the tasks run warm in their cgroups."""
    nobody = pwd.getpwnam("nobody").pw_uid
    top = Path(tempfile.mkdtemp(prefix="weir-afw-", dir="/tmp"))
    try:
        top.chmod(0o711)  # pytest's folders (0700) are closed to other users
        srv = make_server(config=dag_config(), home=top / "home", start=False)
        srv.shared_task_user = False
        srv.extra_env["WEIR_AIRFLOW_PYTHON"] = sys.executable
        d = Dags(srv, top)
        d.side.chmod(0o777)
        d.write("warm_chain.py", CHAIN % {"version": 1, "side": str(d.side)})
        srv.start()
        d.wait_dag("warm_chain")
        wait_root(d)
        warm = srv.home / "airflow-warm"
        assert warm.stat().st_uid == nobody and warm.stat().st_mode & 0o777 == 0o700
        out = run_chain(d)
        zygote = out[0]["imported_in"]
        assert all(o["imported_in"] == zygote != o["pid"] for o in out), out
        assert os.stat("/proc/%d" % zygote).st_uid == nobody
    finally:
        shutil.rmtree(top, ignore_errors=True)
