#!/usr/bin/env python3
"""Airflow DAG files in Python on weir (docs/airflow.md): how fast the server parses them and
how long a hop between two PythonOperator tasks takes.  Figures, not assertions.

- parse: N small DAG files (a with-block, a Bash and a Python task each) written at once into
  an empty DAG folder; the time until the REST API lists all N DAGs (files a second = N /
  time).  Warm: each file is imported in a child forked by the warm DAG processor, two at
  once (and the first starts the tasks' warm interpreters' root); cold: each by a processor
  of its own (WEIR_AIRFLOW_WARM_PROCESSOR=0, WEIR_AIRFLOW_WARM_IDLE_S=0), in turn.
- chain: one DAG file with a chain of H PythonOperator tasks, triggered; the time from the
  trigger to the run's end_date (the server's clock) divided by H, warm and cold in the same
  run, one after the other.  Warm: each task is forked from the file's warm interpreter, which
  imported the file once (docs/internals/airflow_warm.md; the chain is triggered once the
  root's socket is there, and the first task makes the file's zygote).  Cold (WEIR_AIRFLOW_WARM_IDLE_S=0 for the server): each task starts
  Python and imports the DAG file again.

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


_WARM_ENV = {"WEIR_AIRFLOW_WARM_IDLE_S": ("600", "0"), "WEIR_AIRFLOW_WARM_PROCESSOR": ("1", "0")}


def server(warm):
    """A bench server, warm (the warm DAG processor, the tasks' warm interpreters) or cold
    (neither: WEIR_AIRFLOW_WARM_PROCESSOR=0, WEIR_AIRFLOW_WARM_IDLE_S=0)."""
    saved = {k: os.environ.get(k) for k in _WARM_ENV}
    for k, (on, off) in _WARM_ENV.items():
        os.environ[k] = on if warm else off  # the server inherits them
    try:
        return BenchServer(vcores=2, memory="8g", dags={})
    finally:
        for k, v in saved.items():
            if v is None:
                del os.environ[k]
            else:
                os.environ[k] = v


def parse_once(n, warm):
    srv = server(warm)
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


def chain_once(hops, warm):
    srv = server(warm)
    try:
        (srv.dags / "py_chain.py").write_text(CHAIN_FILE % {"hops": hops})
        deadline = time.monotonic() + 60
        wait_dags(srv, 1, deadline)
        # the root (the file's zygote comes at its first task: that hop is in the figure)
        while warm and not list((srv.home / "airflow-warm").glob("any-*.sock")):
            if time.monotonic() > deadline:
                raise RuntimeError("no warm interpreter")
            time.sleep(0.01)
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
    ap.add_argument("--hops", type=int, default=20)
    ap.add_argument("--chain-only", action="store_true", help="skip the parse figure")
    a = ap.parse_args()
    # the processor and the tasks run this interpreter (not a shim on the PATH)
    os.environ.setdefault("WEIR_AIRFLOW_PYTHON", sys.executable)
    if not a.chain_only:
        parse = {True: [], False: []}
        for _ in range(a.runs):  # with the warm interpreters' root started, and without
            for warm in (True, False):
                parse[warm].append(parse_once(a.files, warm))
        for warm in (True, False):
            t = median(parse[warm])
            print("airflow parse (%s): %d DAG files in %.2f s: %.1f files/s (median of %d)"
                  % ("warm" if warm else "cold", a.files, t, a.files / t, a.runs))
    times = {True: [], False: []}
    for _ in range(a.runs):  # warm and cold in turn, so that both see the same load
        for warm in (True, False):
            times[warm].append(chain_once(a.hops, warm))
    for warm in (True, False):
        total = median(times[warm])
        print("airflow chain (%s): %d PythonOperator tasks in %.2f s: %.1f ms a hop "
              "(median of %d)" % ("warm" if warm else "cold", a.hops, total,
                                  total * 1000 / a.hops, a.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
