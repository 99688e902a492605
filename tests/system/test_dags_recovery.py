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


def test_job_end_while_the_dag_file_was_missing_reaches_its_task(make_dags, tmp_path):
    """The server restarts while the DAG's file is away: the run waits for it, its running
    task's job ends meanwhile (its end cannot reach a DAG not loaded), and once the file is
    back that end is applied, once: the run goes on and succeeds, nothing ran twice."""
    d = make_dags(files=["chain.yaml"])
    d.wait_dag("chain")
    d.trigger("chain", run_id="away")

    def b_running():
        ti = d.tis("chain", "away").get("b")
        return ti if ti and ti["state"] == "running" and d.side_lines("b") else None
    wait_for(b_running, 60, "task b running")
    d.srv.kill9()
    away = tmp_path / "chain.yaml.away"
    (d.dir / "chain.yaml").rename(away)
    d.srv.start()

    def b_job_ended():
        jobs = d.srv.api("GET", "/api/v1/jobs")[1]["jobs"]
        ended = [j for j in jobs if j["state"] in ("succeeded", "failed", "killed")]
        return len(ended) >= 3 and all(j["state"] == "succeeded" for j in ended)
    wait_for(b_job_ended, 60, "task b's job to end while its DAG file is away")
    d.write("chain.yaml", away.read_text())

    run = d.wait_run("chain", "away", timeout=60)
    assert run["state"] == "success", run
    tis = d.tis("chain", "away")
    assert all(t["state"] == "success" for t in tis.values()), tis
    for task in ("a", "b", "side", "c"):
        assert d.side_lines(task) == [task], (task, d.side_lines(task))
    assert tis["b"]["try_number"] == 1, tis
