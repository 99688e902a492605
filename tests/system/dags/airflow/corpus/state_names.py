"""Corpus: the names DAG files use for states, run kinds and times (airflow.utils.state,
airflow.utils.types, airflow.utils.timezone), chain_linear, and a TriggerDagRunOperator
that waits for its run's end with allowed and failed states."""
from airflow.decorators import task
from airflow.models.baseoperator import chain_linear
from airflow.models.dag import DAG
from airflow.models.dagrun import DagRun
from airflow.operators.empty import EmptyOperator
from airflow.operators.trigger_dagrun import TriggerDagRunOperator
from airflow.utils import timezone
from airflow.utils.state import DagRunState, State, TaskInstanceState
from airflow.utils.types import DagRunType

START = timezone.datetime(2024, 1, 1)

with DAG(dag_id="corpus_state_callee", start_date=START, schedule=None, catchup=False,
         tags=["corpus"]):
    @task
    def kind(dag_run: DagRun = None):
        return [str(DagRunType(dag_run.run_type)), dag_run.run_type == DagRunType.MANUAL]

    kind()

with DAG(dag_id="corpus_state_names", start_date=START, schedule=None, catchup=False,
         tags=["corpus"]):
    call = TriggerDagRunOperator(task_id="call", trigger_dag_id="corpus_state_callee",
                                 wait_for_completion=True, poke_interval=1,
                                 allowed_states=[DagRunState.SUCCESS],
                                 failed_states=[DagRunState.FAILED])

    @task
    def names():
        return [State.SUCCESS.value, str(TaskInstanceState.SKIPPED),
                State.FAILED in State.failed_states, timezone.utcnow().tzinfo is not None]

    a, b, c, d = (EmptyOperator(task_id=n) for n in "abcd")
    chain_linear(call, [a, b], [c, d])
    names()
