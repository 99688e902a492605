"""Corpus: the tutorial_dag constructs (PythonOperators passing JSON between them through
keyed XComs pushed with positional arguments, doc_md on the DAG and its tasks,
`dedent`ed docs, `**kwargs` callables)."""
import json
import textwrap

import pendulum

from airflow.models.dag import DAG
from airflow.operators.python import PythonOperator

with DAG(
    "corpus_tut_pipeline",
    default_args={"retries": 1},
    description="a small pipeline of PythonOperators",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    tags=["corpus"],
) as dag:
    dag.doc_md = __doc__

    def read_rows(**kwargs):
        ti = kwargs["ti"]
        ti.xcom_push("rows", '{"apples": 3, "pears": 4.5}')

    def add_up(**kwargs):
        ti = kwargs["ti"]
        rows = json.loads(ti.xcom_pull(task_ids="read_rows", key="rows"))
        ti.xcom_push("sum", json.dumps({"sum": sum(rows.values())}))

    def report(**kwargs):
        ti = kwargs["ti"]
        total = json.loads(ti.xcom_pull(task_ids="add_up", key="sum"))["sum"]
        print("the sum is", total)
        return total

    read = PythonOperator(task_id="read_rows", python_callable=read_rows)
    read.doc_md = textwrap.dedent("""\
        #### Read
        Puts the rows in an XCom.
        """)
    add = PythonOperator(task_id="add_up", python_callable=add_up)
    add.doc_md = "#### Add up"
    out = PythonOperator(task_id="report", python_callable=report)
    out.doc_md = "#### Report"
    read >> add >> out
