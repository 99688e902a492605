"""SubDagOperator (deprecated in Airflow 2) is refused with an import error at its line that
says what to write instead (docs/airflow.md)."""

import sys

from dagtest import Dags, dag_config
from test_airflow_dags import wait_import_error


def test_subdag_operator_is_an_import_error_at_its_line(make_server, tmp_path):
    srv = make_server(config=dag_config(), start=False)
    srv.extra_env["WEIR_AIRFLOW_PYTHON"] = sys.executable
    d = Dags(srv, tmp_path)
    d.write("parent.py", '''from datetime import datetime
from airflow import DAG
from airflow.operators.subdag import SubDagOperator


def child():
    return DAG("parent.section", schedule=None, start_date=datetime(2024, 1, 1))


with DAG("parent", schedule=None, start_date=datetime(2024, 1, 1)):
    SubDagOperator(task_id="section", subdag=child())
''')
    d.srv.start()
    err = wait_import_error(d, "parent.py")["stack_trace"]
    assert "parent.py:11:" in err, err
    assert "SubDagOperator(task_id='section')" in err and "TaskGroup" in err, err
