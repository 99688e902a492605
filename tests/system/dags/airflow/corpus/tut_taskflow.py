"""Corpus: the TaskFlow tutorial's constructs (@dag, @task, multiple_outputs, values passed
between tasks as arguments)."""
import json

import pendulum

from airflow.decorators import dag, task


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False,
     tags=["corpus"])
def corpus_tut_taskflow():
    """A small extract, transform, load."""

    @task()
    def pull():
        raw = '{"a": 10.5, "b": 20.25, "c": 1.25}'
        return json.loads(raw)

    @task(multiple_outputs=True)
    def sum_up(orders: dict):
        return {"total": sum(orders.values()), "count": len(orders)}

    @task()
    def store(total: float, count: int):
        print("total %.2f over %d" % (total, count))
        return "%.2f/%d" % (total, count)

    summary = sum_up(pull())
    store(summary["total"], summary["count"])


corpus_tut_taskflow()
