"""The Airflow API DAG files use, checked without a server (docs/airflow.md): the old import
paths Airflow 2 still imports give the same classes as the new ones, `apply_defaults` is a
no-op, `from airflow.models import DagRun, TaskInstance` works, operators and hooks have
Airflow's `self.log`, and a task's `logging` writes INFO records in Airflow's format."""

import importlib
import logging
import subprocess
import sys

import pytest

from conftest import REPO

SITE = REPO / "python" / "weir" / "compat" / "airflow" / "site"
sys.path.insert(0, str(SITE))

# (old module, name, the module Airflow 2 has it at now)
OLD_PATHS = [
    ("airflow.operators.python_operator", "PythonOperator", "airflow.operators.python"),
    ("airflow.operators.python_operator", "BranchPythonOperator", "airflow.operators.python"),
    ("airflow.operators.python_operator", "ShortCircuitOperator", "airflow.operators.python"),
    ("airflow.operators.python_operator", "PythonVirtualenvOperator",
     "airflow.operators.python"),
    ("airflow.operators.bash_operator", "BashOperator", "airflow.operators.bash"),
    ("airflow.operators.dummy_operator", "DummyOperator", "airflow.operators.dummy"),
    ("airflow.operators.latest_only_operator", "LatestOnlyOperator",
     "airflow.operators.latest_only"),
    ("airflow.operators.branch_operator", "BaseBranchOperator", "airflow.operators.branch"),
    ("airflow.operators.dagrun_operator", "TriggerDagRunOperator",
     "airflow.operators.trigger_dagrun"),
    ("airflow.operators.email_operator", "EmailOperator", "airflow.operators.email"),
    ("airflow.operators.postgres_operator", "PostgresOperator",
     "airflow.providers.postgres.operators.postgres"),
    ("airflow.operators.mysql_operator", "MySqlOperator",
     "airflow.providers.mysql.operators.mysql"),
    ("airflow.operators.http_operator", "SimpleHttpOperator",
     "airflow.providers.http.operators.http"),
    ("airflow.hooks.base_hook", "BaseHook", "airflow.hooks.base"),
    ("airflow.hooks.postgres_hook", "PostgresHook", "airflow.providers.postgres.hooks.postgres"),
    ("airflow.hooks.mysql_hook", "MySqlHook", "airflow.providers.mysql.hooks.mysql"),
    ("airflow.hooks.http_hook", "HttpHook", "airflow.providers.http.hooks.http"),
    ("airflow.hooks.dbapi_hook", "DbApiHook", "airflow.providers.common.sql.hooks.sql"),
    ("airflow.operators.subdag_operator", "SubDagOperator", "airflow.operators.subdag"),
    ("airflow.models", "DagRun", "airflow.models.dagrun"),
    ("airflow.models", "TaskInstance", "airflow.models.taskinstance"),
]


@pytest.mark.parametrize("old,name,new", OLD_PATHS)
def test_an_old_path_gives_the_same_class(old, name, new):
    new_cls = getattr(importlib.import_module(new), name)
    assert getattr(importlib.import_module(old), name) is new_cls


def test_apply_defaults_and_the_exceptions_files_catch():
    from airflow import exceptions
    from airflow.models import BaseOperator
    from airflow.utils.decorators import apply_defaults

    with pytest.warns(DeprecationWarning):
        class Old(BaseOperator):
            @apply_defaults
            def __init__(self, table, *args, **kwargs):
                super().__init__(*args, **kwargs)
                self.table = table

    op = Old(table="t", task_id="old", retries=2)
    assert (op.table, op.retries) == ("t", 2)
    assert issubclass(exceptions.AirflowTaskTimeout, BaseException)
    assert not issubclass(exceptions.AirflowTaskTimeout, Exception)
    assert issubclass(exceptions.AirflowConfigException, exceptions.AirflowException)
    assert exceptions.AirflowBadRequest.status_code == 400
    assert issubclass(exceptions.RemovedInAirflow3Warning, DeprecationWarning)


def test_operators_and_hooks_log_under_airflows_names():
    from airflow.hooks.base import BaseHook
    from airflow.operators.bash import BashOperator
    from airflow.utils.log.logging_mixin import LoggingMixin

    op = BashOperator(task_id="b", bash_command="true")
    assert op.log.name == "airflow.task.operators.airflow.operators.bash.BashOperator"
    assert op.log is op.log and isinstance(op.log, logging.Logger)
    assert BaseHook().log.name == "airflow.task.hooks.airflow.hooks.base.BaseHook"

    class Mine(LoggingMixin):
        pass

    assert Mine().log.name == "%s.Mine" % __name__


