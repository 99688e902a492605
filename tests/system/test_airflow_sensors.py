"""Airflow's sensors in Python DAG files on a real server (docs/airflow.md, "Sensors"):
a FileSensor (and a deferrable one) waits in reschedule mode with no process, as weir's own
`sensor: file`, and a PythonSensor in reschedule mode with a process per poke and none
between; PythonSensor, BashSensor and `@task.sensor` poke in the task's process in poke
mode, in reschedule mode once a process; a PokeReturnValue's value read downstream; a timeout fails without a retry
(AirflowSensorTimeout), soft_fail skips; an ExternalTaskSensor waits for another Python
DAG's task; DateTimeSensor and TimeDeltaSensor wait for a near time.
"""

import os
import sys

from conftest import find_procs, wait_for
from dagtest import Dags, dag_config

HEAD = '''\
from datetime import datetime, timedelta
from airflow import DAG
from airflow.decorators import task
from airflow.operators.bash import BashOperator
from airflow.operators.python import PythonOperator
from airflow.sensors.base import PokeReturnValue
from airflow.sensors.bash import BashSensor
from airflow.sensors.date_time import DateTimeSensor
from airflow.sensors.external_task import ExternalTaskMarker, ExternalTaskSensor
from airflow.sensors.filesystem import FileSensor
from airflow.sensors.python import PythonSensor
from airflow.sensors.time_delta import TimeDeltaSensor

SIDE = "@SIDE@"


def count(name):
    """One more poke of `name`: how many so far (kept in a side file)."""
    path = SIDE + "/" + name
    try:
        n = int(open(path).read()) + 1
    except FileNotFoundError:
        n = 1
    open(path, "w").write(str(n))
    return n


def note(name, text):
    with open(SIDE + "/" + name, "a") as f:
        f.write(str(text) + "\\n")
'''

FILES = HEAD + '''
import os


def go():
    """A poke in Python: its process's pid noted, met once the test wrote in/go."""
    note("py_pids", os.getpid())
    return os.path.exists(SIDE + "/in/go")


with DAG("af_files", schedule=None, start_date=datetime(2024, 1, 1), catchup=False):
    py_wait = PythonSensor(task_id="py_wait", python_callable=go, mode="reschedule",
                           poke_interval=0.2)
    wait = FileSensor(task_id="wait", filepath=SIDE + "/in/*.csv", mode="reschedule",
                      poke_interval=0.2)
    later = FileSensor(task_id="later", filepath=SIDE + "/in/done", deferrable=True,
                       poke_interval=timedelta(milliseconds=200))
    after = BashOperator(task_id="after", bash_command="echo ok > " + SIDE + "/after")
    wait >> later >> after
    py_wait >> after
'''

PY = HEAD + '''
def third(name):
    return count(name) >= 3


with DAG("af_python", schedule=None, start_date=datetime(2024, 1, 1), catchup=False):
    poke = PythonSensor(task_id="poke", python_callable=third, op_args=["poke_mode"],
                        poke_interval=0.1)
    resched = PythonSensor(task_id="resched", python_callable=third,
                           op_kwargs={"name": "resched_mode"}, poke_interval=0.1,
                           mode="reschedule")

    @task.sensor(poke_interval=0.1, timeout=60, mode="reschedule")
    def ready():
        n = count("decorated")
        return PokeReturnValue(is_done=n >= 2, xcom_value={"pokes": n})

    @task
    def use(got):
        note("used", got["pokes"])

    bash = BashSensor(task_id="bash", poke_interval=0.1,
                      bash_command="test -e " + SIDE + "/flag || { touch " + SIDE
                      + "/flag; exit 1; }")
    near = DateTimeSensor(task_id="near", poke_interval=0.1,
                          target_time="{{ (logical_date + macros.timedelta(seconds=1))"
                                      ".isoformat() }}")
    delta = TimeDeltaSensor(task_id="delta", delta=timedelta(seconds=1), poke_interval=0.1)
    [poke, resched, use(ready()), bash, near, delta]
'''

