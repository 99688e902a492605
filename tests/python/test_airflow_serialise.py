"""weir's `airflow` package and the DAG processor without a server: DAG objects as weir's
DAG documents (_weir_airflow.spec), a file's import errors with their line
(processor.py), a task's try in its own process (run_task.py), and `weir dags test` reading
the documents as the server does."""

import datetime as dt
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import REPO

SITE = REPO / "python" / "weir" / "compat" / "airflow" / "site"
sys.path.insert(0, str(SITE))

from airflow import DAG  # noqa: E402
from airflow.decorators import dag, task  # noqa: E402
from airflow.models.baseoperator import chain  # noqa: E402
from airflow.operators.bash import BashOperator  # noqa: E402
from airflow.operators.dummy import DummyOperator  # noqa: E402
from airflow.operators.python import PythonOperator  # noqa: E402
from airflow.utils.trigger_rule import TriggerRule  # noqa: E402

from _weir_airflow.processor import process  # noqa: E402
from _weir_airflow.spec import SpecError, dag_to_spec  # noqa: E402

START = dt.datetime(2024, 1, 1)


def by_id(doc):
    return {t["task_id"]: t for t in doc["tasks"]}


def test_a_with_block_dag_and_its_task_arguments():
    args = {"retries": 2, "retry_delay": dt.timedelta(minutes=2), "pool": "etl",
            "execution_timeout": dt.timedelta(hours=1)}
    with DAG("nightly", default_args=args, schedule_interval="0 6 * * 1-5", start_date=START,
             catchup=False, max_active_runs=1, max_active_tasks=4, tags=["a"],
             params={"n": 3, "who": "x"}, description="a DAG", doc_md="# doc") as d:
        a = BashOperator(task_id="a", bash_command="echo a", env={"K": "v"}, retries=0)
        b = PythonOperator(task_id="b", python_callable=print, queue="q",
                           depends_on_past=True)
        c = DummyOperator(task_id="c", trigger_rule=TriggerRule.ONE_FAILED)
        e = BashOperator(task_id="e", bash_command="echo {{ ds }}")
        a >> b
        c << b
        e.set_upstream(a)
    doc = dag_to_spec(d, "/dags/n.py", python="/usr/bin/python3")
    assert {k: doc[k] for k in ("dag_id", "schedule", "start_date", "catchup",
                                "max_active_runs", "max_active_tasks", "tags", "params",
                                "description")} == {
        "dag_id": "nightly", "schedule": "0 6 * * 1-5", "start_date": "2024-01-01T00:00:00Z",
        "catchup": False, "max_active_runs": 1, "max_active_tasks": 4, "tags": ["a"],
        "params": {"n": 3, "who": "x"}, "description": "a DAG"}
    t = by_id(doc)
    assert t["a"] == {"task_id": "a", "operator": "airflow.operators.bash.BashOperator",
                      "command": "exec bash -c 'echo a'", "env": {"K": "v"},
                      "retries": 0, "retry_delay": 120, "execution_timeout": 3600,
                      "pool": "etl", "skip_on_exit_code": [99]}  # Airflow's default
    assert t["b"]["depends_on"] == ["a"] and t["b"]["queue"] == "q"
    assert t["b"]["depends_on_past"] is True and t["b"]["retries"] == 2
    assert "-m _weir_airflow.run_task /dags/n.py nightly b" in t["b"]["command"]
    # AirflowSkipException and AirflowFailException leave run_task by these
    assert (t["b"]["skip_on_exit_code"], t["b"]["no_retry_on_exit_code"]) == (99, 98)
    assert t["c"]["command"] == "true" and t["c"]["trigger_rule"] == "one_failed"
    assert t["c"]["depends_on"] == ["b"]
    # a templated Bash command renders in the task's process, with Jinja
    assert "run_task /dags/n.py nightly e" in t["e"]["command"]


@pytest.mark.parametrize("schedule,start,want", [
    (None, START, "none"), ("@daily", START, "@daily"), ("@once", START, "@once"),
    ("*/5 * * * *", START, "*/5 * * * *"),
    (dt.timedelta(minutes=15), dt.datetime(2024, 1, 1, 0, 5), "5/15 * * * *"),
    (dt.timedelta(hours=6), dt.datetime(2024, 1, 1, 2, 30), "30 2/6 * * *"),
    (dt.timedelta(days=1), dt.datetime(2024, 1, 1, 6, 30), "30 6 * * *"),
    (dt.timedelta(weeks=1), dt.datetime(2024, 1, 3), "0 0 * * 3"),
    # no cron fires every 7 minutes from 00:03: a step from start_date, as Airflow's
    (dt.timedelta(minutes=7), dt.datetime(2024, 1, 1, 0, 3), {"delta": {"seconds": 420}}),
])
def test_schedules(schedule, start, want):
    with DAG("s", schedule=schedule, start_date=start) as d:
        BashOperator(task_id="t", bash_command="true")
    assert dag_to_spec(d, "/f.py")["schedule"] == want


