"""Airflow 2.10's dataset aliases and events as its users write them: a DAG scheduled on a
DatasetAlias (alone and in an expression), a task that yields Metadata for its outlets, and a
task that reads the latest events of its inlets."""
import pendulum

from airflow import DAG
from airflow.datasets import Dataset, DatasetAlias
from airflow.datasets.metadata import Metadata
from airflow.decorators import task

START = pendulum.datetime(2024, 1, 1, tz="UTC")
EXPORTS = DatasetAlias("daily-export")
SUMMARY = Dataset("s3://exports/summary")

with DAG("export_daily", schedule=None, start_date=START):

    @task(outlets=[EXPORTS])
    def export(ds=None, *, outlet_events):
        # the partition is known only now: its dataset's event goes through the alias
        outlet_events[EXPORTS].add(Dataset(f"s3://exports/{ds}"), extra={"day": ds})

    export()

with DAG("summarize", schedule=None, start_date=START):

    @task(outlets=[SUMMARY])
    def count_rows():
        yield Metadata(SUMMARY, {"rows": 7})
        return "counted"

    @task(outlets=[EXPORTS])
    def late_partition(ds=None):
        yield Metadata(Dataset(f"s3://exports/late-{ds}"), {"late": True}, alias=EXPORTS)

    count_rows() >> late_partition()

with DAG("on_exports", schedule=[EXPORTS], start_date=START):

    @task
    def load(triggering_dataset_events=None):
        return {uri: [e.extra for e in events]
                for uri, events in triggering_dataset_events.items()}

    load()

with DAG("on_exports_or_summary", schedule=EXPORTS | SUMMARY, start_date=START):

    @task
    def refresh(triggering_dataset_events=None):
        return sorted(triggering_dataset_events)

    refresh()

with DAG("audit", schedule=None, start_date=START):

    @task(inlets=[SUMMARY, EXPORTS, Dataset("s3://exports/2024-01-01")])
    def check(*, inlet_events):
        day = inlet_events[Dataset("s3://exports/2024-01-01")]
        return {
            "summary": inlet_events[SUMMARY][-1].extra,
            "summary_by_index": inlet_events[0][-1].source_task_id,
            "through_alias": [(e.uri, e.extra, e.source_dag_id)
                              for e in inlet_events[EXPORTS]],
            "day": [(e.extra, e.source_dag_id) for e in day],
            "day_latest_aware": day[-1].timestamp.tzinfo is not None,
            "by_uri": len(inlet_events["s3://exports/2024-01-01"]),
            "inlets": len(inlet_events),
        }

    check()
