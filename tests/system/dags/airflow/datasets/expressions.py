"""Dataset expressions and events, written as an Airflow 2.9/2.10 user writes them: a producer
that gives its update an extra, consumers on `|` and on `(a | b) & c` that read the events
that triggered them."""
from datetime import datetime

from airflow import DAG
from airflow.datasets import Dataset
from airflow.decorators import task

raw = Dataset("s3://lake/raw")
fixes = Dataset("s3://lake/fixes")
ref = Dataset("file:///ref/table.csv")

with DAG("produce_raw", schedule=None, start_date=datetime(2024, 1, 1), catchup=False):

    @task(outlets=[raw], inlets=[ref])
    def write(*, outlet_events, inlets):
        outlet_events[raw].extra["rows"] = 42
        outlet_events[raw].extra["inlets"] = [d.uri for d in inlets]
        return "written"

    write()


def seen(triggering_dataset_events, dag_run):
    """What the run was started by: per URI, its events' fields."""
    return {"conf": dag_run.conf,
            "events": {uri: [{"extra": e.extra, "dag": e.source_dag_id,
                              "task": e.source_task_id, "run": e.source_run_id,
                              "uri": e.uri, "aware": e.timestamp.tzinfo is not None}
                             for e in events]
                       for uri, events in triggering_dataset_events.items()}}


with DAG("on_either", schedule=raw | fixes, start_date=datetime(2024, 1, 1)):
    task(task_id="seen")(seen)()

with DAG("on_nested", schedule=(raw | fixes) & ref, start_date=datetime(2024, 1, 1)):
    task(task_id="seen")(seen)()