@pytest.mark.parametrize("schedule", [dt.timedelta(seconds=0.5), "@continuous", ["ds://x"]])
def test_schedules_weir_cannot_run_yet_are_errors(schedule):
    with DAG("s", schedule=schedule, start_date=START) as d:
        BashOperator(task_id="t", bash_command="true")
    with pytest.raises(SpecError) as err:
        dag_to_spec(d, "/f.py")
    assert "schedule" in str(err.value) and err.value.line > 0


def test_taskflow_values_make_dependencies_and_travel_in_the_environment():
    @dag(schedule=None, start_date=START)
    def flow():
        @task
        def one():
            return 1

        @task(retries=3)
        def add(x, y=0):
            return x + y

        total = add(one(), y=add(one()))
        chain(total, BashOperator(task_id="after", bash_command="true"))

    doc = dag_to_spec(flow(), "/f.py")
    t = by_id(doc)
    assert sorted(t) == ["add", "add__1", "after", "one", "one__1"]
    # arguments are made left to right: one, then the inner add's one__1, add, then add__1
    assert t["add"]["depends_on"] == ["one__1"] and t["add"]["retries"] == 3
    assert t["add__1"]["depends_on"] == ["add", "one"]
    # a Python task reads the run's outputs ($WEIR_RUN_OUTPUTS)
    assert t["add__1"]["run_outputs"] is True and "env" not in t["add__1"]
    assert t["after"] == {"task_id": "after", "operator": "airflow.operators.bash.BashOperator",
                          "depends_on": ["add__1"], "command": "exec bash -c true",
                          "retries": 0, "retry_delay": 300, "skip_on_exit_code": [99]}
    # a @task is a PythonOperator (Airflow's own class is airflow.decorators.python's
    # _PythonDecoratedOperator: docs/airflow.md)
    assert t["add"]["operator"] == "airflow.operators.python.PythonOperator"


def test_task_groups_prefix_ids_and_stand_for_their_roots_and_leaves():
    from airflow.decorators import task_group
    from airflow.models.baseoperator import cross_downstream
    from airflow.utils.edgemodifier import Label
    from airflow.utils.task_group import TaskGroup, expand_group_ids

    with DAG("groups", schedule=None, default_args={"retries": 1}) as d:
        start = DummyOperator(task_id="start")
        with TaskGroup("load", default_args={"retries": 4}) as load:
            a = BashOperator(task_id="a", bash_command="true")
            with TaskGroup("inner") as inner:
                b = BashOperator(task_id="b", bash_command="true")
            a >> inner
        with TaskGroup("flat", prefix_group_id=False):
            DummyOperator(task_id="plain")

        @task_group
        def clean(x):
            @task
            def c1(v):
                return v

            return c1(x)

        end = DummyOperator(task_id="end")
        start >> load >> end
        first = clean(start.output)
        second = clean(start.output)
        first >> Label("then") >> second
        cross_downstream([start, end], [d.task_dict["plain"]])
    assert set(d.task_dict) == {"start", "load.a", "load.inner.b", "plain", "clean.c1",
                                "clean__1.c1", "end"}
    assert inner.group_id == "load.inner" and b.task_id == "load.inner.b"
    assert d.task_dict["load.a"].upstream_task_ids == {"start"}  # the group's root
    assert d.task_dict["end"].upstream_task_ids == {"load.inner.b"}  # the group's leaf
    assert d.task_dict["clean__1.c1"].upstream_task_ids == {"start", "clean.c1"}
    assert d.task_dict["plain"].upstream_task_ids == {"start", "end"}
    assert a.retries == 4 and d.task_dict["end"].retries == 1
    assert expand_group_ids(d, ["load", "end"]) == ["load.a", "end"]
    t = by_id(dag_to_spec(d, "/f.py"))
    assert t["load.inner.b"]["depends_on"] == ["load.a"]


