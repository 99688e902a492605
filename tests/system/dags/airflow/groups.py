"""Task groups, a branch that chooses a group, labels and cross_downstream, written as
Airflow users write them (weir's system tests, test_airflow_semantics.py)."""
from datetime import datetime

from airflow import DAG
from airflow.decorators import task, task_group
from airflow.models.baseoperator import cross_downstream
from airflow.operators.empty import EmptyOperator
from airflow.operators.python import BranchPythonOperator
from airflow.utils.edgemodifier import Label
from airflow.utils.task_group import TaskGroup

SIDE = "@SIDE@"

with DAG("groups", schedule=None, start_date=datetime(2024, 1, 1)):
    pick = BranchPythonOperator(task_id="pick", python_callable=lambda: "extract")

    with TaskGroup("extract") as extract:
        @task
        def rows():
            return 3

        @task
        def double(n):
            return n * 2

        double(rows())

    with TaskGroup("archive") as archive:
        EmptyOperator(task_id="copy") >> EmptyOperator(task_id="verify")

    @task_group
    def report(n):
        @task
        def write(v, ti=None):
            # an XCom of a task in another group, by its full id
            with open(SIDE + "/groups_report", "w") as f:
                f.write("%s %s\n" % (v, ti.xcom_pull(task_ids="extract.rows")))
        return write(n)

    join = EmptyOperator(task_id="join", trigger_rule="none_failed_min_one_success")
    pick >> Label("today") >> [extract, archive]
    [extract, archive] >> join
    report(extract.children["extract.double"].output) >> join
    cross_downstream([join], [EmptyOperator(task_id="after1"), EmptyOperator(task_id="after2")])
