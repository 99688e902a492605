"""Corpus: more TaskFlow as Airflow 2.x examples write it (get_current_context in a helper,
@task.bash, .override() of a task, a deferrable sensor, BranchDateTimeOperator as
example_datetime_branch, `dag.test()` under `__main__`)."""
import datetime

import pendulum

from airflow.decorators import dag, task
from airflow.operators.datetime import BranchDateTimeOperator
from airflow.operators.empty import EmptyOperator
from airflow.operators.python import get_current_context
from airflow.sensors.time_delta import TimeDeltaSensorAsync


def whoami():
    ctx = get_current_context()
    return "%s/%s" % (ctx["dag"].dag_id, ctx["ti"].task_id)


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False,
     tags=["corpus"], default_args={"retries": 0}, params={"who": "you all"})
def corpus_taskflow_more():
    @task
    def me():
        return whoami()

    @task.bash
    def shout(name):
        return 'echo "hello {{ params.who }} from ' + name + '"'

    @task
    def scaled(x, factor=10):
        return x * factor

    small = scaled.override(task_id="scaled_small")(1)
    big = scaled.override(task_id="scaled_big", retries=1)(2, factor=100)
    wait = TimeDeltaSensorAsync(task_id="no_wait", delta=datetime.timedelta(seconds=0))
    day = BranchDateTimeOperator(task_id="all_day", follow_task_ids_if_true=["in_window"],
                                 follow_task_ids_if_false=["out_window"],
                                 target_lower=datetime.time(0, 0, 0),
                                 target_upper=datetime.time(23, 59, 59, 999999))
    day >> [EmptyOperator(task_id="in_window"), EmptyOperator(task_id="out_window")]
    me() >> shout("corpus") >> [small, big] >> wait


the_dag = corpus_taskflow_more()

if __name__ == "__main__":
    the_dag.test()
