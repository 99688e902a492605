"""A DAG's `dagrun_timeout` (issue 27; docs/dags.md): a run that runs longer than it, from
its start, fails with the reason `timed_out`; its unfinished task instances become skipped
and the running ones' processes are killed; the DAG's on_failure delivery (a Python DAG's
on_failure_callback, with `reason="timed_out"`) runs. A run that ends in time is untouched, a
server restarted after a deadline passed times the run out at once, and a bad value is an
import error naming the field. Nothing here sleeps to synchronise: each step waits for the
event it checks (the task's process gone, the run failed, the callback's line)."""

import json
import os
import sys
import time
from datetime import datetime

from conftest import wait_for
from dagtest import Dags, dag_config, make_dags  # noqa: F401  (the fixture)
from test_airflow_dags import wait_import_error


def yaml_dag(d, dag_id, timeout):
    """first -> waits (on a file never made) -> after, and a run-level on_failure command
    that records the run's reason."""
    wait = ('echo $$ > %s/pid; while [ ! -f %s/never ]; do sleep 0.2; done'
            % (d.side, d.side))
    return json.dumps({
        "dag_id": dag_id, "dagrun_timeout": timeout,
        "on_failure": [{"command": "sh -c 'echo \"$WEIR_REASON\" >> %s/reasons'" % d.side}],
        "tasks": [{"task_id": "first", "command": "true"},
                  {"task_id": "waits", "command": wait, "depends_on": ["first"]},
                  {"task_id": "after", "command": "true", "depends_on": ["waits"]}]})


def pid_of(d):
    """The waiting task's process id, once it wrote it."""
    lines = d.side_lines("pid")
    return int(lines[0]) if lines and lines[0].strip() else None


def gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return None


def check_timed_out(d, dag_id, run_id):
    run = d.wait_run(dag_id, run_id, timeout=120)
    assert run["state"] == "failed", run
    tis = d.tis(dag_id, run_id)
    states = {k: t["state"] for k, t in tis.items()}
    assert states == {"first": "success", "waits": "skipped", "after": "skipped"}, tis
    return run


def test_yaml_run_times_out_while_a_task_waits(make_dags):
    d = make_dags()
    d.write("t.yaml", yaml_dag(d, "to_yaml", "8s"))
    d.write("ok.yaml", json.dumps({"dag_id": "in_time", "dagrun_timeout": "1h",
                                   "tasks": [{"task_id": "quick", "command": "true"}]}))
    d.wait_dag("to_yaml")
    d.wait_dag("in_time")
    assert d.get("/dags/to_yaml/details")["dag_run_timeout"] == {
        "__type": "TimeDelta", "days": 0, "seconds": 8, "microseconds": 0}
    assert d.get("/dags/in_time/details")["dag_run_timeout"]["seconds"] == 3600
    d.trigger("to_yaml", run_id="r1")
    pid = wait_for(lambda: pid_of(d), 60, "the waiting task's process")
    check_timed_out(d, "to_yaml", "r1")
    wait_for(lambda: gone(pid), 60, "the waiting task's process killed")
    wait_for(lambda: d.side_lines("reasons"), 60, "the run's on_failure delivery")
    assert d.side_lines("reasons") == ["timed_out"]
    assert d.run("to_yaml", "r1").get("reason", "timed_out") == "timed_out"

    # a run that ends in time is untouched
    d.trigger("in_time", run_id="fast")
    run = d.wait_run("in_time", "fast")
    assert run["state"] == "success", run
    assert d.tis("in_time", "fast")["quick"]["state"] == "success"


def test_server_restarted_after_the_deadline_times_the_run_out(make_dags):
    d = make_dags()
    d.write("t.yaml", yaml_dag(d, "to_restart", "1h"))
    d.wait_dag("to_restart")
    d.trigger("to_restart", run_id="r1")
    pid = wait_for(lambda: pid_of(d), 60, "the waiting task's process")
    started = datetime.fromisoformat(d.run("to_restart", "r1")["start_date"].replace(
        "Z", "+00:00")).timestamp()
    d.srv.kill9()
    # while the server is down the DAG comes to time its runs out after a second, and that
    # second passes: the restarted server finds the deadline gone by
    d.write("t.yaml", yaml_dag(d, "to_restart", 1))
    wait_for(lambda: time.time() > started + 1.5 or None, 30, "the run's deadline passed")
    d.srv.start()
    check_timed_out(d, "to_restart", "r1")
    wait_for(lambda: gone(pid), 60, "the waiting task's process killed")
    wait_for(lambda: d.side_lines("reasons"), 60, "the run's on_failure delivery")
    assert d.side_lines("reasons") == ["timed_out"]


def test_bad_values_are_import_errors_naming_the_field(make_dags):
    d = make_dags()
    d.write("bad.yaml", json.dumps({"dag_id": "bad", "dagrun_timeout": "soon",
                                    "tasks": [{"task_id": "a", "command": "true"}]}))
    d.write("zero.yaml", json.dumps({"dag_id": "zero", "dagrun_timeout": 0,
                                     "tasks": [{"task_id": "a", "command": "true"}]}))
    for name in ("bad.yaml", "zero.yaml"):
        err = wait_import_error(d, name)
        assert "dagrun_timeout" in err["stack_trace"], err


def airflow_server(make_server, tmp_path):
    srv = make_server(config=dag_config(), start=False)
    srv.extra_env["WEIR_AIRFLOW_PYTHON"] = sys.executable
    return Dags(srv, tmp_path)


def test_airflow_dagrun_timeout_and_the_callbacks_reason(make_server, tmp_path):
    d = airflow_server(make_server, tmp_path)
    d.write("run_timeout.py", d.text("airflow/run_timeout.py", TIMEOUT=8))
    d.srv.start()
    d.wait_dag("py_timeout")
    d.wait_dag("py_in_time")
    d.trigger("py_timeout", run_id="r1")
    pid = wait_for(lambda: pid_of(d), 60, "the waiting task's process")
    check_timed_out(d, "py_timeout", "r1")
    wait_for(lambda: gone(pid), 60, "the waiting task's process killed")
    wait_for(lambda: d.side_lines("dag_callbacks"), 60, "the DAG's on_failure_callback")
    assert [json.loads(x) for x in d.side_lines("dag_callbacks")] == \
        [["py_timeout", "timed_out", "r1"]]

    d.trigger("py_in_time", run_id="fast")
    run = d.wait_run("py_in_time", "fast")
    assert run["state"] == "success", run


def test_airflow_bad_dagrun_timeout_is_an_import_error(make_server, tmp_path):
    d = airflow_server(make_server, tmp_path)
    d.write("bad_timeout.py", d.text("airflow/run_timeout.py", TIMEOUT=8).replace(
        "timedelta(seconds=8)", '"soon"'))
    d.srv.start()
    err = wait_import_error(d, "bad_timeout.py")
    assert "dagrun_timeout" in err["stack_trace"], err
