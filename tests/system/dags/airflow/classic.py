"""An Airflow 1.10-style DAG file: a with-block, the old import paths, default_args, a
chain of Bash and Python tasks that pass values by XCom (weir's system tests)."""
from datetime import datetime, timedelta

from airflow import DAG
from airflow.operators.bash_operator import BashOperator
from airflow.operators.dummy_operator import DummyOperator
from airflow.operators.python_operator import PythonOperator
from airflow.utils.trigger_rule import TriggerRule

SIDE = "@SIDE@"

default_args = {
    "owner": "data",
    "retries": 1,
    "retry_delay": timedelta(seconds=5),
}


def count_rows(ds, params, **kwargs):
    # the context by name (ds, params) and the rest as **kwargs
    assert kwargs["dag_run"].run_id == kwargs["run_id"]
    return {"rows": 3, "day": ds, "who": params["who"]}


def report(factor, ti, **context):
    got = ti.xcom_pull(task_ids="count_rows")
    with open(SIDE + "/classic_report", "w") as f:
        f.write("%s %d %s\n" % (got["day"], got["rows"] * factor, got["who"]))
    return got["rows"] * factor


with DAG(
    "classic",
    default_args=default_args,
    description="the classic way",
    schedule_interval="@daily",
    start_date=datetime(2099, 1, 1),  # no scheduled run beside the test's
    catchup=False,
    tags=["example", "classic"],
    params={"who": "world"},
) as dag:
    start = DummyOperator(task_id="start")
    extract = BashOperator(task_id="extract", bash_command="echo extracted > " + SIDE + "/classic_extract")
    count = PythonOperator(task_id="count_rows", python_callable=count_rows)
    summary = PythonOperator(task_id="summary", python_callable=report, op_kwargs={"factor": 10})
    templated = BashOperator(
        task_id="templated",
        bash_command="echo '{{ ds }} {{ params.who }} {{ ti.xcom_pull(task_ids=\"count_rows\")[\"rows\"] }}' > " + SIDE + "/classic_templated",
    )
    end = DummyOperator(task_id="end", trigger_rule=TriggerRule.ALL_DONE)

    start >> extract >> count
    count.set_downstream(summary)
    templated.set_upstream(count)
    [summary, templated] >> end