def test_a_tasks_logging_writes_info_in_airflows_format():
    code = ("import logging; from _weir_airflow import tasklog; tasklog.setup(); "
            "logging.getLogger('airflow.task').info('rows: %d', 3); logging.debug('no')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={"PYTHONPATH": str(SITE)}, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].endswith("{<string>:1} INFO - rows: 3"), r.stderr
    assert lines[0].startswith("[20"), r.stderr


def test_email_arguments_become_weirs_mail_notifications():
    import datetime as dt

    from airflow import DAG
    from airflow.operators.bash import BashOperator
    from _weir_airflow.spec import dag_to_spec

    mail = {"email": {"conn": "smtp_default", "to": ["a@x.org", "b@x.org"]}}
    with DAG("mails", schedule=None, start_date=dt.datetime(2024, 1, 1),
             default_args={"email": "a@x.org; b@x.org", "email_on_retry": False}) as dag:
        BashOperator(task_id="both_flags", bash_command="true")
        BashOperator(task_id="retry_too", bash_command="true", email_on_retry=True)
        BashOperator(task_id="off", bash_command="true", email_on_failure=False)
        BashOperator(task_id="nobody", bash_command="true", email=None)
    tasks = {t["task_id"]: t for t in dag_to_spec(dag, "/dags/m.py", "python3")["tasks"]}
    got = {k: (t.get("on_failure"), t.get("on_retry")) for k, t in tasks.items()}
    assert got == {"both_flags": ([mail], None), "retry_too": ([mail], [mail]),
                   "off": (None, None), "nobody": (None, None)}


def test_the_attributes_callbacks_and_custom_code_read():
    import datetime as dt

    from airflow import DAG
    from airflow.operators.bash import BashOperator
    from airflow.operators.empty import EmptyOperator
    from airflow.utils.task_group import TaskGroup

    with DAG("attrs", schedule_interval="@hourly", start_date=dt.datetime(2024, 1, 1),
             default_args={"owner": "data", "email": ["a@x.org"]}) as dag:
        first = BashOperator(task_id="first", bash_command="true", run_as_user="etl",
                             executor_config={"cpu": 2})
        with TaskGroup("grp"):
            inner = EmptyOperator(task_id="inner", owner="ops")
        last = EmptyOperator(task_id="last")
        first >> inner >> last
    assert (first.dag_id, first.task_type, first.operator_name) == (
        "attrs", "BashOperator", "BashOperator")
    assert (inner.node_id, inner.label, first.has_dag()) == ("grp.inner", "inner", True)
    assert inner.upstream_list == [first] and inner.downstream_list == [last]
    assert inner.get_direct_relatives(upstream=True) == [first]
    assert inner.get_direct_relative_ids() == {"last"}
    assert (first.email, first.email_on_failure, first.run_as_user) == (["a@x.org"], True, "etl")
    assert (first.executor_config, inner.executor_config) == ({"cpu": 2}, {})
    assert (inner.on_failure_callback, inner.sla, first.ui_color) == (None, None, "#fff")
    with pytest.raises(AttributeError):
        first.no_such_thing
    assert (dag.roots, dag.leaves, dag.task_count) == ([first], [last], 3)
    assert (dag.schedule_interval, dag.owner) == ("@hourly", "data, ops")


def test_a_dag_functions_parameters_are_its_params():
    import datetime as dt

    from airflow.decorators import dag, task
    from airflow.exceptions import AirflowException
    from airflow.models.param import DagParam, resolve_dag_params

    @dag(schedule=None, start_date=dt.datetime(2024, 1, 1))
    def made(size: int = 3, name="n", *, needed):
        @task
        def use(a, b, c):
            return a

        use(size, [name], {"k": needed})

    built = made(needed="x")
    assert built.params == {"size": 3, "name": "n", "needed": "x"}
    op = built.get_task("use")
    assert all(isinstance(a, DagParam) for a in (op.op_args[0], op.op_args[1][0]))
    context = {"params": {"size": 9, "name": "n", "needed": "x"}}
    assert resolve_dag_params(op.op_args, context) == [9, ["n"], {"k": "x"}]
    with pytest.raises(AirflowException, match="parameter size"):
        DagParam(built, "size").resolve({"params": {}})
    with pytest.raises(TypeError):
        made()  # a parameter without a default must be given, as in Airflow


def test_airflow_2_0s_path_of_task():
    import datetime as dt

    from airflow import DAG
    from airflow.models.xcom_arg import XComArg
    from airflow.operators.python import task

    with DAG("old_task", schedule=None, start_date=dt.datetime(2024, 1, 1)) as dag:
        with pytest.warns(DeprecationWarning):
            @task
            def plain():
                return 1

            @task(multiple_outputs=True, retries=2)
            def keyed():
                return {"a": 1}

        assert isinstance(plain(), XComArg) and isinstance(keyed(), XComArg)
    assert dag.task_ids == ["plain", "keyed"]
    op = dag.get_task("keyed")
    assert (op.multiple_outputs, op.retries) == (True, 2)
