#!/usr/bin/env python3
"""Airflow DAG files in Python on weir (docs/airflow.md): how fast the server parses them and
how long a hop between two PythonOperator tasks takes.  Figures, not assertions.

- parse: N small DAG files (a with-block, a Bash and a Python task each) written at once into
  an empty DAG folder; the time until the REST API lists all N DAGs (files a second = N /
  time).  Each file is imported in a child forked by the warm processor, two at once
  ("warm"), and, side by side, by a processor of its own ("cold",
  WEIR_AIRFLOW_WARM_PROCESSOR=0).
- chain: one DAG file with a chain of H PythonOperator tasks, triggered; the time from the
  trigger to the run's end_date (the server's clock) divided by H.  Each task starts Python,
  imports the DAG file again and calls its callable (no warm interpreter yet).

    airflow_dags.py [--runs R] [--files N] [--hops H]
"""

import argparse
import os
import sys
import time

from benchlib import BenchServer, median, parse_time

PARSE_FILE = '''\
from datetime import datetime, timedelta
from airflow import DAG
from airflow.operators.bash import BashOperator
from airflow.operators.python import PythonOperator

def work(ds, **kwargs):
    return ds

with DAG("dag_%(i)03d", start_date=datetime(2024, 1, 1), schedule="@daily", catchup=False,
         default_args={"retries": 1, "retry_delay": timedelta(minutes=5)}, tags=["bench"]):
    BashOperator(task_id="extract", bash_command="echo %(i)d") >> PythonOperator(
        task_id="transform", python_callable=work)
'''

CHAIN_FILE = '''\
from datetime import datetime
from airflow import DAG
from airflow.models.baseoperator import chain
from airflow.operators.python import PythonOperator

def step(n, **kwargs):
    return n

with DAG("py_chain", start_date=datetime(2024, 1, 1), schedule=None):
    chain(*[PythonOperator(task_id="t%%02d" %% i, python_callable=step, op_args=[i])
            for i in range(%(hops)d)])
'''


def wait_dags(srv, n, deadline):
    while time.monotonic() < deadline:
        status, body = srv.api("GET", "/api/v1/dags?limit=1000")
        if status == 200 and body["total_entries"] >= n:
            return
        time.sleep(0.01)
    raise RuntimeError("the DAGs were not all loaded")


def parse_once(n, warm=True):
    os.environ["WEIR_AIRFLOW_WARM_PROCESSOR"] = "1" if warm else "0"  # the server inherits it
    srv = BenchServer(vcores=2, memory="8g", dags={})
    os.environ.pop("WEIR_AIRFLOW_WARM_PROCESSOR")
    try:
        t0 = time.monotonic()
        for i in range(n):
            tmp = srv.dags / (".dag_%03d.tmp" % i)
            tmp.write_text(PARSE_FILE % {"i": i})
            os.replace(tmp, srv.dags / ("dag_%03d.py" % i))
        wait_dags(srv, n, t0 + 300)
        return time.monotonic() - t0
    finally:
        srv.stop()


def chain_once(hops):
    srv = BenchServer(vcores=2, memory="8g", dags={})
    try:
        (srv.dags / "py_chain.py").write_text(CHAIN_FILE % {"hops": hops})
        wait_dags(srv, 1, time.monotonic() + 60)
        t0 = time.time()
        status, run = srv.api("POST", "/api/v1/dags/py_chain/dagRuns", {})
        assert status == 200, run
        path = "/api/v1/dags/py_chain/dagRuns/%s" % run["dag_run_id"]
        while True:
            status, run = srv.api("GET", path)
            if run["state"] in ("success", "failed"):
                break
            time.sleep(0.05)
        assert run["state"] == "success", run
        return parse_time(run["end_date"]) - t0
    finally:
        srv.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--hops", type=int, default=10)
    a = ap.parse_args()
    # the processor and the tasks run this interpreter (not a shim on the PATH)
    os.environ.setdefault("WEIR_AIRFLOW_PYTHON", sys.executable)
    for warm in (True, False):
        parse = median([parse_once(a.files, warm) for _ in range(a.runs)])
        print("airflow parse (%s): %d DAG files in %.2f s: %.1f files/s (median of %d)"
              % ("warm" if warm else "cold", a.files, parse, a.files / parse, a.runs))
    total = median([chain_once(a.hops) for _ in range(a.runs)])
    print("airflow chain: %d PythonOperator tasks in %.2f s: %.0f ms a hop (median of %d)"
          % (a.hops, total, total * 1000 / a.hops, a.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
