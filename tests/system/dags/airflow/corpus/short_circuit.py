"""Corpus: ShortCircuitOperator and @task.short_circuit as example_short_circuit_operator
(true and false conditions; ignore_downstream_trigger_rules=False keeps all_done below)."""
import pendulum

from airflow.decorators import dag, task
from airflow.models.baseoperator import chain
from airflow.operators.empty import EmptyOperator
from airflow.operators.python import ShortCircuitOperator
from airflow.utils.trigger_rule import TriggerRule


@dag(start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False, schedule=None,
     tags=["corpus"])
def corpus_short_circuit():
    @task.short_circuit()
    def yes():
        return True

    @task.short_circuit()
    def no():
        return 0

    y1, y2 = [EmptyOperator(task_id="yes_%d" % i) for i in (1, 2)]
    n1, n2 = [EmptyOperator(task_id="no_%d" % i) for i in (1, 2)]
    chain(yes(), [y1, y2])
    chain(no(), [n1, n2])

    gate = ShortCircuitOperator(task_id="gate", python_callable=lambda: False,
                                ignore_downstream_trigger_rules=False)
    a = EmptyOperator(task_id="gated_a")
    b = EmptyOperator(task_id="gated_b")
    done = EmptyOperator(task_id="gated_done", trigger_rule=TriggerRule.ALL_DONE)
    chain(gate, [a, b], done)


corpus_short_circuit()