TIMEOUTS = HEAD + '''
with DAG("af_timeouts", schedule=None, start_date=datetime(2024, 1, 1), catchup=False,
         default_args={"retries": 2, "retry_delay": timedelta(seconds=0)}):
    never = PythonSensor(task_id="never", python_callable=lambda: count("never") < 0,
                         poke_interval=0.1, timeout=0.5)
    soft = PythonSensor(task_id="soft", python_callable=lambda: False, poke_interval=0.1,
                        timeout=0.5, soft_fail=True)
    py_soft = PythonSensor(task_id="py_soft", python_callable=lambda: False,
                           poke_interval=0.1, timeout=0.5, soft_fail=True, mode="reschedule")
    py_never = PythonSensor(task_id="py_never", python_callable=lambda: False,
                            poke_interval=0.1, timeout=0.5, deferrable=True)
    file_soft = FileSensor(task_id="file_soft", filepath=SIDE + "/nothing", timeout=0.5,
                           poke_interval=0.1, soft_fail=True, mode="reschedule")
'''

UP = HEAD + '''
with DAG("af_up", schedule=None, start_date=datetime(2024, 1, 1), catchup=False):
    produce = PythonOperator(task_id="produce", python_callable=lambda: note("produced", 1))
    marker = ExternalTaskMarker(task_id="marker", external_dag_id="af_down",
                                external_task_id="wait")
    produce >> marker
'''

DOWN = HEAD + '''
with DAG("af_down", schedule=None, start_date=datetime(2024, 1, 1), catchup=False):
    ExternalTaskSensor(task_id="wait", external_dag_id="af_up", external_task_id="produce",
                       poke_interval=0.2, mode="reschedule")
'''


def server(make_server, tmp_path, files):
    srv = make_server(config=dag_config(), start=False)
    srv.extra_env["WEIR_AIRFLOW_PYTHON"] = sys.executable  # jinja2 is there
    d = Dags(srv, tmp_path)
    for name, text in files.items():
        d.write(name, text.replace("@SIDE@", str(d.side)))
    srv.start()
    return d


def ti_when(d, dag_id, run, task_id, pred, what, timeout=60):
    return wait_for(lambda: (lambda ti: ti if pred(ti) else None)(
        d.tis(dag_id, run)[task_id]), timeout, what)


def test_file_sensors_wait_without_a_process(make_server, tmp_path):
    d = server(make_server, tmp_path, {"files.py": FILES})
    d.wait_dag("af_files")
    tasks = {t["task_id"]: t for t in d.get("/dags/af_files/tasks")["tasks"]}
    assert tasks["wait"]["class_ref"]["class_name"] == "FileSensor", tasks["wait"]
    run = d.trigger("af_files")["dag_run_id"]
    ti = ti_when(d, "af_files", run, "wait", lambda t: t["state"] == "up_for_reschedule"
                 and "poke 2" in str(t), "two pokes of wait")
    # the server pokes: no job, no process of the task's
    assert not find_procs(str(d.side / "in"))  # no weir task-sensor either
    # a poke in Python waits the same way: a process per poke, none between them
    ti = ti_when(d, "af_files", run, "py_wait", lambda t: t["state"] == "up_for_reschedule"
                 and "poke 2" in str(t), "two pokes of py_wait")
    assert ti["try_number"] == 1, ti
    pids = [int(p) for p in d.side_lines("py_pids")]
    assert len(set(pids)) >= 2, pids
    assert not any(os.path.exists("/proc/%d" % p) for p in pids[:2]), pids
    (d.side / "in").mkdir()
    (d.side / "in" / "day.csv").write_text("a,b\n")
    # the deferrable one waits in reschedule mode too
    ti = ti_when(d, "af_files", run, "later", lambda t: t["state"] == "up_for_reschedule",
                 "later waiting")
    assert d.tis("af_files", run)["wait"]["state"] == "success"
    (d.side / "in" / "done").write_text("")
    (d.side / "in" / "go").write_text("")
    assert d.wait_run("af_files", run)["state"] == "success", d.tis("af_files", run)
    assert d.side_lines("after") == ["ok"]


def test_sensors_that_poke_in_python(make_server, tmp_path):
    d = server(make_server, tmp_path, {"py.py": PY})
    d.wait_dag("af_python")
    run = d.trigger("af_python")["dag_run_id"]
    assert d.wait_run("af_python", run)["state"] == "success", d.tis("af_python", run)
    tis = d.tis("af_python", run)
    for t in ("poke", "resched", "ready", "bash", "near", "delta"):
        assert tis[t]["state"] == "success" and tis[t]["try_number"] == 1, tis[t]
    # the third poke met, in one try (the process looped)
    assert d.side_lines("poke_mode") == ["3"] and d.side_lines("resched_mode") == ["3"]
    assert d.side_lines("used") == ["2"]
    x = d.get("/dags/af_python/dagRuns/%s/taskInstances/ready/xcomEntries/return_value"
              "?stringify=false" % run)
    assert x["value"] == {"pokes": 2}, x
    assert "poke 1: not yet" in d.log("af_python", run, "bash")


