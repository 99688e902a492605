"""Conformance: a DAG file of the Airflow 1.10 era that Airflow 2 still runs: the old
import paths (bash_operator, python_operator with its branch and short circuit,
dummy_operator, latest_only_operator, base_hook, days_ago), `provide_context=True`, a custom
operator with `@apply_defaults` (its pre_execute, post_execute, self.xcom_push and
self.xcom_pull), `schedule_interval`, `from airflow.models import DagRun`."""
from datetime import timedelta

from airflow import DAG
from airflow.exceptions import AirflowTaskTimeout
from airflow.hooks.base_hook import BaseHook
from airflow.models import BaseOperator, DagRun, TaskInstance
from airflow.operators.bash_operator import BashOperator
from airflow.operators.dummy_operator import DummyOperator
from airflow.operators.latest_only_operator import LatestOnlyOperator
from airflow.operators.python_operator import (BranchPythonOperator, PythonOperator,
                                               ShortCircuitOperator)
from airflow.utils.dates import days_ago
from airflow.utils.decorators import apply_defaults

default_args = {
    "owner": "airflow",
    "depends_on_past": False,
    "start_date": days_ago(2),
    "email": ["ops@example.com"],
    "email_on_failure": False,
    "email_on_retry": False,
    "retries": 0,
    "retry_delay": timedelta(minutes=5),
}


class GreetOperator(BaseOperator):
    template_fields = ("who",)
    ui_color = "#e8f7e4"

    @apply_defaults
    def __init__(self, who, *args, **kwargs):
        super(GreetOperator, self).__init__(*args, **kwargs)
        self.who = who

    def pre_execute(self, context):
        self.prefix = "hello"

    def execute(self, context):
        self.log.info("greeting %s", self.who)
        self.xcom_push(context, key="who", value=self.who)
        assert self.xcom_pull(context, task_ids="pick") == "go_on"
        return "%s %s" % (self.prefix, self.who)

    def post_execute(self, context, result=None):
        self.log.info("post_execute saw %r", result)


def choose(**context):
    assert isinstance(context["dag_run"], DagRun) or context["dag_run"] is not None
    assert context["ti"] is not None and TaskInstance is not None
    return "go_on"


def keep_going(**kwargs):
    return kwargs["ds"] is not None


def use_conn_class(**kwargs):
    assert BaseHook.get_connection is not None and issubclass(AirflowTaskTimeout, BaseException)
    return kwargs["task_instance"].task_id


dag = DAG(
    "conf_old_paths",
    default_args=default_args,
    description="an Airflow 1.10 style DAG",
    schedule_interval=timedelta(days=1),
    catchup=False,
    tags=["conformance"],
)

start = DummyOperator(task_id="start", dag=dag)
pick = BranchPythonOperator(task_id="pick", python_callable=choose, provide_context=True,
                            dag=dag)
go_on = DummyOperator(task_id="go_on", dag=dag)
never = DummyOperator(task_id="never", dag=dag)
gate = ShortCircuitOperator(task_id="gate", python_callable=keep_going, provide_context=True,
                            dag=dag)
greet = GreetOperator(task_id="greet", who="{{ dag.dag_id }}", dag=dag)
latest = LatestOnlyOperator(task_id="latest", dag=dag)
shell = BashOperator(task_id="shell", bash_command="echo {{ ds_nodash }}", dag=dag)
py = PythonOperator(task_id="py", python_callable=use_conn_class, provide_context=True,
                    dag=dag)

start >> pick >> [go_on, never]
go_on >> gate >> greet >> latest >> shell >> py
