"""Dynamic task mapping without a server (_weir_airflow.mapping, docs/airflow.md): a mapped
task's `foreach` in the spec (indexes over literals, an upstream's list of indexes), the
instances' arguments (cross product, expand_kwargs, zip, map), what an upstream pushes for
its mapped tasks, an instance's operator built at run time, and the expansions weir refuses."""

import datetime as dt
import sys

import pytest

from conftest import REPO

SITE = REPO / "python" / "weir" / "compat" / "airflow" / "site"
sys.path.insert(0, str(SITE))

from airflow import DAG  # noqa: E402
from airflow.decorators import task  # noqa: E402
from airflow.operators.bash import BashOperator  # noqa: E402
from airflow.operators.python import PythonOperator  # noqa: E402

from _weir_airflow import mapping  # noqa: E402
from _weir_airflow.run_task import TaskInstance  # noqa: E402
from _weir_airflow.spec import SpecError, dag_to_spec  # noqa: E402

START = dt.datetime(2024, 1, 1)


def tasks_of(dag):
    return {t["task_id"]: t for t in dag_to_spec(dag, "/dags/x.py", "python3")["tasks"]}


@task
def add(x, y=0):
    return x + y


@task
def numbers():
    return [1, 2, 3]


def test_literal_expansions_are_index_lists():
    with DAG("m", schedule=None, start_date=START) as dag:
        add.expand(x=[1, 2], y=[10, 20, 30])
        add.expand_kwargs([{"x": 1}, {"x": 2}])
        add.expand(x=[])
        BashOperator.partial(task_id="b", retries=2).expand(bash_command=["echo a", "echo b"])
        add.expand(x={"a": 1, "b": 2})
    t = tasks_of(dag)
    assert t["add"]["foreach"] == list(range(6))
    assert t["add__1"]["foreach"] == [0, 1]
    assert t["add__2"]["foreach"] == []
    assert t["b"]["foreach"] == [0, 1] and t["b"]["retries"] == 2
    assert "_weir_airflow.run_task" in t["b"]["command"]
    assert t["b"]["operator"] == "airflow.operators.bash.BashOperator"
    assert t["add__3"]["foreach"] == [0, 1]
    # cross product, the last argument fastest; a dict's (key, value) pairs
    assert mapping.instances(dag.task_dict["add"], None)[:4] == [
        {"x": 1, "y": 10}, {"x": 1, "y": 20}, {"x": 1, "y": 30}, {"x": 2, "y": 10}]
    assert mapping.instances(dag.task_dict["add__3"], None) == [
        {"x": ("a", 1)}, {"x": ("b", 2)}]


def test_an_upstreams_list_is_expanded_by_the_upstream():
    with DAG("m", schedule=None, start_date=START) as dag:
        nums = numbers()
        add.partial(y=1).expand(x=nums)
        add.expand_kwargs(nums.zip(nums).map(lambda p: {"x": p[0], "y": p[1]}))
    t = tasks_of(dag)
    assert t["add"]["foreach"] == "{{ outputs.numbers.weir_expand_add }}"
    assert t["add"]["depends_on"] == ["numbers"]
    assert t["add__1"]["foreach"] == "{{ outputs.numbers.weir_expand_add__1 }}"
    # the upstream pushes each mapped task's indexes when it ends
    ti = TaskInstance("m", "numbers", "r", 1, -1, {})
    mapping.push_expansions(dag, dag.task_dict["numbers"], ti, [5, 6, 7, 8])
    assert ti.pushed == {"weir_expand_add": [0, 1, 2, 3], "weir_expand_add__1": [0, 1, 2, 3]}
    # an instance builds its operator with its own arguments
    outputs = {"numbers": {"-1": {"return_value": [5, 6, 7, 8]}}}
    ti = TaskInstance("m", "add__1", "r", 1, 2, outputs)
    op = mapping.unmap(dag.task_dict["add__1"], ti)
    assert isinstance(op, PythonOperator) and op.op_kwargs == {"x": 7, "y": 7}
    assert op.task_id == "add__1" and dag.task_dict["add__1"] is not op
    assert op.weir_expanded_count == 4
    ti = TaskInstance("m", "add", "r", 1, 0, outputs)
    assert mapping.unmap(dag.task_dict["add"], ti).op_kwargs == {"x": 5, "y": 1}


def test_a_group_task_id_makes_a_template_key():
    assert mapping.expand_key("a.b").startswith("weir_expand_a_b_")
    assert mapping.expand_key("a.b") != mapping.expand_key("a_b")


def test_expansions_weir_refuses():
    # over two upstream tasks (their product) and over a mapped task: both are weir's now
    with DAG("m1", schedule=None, start_date=START) as dag:
        add.expand(x=numbers(), y=numbers())
    assert "foreach" in tasks_of(dag)["add"]
    # a zip across two tasks is not
    with DAG("m2", schedule=None, start_date=START) as dag:
        add.expand(x=numbers().zip(numbers()))
    with pytest.raises(SpecError, match="a zip across tasks"):
        tasks_of(dag)
    with DAG("m3", schedule=None, start_date=START):
        with pytest.raises(ValueError, match="expected a list"):
            add.expand(x=5)
        with pytest.raises(TypeError, match="partial"):
            add.partial(x=1).expand(x=[1])
        with pytest.raises(TypeError, match="missing task_id"):
            PythonOperator.partial(python_callable=print)


def test_sla_and_the_dags_callbacks_in_the_spec():
    def cb(context):
        pass

    with DAG("cb", schedule=None, start_date=START, on_failure_callback=[cb],
             default_args={"sla": dt.timedelta(minutes=5), "on_failure_callback": cb}) as dag:
        add(1)
    doc = dag_to_spec(dag, "/dags/x.py", "python3")
    t = doc["tasks"][0]
    assert t["sla"] == {"within": 300, "from": "run_start"}
    assert "on_success" not in doc
    [note] = doc["on_failure"]
    assert note["as_task_user"] is True and note["retries"] == 0
    assert note["command"].endswith("-m _weir_airflow.dag_callback /dags/x.py cb")
    # a task's callback comes from default_args, as its other arguments
    assert dag.task_dict["add"].other["on_failure_callback"] is cb


def test_dagrun_timeout_in_the_spec():
    """A DAG argument: whole seconds (a fraction counts as one); default_args does not carry
    it; anything but a timedelta above 0 is an error naming it."""
    with DAG("t", schedule=None, start_date=START,
             dagrun_timeout=dt.timedelta(minutes=30)) as dag:
        add(1)
    assert dag_to_spec(dag, "/dags/x.py", "python3")["dagrun_timeout"] == 1800
    with DAG("t2", schedule=None, start_date=START,
             dagrun_timeout=dt.timedelta(seconds=1.5)) as dag:
        add(1)
    assert dag_to_spec(dag, "/dags/x.py", "python3")["dagrun_timeout"] == 2
    with DAG("t3", schedule=None, start_date=START,
             default_args={"dagrun_timeout": dt.timedelta(minutes=1)}) as dag:
        add(1)
    assert "dagrun_timeout" not in dag_to_spec(dag, "/dags/x.py", "python3")
    for bad in ("1h", dt.timedelta(0), 30):
        with DAG("t4", schedule=None, start_date=START, dagrun_timeout=bad) as dag:
            add(1)
        with pytest.raises(SpecError, match="dagrun_timeout"):
            dag_to_spec(dag, "/dags/x.py", "python3")