def test_access_control_becomes_access():
    """Airflow's sets (and its per-resource form) as sorted lists, the names kept as given;
    what the names mean is the server's to check (docs/security.md)."""
    with DAG("guarded", schedule=None, access_control={
            "ann": {"can_read", "can_edit"}, "Viewer": {"can_read"},
            "ops": {"DAGs": {"can_read"}, "DAG Runs": {"can_create"}}}) as d:
        BashOperator(task_id="t", bash_command="true")
    assert dag_to_spec(d, "/f.py")["access"] == {
        "ann": ["can_edit", "can_read"], "Viewer": ["can_read"],
        "ops": {"DAGs": ["can_read"], "DAG Runs": ["can_create"]}}
    with DAG("open", schedule=None) as d2:
        BashOperator(task_id="t", bash_command="true")
    assert "access" not in dag_to_spec(d2, "/f.py")
    with DAG("bad", schedule=None, access_control={"ann": 3}) as d3:
        BashOperator(task_id="t", bash_command="true")
    with pytest.raises(SpecError, match="access_control"):
        dag_to_spec(d3, "/f.py")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def processor(path, *extra):
    """The processor as the server runs it: a child process, one JSON line out."""
    env = dict(os.environ, PYTHONPATH=str(SITE))
    r = subprocess.run([sys.executable, "-m", "_weir_airflow.processor", path, *extra],
                       capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r
    lines = r.stdout.splitlines()
    assert len(lines) == 1, r.stdout[:500]
    return json.loads(lines[0])


def test_the_processor_names_the_file_and_line_of_an_error(tmp_path):
    p = write(tmp_path, "bad.py", """\
        from airflow import DAG
        print("noise" * 1000)

        def helper():
            raise KeyError("missing")

        helper()
        """)
    e = processor(p)["error"]
    # the innermost line of the file in the traceback
    assert e["line"] == 5 and e["message"].startswith(p + ":5: KeyError: 'missing'"), e
    assert "Traceback" in e["message"] and "line 5, in helper" in e["message"], e

    p = write(tmp_path, "exit.py", "import sys\nfrom airflow import DAG\nsys.exit('no')\n")
    e = processor(p)["error"]
    assert e["line"] == 3 and "sys.exit('no')" in e["message"], e

    p = write(tmp_path, "syn.py", "from airflow import DAG\nx = (\n")
    e = processor(p)["error"]
    assert e["line"] == 2 and "SyntaxError" in e["message"], e

    p = write(tmp_path, "cron.py", """\
        from dateutil.relativedelta import relativedelta
        from airflow import DAG
        from airflow.operators.empty import EmptyOperator
        with DAG("c", schedule=relativedelta(day=1, months=1)) as d:
            EmptyOperator(task_id="t")
        """)
    e = processor(p)["error"]
    assert e["line"] == 4 and "relativedelta" in e["message"], e
    assert "day is not supported" in e["message"] and "Traceback" not in e["message"], e


def test_the_processor_finds_the_files_dags(tmp_path):
    (tmp_path / "common.py").write_text("OWNER = 'team'\n")  # the DAG folder is on the path
    p = write(tmp_path, "two.py", """\
        from datetime import datetime
        from airflow import DAG
        from airflow.decorators import dag, task
        from airflow.operators.bash import BashOperator
        from common import OWNER

        first = DAG("first", schedule=None, start_date=datetime(2024, 1, 1))
        BashOperator(task_id="t", bash_command="echo " + OWNER, dag=first)

        @dag(schedule="@hourly", start_date=datetime(2024, 1, 1))
        def second():
            @task
            def t():
                return 1
            t()

        second()
        unused = DAG("no_tasks")  # weir's DAGs have a task at least: left out
        def made_in_a_function():
            return DAG("lost")
        made_in_a_function()
        """)
    a = processor(p, str(tmp_path))
    assert sorted(d["dag_id"] for d in a["dags"]) == ["first", "second"], a
    first = next(d for d in a["dags"] if d["dag_id"] == "first")
    assert first["tasks"][0]["command"] == "exec bash -c 'echo team'"


def run_task(tmp_path, path, dag_id, task_id, **env):
    out = tmp_path / ("%s.out.json" % task_id)
    full = dict(os.environ, PYTHONPATH=str(SITE), WEIR_OUTPUT=str(out),
                WEIR_RUN_ID="manual__1", WEIR_LOGICAL_DATE="2024-03-01T00:00:00+00:00",
                WEIR_TS="2024-03-01T00:00:00+00:00", WEIR_DS="2024-03-01",
                WEIR_DS_NODASH="20240301", WEIR_TRY_NUMBER="2", **env)
    r = subprocess.run([sys.executable, "-m", "_weir_airflow.run_task", path, dag_id,
                        task_id], capture_output=True, text=True, timeout=60, env=full)
    value = json.loads(out.read_text()) if out.exists() else None
    return r, value


def test_run_task_calls_the_callable_with_its_context_and_pushes_the_value(tmp_path):
    p = write(tmp_path, "ctx.py", """\
        from datetime import datetime
        from airflow import DAG
        from airflow.decorators import task
        from airflow.exceptions import AirflowSkipException
        from airflow.operators.python import PythonOperator

        def show(a, ds, ti, params, b=None, **kwargs):
            ti.xcom_push(key="extra", value=[1, 2])
            return {"a": a, "b": b, "ds": ds, "try": ti.try_number, "run": kwargs["run_id"],
                    "n": params["n"], "conf": kwargs["dag_run"].conf,
                    "year": kwargs["logical_date"].year}

        def skip():
            raise AirflowSkipException("nothing today")

        with DAG("ctx", schedule=None, start_date=datetime(2024, 1, 1), params={"n": 1}):
            PythonOperator(task_id="show", python_callable=show, op_args=["A"],
                           op_kwargs={"b": "B"})
            PythonOperator(task_id="skip", python_callable=skip)

            @task
            def double(values):
                return [v * 2 for v in values]

            @task
            def source():
                return [1, 2]

            double(source())
        """)
    r, out = run_task(tmp_path, p, "ctx", "show", WEIR_PARAM_n="5")
    assert r.returncode == 0, r
    want = {"a": "A", "b": "B", "ds": "2024-03-01", "try": 2, "run": "manual__1", "n": 5,
            "conf": {"n": 5}, "year": 2024}
    assert out == {"extra": [1, 2], "return_value": want, "weir_return": [want]}

    outputs = tmp_path / "run_outputs.json"
    outputs.write_text('{"source": {"-1": {"return_value": [3, 4], "weir_return": [[3, 4]]}}}')
    r, out = run_task(tmp_path, p, "ctx", "double", WEIR_RUN_OUTPUTS=str(outputs))
    assert r.returncode == 0, r
    assert out["return_value"] == [6, 8]

    r, out = run_task(tmp_path, p, "ctx", "skip")
    assert r.returncode == 99 and "AirflowSkipException" in r.stderr and out is None, r


def test_weir_reads_the_documents_and_runs_them(tmp_path):
    """`weir dags test` reads the processor's document (dag_spec_from_json) and runs it: a
    Bash task, a value passed down by XCom, a templated command."""
    exe = os.environ.get("WEIR_BIN") or str(REPO / "build" / "weir")
    if not os.path.exists(exe):
        pytest.skip("no weir program built (make weir, or set WEIR_BIN)")
    side = tmp_path / "side"
    p = write(tmp_path, "chain.py", """\
        from datetime import datetime
        from airflow import DAG
        from airflow.decorators import task
        from airflow.operators.bash import BashOperator

        with DAG("chain", schedule=None, start_date=datetime(2024, 1, 1)) as d:
            @task
            def make():
                return {"word": "it's \\"quoted\\" $(x)"}

            @task
            def use(v):
                open(%r, "w").write(v["word"])

            BashOperator(task_id="first", bash_command="echo {{ ds }}") >> use(make())
        """ % str(side))
    doc = processor(p)["dags"][0]
    spec = tmp_path / "chain.json"
    spec.write_text(json.dumps(doc))
    r = subprocess.run([exe, "dags", "test", str(spec)], capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, WEIR_AIRFLOW_PYTHON=sys.executable))
    assert r.returncode == 0, r.stdout + r.stderr
    assert side.read_text() == "it's \"quoted\" $(x)"


