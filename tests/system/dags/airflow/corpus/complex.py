"""Corpus: a wide graph built as example_complex builds it (chain with lists,
cross_downstream, set_upstream/set_downstream, bitshift both ways)."""
import pendulum

from airflow.models.baseoperator import chain, cross_downstream
from airflow.models.dag import DAG
from airflow.operators.bash import BashOperator
from airflow.operators.empty import EmptyOperator

with DAG(dag_id="corpus_complex", schedule=None,
         start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False,
         tags=["corpus"]) as dag:
    def op(name):
        return BashOperator(task_id=name, bash_command="echo " + name)

    create = op("create_entry")
    fetch = [op("fetch_%d" % i) for i in range(3)]
    store = [op("store_%d" % i) for i in range(2)]
    tag = op("tag")
    report = EmptyOperator(task_id="report")
    announce = EmptyOperator(task_id="announce")
    chain(create, fetch[0], [fetch[1], fetch[2]])
    cross_downstream([fetch[1], fetch[2]], store)
    tag.set_upstream(store)
    report << tag
    announce.set_downstream([])
    tag >> announce
