"""Airflow's sensors in weir's `airflow` package without a server: each sensor as weir's DAG
document (_weir_airflow.sensors: the `sensor:` task weir pokes itself, or a task that pokes
in Python), what is refused and why, and BaseSensorOperator's poke loop (timeout, soft_fail,
PokeReturnValue, backoff) as Airflow runs it."""

import datetime as dt
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import REPO

SITE = REPO / "python" / "weir" / "compat" / "airflow" / "site"
sys.path.insert(0, str(SITE))

from airflow import DAG  # noqa: E402
from airflow.decorators import task  # noqa: E402
from airflow.exceptions import AirflowSensorTimeout, AirflowSkipException  # noqa: E402
from airflow.providers.common.sql.sensors.sql import SqlSensor  # noqa: E402
from airflow.providers.http.sensors.http import HttpSensor  # noqa: E402
from airflow.sensors.base import BaseSensorOperator, PokeReturnValue  # noqa: E402
from airflow.sensors.bash import BashSensor  # noqa: E402
from airflow.sensors.date_time import DateTimeSensor, DateTimeSensorAsync  # noqa: E402
from airflow.sensors.external_task import ExternalTaskMarker, ExternalTaskSensor  # noqa: E402
from airflow.sensors.filesystem import FileSensor  # noqa: E402
from airflow.sensors.python import PythonSensor  # noqa: E402
from airflow.sensors.sql import SqlSensor as OldSqlSensor  # noqa: E402
from airflow.sensors.time_delta import TimeDeltaSensor, TimeDeltaSensorAsync  # noqa: E402
from airflow.sensors.time_sensor import TimeSensor, TimeSensorAsync  # noqa: E402
from airflow.sensors.weekday import DayOfWeekSensor  # noqa: E402
from airflow.utils.weekday import WeekDay  # noqa: E402

from _weir_airflow.spec import SpecError, dag_to_spec  # noqa: E402

START = dt.datetime(2024, 1, 1)
UTC = dt.timezone.utc


def spec_of(*make):
    """The document's tasks of a DAG whose tasks `make` builds, by id."""
    with DAG("s", schedule=None, start_date=START) as d:
        for m in make:
            m()
    return {t["task_id"]: t for t in dag_to_spec(d, "/dags/s.py", python="py")["tasks"]}


def refused(make):
    with pytest.raises(SpecError) as e:
        spec_of(make)
    return str(e.value)


def test_file_sensor_is_weirs_file_sensor():
    t = spec_of(lambda: FileSensor(task_id="f", filepath="/data/in/{{ ds }}/*.csv",
                                   mode="reschedule", poke_interval=dt.timedelta(seconds=30),
                                   timeout=600, soft_fail=True, exponential_backoff=True,
                                   max_wait=120),
                lambda: FileSensor(task_id="c", filepath="x/_SUCCESS", fs_conn_id="lake",
                                   deferrable=True),
                lambda: FileSensor(task_id="rel", filepath="tmp/flag"),
                lambda: FileSensor(task_id="deep", filepath="/d/**/x", recursive=True))
    assert t["f"]["sensor"] == {
        "file": {"folder": "/data/in", "path": "{{ ds }}/*.csv"}, "poke_interval": 30.0,
        "timeout": 600.0, "mode": "reschedule", "soft_fail": True,
        "exponential_backoff": True, "max_wait": 120.0}
    assert "command" not in t["f"] and t["f"]["operator"] == \
        "airflow.sensors.filesystem.FileSensor"
    # deferrable: reschedule mode, on another fs connection's path
    assert t["c"]["sensor"]["file"] == {"conn": "lake", "path": "x/_SUCCESS"}
    assert t["c"]["sensor"]["mode"] == "reschedule"
    # fs_default's path is the root, as Airflow's default connection
    assert t["rel"]["sensor"]["file"] == {"folder": "/tmp", "path": "flag"}
    assert t["rel"]["sensor"]["mode"] == "poke"
    # what the core's glob does not do pokes in Python
    assert "sensor" not in t["deep"] and "_weir_airflow.run_task" in t["deep"]["command"]
    assert "'..'" in refused(lambda: FileSensor(task_id="up", filepath="/a/../b"))