def test_a_timeout_fails_without_a_retry_and_soft_fail_skips(make_server, tmp_path):
    d = server(make_server, tmp_path, {"timeouts.py": TIMEOUTS})
    d.wait_dag("af_timeouts")
    run = d.trigger("af_timeouts")["dag_run_id"]
    assert d.wait_run("af_timeouts", run)["state"] == "failed"
    tis = d.tis("af_timeouts", run)
    assert tis["never"]["state"] == "failed" and tis["never"]["try_number"] == 1, tis["never"]
    assert "AirflowSensorTimeout" in d.log("af_timeouts", run, "never")
    assert tis["soft"]["state"] == "skipped" and tis["soft"]["try_number"] == 1, tis["soft"]
    assert tis["file_soft"]["state"] == "skipped", tis["file_soft"]
    # in reschedule mode the server counts the timeout
    assert tis["py_soft"]["state"] == "skipped", tis["py_soft"]
    assert tis["py_never"]["state"] == "failed" and tis["py_never"]["try_number"] == 1, \
        tis["py_never"]
    assert "timed out" in str(tis["py_never"]), tis["py_never"]


def test_external_task_sensor_waits_for_another_python_dag(make_server, tmp_path):
    d = server(make_server, tmp_path, {"up.py": UP, "down.py": DOWN})
    d.wait_dag("af_up")
    d.wait_dag("af_down")
    when = "2026-03-01T00:00:00+00:00"
    run = d.trigger("af_down", logical_date=when)["dag_run_id"]
    ti_when(d, "af_down", run, "wait", lambda t: t["state"] == "up_for_reschedule"
            and "poke 2" in str(t), "waiting for af_up")
    up = d.trigger("af_up", logical_date=when)["dag_run_id"]
    assert d.wait_run("af_up", up)["state"] == "success", d.tis("af_up", up)
    assert d.wait_run("af_down", run)["state"] == "success"
    assert d.side_lines("produced") == ["1"]
    # a recursive clear of produce with its downstream goes through the marker to af_down's
    # wait, in its run of the same logical date (Airflow's "Recursive")
    ask = {"dag_run_id": up, "task_ids": ["produce"], "include_downstream": True,
           "only_failed": False, "dry_run": True}
    status, body = d.srv.api("POST", "/api/v1/dags/af_up/clearTaskInstances", ask)
    assert status == 200, body
    assert sorted(t["task_id"] for t in body["task_instances"]) == ["marker", "produce"], body
    status, body = d.srv.api("POST", "/api/v1/dags/af_up/clearTaskInstances",
                             dict(ask, include_subdags=True, dry_run=False))
    assert status == 200, body
    got = sorted((t["dag_id"], t["task_id"], t["dag_run_id"]) for t in body["task_instances"])
    assert got == [("af_down", "wait", run), ("af_up", "marker", up),
                   ("af_up", "produce", up)], body
    # both run again: produce a second time, and the sensor waits for it
    ti_when(d, "af_down", run, "wait", lambda t: t["try_number"] == 2
            and t["state"] == "success", "af_down's wait met again")
    ti_when(d, "af_up", up, "marker", lambda t: t["try_number"] == 2
            and t["state"] == "success", "af_up's marker run again")
    assert d.side_lines("produced") == ["1", "1"]


UP_MANY = HEAD + '''
from airflow.exceptions import AirflowSkipException
from airflow.utils.task_group import TaskGroup


def skip():
    raise AirflowSkipException("nothing today")


def boom():
    raise ValueError("boom")


with DAG("af_up_many", schedule=None, start_date=datetime(2024, 1, 1), catchup=False,
         default_args={"retries": 0}):
    a = PythonOperator(task_id="a", python_callable=lambda: note("up", "a"))
    b = BashOperator(task_id="b", bash_command="true")
    with TaskGroup("load") as load:
        BashOperator(task_id="x", bash_command="true")
        BashOperator(task_id="y", bash_command="true")
    a >> load
    PythonOperator(task_id="skipme", python_callable=skip)
    b >> PythonOperator(task_id="boom", python_callable=boom)
'''

