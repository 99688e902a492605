"""Corpus: Params as example_params_trigger_ui / example_params_ui_tutorial (typed Params with
defaults, enum, a conf over them; the values read in Python and in a template)."""
import datetime

from airflow.decorators import task
from airflow.models.dag import DAG
from airflow.models.param import Param

with DAG(
    dag_id="corpus_params_ui",
    start_date=datetime.datetime(2024, 1, 1),
    schedule=None,
    catchup=False,
    tags=["corpus"],
    params={
        "names": Param(["ann", "bo"], type="array", description="who to greet"),
        "tone": Param("plain", enum=["plain", "loud"]),
        "times": Param(1, type="integer", minimum=1, maximum=5),
        "note": Param(None, type=["null", "string"]),
    },
) as dag:

    @task(task_id="greet")
    def greet(**kwargs):
        p = kwargs["params"]
        words = ["hello " + n for n in p["names"]] * p["times"]
        if p["tone"] == "loud":
            words = [w.upper() for w in words]
        return words

    @task(task_id="templated")
    def templated(text):
        return text

    greet() >> templated("{{ params.tone }}/{{ params.times }}")