def test_no_value_rendered_into_a_bash_command_runs_as_code(tmp_path):
    """A param (or conf, or XCom) rendered into bash_command reaches bash through a variable,
    in quotes, in double quotes or bare: printed, never run; a safe value is written as is."""
    p = write(tmp_path, "inject.py", """\
        from datetime import datetime
        from airflow import DAG
        from airflow.operators.bash import BashOperator

        with DAG("inject", schedule=None, start_date=datetime(2024, 1, 1), params={"x": "a"}):
            BashOperator(task_id="t", cwd=%r, bash_command=(
                "echo {{ ds }} {{ params.x }}; echo \\"{{ params.x }}\\"; "
                "echo '{{ params.x }}' > single"))
        """ % str(tmp_path))
    evil = "$(touch pwned1); touch pwned2 `touch pwned3` 'q\" ;"
    r, _ = run_task(tmp_path, p, "inject", "t", WEIR_PARAM_x=evil)
    assert r.returncode == 0, r
    assert not list(tmp_path.glob("pwned*")), r
    lines = r.stdout.splitlines()
    assert lines[0] == "2024-03-01 " + evil and lines[1] == evil, r.stdout
    # inside single quotes the variable is not expanded: its name shows, the value never runs
    assert (tmp_path / "single").read_text() == '${WEIR_TEMPLATE_VALUE_2}\n'


def test_a_value_rendered_inside_double_quotes_stays_one_word(tmp_path):
    """A value with blanks rendered inside a double-quoted string is that string's text
    (the variable is not quoted again, which would end the string and split the value);
    the same value bare is one word too."""
    p = write(tmp_path, "words.py", """\
        from datetime import datetime
        from airflow import DAG
        from airflow.operators.bash import BashOperator

        with DAG("words", schedule=None, start_date=datetime(2024, 1, 1), params={"x": "a"}):
            BashOperator(task_id="t", env={"WANT": "two  blanks"}, append_env=True,
                         bash_command=('test "{{ params.x }}" = "$WANT" && '
                                       'set -- {{ params.x }} && echo "n=$# [{{ params.x }}]" '
                                       '&& echo "{{ ti.xcom_push(key="k", value=1) }}"'))
        """)
    r, _ = run_task(tmp_path, p, "words", "t", WEIR_PARAM_x="two  blanks")
    assert r.returncode == 0, r
    assert r.stdout.splitlines()[0] == "n=1 [two  blanks]", r.stdout
    assert r.stdout.splitlines()[1] == "None", r.stdout  # Jinja writes None so in Airflow


