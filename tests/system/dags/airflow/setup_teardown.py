"""Setup and teardown tasks written as Airflow users write them (weir's system tests,
test_airflow_semantics.py): the teardown runs after a failed work task, its own failure does
not fail the run, and the run fails on the work task."""
from datetime import datetime

from airflow import DAG
from airflow.decorators import setup, task, teardown
from airflow.operators.bash import BashOperator

SIDE = "@SIDE@"


def note(name):
    with open(SIDE + "/" + name, "a") as f:
        f.write("ran\n")


with DAG("setup_teardown", schedule=None, start_date=datetime(2024, 1, 1),
         params={"work_fails": False}):
    @setup
    def create_cluster():
        note("st_create")

    @task
    def work(params=None):
        note("st_work")
        if params["work_fails"]:
            raise RuntimeError("the job broke")

    @teardown
    def delete_cluster():
        note("st_delete")
        raise RuntimeError("the cluster was gone already")

    c = create_cluster()
    w = work()
    d = delete_cluster()
    c >> w >> d
    d.as_teardown(setups=c)

    # the classic way: as_setup / as_teardown on operators
    mk = BashOperator(task_id="mkdir", bash_command="true").as_setup()
    use = BashOperator(task_id="use", bash_command="true")
    rm = BashOperator(task_id="rmdir", bash_command="true")
    mk >> use >> rm.as_teardown(setups=mk, on_failure_fail_dagrun=True)
