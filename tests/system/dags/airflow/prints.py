"""A DAG file that prints 20 MB while it is imported, then defines a good DAG."""
import sys
from datetime import datetime

from airflow import DAG
from airflow.operators.bash import BashOperator

for _ in range(20 * 1024):
    print("x" * 1023)
    sys.stderr.write("y" * 1023 + "\n")
with DAG("prints", start_date=datetime(2024, 1, 1), schedule=None) as dag:
    BashOperator(task_id="t", bash_command="true")
