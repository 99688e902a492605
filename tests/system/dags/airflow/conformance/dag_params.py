"""Conformance: a `@dag` function's parameters are the DAG's params (Airflow 2): the body
sees each as a DagParam, and a task given one receives the run's value, the trigger's conf
over the default."""
import pendulum

from airflow.decorators import dag, task


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False,
     tags=["conformance"])
def conf_dag_params(value: int = 3, word="hi"):
    @task
    def show(v, w, params=None):
        return [v, w, params["value"], params["word"]]

    show(value, w=word)


conf_dag_params()
