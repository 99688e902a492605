"""Branches, short circuits, skips and failures written as Airflow users write them (weir's
system tests, test_airflow_semantics.py)."""
from datetime import datetime, timedelta

from airflow import DAG
from airflow.decorators import task
from airflow.exceptions import AirflowFailException, AirflowSkipException
from airflow.models.baseoperator import BaseOperator
from airflow.operators.bash import BashOperator
from airflow.operators.empty import EmptyOperator
from airflow.operators.latest_only import LatestOnlyOperator
from airflow.operators.python import BranchPythonOperator, PythonOperator, ShortCircuitOperator
from airflow.utils.trigger_rule import TriggerRule

SIDE = "@SIDE@"


def note(name):
    with open(SIDE + "/" + name, "a") as f:
        f.write("ran\n")


def pick(params):
    return "small" if params["rows"] < 10 else "large"


class CountOperator(BaseOperator):
    """A team's own operator: execute(context) returns the value pushed as XCom."""

    template_fields = ("label",)

    def __init__(self, label, **kwargs):
        super().__init__(**kwargs)
        self.label = label

    def execute(self, context):
        note("custom_" + self.label)
        return {"label": self.label, "ds": context["ds"]}


with DAG("branching", schedule=None, start_date=datetime(2024, 1, 1),
         params={"rows": 3, "go_on": False}):
    choose = BranchPythonOperator(task_id="choose", python_callable=pick)
    small = PythonOperator(task_id="small", python_callable=lambda: note("small") or 1)
    large = PythonOperator(task_id="large", python_callable=lambda: note("large") or 2)
    join = EmptyOperator(task_id="join", trigger_rule=TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS)
    after_large = EmptyOperator(task_id="after_large")
    choose >> [small, large] >> join
    large >> after_large

    @task.branch
    def route(ds=None):
        return ["fast"]

    fast = BashOperator(task_id="fast", bash_command="echo fast >> %s/fast" % SIDE)
    slow = BashOperator(task_id="slow", bash_command="echo slow >> %s/slow" % SIDE)
    route() >> [fast, slow]

    gate = ShortCircuitOperator(task_id="gate", python_callable=lambda params: params["go_on"])
    gated = EmptyOperator(task_id="gated")
    gated_all_done = EmptyOperator(task_id="gated_all_done", trigger_rule="all_done")
    gate >> gated >> gated_all_done

    @task.short_circuit(ignore_downstream_trigger_rules=False)
    def soft_gate():
        return []

    soft_below = EmptyOperator(task_id="soft_below")
    soft_all_done = EmptyOperator(task_id="soft_all_done", trigger_rule="all_done")
    soft_gate() >> soft_below >> soft_all_done

    @task(retries=3, retry_delay=timedelta(seconds=1))
    def skipper():
        note("skipper")
        raise AirflowSkipException("nothing to do today")

    @task(retries=3, retry_delay=timedelta(seconds=1))
    def failer():
        note("failer")
        raise AirflowFailException("the input is corrupt: no retry helps")

    @task(trigger_rule="all_done")
    def cleanup():
        note("cleanup")

    skipped, failed = skipper(), failer()
    skipped >> EmptyOperator(task_id="below_skipper")
    [skipped, failed] >> cleanup()
    [skipped, failed] >> EmptyOperator(task_id="one_done", trigger_rule=TriggerRule.ONE_DONE)
    skipped >> EmptyOperator(task_id="one_done_none", trigger_rule="one_done")

    bash_skip = BashOperator(task_id="bash_skip", bash_command="exit 99", retries=2)
    bash_skip >> EmptyOperator(task_id="below_bash_skip")

    latest = LatestOnlyOperator(task_id="latest")
    latest >> EmptyOperator(task_id="after_latest")

    counted = CountOperator(task_id="custom", label="{{ params.rows }}")

    @task
    def read_custom(value):
        note("read_custom_" + value["label"])
        return value["ds"]

    read_custom(counted.output)
