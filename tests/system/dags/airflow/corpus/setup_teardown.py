"""Corpus: setups and teardowns as example_setup_teardown(_taskflow) (as_setup/as_teardown on
operators, @setup/@teardown, a teardown that runs after a failure, inside a group)."""
import pendulum

from airflow.decorators import setup, task, task_group, teardown
from airflow.models.dag import DAG
from airflow.operators.bash import BashOperator
from airflow.utils.task_group import TaskGroup

with DAG(dag_id="corpus_setup_teardown", schedule=None, catchup=False,
         start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), tags=["corpus"],
         params={"fail": False}):
    make = BashOperator(task_id="make_room", bash_command="echo make").as_setup()
    use = BashOperator(
        task_id="use_room",
        bash_command='{% if params.fail %}exit 1{% else %}echo use{% endif %}')
    drop = BashOperator(task_id="drop_room", bash_command="echo drop").as_teardown(setups=make)
    make >> use >> drop

    with TaskGroup("inner"):
        @setup
        def lease():
            return "lease-1"

        @task
        def job(lease_id):
            return lease_id + ":done"

        @teardown
        def release(lease_id):
            print("released", lease_id)

        got = lease()
        job(got) >> release(got)

    # `with` blocks, as example_setup_teardown_taskflow: the tasks made inside run after the
    # block's setup and before its teardown
    @setup
    def open_pool():
        return "pool-7"

    @teardown
    def close_pool(pool):
        print("closed", pool)

    @task
    def use_pool_a():
        return "a"

    @task
    def use_pool_b(a):
        return a + "b"

    with close_pool(open_pool()):
        use_pool_b(use_pool_a())

    warm = BashOperator(task_id="warm", bash_command="echo warm").as_setup()
    cool = BashOperator(task_id="cool", bash_command="echo cool")
    with warm >> cool.as_teardown(setups=warm):
        BashOperator(task_id="while_warm", bash_command="echo inside")