DOWN_MANY = HEAD + '''
def wait(**kw):
    return ExternalTaskSensor(external_dag_id="af_up_many", poke_interval=0.2,
                              mode="reschedule", **kw)


with DAG("af_down_many", schedule=None, start_date=datetime(2024, 1, 1), catchup=False,
         default_args={"retries": 0}):
    wait(task_id="both", external_task_ids=["a", "b"])
    wait(task_id="group", external_task_group_id="load")
    wait(task_id="skipped", external_task_id="skipme", skipped_states=["skipped"])
    wait(task_id="failed", external_task_ids=["a", "boom"], failed_states=["failed"])
    wait(task_id="soft", external_task_ids=["boom"], failed_states=["failed"],
         soft_fail=True)
    wait(task_id="nope", external_task_ids=["a", "nope"], check_existence=True)

with DAG("af_later", schedule=None, start_date=datetime(2024, 1, 1), catchup=False):
    ExternalTaskSensor(task_id="hour_before", external_dag_id="af_up_many",
                       external_task_group_id="load", execution_delta=timedelta(hours=1),
                       poke_interval=0.2, mode="reschedule")
'''


def test_external_task_sensor_on_several_tasks_and_a_group(make_server, tmp_path):
    d = server(make_server, tmp_path, {"up.py": UP_MANY, "down.py": DOWN_MANY})
    for dag in ("af_up_many", "af_down_many", "af_later"):
        d.wait_dag(dag)
    when = "2026-03-01T00:00:00+00:00"
    run = d.trigger("af_down_many", logical_date=when)["dag_run_id"]
    later = d.trigger("af_later", logical_date="2026-03-01T01:00:00+00:00")["dag_run_id"]
    ti_when(d, "af_down_many", run, "both", lambda t: t["state"] == "up_for_reschedule"
            and "poke 2" in str(t), "waiting for af_up_many")
    # check_existence: a task the other DAG does not have fails at the first poke
    ti = ti_when(d, "af_down_many", run, "nope", lambda t: t["state"] == "failed",
                 "nope failed")
    assert "The external task nope in DAG af_up_many does not exist." in str(ti), ti
    up = d.trigger("af_up_many", logical_date=when)["dag_run_id"]
    assert d.wait_run("af_up_many", up)["state"] == "failed", d.tis("af_up_many", up)
    assert d.wait_run("af_down_many", run)["state"] == "failed"
    tis = d.tis("af_down_many", run)
    assert tis["both"]["state"] == "success", tis["both"]
    assert tis["group"]["state"] == "success", tis["group"]
    assert tis["skipped"]["state"] == "skipped", tis["skipped"]
    assert tis["failed"]["state"] == "failed" and "boom is failed" in str(tis["failed"]), \
        tis["failed"]
    assert tis["soft"]["state"] == "skipped", tis["soft"]
    # execution_delta: the run an hour later waits for this one's group
    assert d.wait_run("af_later", later)["state"] == "success", d.tis("af_later", later)


CYCLE = HEAD + '''
for me, other in (("af_ping", "af_pong"), ("af_pong", "af_ping")):
    with DAG(me, schedule=None, start_date=datetime(2024, 1, 1), catchup=False):
        BashOperator(task_id="work", bash_command="true") >> ExternalTaskMarker(
            task_id="mark", external_dag_id=other, external_task_id="work",
            recursion_depth=3)
'''


def test_a_recursive_clear_stops_at_the_markers_depth(make_server, tmp_path):
    d = server(make_server, tmp_path, {"cycle.py": CYCLE})
    when = "2026-03-01T00:00:00+00:00"
    runs = {}
    for dag in ("af_ping", "af_pong"):
        d.wait_dag(dag)
        runs[dag] = d.trigger(dag, logical_date=when)["dag_run_id"]
        assert d.wait_run(dag, runs[dag])["state"] == "success"
    ask = {"dag_run_id": runs["af_ping"], "task_ids": ["work"], "include_downstream": True,
           "include_subdags": True, "only_failed": False}
    for dry in (True, False):
        status, body = d.srv.api("POST", "/api/v1/dags/af_ping/clearTaskInstances",
                                 dict(ask, dry_run=dry))
        assert status == 400, body
        assert "Maximum recursion depth 3 reached for ExternalTaskMarker mark" in str(body), \
            body
    # nothing was cleared, as Airflow finds the whole reach before it clears
    assert {t["state"] for t in d.tis("af_ping", runs["af_ping"]).values()} == {"success"}