def test_external_task_sensor_and_marker():
    t = spec_of(lambda: ExternalTaskSensor(
        task_id="e", external_dag_id="up", external_task_id="load",
        allowed_states=["success", "skipped"], failed_states=["failed"],
        execution_delta=dt.timedelta(hours=1), mode="reschedule", poke_interval=5),
        lambda: ExternalTaskSensor(task_id="whole", external_dag_id="up",
                                   external_task_ids=["only"]),
        lambda: ExternalTaskMarker(task_id="m", external_dag_id="down",
                                   external_task_id="wait"))
    assert t["e"]["sensor"]["external_task"] == {
        "dag_id": "up", "task_id": "load", "states": ["success", "skipped"],
        "failed_states": ["failed"], "execution_delta": 3600}
    assert t["whole"]["sensor"]["external_task"] == {"dag_id": "up", "task_id": "only",
                                                      "states": ["success"]}
    assert t["m"]["command"] == "true" and "sensor" not in t["m"]
    assert t["m"]["marker"] == {"dag_id": "down", "task_id": "wait", "recursion_depth": 10}
    assert "same logical date" in refused(lambda: ExternalTaskMarker(
        task_id="x", external_dag_id="down", external_task_id="wait",
        execution_date="{{ macros.ds_add(ds, 1) }}"))
    # execution_date_fn: a poke in Python (no sensor: of the core's), its job asking the
    # server for a read key
    t = spec_of(lambda: ExternalTaskSensor(task_id="fn", external_dag_id="up",
                                           execution_date_fn=lambda d: d),
                lambda: ExternalTaskSensor(task_id="fnr", external_dag_id="up",
                                           execution_date_fn=lambda d: d, mode="reschedule",
                                           poke_interval=2))
    assert "sensor" not in t["fn"] and t["fn"]["env"] == {"WEIR_TASK_READS": "dag_runs"}
    assert "command" in t["fn"]
    assert t["fnr"]["sensor"]["mode"] == "reschedule" and "external_task" not in \
        t["fnr"]["sensor"] and t["fnr"]["env"] == {"WEIR_TASK_READS": "dag_runs"}
    with pytest.raises(ValueError, match="not both"):
        ExternalTaskSensor(task_id="x", external_dag_id="up", execution_date_fn=lambda d: d,
                           execution_delta=dt.timedelta(hours=1))
    t = spec_of(lambda: ExternalTaskSensor(
        task_id="many", external_dag_id="up", external_task_ids=["a", "b"],
        skipped_states=["skipped"], check_existence=True),
        lambda: ExternalTaskSensor(task_id="grp", external_dag_id="up",
                                   external_task_group_id="load", failed_states=["failed"]))
    assert t["many"]["sensor"]["external_task"] == {
        "dag_id": "up", "task_ids": ["a", "b"], "states": ["success"],
        "skipped_states": ["skipped"], "check_existence": True}
    assert t["grp"]["sensor"]["external_task"] == {
        "dag_id": "up", "task_group_id": "load", "states": ["success"],
        "failed_states": ["failed"]}
    assert "no template" in refused(lambda: ExternalTaskSensor(
        task_id="x", external_dag_id="up", external_task_ids=["a", "{{ ds }}"]))
    with pytest.raises(ValueError, match="at the same time"):
        ExternalTaskSensor(task_id="x", external_dag_id="up", external_task_id="a",
                           external_task_group_id="g")
    with pytest.raises(ValueError, match="Duplicate"):
        ExternalTaskSensor(task_id="x", external_dag_id="up", external_task_ids=["a", "a"])
    assert "{{ ds }}" in refused(lambda: ExternalTaskSensor(
        task_id="x", external_dag_id="{{ params.d }}"))
    with pytest.raises(ValueError):
        ExternalTaskSensor(task_id="x", external_dag_id="up", external_task_id="a",
                           external_task_ids=["b"])