def test_branches_and_short_circuits_become_weir_flow_tasks():
    from airflow.operators.latest_only import LatestOnlyOperator
    from airflow.operators.python import BranchPythonOperator, ShortCircuitOperator

    with DAG("flow", schedule=None) as d:
        b = BranchPythonOperator(task_id="b", python_callable=lambda: "x")
        s = ShortCircuitOperator(task_id="s", python_callable=lambda: False)
        soft = ShortCircuitOperator(task_id="soft", python_callable=lambda: False,
                                    ignore_downstream_trigger_rules=False)
        latest = LatestOnlyOperator(task_id="latest")

        @task.branch
        def tb():
            return None

        @task.short_circuit
        def ts():
            return True

        x = BashOperator(task_id="x", bash_command="true", skip_on_exit_code=[3, 99])
        [b, s, soft, latest, tb(), ts()] >> x
    t = by_id(dag_to_spec(d, "/dags/f.py", python="/usr/bin/python3"))
    for name in ("b", "soft", "latest", "tb"):
        assert t[name].get("branch") is True and "short_circuit" not in t[name], t[name]
    for name in ("s", "ts"):
        assert t[name].get("short_circuit") is True and "branch" not in t[name], t[name]
    assert t["x"]["skip_on_exit_code"] == [3, 99]
    assert soft.weir_choice(0) == [] and soft.weir_choice(1) == ["x"]
    assert s.weir_choice([]) is False


def test_xcom_pull_reads_the_runs_outputs_as_airflow_does():
    from _weir_airflow.run_task import TaskInstance

    ti = TaskInstance("d", "me", "r", 1, -1, {
        "a": {"-1": {"return_value": "x", "weir_return": ["x"], "k": 5}},
        "b": {"-1": {"return_value": "42", "weir_return": ["42"]}},
        "quiet": {"-1": {"other": 1}},
        "m": {"0": {"weir_return": [10]}, "1": {"weir_return": [11]},
              "2": {"weir_return": [12]}},
    })
    assert ti.xcom_pull(task_ids="a") == "x"
    assert ti.xcom_pull(task_ids="b") == "42"  # a str stays a str
    assert ti.xcom_pull(task_ids=["b", "a"]) == ["42", "x"]  # the order asked
    assert ti.xcom_pull(task_ids=["a", "quiet", "nope"]) == ["x"]  # those that exist
    assert ti.xcom_pull(task_ids="a", key="k") == 5
    assert ti.xcom_pull(task_ids="nope", default=3) == 3 and ti.xcom_pull(task_ids="nope") is None
    assert ti.xcom_pull(task_ids="m") == [10, 11, 12]  # a mapped task: all its values
    assert ti.xcom_pull(task_ids="m", map_indexes=1) == 11
    assert ti.xcom_pull(task_ids="m", map_indexes=[2, 0]) == [12, 10]
    with pytest.raises(NotImplementedError):
        ti.xcom_pull(task_ids="a", dag_id="other")


def test_variables_a_file_names_and_variable_get(tmp_path, monkeypatch):
    from _weir_airflow.spec import variables_named
    from airflow.exceptions import AirflowException
    from airflow.models import Variable

    p = write(tmp_path, "v.py", """\
        from airflow.models import Variable
        from airflow.models.variable import Variable as V
        import airflow.models
        a = Variable.get("alpha")
        b = V.get(key="beta", default_var=None)
        c = airflow.models.Variable.setdefault("gamma", 1)
        d = Variable.get(computed_name)
        cmd = "echo {{ var.value.delta }} {{ var.json.eps.x }} {{ var.value.get('zeta', 1) }}"
        """)
    assert variables_named(str(p)) == ["alpha", "beta", "delta", "eps", "gamma", "zeta"]
    monkeypatch.setenv("WEIR_VARIABLES", "alpha,j")
    monkeypatch.setenv("WEIR_VARIABLE_0", "one")
    monkeypatch.setenv("WEIR_VARIABLE_1", '{"n": [1, 2]}')
    monkeypatch.setenv("AIRFLOW_VAR_BETA", "from-env")
    assert Variable.get("alpha") == "one"
    assert Variable.get("j", deserialize_json=True) == {"n": [1, 2]}
    assert Variable.get("beta") == "from-env"  # Airflow's own environment backend first
    assert Variable.get("gone", default_var=None) is None
    with pytest.raises(KeyError, match="Variable gone does not exist"):
        Variable.get("gone")
    # outside a task's try (no $WEIR_OUTPUT to carry it): refused
    monkeypatch.delenv("WEIR_OUTPUT", raising=False)
    with pytest.raises(AirflowException, match="from a running task only"):
        Variable.set("alpha", "x")
    # at a file's parse (no try): the error says why and what to do instead
    with pytest.raises(KeyError, match="was given no variables for this parse"):
        Variable.get("gone")
    # in one: read back at once, kept for the try's output
    from airflow.models.variable import WRITES

    monkeypatch.setenv("WEIR_OUTPUT", "/nonexistent/output.json")
    try:
        Variable.set("alpha", {"k": 1}, serialize_json=True)
        assert Variable.get("alpha", deserialize_json=True) == {"k": 1}
        assert Variable.delete("j") == 1
        assert Variable.get("j", default_var="gone") == "gone"
        with pytest.raises(KeyError, match="Variable nope does not exist"):
            Variable.update("nope", 1)
        assert WRITES == {"alpha": '{\n  "k": 1\n}', "j": None}
    finally:
        WRITES.clear()


