"""A Python DAG whose run outlives a kill -9 of the server: b waits for a file the test writes."""
from datetime import datetime

from airflow import DAG
from airflow.decorators import task
from airflow.operators.bash import BashOperator

SIDE = "@SIDE@"

with DAG("survive", schedule=None, start_date=datetime(2024, 1, 1)):
    @task
    def a():
        with open(SIDE + "/a", "a") as f:
            f.write("a\n")
        return {"from": "a"}

    b = BashOperator(task_id="b", bash_command="echo b >> %s/b; while [ ! -e %s/go ]; do "
                     "sleep 0.05; done" % (SIDE, SIDE))

    @task
    def c(value):
        with open(SIDE + "/c", "a") as f:
            f.write("c got %s\n" % value["from"])

    value = a()
    value >> b >> c(value)