def test_sql_and_http_sensors_are_weirs():
    t = spec_of(lambda: SqlSensor(task_id="q", conn_id="dw", sql="SELECT count(*) > 0 FROM "
                                  "loads WHERE ds = :ds", parameters={"ds": "{{ ds }}"},
                                  mode="reschedule"),
                lambda: OldSqlSensor(task_id="old", conn_id="dw", sql="SELECT 1"),
                lambda: HttpSensor(task_id="h", http_conn_id="api", endpoint="status/{{ ds }}",
                                   request_params={"full": 1}, poke_interval=10))
    assert t["q"]["sensor"]["sql"] == {"conn": "dw", "query": "SELECT count(*) > 0 FROM loads "
                                       "WHERE ds = :ds", "parameters": {"ds": "{{ ds }}"}}
    assert t["old"]["sensor"]["sql"] == {"conn": "dw", "query": "SELECT 1"}
    assert t["h"]["sensor"]["http"] == {"conn": "api", "path": "/status/{{ ds }}?full=1"}
    assert "bind the value" in refused(lambda: SqlSensor(
        task_id="x", conn_id="dw", sql="SELECT '{{ ds }}'"))
    # Airflow's DB-API placeholders become weir's bound parameters
    t = spec_of(lambda: SqlSensor(task_id="p", conn_id="dw", sql="SELECT %(n)s > 1 AND "
                                  "%(d)s <> ''", parameters={"n": 2, "d": "{{ ds }}"}))
    assert t["p"]["sensor"]["sql"] == {"conn": "dw", "query": "SELECT :n > 1 AND :d <> ''",
                                       "parameters": {"n": 2, "d": "{{ ds }}"}}
    # what weir's sensors do not do pokes in Python, with the task's connection
    t = spec_of(lambda: SqlSensor(task_id="cb", conn_id="dw", sql="SELECT 1", success=bool),
                lambda: SqlSensor(task_id="fe", conn_id="dw", sql="SELECT 1",
                                  fail_on_empty=True, mode="reschedule"),
                lambda: SqlSensor(task_id="sel", conn_id="dw", sql="SELECT 1, 2",
                                  selector=lambda row: row[1]),
                lambda: SqlSensor(task_id="jinja", conn_id="dw", sql="SELECT %(d)s",
                                  parameters={"d": "{{ macros.ds_add(ds, 1) }}"}),
                lambda: HttpSensor(task_id="rc", http_conn_id="api", endpoint="/",
                                   response_check=lambda r: True),
                lambda: HttpSensor(task_id="post", endpoint="/", method="POST"),
                lambda: HttpSensor(task_id="hdr", endpoint="/", headers={"X-A": "1"},
                                   mode="reschedule"))
    for tid in ("cb", "fe", "sel", "jinja", "rc", "post", "hdr"):
        assert "_weir_airflow.run_task" in t[tid]["command"], t[tid]
    assert t["cb"]["connections"] == ["dw"] and t["rc"]["connections"] == ["api"]
    assert t["post"]["connections"] == ["http_default"]
    assert "sql" not in t["fe"]["sensor"] and t["fe"]["sensor"]["mode"] == "reschedule"
    assert "sensor" not in t["cb"]


def test_python_pokes_run_in_the_tasks_process():
    def sensor_fn():
        return True

    t = spec_of(lambda: PythonSensor(task_id="p", python_callable=lambda: True),
                lambda: BashSensor(task_id="b", bash_command="true", mode="reschedule"),
                lambda: task.sensor(poke_interval=2)(sensor_fn)(),
                lambda: TimeSensor(task_id="t", target_time=dt.time(6, 30)),
                lambda: TimeDeltaSensorAsync(task_id="td", delta=dt.timedelta(minutes=5)),
                lambda: DateTimeSensor(task_id="dt", target_time="{{ data_interval_end }}"),
                lambda: DayOfWeekSensor(task_id="w", week_day={"Saturday", WeekDay.SUNDAY}))
    for tid in ("p", "b", "sensor_fn", "t", "td", "dt", "w"):
        assert "_weir_airflow.run_task" in t[tid]["command"], t[tid]
    # in poke mode the process loops; in reschedule mode (deferrable, *Async) it pokes once
    # and weir starts it again: a command task with sensor: options
    for tid in ("p", "sensor_fn", "t", "dt", "w"):
        assert "sensor" not in t[tid], t[tid]
    assert t["b"]["sensor"] == {"poke_interval": 60.0, "timeout": 604800.0,
                                "mode": "reschedule"}
    assert t["td"]["sensor"]["mode"] == "reschedule"
    assert t["sensor_fn"]["operator"] == "airflow.decorators.sensor.DecoratedSensorOperator"


