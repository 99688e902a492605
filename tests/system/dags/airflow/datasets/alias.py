"""Airflow 2.10's DatasetAlias as its users write it: a task learns while it runs which
partition it wrote and adds an event of that dataset through the alias."""
from datetime import datetime

from airflow import DAG
from airflow.datasets import Dataset, DatasetAlias
from airflow.decorators import task

with DAG("write_partition", schedule=None, start_date=datetime(2024, 1, 1)):

    @task(outlets=[DatasetAlias("partitions")])
    def write(ds=None, *, outlet_events):
        outlet_events[DatasetAlias("partitions")].add(Dataset("s3://lake/part/" + ds),
                                                      extra={"day": ds})

    write()

with DAG("read_partition", schedule=[Dataset("s3://lake/part/2024-01-01")],
         start_date=datetime(2024, 1, 1)):

    @task
    def read(triggering_dataset_events=None):
        return {uri: [(e.extra, e.source_task_id) for e in evs]
                for uri, evs in triggering_dataset_events.items()}

    read()
