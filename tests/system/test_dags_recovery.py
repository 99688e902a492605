"""kill -9 of the server in the middle of a DAG run, then a restart: the run goes on, and
every task ran exactly once (each appends one line to its own file)."""

from conftest import wait_for
from dagtest import make_dags  # noqa: F401


def test_kill9_mid_run_every_task_runs_once(make_dags):
    d = make_dags(files=["chain.yaml"])
    d.wait_dag("chain")
    run = d.trigger("chain", run_id="survivor")

    def b_running():
        ti = d.tis("chain", "survivor").get("b")
        return ti if ti and ti["state"] == "running" and d.side_lines("b") else None
    wait_for(b_running, 60, "task b running")
    d.srv.kill9()
    d.srv.start()

    run = d.wait_run("chain", "survivor", timeout=120)
    assert run["state"] == "success", run
    tis = d.tis("chain", "survivor")
    assert all(t["state"] == "success" for t in tis.values()), tis
    for task in ("a", "b", "side", "c"):
        assert d.side_lines(task) == [task], (task, d.side_lines(task))
    assert tis["b"]["try_number"] == 1, tis