def test_sensor_arguments_are_checked():
    with pytest.raises(Exception, match="mode"):
        PythonSensor(task_id="x", python_callable=bool, mode="sometimes")
    with pytest.raises(Exception, match="poke_interval"):
        PythonSensor(task_id="x", python_callable=bool, poke_interval=-1)
    assert TimeSensorAsync(task_id="x", target_time=dt.time(1)).mode == "reschedule"
    assert DateTimeSensorAsync(task_id="y", target_time=START).target_time == \
        "2024-01-01T00:00:00"
    with pytest.raises(AttributeError):
        DayOfWeekSensor(task_id="z", week_day="Caturday")


class Counting(BaseSensorOperator):
    """Done at poke `done_at`, pushing a value then."""

    def __init__(self, done_at, value=None, **kwargs):
        super().__init__(task_id="c", **kwargs)
        self.done_at = done_at
        self.value = value
        self.pokes = 0

    def poke(self, context):
        self.pokes += 1
        if self.value is not None:
            return PokeReturnValue(self.pokes >= self.done_at, self.value)
        return self.pokes >= self.done_at


def test_the_poke_loop():
    s = Counting(3, poke_interval=0.001)
    assert s.execute({}) is None and s.pokes == 3
    s = Counting(2, value={"n": 1}, poke_interval=0.001)
    assert s.execute({}) == {"n": 1}
    s = Counting(10 ** 9, poke_interval=0.01, timeout=0.05)
    with pytest.raises(AirflowSensorTimeout):
        s.execute({})
    assert s.pokes >= 2
    s = Counting(10 ** 9, poke_interval=0.01, timeout=0.05, soft_fail=True)
    with pytest.raises(AirflowSkipException):
        s.execute({})
    # backoff doubles up to max_wait, as weir's own sensors (src/sched/sensor.c)
    s = Counting(1, poke_interval=10, exponential_backoff=True, max_wait=60)
    assert [s.next_wait(n) for n in (1, 2, 3, 4, 5)] == [10, 20, 40, 60, 60]
    assert Counting(1, poke_interval=10).next_wait(5) == 10


def test_a_failing_poke():
    class Broken(BaseSensorOperator):
        def poke(self, context):
            self.n = getattr(self, "n", 0) + 1
            if self.n < 3:
                raise OSError("not mounted")
            return True

    with pytest.raises(OSError):
        Broken(task_id="b", poke_interval=0.001).execute({})
    with pytest.raises(AirflowSkipException):
        Broken(task_id="b", poke_interval=0.001, soft_fail=True).execute({})
    s = Broken(task_id="b", poke_interval=0.001, silent_fail=True)
    s.execute({})
    assert s.n == 3


def test_time_pokes():
    now = dt.datetime.now(UTC)
    ctx = {"logical_date": now - dt.timedelta(hours=2),
           "data_interval_end": now - dt.timedelta(hours=1)}
    assert TimeDeltaSensor(task_id="a", delta=dt.timedelta(minutes=30)).poke(ctx)
    assert not TimeDeltaSensor(task_id="b", delta=dt.timedelta(hours=2)).poke(ctx)
    assert DateTimeSensor(task_id="c", target_time=now - dt.timedelta(seconds=1)).poke(ctx)
    assert not DateTimeSensor(task_id="d", target_time=(now + dt.timedelta(hours=1))
                              .isoformat()).poke(ctx)
    today = now.strftime("%A")
    assert DayOfWeekSensor(task_id="e", week_day=today).poke(ctx)
    other = (now + dt.timedelta(days=1)).strftime("%A")
    assert not DayOfWeekSensor(task_id="f", week_day=[other]).poke(ctx)
    lday = ctx["logical_date"].strftime("%A")
    assert DayOfWeekSensor(task_id="g", week_day=lday, use_task_logical_date=True).poke(ctx)
    assert not TimeSensor(task_id="h", target_time=dt.time(23, 59, 59, 999999)).poke(ctx)