def test_multiple_outputs_and_keyed_xcom_args():
    from typing import Dict

    with DAG("mo", schedule=None) as d:
        @task
        def parts() -> Dict[str, int]:
            return {"a": 1}

        @task(multiple_outputs=False)
        def whole() -> dict:
            return {"a": 1}

        @task
        def use(x, y):
            return x

        p = parts()
        use(p["a"], whole())
    assert d.task_dict["parts"].multiple_outputs is True
    assert d.task_dict["whole"].multiple_outputs is False
    assert d.task_dict["use"].op_args[0].key == "a"
    assert d.task_dict["use"].upstream_task_ids == {"parts", "whole"}


def test_xcoms_that_are_no_json_are_pickled():
    import datetime as _dt

    from _weir_airflow.run_task import TaskInstance, encode_outputs

    when = _dt.datetime(2024, 1, 2, 3, 4)
    out = encode_outputs({"return_value": when, "weir_return": [when], "ok": [1],
                          "s": {1, 2}})
    assert out["return_value"] == repr(when) and "weir_return" not in out
    assert out["ok"] == [1] and out["s"] == "{1, 2}"
    assert set(out["weir_pickled"]) == {"return_value", "s"}
    json.dumps(out)
    ti = TaskInstance("d", "me", "r", 1, -1, {"t": {"-1": out}})
    assert ti.xcom_pull(task_ids="t") == when
    assert ti.xcom_pull(task_ids="t", key="s") == {1, 2}
    assert ti.xcom_pull(task_ids="t", key="ok") == [1]


def test_a_plain_bash_task_pushes_its_last_line_to_a_task_that_pulls_it():
    """A BashOperator without a template runs as a plain command unless a task right below
    it calls xcom_pull (in its template or its callable's code): then it runs in Python and
    its last line is its XCom, as Airflow's (example_xcom's bash push and pull)."""
    def pulls(ti=None):
        return ti.xcom_pull(task_ids="pushed")

    def ignores():
        return 1

    with DAG("lastline", schedule=None) as d:
        pushed = BashOperator(task_id="pushed", bash_command="echo a; echo b")
        quiet = BashOperator(task_id="quiet", bash_command="echo c")
        off = BashOperator(task_id="off", bash_command="echo d", do_xcom_push=False)
        pushed >> PythonOperator(task_id="pull", python_callable=pulls)
        # below a group, pulled by a task that runs whatever its upstream did (the audit)
        after = BashOperator(task_id="after", bash_command="echo e")
        after >> PythonOperator(task_id="pull_done", python_callable=lambda ti: [
            ti.xcom_pull(task_ids=t) for t in ["after"]], trigger_rule="all_done")
        quiet >> PythonOperator(task_id="ignore", python_callable=ignores)
        off >> BashOperator(task_id="tpl", bash_command="echo {{ ti.xcom_pull('off') }}")
    t = by_id(dag_to_spec(d, "/f.py"))
    assert "_weir_airflow.run_task" in t["pushed"]["command"], t["pushed"]
    assert "_weir_airflow.run_task" in t["after"]["command"], t["after"]
    assert t["quiet"]["command"] == "exec bash -c 'echo c'", t["quiet"]
    assert t["off"]["command"] == "exec bash -c 'echo d'", t["off"]


def test_a_tasks_dataset_outlets_and_own_params():
    """`outlets` (one Dataset or a list; other lineage objects ignored) become the task's
    `outlets`, as example_datasets' producers; a task's own `params` are kept for its context
    over the DAG's; `airflow.utils.context.Context` imports (a custom operator's annotation)."""
    from airflow.datasets import Dataset
    from airflow.utils.context import Context  # noqa: F401

    with DAG("producer", schedule=None, params={"a": 1}) as d:
        BashOperator(task_id="one", bash_command="true", outlets=Dataset("s3://b/x"))
        BashOperator(task_id="two", bash_command="true", params={"own": 2},
                     outlets=[Dataset("s3://b/x"), Dataset("file:///y"), "not a dataset"])
        BashOperator(task_id="none", bash_command="true")
    t = by_id(dag_to_spec(d, "/f.py"))
    assert t["one"]["outlets"] == ["s3://b/x"], t["one"]
    assert t["two"]["outlets"] == ["s3://b/x", "file:///y"], t["two"]
    assert "outlets" not in t["none"], t["none"]
    assert d.task_dict["two"].params == {"own": 2} and d.task_dict["one"].params == {}


def test_task_bash_and_get_current_context(tmp_path):
    """`@task.bash`: the function's string is the command (rendered, its values through
    variables), its last line the XCom; `get_current_context()` in a helper the task calls;
    outside a task it raises."""
    from airflow.exceptions import AirflowException
    from airflow.operators.python import get_current_context

    with pytest.raises(AirflowException):
        get_current_context()
    p = write(tmp_path, "tb.py", """\
        from datetime import datetime
        from airflow.decorators import dag, task
        from airflow.operators.python import get_current_context

        def helper():
            return get_current_context()["ti"].task_id

        @dag(schedule=None, start_date=datetime(2024, 1, 1), params={"who": "a b;c"})
        def tb():
            @task.bash
            def say(n):
                return 'echo "{{ params.who }}" ' + str(n)

            @task
            def me():
                return helper()

            say(3) >> me()

        tb()
        """)
    r, value = run_task(tmp_path, p, "tb", "say", WEIR_PARAM_who="a  b;c")
    assert r.returncode == 0, r
    assert value["return_value"] == "a  b;c 3", value
    r, value = run_task(tmp_path, p, "tb", "me")
    assert r.returncode == 0, r
    assert value["return_value"] == "me", value


