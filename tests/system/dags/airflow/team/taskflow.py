"""A TaskFlow DAG (@dag, @task) in a subfolder: return values passed as arguments."""
import pendulum

from airflow.decorators import dag, task
from airflow.models.baseoperator import chain
from airflow.operators.bash import BashOperator
from airflow.operators.empty import EmptyOperator

SIDE = "@SIDE@"


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False,
     tags=["taskflow"], max_active_runs=2)
def taskflow_etl():
    @task()
    def extract():
        return {"a": 1, "b": 2, "text": "1 + 2"}

    @task(multiple_outputs=False)
    def transform(data: dict, logical_date=None):
        return {"total": data["a"] + data["b"], "year": logical_date.year}

    @task
    def load(result, label="sum"):
        with open(SIDE + "/taskflow_load", "w") as f:
            f.write("%s=%d\n" % (label, result["total"]))

    done = EmptyOperator(task_id="done")
    note = BashOperator(task_id="note", bash_command="echo noted >> " + SIDE + "/taskflow_note")
    chain(load(transform(extract()), label="total"), note, done)


taskflow_etl()
