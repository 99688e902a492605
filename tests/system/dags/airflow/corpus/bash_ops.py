"""Corpus: BashOperator the way example_bash_operator uses it (a loop of tasks, an
EmptyOperator, a templated command, exit 99 skips, the default trigger rule below a skip)."""
import datetime

import pendulum

from airflow.models.dag import DAG
from airflow.operators.bash import BashOperator
from airflow.operators.empty import EmptyOperator

with DAG(
    dag_id="corpus_bash_ops",
    schedule="0 3 * * *",
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    dagrun_timeout=datetime.timedelta(minutes=30),
    tags=["corpus"],
    params={"greeting": "hi"},
) as dag:
    finish = EmptyOperator(task_id="finish")
    after_loop = BashOperator(task_id="after_loop", bash_command="echo looped")
    after_loop >> finish

    for n in range(3):
        step = BashOperator(task_id="step_" + str(n),
                            bash_command='echo "{{ task_instance_key_str }}" && sleep 0.1')
        step >> after_loop

    key = BashOperator(task_id="key", bash_command='echo "key={{ task_instance_key_str }}"')
    key >> finish

    skips = BashOperator(task_id="skips", bash_command='echo "{{ params.greeting }}"; exit 99;')
    below_skip = EmptyOperator(task_id="below_skip")
    skips >> below_skip