def test_time_delta_pokes_on_pendulum_dates():
    """The context's dates are pendulum's when the DAG file imports pendulum (the examples'
    start_date=pendulum.datetime(...)): the target is computed all the same."""
    pendulum = pytest.importorskip("pendulum")
    end = pendulum.now("UTC").subtract(hours=1)
    ctx = {"logical_date": end, "data_interval_end": end}
    assert TimeDeltaSensor(task_id="a", delta=dt.timedelta(minutes=30)).poke(ctx)
    assert not TimeDeltaSensor(task_id="b", delta=dt.timedelta(hours=2)).poke(ctx)


def test_a_python_file_poke_on_fs_default_needs_no_connection():
    """fs_default is the root (Airflow's default connection): a FileSensor poked in Python
    lists no connection for the server to look up; another fs connection is listed."""
    from _weir_airflow.operators import connections_of

    with DAG("fsconn", schedule=None):
        root = FileSensor(task_id="root", filepath="/tmp/{{ run_id | upper }}")
        other = FileSensor(task_id="other", filepath="x/{{ run_id | upper }}",
                           fs_conn_id="landing")
    assert connections_of(root) == [] and connections_of(other) == ["landing"]


def test_reschedule_mode_pokes_once_a_process(tmp_path):
    """run_task of a sensor in reschedule mode: one poke; 97 when not met, 0 and its value
    when met, 99 for soft_fail's skip."""
    p = tmp_path / "once.py"
    flag = tmp_path / "flag"
    p.write_text(textwrap.dedent("""\
        import os
        from datetime import datetime
        from airflow import DAG
        from airflow.decorators import task
        from airflow.sensors.base import PokeReturnValue

        with DAG("once", schedule=None, start_date=datetime(2024, 1, 1)):
            @task.sensor(mode="reschedule")
            def ready():
                with open(%r + ".n", "a") as f:
                    f.write("x")
                return PokeReturnValue(os.path.exists(%r), {"ok": 1})

            @task.sensor(deferrable=True, soft_fail=True)
            def broken():
                raise OSError("no disk")

            ready()
            broken()
        """ % (str(flag), str(flag))))
    out = tmp_path / "out.json"

    def run(task_id):
        env = dict(os.environ, PYTHONPATH=str(SITE), WEIR_OUTPUT=str(out),
                   WEIR_RUN_ID="manual__1", WEIR_LOGICAL_DATE="2024-03-01T00:00:00+00:00")
        return subprocess.run([sys.executable, "-m", "_weir_airflow.run_task", str(p), "once",
                               task_id], capture_output=True, text=True, timeout=60, env=env)

    r = run("ready")
    assert r.returncode == 97 and not out.exists(), r
    flag.write_text("")
    r = run("ready")
    assert r.returncode == 0, r
    assert (tmp_path / "flag.n").read_text() == "xx"  # one poke each
    assert '"return_value": {"ok": 1}' in out.read_text()
    r = run("broken")
    assert r.returncode == 99 and "soft_fail" in r.stderr, r


def test_bash_sensor_exit_codes(tmp_path):
    flag = tmp_path / "flag"
    s = BashSensor(task_id="b", bash_command="test -e %s" % flag)
    assert not s.poke({})
    flag.write_text("")
    assert s.poke({})
    s = BashSensor(task_id="r", bash_command="exit 5", retry_exit_code=5)
    assert not s.poke({})
    s = BashSensor(task_id="r", bash_command="exit 3", retry_exit_code=5)
    with pytest.raises(Exception, match="exit code 3"):
        s.poke({})


