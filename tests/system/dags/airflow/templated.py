"""Templates in a Python DAG file (weir's system tests): Airflow's context and macros in a
BashOperator's command, a PythonOperator's templates_dict and op_args, and a .sh template
file found through template_searchpath; every value comes back as the task's XCom."""
from datetime import datetime

from airflow import DAG
from airflow.operators.bash import BashOperator
from airflow.operators.python import PythonOperator

TEMPLATES = {
    "ds": "{{ ds }}",
    "yesterday": "{{ macros.ds_add(ds, -1) }}",
    "x": "{{ params.x }}",
    "conf": "{{ dag_run.conf }}",
    "up": "{{ ti.xcom_pull(task_ids='up') }}",
    "start": "{{ data_interval_start }}",
    "end": "{{ data_interval_end }}",
    "prev_ds": "{{ prev_ds }}",
    "next_ds": "{{ next_ds }}",
    "run_type": "{{ dag_run.run_type }}",
}


def up():
    return "from up"


def show(nodash, templates_dict, **context):
    return dict(templates_dict, nodash=nodash, logical=context["logical_date"].isoformat())


with DAG("templated", schedule="@daily", start_date=datetime(2099, 1, 1), catchup=False,
         params={"x": "default", "n": 1}, template_searchpath=["@TPL@"]):
    first = PythonOperator(task_id="up", python_callable=up)
    py = PythonOperator(task_id="py", python_callable=show, templates_dict=TEMPLATES,
                        op_args=["{{ ds_nodash }}"])
    bash = BashOperator(
        task_id="bash",
        bash_command="echo {{ ds }} {{ macros.ds_add(ds, -1) }} {{ params.x }} "
                     "{{ dag_run.conf }} {{ ti.xcom_pull(task_ids='up') }}")
    script = BashOperator(task_id="script", bash_command="report.sh")
    first >> [py, bash, script]
