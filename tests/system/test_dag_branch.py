"""Branching on a real server: a branch task's choice skips the other direct downstream
tasks and the skips flow on by the trigger rules; a short circuit skips everything
downstream; depends_on_past and wait_for_downstream hold a task until the previous run's
task (and its downstream) succeeded."""

import time

from dagtest import make_dags  # noqa: F401  (the fixture)


def run_to_end(d, dag_id, run_id, conf=None):
    """Triggers run `run_id` (with `conf`) and waits for its end."""
    return d.wait_run(dag_id, d.trigger(dag_id, conf=conf, run_id=run_id)["dag_run_id"])


def states(d, dag_id, run_id):
    return {n: t["state"] for n, t in d.tis(dag_id, run_id).items()}


def test_branch_skips_the_others_and_the_join_follows_its_rule(make_dags):
    d = make_dags(files=["branch.yaml"])
    d.wait_dag("branch")
    run = run_to_end(d, "branch", "one")
    assert run["state"] == "success", run
    st = states(d, "branch", run["dag_run_id"])
    # b chosen: c and d skipped; b2 runs after b; join (none_failed_min_one_success) runs
    # on one success among skips; both (all_success) is skipped by c's skip
    assert st == {"choose": "success", "b": "success", "b2": "success", "c": "skipped",
                  "d": "skipped", "join": "success", "after": "success",
                  "both": "skipped"}, st
    assert sorted(d.side_lines("ran")) == ["after", "b", "b2", "join"]
    # the Task objects say which task branches
    tasks = {t["task_id"]: t for t in d.get("/dags/branch/tasks")["tasks"]}
    assert tasks["choose"]["branch"] is True and "branch" not in tasks["b"], tasks["choose"]
    # the UI's grid shows the skipped ones as skipped
    grid = {t["task_id"]: t["instances"][0]["state"] for t in d.get("/ui/dags/branch/grid")["tasks"]}
    assert grid["c"] == grid["d"] == grid["both"] == "skipped" and grid["b"] == "success", grid


def test_branch_of_two_and_of_none(make_dags):
    d = make_dags(files=["branch.yaml"])
    d.wait_dag("branch")
    two = run_to_end(d, "branch", "two", {"pick": ["c", "b"]})
    assert two["state"] == "success", two
    st = states(d, "branch", "two")
    assert (st["b"], st["b2"], st["c"], st["d"], st["join"], st["both"]) == (
        "success", "success", "success", "skipped", "success", "success"), st
    # none chosen (null or []): every direct downstream skipped, the join too (all its
    # upstreams skipped), and what follows it; the run succeeds as Airflow's does
    none = run_to_end(d, "branch", "none", {"pick": []})
    assert none["state"] == "success", none
    st = states(d, "branch", "none")
    assert st.pop("choose") == "success"
    assert set(st.values()) == {"skipped"}, st


def test_branch_naming_a_task_not_downstream_fails_with_the_reason(make_dags):
    d = make_dags(files=["branch.yaml"])
    d.wait_dag("branch")
    run = run_to_end(d, "branch", "bad", {"pick": ["b", "after"]})
    assert run["state"] == "failed", run
    tis = d.tis("branch", "bad")
    assert tis["choose"]["state"] == "failed", tis
    reason = tis["choose"]["reason"]
    assert '"after" is not a direct downstream task of choose' in reason, reason
    assert "b, c, d" in reason, reason
    assert tis["b"]["state"] == "upstream_failed", tis
    assert d.side_lines("ran") == []


def test_short_circuit_skips_all_downstream_on_false(make_dags):
    d = make_dags(files=["short_circuit.yaml"])
    d.wait_dag("short_circuit")
    run = run_to_end(d, "short_circuit", "yes")
    assert run["state"] == "success", run
    assert set(states(d, "short_circuit", "yes").values()) == {"success"}
    assert sorted(d.side_lines("ran")) == ["x", "y", "z"]
    # the param's text is what the task writes: "null" and '""' give null and ""
    for i, false in enumerate([False, 0, '""', "null", [], {}]):
        rid = "no%d" % i
        run = run_to_end(d, "short_circuit", rid, {"ok": false})
        assert run["state"] == "success", run
        st = states(d, "short_circuit", rid)
        # z's all_done would run it after a skip: a short circuit ignores the rule
        assert st == {"check": "success", "x": "skipped", "y": "skipped",
                      "z": "skipped"}, (false, st)
    assert sorted(d.side_lines("ran")) == ["x", "y", "z"]


def clear(d, run_id, task):
    status, body = d.srv.api("POST", "/api/v1/dags/past/clearTaskInstances",
                             {"dag_run_id": run_id, "task_ids": [task], "dry_run": False,
                              "only_failed": True})
    assert status == 200, body
    assert [t["task_id"] for t in body["task_instances"]] == [task], body


def settle(d, run_id, task, state):
    """Waits until `task` of the run is in `state` (None: not run yet)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        st = states(d, "past", run_id)
        if st.get(task) == state:
            return st
        time.sleep(0.2)
    raise AssertionError("%s of %s not %s: %s\n%s" % (task, run_id, state,
                                                     states(d, "past", run_id),
                                                     d.srv.log_text()))


def test_depends_on_past_and_wait_for_downstream_across_runs(make_dags):
    d = make_dags(files=["past.yaml"])
    d.wait_dag("past")
    (d.side / "fail_p").write_text("")
    (d.side / "fail_wd").write_text("")
    one = d.wait_run("past", d.trigger("past", run_id="one",
                                       logical_date="2026-01-01T00:00:00Z")["dag_run_id"])
    assert one["state"] == "failed", one
    st = states(d, "past", "one")
    assert (st["p"], st["w"], st["wd"]) == ("failed", "success", "failed"), st
    tasks = {t["task_id"]: t for t in d.get("/dags/past/tasks")["tasks"]}
    assert (tasks["p"]["depends_on_past"], tasks["p"]["wait_for_downstream"]) == (True, False)
    # wait_for_downstream implies depends_on_past (Airflow's)
    assert (tasks["w"]["depends_on_past"], tasks["w"]["wait_for_downstream"]) == (True, True)

    # run two: p waits for p of run one (failed), w for wd of run one (failed); free runs
    d.trigger("past", run_id="two", logical_date="2026-01-02T00:00:00Z")
    settle(d, "two", "free", "success")
    st = settle(d, "two", "wd", None)
    assert (st["p"], st["w"]) == (None, None), st
    assert d.run("past", "two")["state"] == "running"
    assert not [x for x in d.side_lines("ran") if x in ("p two", "w two")]

    # p of run one succeeds on a clear: p of run two runs; w still waits for wd
    (d.side / "fail_p").unlink()
    clear(d, "one", "p")
    settle(d, "two", "p", "success")
    st = states(d, "past", "two")
    assert (st["w"], st["wd"]) == (None, None), st

    # wd of run one succeeds: w of run two runs, then wd, and the run ends
    (d.side / "fail_wd").unlink()
    clear(d, "one", "wd")
    assert d.wait_run("past", "one")["state"] == "success"
    two = d.wait_run("past", "two")
    assert two["state"] == "success", two
    assert set(states(d, "past", "two").values()) == {"success"}
    ran = d.side_lines("ran")
    assert ran.index("wd one") < ran.index("w two"), ran
