"""`weir db clean` on a real server (docs/cli.md, "weir db clean"): finished runs, their task
instances and jobs, and ended jobs of no DAG that ended before the date are removed with their
logs; the newest run and a running run stay; a dry run changes nothing; a Viewer is refused.

The history is made old by waiting: the clean is asked for what ended more than AGE seconds
ago once the old runs and job ended that long ago; the newest run ends just before the clean."""

import base64
import re
import time

from conftest import spec, wait_for
from dagtest import dag_config, make_dags, password_hash  # noqa: F401  (the fixture)

AGE = 5
PASSWORD = "clean-secret"

QUICK = """\
dag_id: quick
tasks:
  - task_id: a
    command: echo quick-a
  - task_id: b
    depends_on: [a]
    command: echo quick-b
"""

SLOW = """\
dag_id: slow
params:
  side: "@SIDE@"
tasks:
  - task_id: wait
    command: while ! test -e {{ params.side }}/go; do sleep 0.2; done
"""


def users():
    return "users:\n" + "".join(
        '  - name: %s\n    password_hash: "%s"\n    role: %s\n'
        % (role.lower(), password_hash(PASSWORD), role) for role in ("Viewer", "Admin"))


def basic(user):
    return {"Authorization": "Basic " + base64.b64encode(
        ("%s:%s" % (user, PASSWORD)).encode()).decode()}


def run_ids(d, dag_id):
    return sorted(r["dag_run_id"] for r in d.get("/dags/%s/dagRuns" % dag_id)["dag_runs"])


def job_ids_of(d, dag_id, run_id):
    status, body = d.srv.api("GET", "/api/v1/dags/%s/dagRuns/%s/taskInstances" % (dag_id, run_id))
    assert status == 200, body
    return sorted(t["job_id"] for t in body["task_instances"] if t.get("job_id"))


def test_db_clean_removes_exactly_the_old_history(make_dags, tmp_path):
    d = make_dags(start=False)
    d.srv.config = dag_config() + users()
    d.write("quick.yaml", QUICK)
    d.write("slow.yaml", SLOW.replace("@SIDE@", str(d.side)))
    d.srv.start()
    srv = d.srv
    d.wait_dag("quick")
    d.wait_dag("slow")

    # the old history: two finished runs and a job of no DAG
    old = []
    for n in range(2):
        run = d.trigger("quick", run_id="old-%d" % n)
        assert d.wait_run("quick", run["dag_run_id"])["state"] == "success"
        old.append(run["dag_run_id"])
    old_jobs = [j for r in old for j in job_ids_of(d, "quick", r)]
    # each run's outputs folder (HOME/dag_runs/ROW_ID): the old runs' are the first two
    old_run_rows = {"1", "2"}
    assert old_run_rows <= {p.name for p in (srv.home / "dag_runs").iterdir()}
    plain = srv.submit(spec({"worker": {"command": "echo plain"}}, name="plain"))
    assert srv.wait_job(plain["id"])["state"] == "succeeded"
    old_jobs.append(plain["id"])
    assert len(old_jobs) == 5, old_jobs
    for j in old_jobs:
        assert (srv.home / "jobs" / str(j)).is_dir()

    # a running run, started before the date: never removed
    live = d.trigger("slow", run_id="live")
    wait_for(lambda: (d.tis_or_none("slow", "live") or {}).get("task_instances", [{}])[0]
             .get("state") == "running", 60, "the slow run's task running")
    live_jobs = job_ids_of(d, "slow", "live")

    # the old history is AGE s old once that long passed since its last end
    ended = time.time()
    wait_for(lambda: time.time() - ended > AGE + 1, AGE + 10, "the old history to age")
    new = d.trigger("quick", run_id="new")
    assert d.wait_run("quick", "new")["state"] == "success"
    new_jobs = job_ids_of(d, "quick", "new")

    # a Viewer is refused; a malformed request names its field
    status, body = srv.api("POST", "/api/v1/weir/dbClean", {"older_than": "%ds" % AGE},
                           token=False, headers=basic("viewer"))
    assert status == 403, (status, body)
    status, body = srv.api("POST", "/api/v1/weir/dbClean", {"older_than": "soon"})
    assert status == 400 and "older_than" in body["error"], (status, body)

    # a dry run counts and changes nothing
    before = run_ids(d, "quick")
    status, dry = srv.api("POST", "/api/v1/weir/dbClean",
                          {"older_than": "%ds" % AGE, "dry_run": True},
                          token=False, headers=basic("admin"))
    assert status == 200, (status, dry)
    would = dry["would_remove"]
    assert would["dag_runs"] == 2 and would["task_instances"] == 4, dry
    assert would["jobs"] == 5 and would["tasks"] == 5, dry
    assert run_ids(d, "quick") == before
    assert srv.job(plain["id"])["state"] == "succeeded"

    # the clean, through the CLI: it waits for the end and prints the counts
    r = srv.cli("db", "clean", "--older-than", "%ds" % AGE)
    assert r.returncode == 0, repr(r.stdout) + r.stderr
    assert "removed:" in r.stdout, r.stdout
    assert re.search(r"dag_runs +2\n", r.stdout) and re.search(r"\n  jobs +5\n", r.stdout), r.stdout
    status, done = srv.api("GET", "/api/v1/weir/dbClean")
    assert status == 200 and done["state"] == "done", done
    assert done["removed"] == would, done

    assert run_ids(d, "quick") == ["new"]
    assert run_ids(d, "slow") == ["live"]
    assert d.run("slow", "live")["state"] == "running"
    assert not [p for p in (srv.home / "dag_runs").iterdir() if p.name in old_run_rows]
    for j in old_jobs:
        status, _ = srv.api("GET", "/api/v1/jobs/%d" % j)
        assert status == 404, j
        assert not (srv.home / "jobs" / str(j)).exists(), j
    for j in new_jobs + live_jobs:
        assert srv.job(j)["id"] == j
    assert "quick-b" in d.log("quick", "new", "b")

    # the server goes on: the running run ends, and a second clean finds nothing
    (d.side / "go").write_text("")
    assert d.wait_run("slow", "live")["state"] == "success"
    status, dry = srv.api("POST", "/api/v1/weir/dbClean",
                          {"older_than": "%ds" % AGE, "dry_run": True, "dag_ids": ["quick"]})
    assert status == 200 and dry["would_remove"]["dag_runs"] == 0, dry


def test_retention_cleans_on_schedule(make_dags):
    d = make_dags(start=False)
    d.srv.config = dag_config() + "retention:\n  older_than: 2s\n  every: 1s\n"
    d.write("quick.yaml", QUICK)
    d.write("slow.yaml", SLOW.replace("@SIDE@", str(d.side)))
    d.srv.start()
    d.wait_dag("quick")
    d.wait_dag("slow")
    run = d.trigger("quick", run_id="soon-old")
    assert d.wait_run("quick", run["dag_run_id"])["state"] == "success"
    jobs = job_ids_of(d, "quick", "soon-old")
    d.trigger("slow", run_id="live")
    # the scheduled clean removes the finished run (once 2 s old), never the running one
    wait_for(lambda: run_ids(d, "quick") == [], 60, "the finished run removed by retention")
    for j in jobs:
        assert d.srv.api("GET", "/api/v1/jobs/%d" % j)[0] == 404
    assert run_ids(d, "slow") == ["live"]
    assert d.run("slow", "live")["state"] in ("queued", "running")
    status, last = d.srv.api("GET", "/api/v1/weir/dbClean")
    assert status == 200 and last["older_than_s"] == 2, last

