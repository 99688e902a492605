"""foreach over an upstream task's output on a real server: the mapped task expands when
its upstream ends, one instance per item, an object item's keys in the command and its
own resources on its job; Airflow's map_index in the API; an empty list skips the task,
a value that is not a list fails the upstream with the reason."""

import json

from dagtest import make_dags  # noqa: F401  (the fixture)

MODELS = [
    {"name": "a", "lr": 0.1, "resources": {"cpus": 2, "memory": "4g", "gpus": 1}},
    {"name": "b; touch pwned", "lr": 0.01, "resources": {"cpus": 3, "memory": 1024, "gpus": 2}},
    {"name": "c", "lr": 1},
]


def mb(text):
    """Megabytes of a memory amount as the jobs API writes it ("4g", "512m")."""
    units = {"m": 1, "g": 1024, "t": 1024 * 1024}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def start(make_dags, models):
    d = make_dags(files=["foreach_outputs.yaml"])
    (d.side / "models.json").write_text(json.dumps({"models": models}))
    d.wait_dag("foreach_outputs")
    return d


def test_mapped_task_expands_with_per_item_resources(make_dags):
    d = start(make_dags, MODELS)
    rid = d.trigger("foreach_outputs", run_id="r1")["dag_run_id"]
    run = d.wait_run("foreach_outputs", rid, timeout=90)
    assert run["state"] == "success", run
    tis = d.tis("foreach_outputs", rid)
    assert sorted(tis) == ["prepare", "report", "train[0]", "train[1]", "train[2]"], tis
    assert all(t["state"] == "success" for t in tis.values()), tis

    # each instance's job has its item's resources; an item without any, the task's
    want = [(2, 4096, 1), (3, 1024, 2), (1, 256, 0)]
    for i, (vcores, memory_mb, gpus) in enumerate(want):
        ti = d.get("/dags/foreach_outputs/dagRuns/%s/taskInstances/train/%d" % (rid, i))
        assert ti["map_index"] == i and ti["task_id"] == "train", ti
        status, job = d.srv.api("GET", "/api/v1/jobs/%d" % ti["job_id"])
        assert status == 200, job
        role = job["spec"]["roles"]["task"]
        assert (role["vcores"], mb(role["memory"]), role["gpus"]) == (vcores, memory_mb,
                                                                      gpus), job
        # the GPUs it was given
        given = job["tasks"][0]["gpus"] or ""
        assert len([g for g in given.split(",") if g]) == gpus, job["tasks"]
        assert job["name"] == "foreach_outputs.train.%d" % i, job

    # item.KEY in the command, quoted: the name with a ';' is one word, never run
    lines = sorted(d.side_lines("trained"))
    assert [line.split(" lr=")[0] for line in lines] == ["0 a", "1 b; touch pwned", "2 c"]
    assert [line.split(" gpus=")[0].split("lr=")[1] for line in lines] == ["0.1", "0.01", "1"]
    gpus = [line.split("gpus=[")[1].rstrip("]") for line in lines]
    assert [len(g.split(",")) if g else 0 for g in gpus] == [1, 2, 0], lines
    assert not (d.side / "pwned").exists()

    # the list route: map_index per instance; the placeholder before expansion is gone
    body = d.get("/dags/foreach_outputs/dagRuns/%s/taskInstances" % rid)
    assert sorted((t["task_id"], t["map_index"]) for t in body["task_instances"]) == [
        ("prepare", -1), ("report", -1), ("train", 0), ("train", 1), ("train", 2)], body
    # the UI's grid: the mapped task counts its instances
    grid = d.get("/ui/dags/foreach_outputs/grid")
    train = [t for t in grid["tasks"] if t["task_id"] == "train"][0]
    assert train["is_mapped"] is True, train
    cell = train["instances"][0]
    assert cell["map_index_count"] == 3 and cell["states_count"] == {"success": 3}, cell
    # the Task object says it is mapped
    tasks = {t["task_id"]: t for t in d.get("/dags/foreach_outputs/tasks")["tasks"]}
    assert tasks["train"]["is_mapped"] is True and tasks["prepare"]["is_mapped"] is False


def test_empty_list_skips_the_mapped_task(make_dags):
    d = start(make_dags, [])
    rid = d.trigger("foreach_outputs", run_id="empty")["dag_run_id"]
    run = d.wait_run("foreach_outputs", rid)
    assert run["state"] == "success", run
    tis = d.tis("foreach_outputs", rid)
    # Airflow's mapped task over nothing: one instance, map_index -1, skipped
    assert {n: t["state"] for n, t in tis.items()} == {
        "prepare": "success", "train": "skipped", "report": "skipped"}, tis
    assert d.side_lines("trained") == []


def test_output_that_is_not_a_list_fails_the_upstream(make_dags):
    d = start(make_dags, {"a": 1})
    rid = d.trigger("foreach_outputs", run_id="bad")["dag_run_id"]
    run = d.wait_run("foreach_outputs", rid)
    assert run["state"] == "failed", run
    tis = d.tis("foreach_outputs", rid)
    assert tis["prepare"]["state"] == "failed", tis
    reason = tis["prepare"]["reason"]
    assert "outputs.prepare.models: expected a list for task train to fan out over" in reason
    assert "got a mapping" in reason, reason
    assert tis["train"]["state"] == "upstream_failed", tis
    # a bad item's resources are named too
    (d.side / "models.json").write_text(json.dumps(
        {"models": [{"name": "x", "resources": {"cpus": 0}}]}))
    rid = d.trigger("foreach_outputs", run_id="bad2")["dag_run_id"]
    assert d.wait_run("foreach_outputs", rid)["state"] == "failed"
    reason = d.tis("foreach_outputs", rid)["prepare"]["reason"]
    assert "outputs.prepare.models[0]" in reason and "resources.cpus" in reason, reason


def test_bad_foreach_outputs_in_the_file_are_import_errors(make_dags):
    d = make_dags()
    d.write("bad.yaml", "dag_id: bad\ntasks:\n  - task_id: t\n    command: 'true'\n"
            "    foreach: '{{ outputs.nope.models }}'\n")
    d.write("self.yaml", "dag_id: self\ntasks:\n  - task_id: t\n    command: 'true'\n"
            "    foreach: '{{ outputs.t.models }}'\n")

    def errors():
        status, body = d.srv.api("GET", "/api/v1/importErrors")
        return body["import_errors"] if status == 200 and len(body["import_errors"]) >= 2 \
            else None
    from conftest import wait_for
    errs = {e["filename"].rsplit("/", 1)[-1]: e["stack_trace"] for e in
            wait_for(errors, 30, "two import errors")}
    assert "tasks[0].foreach: outputs.nope: no task of this DAG has that id" in errs["bad.yaml"]
    assert "cannot fan out over its own output" in errs["self.yaml"]
