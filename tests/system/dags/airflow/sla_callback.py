"""A DAG's sla_miss_callback, as Airflow users write it (tests/system/test_airflow_clear.py)."""
import json
import os
import time
from datetime import datetime, timedelta

from airflow import DAG
from airflow.decorators import task

SIDE = "@SIDE@"


def missed(dag, task_list, blocking_task_list, slas, blocking_tis):
    with open(SIDE + "/sla.tmp", "w") as f:
        json.dump([dag.dag_id, task_list.split(" on ")[0], blocking_task_list.split(" on ")[0],
                   [(s.dag_id, s.task_id) for s in slas],
                   [(ti.task_id, ti.state) for ti in blocking_tis]], f)
    os.rename(SIDE + "/sla.tmp", SIDE + "/sla")


with DAG("sla_callback", schedule=None, start_date=datetime(2024, 1, 1),
         sla_miss_callback=missed):
    @task(sla=timedelta(seconds=1))
    def slow():
        # ends once the callback has been called: the miss came while it ran
        while not os.path.exists(SIDE + "/sla"):
            time.sleep(0.1)

    slow()
