"""Dynamic task mapping as Airflow users write it (tests/system/test_airflow_mapping.py)."""
import json
from datetime import datetime

from airflow import DAG
from airflow.decorators import task
from airflow.operators.bash import BashOperator
from airflow.operators.python import PythonOperator

SIDE = "@SIDE@"


def times(x, factor):
    return x * factor


class Shout(BashOperator):
    """A team's own operator, mapped like any other."""


with DAG("mapping", schedule=None, start_date=datetime(2024, 1, 1), catchup=False):
    @task
    def numbers():
        return [1, 2, 3]

    @task
    def pairs():
        return [{"x": 1, "y": 2}, {"x": 3, "y": 4}]

    @task
    def nothing():
        return []

    @task(map_index_template="{{ name }}")
    def add(x, y):
        from airflow.operators.python import get_current_context

        get_current_context()["name"] = "x=%s" % x
        return x + y

    @task
    def total(values):
        with open(SIDE + "/total", "w") as f:
            json.dump(list(values), f)
        return sum(values)

    nums = numbers()
    added = add.partial(y=10).expand(x=nums)                         # over an upstream's list
    total(added)                                                     # the reducer
    crossed = add.override(task_id="crossed").expand(x=[1, 2], y=[10, 20])  # literal product
    kwargs = add.override(task_id="kwargs").expand_kwargs(pairs())    # expand_kwargs, XCom
    zipped = add.override(task_id="zipped").expand_kwargs(
        nums.zip(nums).map(lambda p: {"x": p[0], "y": p[1]}))        # zip and map
    empty = add.override(task_id="empty").expand(x=nothing(), y=[1])  # empty: skipped
    classic = PythonOperator.partial(task_id="classic", python_callable=times,
                                     op_kwargs={"factor": 3}).expand(op_args=[[1], [2]])
    echo = Shout.partial(task_id="echo", map_index_template="{{ task.bash_command }}").expand(
        bash_command=["echo a", "echo b"])
