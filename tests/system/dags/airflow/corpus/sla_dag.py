"""Corpus: an SLA as example_sla_dag (sla on a task; its callback is Airflow's business, the
run is not changed by it)."""
import datetime
import time

import pendulum

from airflow.decorators import dag, task


def sla_missed(dag, task_list, blocking_task_list, slas, blocking_tis):
    print("missed", task_list)


@dag(schedule="*/2 * * * *", start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
     catchup=False, sla_miss_callback=sla_missed, default_args={"email": "x@example.invalid"},
     tags=["corpus"])
def corpus_sla_dag():
    @task(sla=datetime.timedelta(seconds=10))
    def quick():
        time.sleep(0.1)

    @task
    def after():
        return "after"

    quick() >> after()


corpus_sla_dag()
