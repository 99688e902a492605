"""Corpus: the classic tutorial's constructs (default_args, doc_md, a templated BashOperator
with a Jinja loop and params, a list downstream, retries)."""
import textwrap
from datetime import datetime, timedelta

from airflow import DAG
from airflow.operators.bash import BashOperator

defaults = {
    "owner": "corpus",
    "depends_on_past": False,
    "email": ["nobody@example.invalid"],
    "email_on_failure": False,
    "email_on_retry": False,
    "retries": 1,
    "retry_delay": timedelta(seconds=1),
}

with DAG(
    "corpus_tut_classic",
    default_args=defaults,
    description="the classic tutorial, our way",
    schedule=timedelta(days=1),
    start_date=datetime(2024, 3, 1),
    catchup=False,
    tags=["corpus"],
) as dag:
    stamp = BashOperator(task_id="stamp", bash_command="date -u +%Y")
    stamp.doc_md = textwrap.dedent("""\
        #### Stamp
        Prints the year.
        """)
    dag.doc_md = __doc__

    nap = BashOperator(task_id="nap", depends_on_past=False, bash_command="sleep 0.1",
                       retries=2)
    looped = BashOperator(
        task_id="looped",
        depends_on_past=False,
        bash_command=textwrap.dedent("""\
            {% for n in range(3) %}
                echo "day {{ ds }} step {{ n }} {{ params.word }}"
            {% endfor %}
            echo "{{ macros.ds_add(ds, 2) }}"
            """),
        params={"word": "ok"},
    )
    stamp >> [nap, looped]
