"""Corpus: more of example_python_operator, example_passing_xcoms_via_test_command and
example_display_name (templates_dict with a .sql template file and templates_exts, a
module logger, a task's return value as another's bash_command, XComArg with a key,
ExternalPythonOperator and @task.external_python, the virtualenv task behind
is_venv_installed(), display names)."""
import logging
import sys

import pendulum

from airflow.decorators import dag, task
from airflow.models.xcom_arg import XComArg
from airflow.operators.bash import BashOperator
from airflow.operators.empty import EmptyOperator
from airflow.operators.python import (
    ExternalPythonOperator,
    PythonOperator,
    PythonVirtualenvOperator,
    is_venv_installed,
)

log = logging.getLogger(__name__)
INTERPRETER = sys.executable


@dag(start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), schedule=None, catchup=False,
     tags=["corpus"], dag_display_name="Corpus: more Python")
def corpus_python_more():
    def query_of(**kwargs):
        log.info("the query: %s", kwargs["templates_dict"]["query"])
        return kwargs["templates_dict"]["query"].strip()

    q = PythonOperator(task_id="query_of", python_callable=query_of,
                       templates_dict={"query": "sql/count_orders.sql"},
                       templates_exts=[".sql"])

    @task
    def make_command():
        return "echo from-a-task"

    BashOperator(task_id="run_made", bash_command=make_command())
    keeper = BashOperator(
        task_id="keeper",
        bash_command='true {{ ti.xcom_push(key="later", value="echo pushed-by-template") }}')
    BashOperator(task_id="run_kept", bash_command=XComArg(keeper, key="later"))

    def elsewhere(a, b=1):
        import sys as inner_sys
        return [a + b, inner_sys.version_info[0]]

    ExternalPythonOperator(task_id="external", python=INTERPRETER, python_callable=elsewhere,
                           op_args=[40], op_kwargs={"b": 2})

    @task.external_python(python=INTERPRETER)
    def decorated_elsewhere(x):
        return x * 2

    decorated_elsewhere(21)

    if is_venv_installed():
        # the example's colorama==0.4.0 comes from PyPI, which the tests cannot reach: a
        # requirement the system's packages satisfy (system_site_packages) is installed as
        # pip installs it offline
        PythonVirtualenvOperator(task_id="venv", python_callable=elsewhere, op_args=[1],
                                 requirements=["jinja2"])

    shown = EmptyOperator(task_id="shown", task_display_name="A task with a display name")

    @task(task_display_name="Another display name")
    def quiet(*args, **kwargs):
        return len(args) + len(kwargs) > 0

    q >> shown >> quiet()


corpus_python_more()
