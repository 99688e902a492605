"""A task's max_active_tis_per_dag (and task_concurrency, its old name) and
max_active_tis_per_dagrun in an Airflow DAG file run by a real server (docs/airflow.md): the
instances over the limit stay scheduled with the reason saying which limit holds them, each
mapped instance counting, until one ends.  Each task takes a lock file as it starts (a second
holder at once fails its task) and waits for the test's `go` file, so the test sees the
limit hold and then lets the runs finish."""

import os

from conftest import wait_for
from test_airflow_operators import server_with

DAG = '''\
import os
import time
from datetime import datetime
from airflow import DAG
from airflow.decorators import task

SIDE = "@SIDE@"


def hold(name):
    # a second holder of the lock at once fails its task
    fd = os.open(os.path.join(SIDE, name + ".lock"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    os.close(fd)
    while not os.path.exists(os.path.join(SIDE, "go")):
        time.sleep(0.05)
    os.remove(os.path.join(SIDE, name + ".lock"))


with DAG("tiscap", start_date=datetime(2024, 1, 1), schedule=None, max_active_runs=2):
    @task(max_active_tis_per_dagrun=1)
    def each(i, run_id=None):
        hold("each-" + run_id)

    @task(task_concurrency=1)
    def solo():
        hold("solo")

    each.expand(i=[0, 1, 2])
    solo()
'''

PER_RUN = "waiting: task each max_active_tis_per_dagrun reached (1/1)"
PER_DAG = "waiting: task solo max_active_tis_per_dag reached (1/1)"


def test_task_concurrency_limits_hold_instances(make_server, tmp_path):
    d = server_with(make_server, tmp_path, {"tiscap.py": DAG})
    assert d.wait_dag("tiscap")["has_task_concurrency_limits"] is True
    runs = [d.trigger("tiscap", logical_date=day)["dag_run_id"]
            for day in ("2024-03-01T00:00:00Z", "2024-03-02T00:00:00Z")]

    def held():
        tis = [d.tis("tiscap", r) for r in runs]
        each = [[t["state"], t.get("reason", "")] for r in tis
                for n, t in sorted(r.items()) if n.startswith("each[")]
        solo = [[r["solo"]["state"], r["solo"].get("reason", "")] for r in tis if "solo" in r]
        # per run: one instance running, the other two held; across the runs: one solo
        per_run = [[s for s, _ in each[k:k + 3]].count("running") == 1 and
                   [w for _, w in each[k:k + 3]].count(PER_RUN) == 2 for k in (0, 3)]
        ok = len(each) == 6 and all(per_run) and len(solo) == 2 and \
            sorted(s for s, _ in solo) == ["running", "scheduled"] and \
            any(w == PER_DAG for _, w in solo)
        return ok or (each, solo)

    wait_for(lambda: held() is True, 60, "the limits holding instances")
    (d.side / "go").write_text("")
    for r in runs:
        run = d.wait_run("tiscap", r, timeout=90)
        tis = d.tis("tiscap", r)
        assert run["state"] == "success", {n: (t["state"], t.get("reason")) for n, t in
                                           tis.items()}
        assert all(t["try_number"] == 1 for t in tis.values()), tis
    assert not [n for n in os.listdir(d.side) if n.endswith(".lock")]