def test_with_blocks_of_setups_and_teardowns():
    """`with teardown(setup()):` and `with setup >> teardown:`: the tasks made inside run
    after the setup (the roots among them) and before the teardown (the leaves); a task
    that is neither cannot open a block."""
    from airflow.decorators import setup, teardown

    with DAG("blocks", schedule=None) as d:
        @setup
        def make():
            return 1

        @teardown
        def drop(x):
            return x

        @task
        def a():
            return 1

        @task
        def b(x):
            return x

        with drop(make()):
            b(a())
        s = BashOperator(task_id="s", bash_command="true").as_setup()
        t = BashOperator(task_id="t", bash_command="true")
        with s >> t.as_teardown(setups=s):
            BashOperator(task_id="inside", bash_command="true")
        with pytest.raises(TypeError, match="only a setup or a teardown"):
            with BashOperator(task_id="plain", bash_command="true"):
                pass
    up = {k: sorted(v.upstream_task_ids) for k, v in d.task_dict.items()}
    assert up["a"] == ["make"] and up["b"] == ["a"], up
    assert up["drop"] == ["b", "make"], up
    assert up["inside"] == ["s"] and up["t"] == ["inside", "s"], up


def far_away():
    return 1


def test_external_python_xcomarg_fields_and_templates_exts(tmp_path):
    """ExternalPythonOperator runs the function's source in the interpreter named, its
    pickled value back; PythonVirtualenvOperator takes Airflow's arguments (a serializer
    that is not one of Airflow's is refused when made); an XComArg in a template field (`bash_command=XComArg(t,
    key=...)`) makes its task upstream and pushed and is its value at run time;
    `templates_exts` makes a templates_dict value a template file."""
    from airflow.operators.python import (ExternalPythonOperator, PythonVirtualenvOperator,
                                          is_venv_installed)

    assert is_venv_installed() is True  # python3-venv (tests/install-deps.sh)
    with pytest.raises(ValueError, match="serializer 'json'"):
        PythonVirtualenvOperator(task_id="v", python_callable=far_away, serializer="json")
    with pytest.raises(TypeError, match="defined with def"):
        ExternalPythonOperator(task_id="l", python=sys.executable, python_callable=lambda: 1)
    (tmp_path / "q.sql").write_text("day {{ ds }}\n")
    p = write(tmp_path, "ext.py", """\
        import sys
        from datetime import datetime
        from airflow import DAG
        from airflow.decorators import task
        from airflow.models.xcom_arg import XComArg
        from airflow.operators.bash import BashOperator
        from airflow.operators.python import ExternalPythonOperator, PythonOperator

        def far(a, b=0):
            return {"sum": a + b}

        with DAG("ext", schedule=None, start_date=datetime(2024, 1, 1)):
            ExternalPythonOperator(task_id="far", python=sys.executable, python_callable=far,
                                   op_args=[40], op_kwargs={"b": 2})
            PythonOperator(task_id="sql", python_callable=lambda templates_dict: templates_dict,
                           templates_dict={"q": "q.sql"}, templates_exts=[".sql"])

            @task
            def cmd():
                return "echo made"

            BashOperator(task_id="run", bash_command=cmd())
            BashOperator(task_id="run_key", bash_command=XComArg(cmd.override(task_id="c2")(),
                                                                 key="k"))
        """)
    r, value = run_task(tmp_path, p, "ext", "far")
    assert r.returncode == 0, r
    assert value["return_value"] == {"sum": 42}, value
    r, value = run_task(tmp_path, p, "ext", "sql")
    assert r.returncode == 0, r
    assert value["return_value"] == {"q": "day 2024-03-01"}, value
    answer = processor(p)
    assert "dags" in answer, answer
    t = by_id(answer["dags"][0])
    assert t["run"]["depends_on"] == ["cmd"] and t["run_key"]["depends_on"] == ["c2"], t
    assert "_weir_airflow.run_task" in t["cmd"]["command"], t["cmd"]


