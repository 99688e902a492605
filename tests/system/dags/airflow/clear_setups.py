"""Clearing a task with its setups and teardowns, as Airflow 2 clears them
(tests/system/test_airflow_clear.py)."""
from datetime import datetime

from airflow import DAG
from airflow.operators.bash import BashOperator

SIDE = "@SIDE@"


def step(task_id):
    return BashOperator(task_id=task_id, bash_command="echo %s >> %s/ran" % (task_id, SIDE))


with DAG("clear_setups", schedule=None, start_date=datetime(2024, 1, 1)):
    create, work, delete = step("create"), step("work"), step("delete")
    create.as_setup()
    create >> work >> delete.as_teardown(setups=create)
    # a setup without a teardown is relevant to the task below it
    lock = step("lock").as_setup()
    lock >> work
    # a setup whose teardown is not below the task is not
    other_setup, other_teardown = step("other_setup"), step("other_teardown")
    other_setup.as_setup() >> other_teardown.as_teardown(setups=other_setup)
    other_setup >> work
    # a plain task above: not cleared (no include_upstream)
    before = step("before")
    before >> work
    after = step("after")
    work >> after