def test_weir_reads_the_sensors_documents(tmp_path):
    """The server's reader takes each mapped sensor (`weir dags check`)."""
    exe = os.environ.get("WEIR_BIN") or str(REPO / "build" / "weir")
    if not os.path.exists(exe):
        pytest.skip("no weir program built (make weir, or set WEIR_BIN)")
    p = tmp_path / "sensors.py"
    p.write_text(textwrap.dedent("""\
        from datetime import datetime, timedelta
        from airflow import DAG
        from airflow.providers.common.sql.sensors.sql import SqlSensor
        from airflow.providers.http.sensors.http import HttpSensor
        from airflow.sensors.external_task import ExternalTaskSensor
        from airflow.sensors.filesystem import FileSensor
        from airflow.sensors.python import PythonSensor

        with DAG("sensors", schedule="@daily", start_date=datetime(2024, 1, 1)):
            FileSensor(task_id="f", filepath="/data/{{ ds_nodash }}/*.csv", mode="reschedule")
            FileSensor(task_id="c", filepath="x", fs_conn_id="lake", poke_interval=0.5)
            ExternalTaskSensor(task_id="e", external_dag_id="up", external_task_id="t",
                               execution_delta=timedelta(days=1), failed_states=["failed"])
            SqlSensor(task_id="q", conn_id="dw", sql="SELECT 1 WHERE :d > ''",
                      parameters={"d": "{{ ds }}"}, timeout=60, exponential_backoff=True)
            HttpSensor(task_id="h", endpoint="ready", deferrable=True, max_wait=30)
            PythonSensor(task_id="p", python_callable=bool, mode="reschedule", timeout=5)
        """))
    r = subprocess.run([exe, "dags", "check", str(p)], capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, WEIR_AIRFLOW_PYTHON=sys.executable))
    assert r.returncode == 0, r.stdout + r.stderr


def test_execution_date_fn_dates_and_counts_as_airflow():
    """What a Python poke of an ExternalTaskSensor computes from the server's answer: the
    function called with the logical date and the context keys it names (all with
    **kwargs, `context` among them), one date or a list; Airflow's counts (each awaited task
    instance over the tasks awaited; a group's tasks from the loaded DAG; the runs without
    tasks)."""
    day = dt.datetime(2024, 3, 2, tzinfo=dt.timezone.utc)
    ctx = {"logical_date": day, "execution_date": day, "params": {"back": 2}, "ds": "x"}
    seen = {}

    def by_param(d, params):
        return d - dt.timedelta(days=params["back"])

    def everything(d, **kw):
        seen.update(kw)
        return [d, d - dt.timedelta(days=1)]

    with DAG("s", schedule=None, start_date=START):
        one = ExternalTaskSensor(task_id="one", external_dag_id="up", external_task_id="a",
                                 execution_date_fn=by_param)
        many = ExternalTaskSensor(task_id="many", external_dag_id="up",
                                  external_task_group_id="g", execution_date_fn=everything)
        run = ExternalTaskSensor(task_id="run", external_dag_id="up")
    assert one._dates(ctx) == [dt.datetime(2024, 2, 29, tzinfo=dt.timezone.utc)]
    assert many._dates(ctx) == [day, day - dt.timedelta(days=1)]
    assert seen["context"] is ctx and seen["ds"] == "x" and "logical_date" not in seen
    assert run._dates(ctx) == [day]
    answer = {"loaded": True, "task_ids": ["a", "g.x", "g.y", "gx"], "runs": [
        {"state": "success", "task_instances": [
            {"task_id": "a", "state": "success"}, {"task_id": "g.x", "state": "success"},
            {"task_id": "g.y", "state": "failed"}, {"task_id": "gx", "state": "failed"}]},
        {"state": "", "task_instances": []}]}
    assert one._count(answer, ["success"]) == 1
    assert many._count(answer, ["success"]) == 0.5 and many._count(answer, ["failed"]) == 0.5
    assert run._count(answer, ["success"]) == 1 and run._count(answer, ["failed"]) == 0
    one.check_existence = True
    one._check_existence(answer)
    with pytest.raises(Exception, match="The external DAG up does not exist"):
        one._check_existence({"loaded": False})