def test_dag_run_conf_leaves_out_params_at_their_defaults(tmp_path):
    """`dag_run.conf` (and `ti.dag_run.conf`) holds the trigger's keys only: a typed Param
    at its default is not in it (weir gives a task every param as WEIR_PARAM_<NAME>)."""
    p = write(tmp_path, "pc.py", """\
        from datetime import datetime
        from airflow import DAG
        from airflow.models.param import Param
        from airflow.operators.python import PythonOperator

        def read(ti, dag_run):
            return [dict(dag_run.conf), dict(ti.dag_run.conf), ti.task.task_id]

        with DAG("pc", schedule=None, start_date=datetime(2024, 1, 1),
                 params={"n": Param(3, type="integer"), "s": "x"}):
            PythonOperator(task_id="t", python_callable=read)
        """)
    r, value = run_task(tmp_path, p, "pc", "t", WEIR_PARAM_n="3", WEIR_PARAM_s="x")
    assert r.returncode == 0, r
    assert value["return_value"] == [{}, {}, "t"], value
    r, value = run_task(tmp_path, p, "pc", "t", WEIR_PARAM_n="4", WEIR_PARAM_s="x")
    assert value["return_value"][0] == {"n": 4}, value


def test_xcomarg_in_an_fstring_and_priority_weights():
    """str(XComArg) is the template that pulls it (Airflow's: an XComArg in an f-string of
    a bash_command); priority_weight added up by weight_rule becomes weir's priority, left
    out while every task keeps the defaults."""
    from airflow.models.xcom_arg import XComArg
    from airflow.operators.empty import EmptyOperator
    from airflow.utils.weight_rule import WeightRule

    with DAG("fs", schedule=None) as d:
        push = BashOperator(task_id="push", bash_command="echo {{ ds }}")
        pull = BashOperator(task_id="pull", bash_command=f"echo {XComArg(push, key='k')}")
        push >> pull
    assert pull.bash_command == \
        "echo {{ task_instance.xcom_pull(task_ids='push', dag_id='fs', key='k') }}"
    assert "priority" not in by_id(dag_to_spec(d, "/f.py"))["push"]
    with DAG("w", schedule=None) as d:
        a = EmptyOperator(task_id="a")
        b = EmptyOperator(task_id="b", priority_weight=4, weight_rule=WeightRule.UPSTREAM)
        c = EmptyOperator(task_id="c", priority_weight=10, weight_rule="absolute")
        a >> b >> c
    t = by_id(dag_to_spec(d, "/f.py"))
    assert [t[i]["priority"] for i in "abc"] == [15, 5, 10], t
    with pytest.raises(ValueError, match="weight_rule"):
        EmptyOperator(task_id="x", weight_rule="sideways", dag=d)


def test_state_names_timezone_and_chain_linear():
    """airflow.utils.state's names are the state words (in a sensor's allowed_states too),
    airflow.utils.timezone makes aware UTC datetimes, chain_linear joins each element to
    every task of the next."""
    from airflow.models.baseoperator import chain_linear
    from airflow.operators.empty import EmptyOperator
    from airflow.sensors.external_task import ExternalTaskSensor
    from airflow.utils import timezone
    from airflow.utils.state import DagRunState, State, TaskInstanceState
    from airflow.utils.types import DagRunType

    assert timezone.datetime(2024, 1, 1).utcoffset() == dt.timedelta(0)
    assert timezone.parse("2024-01-01T05:00:00").tzinfo is not None
    assert str(DagRunState.FAILED) == "failed" and State.SKIPPED == "skipped"
    assert DagRunType.MANUAL.generate_run_id(dt.datetime(2024, 1, 1)) == \
        "manual__2024-01-01T00:00:00"
    with DAG("sn", schedule=None, start_date=timezone.datetime(2024, 1, 1)) as d:
        s = ExternalTaskSensor(task_id="s", external_dag_id="x", external_task_id="y",
                               allowed_states=[State.SUCCESS],
                               failed_states=[TaskInstanceState.FAILED])
        a, b, c = (EmptyOperator(task_id=n) for n in "abc")
        chain_linear(s, [a, b], c)
    doc = json.loads(json.dumps(dag_to_spec(d, "/f.py")))
    t = by_id(doc)
    assert t["c"]["depends_on"] == ["a", "b"] and t["a"]["depends_on"] == ["s"], t
    assert "success" in json.dumps(t["s"]) and "failed" in json.dumps(t["s"]), t["s"]


def test_airflow_configuration_from_the_environment(tmp_path):
    """`airflow.configuration.conf` and the context's `conf`: Airflow's AIRFLOW__SECTION__KEY
    overrides; another key is its fallback."""
    from airflow.configuration import from_environment

    c = from_environment({"AIRFLOW__CORE__PARALLELISM": "8", "AIRFLOW__X": "no"})
    assert c.getint("core", "parallelism") == 8
    assert c.get("core", "dags_folder", fallback="none") == "none"
    p = write(tmp_path, "cf.py", """\
        from datetime import datetime
        from airflow import DAG
        from airflow.configuration import conf as module_conf
        from airflow.operators.python import PythonOperator

        def read(conf):
            return [conf.get("webserver", "base_url"),
                    module_conf.get("webserver", "base_url", fallback=None)]

        with DAG("cf", schedule=None, start_date=datetime(2024, 1, 1)):
            PythonOperator(task_id="t", python_callable=read)
        """)
    r, value = run_task(tmp_path, p, "cf", "t", AIRFLOW__WEBSERVER__BASE_URL="http://w")
    assert r.returncode == 0, r
    assert value["return_value"] == ["http://w", "http://w"], value
