"""weir.Client against a real server: jobs (a spec as a dict or a file, TonY's way, states,
log streaming, kill, wait with a timeout, errors with the API's message and status) and DAGs
(list, trigger with conf, wait for the run, task states, logs, clear)."""

import sys
import threading

import pytest

from conftest import REPO, TASK_PY, WEIR_BIN, spec
from dagtest import make_dags  # noqa: F401 (a fixture)

sys.path.insert(0, str(REPO / "python"))
import weir  # noqa: E402


@pytest.fixture
def client(server, monkeypatch):
    monkeypatch.setenv("WEIR_BIN", WEIR_BIN)
    return weir.Client(server=server.url, token=server.token, home=str(server.home))


def test_settings_come_from_where_the_cli_finds_them(server, monkeypatch):
    monkeypatch.setenv("WEIR_SERVER", server.url.replace("http://", ""))
    monkeypatch.setenv("WEIR_HOME", str(server.home))
    monkeypatch.delenv("WEIR_TOKEN", raising=False)
    c = weir.Client()  # bare HOST:PORT, the token from HOME/token
    assert c.server == server.url and c.health()["status"] == "ok"
    assert c.jobs() == []
    monkeypatch.setenv("WEIR_TOKEN", "wrong")
    with pytest.raises(weir.ApiError) as info:
        weir.Client().jobs()
    assert info.value.status == 401 and "$WEIR_TOKEN" in str(info.value)
    with pytest.raises(weir.ServerUnreachable):
        weir.Client(server="127.0.0.1:1").jobs()


def test_submit_a_dict_follow_states_logs_and_events(client):
    job = client.submit(spec({"worker": {"instances": 2,
                                         "command": "echo out-$WEIR_TASK_INDEX; sleep 0.3"}},
                             name="dict-job"))
    assert job["state"] in ("queued", "starting", "running") and job["name"] == "dict-job"
    seen = [j["state"] for j in client.watch(job["id"], timeout=60)]
    assert seen[-1] == "succeeded" and "running" in seen, seen
    assert client.wait(job["id"], timeout=5)["state"] == "succeeded"
    assert client.state(job["id"]) == "succeeded"
    assert [t["state"] for t in client.tasks(job["id"])] == ["succeeded"] * 2
    assert client.logs(job["id"], "worker", 1).strip().endswith("out-1")
    kinds = [e["kind"] for e in client.events(job["id"])]
    assert kinds[0] == "submitted", kinds
    assert [j["id"] for j in client.jobs(state="succeeded")] == [job["id"]]


def test_submit_a_spec_file_with_relative_paths(client, tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "hello.txt").write_text("hello from the file\n")
    f = tmp_path / "job.yaml"
    f.write_text("name: from-file\nsrc_dir: ./src\nroles:\n  worker:\n"
                 "    memory: 128m\n    command: cat hello.txt\n")
    job = client.submit(f, priority=3)
    assert job["name"] == "from-file" and job["priority"] == 3
    assert job["spec"]["src_dir"] == str(tmp_path / "src")
    assert client.wait(job["id"], timeout=60)["state"] == "succeeded"
    assert "hello from the file" in client.logs(job["id"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("roles:\n  worker:\n    memory: lots\n    command: true\n")
    with pytest.raises(weir.ApiError) as info:
        client.submit(bad)
    assert "bad.yaml:3" in info.value.message and "memory" in info.value.message


def test_submit_tony_style(client, tmp_path):
    (tmp_path / "tony.xml").write_text(
        "<configuration>\n"
        "  <property><name>tony.worker.instances</name><value>2</value></property>\n"
        "  <property><name>tony.worker.memory</name><value>256m</value></property>\n"
        "</configuration>\n")
    (tmp_path / "train.py").write_text("import os\nprint('task', os.environ['TASK_INDEX'],"
                                       " os.environ['EPOCHS'])\n")
    job = client.submit_tony("tony.xml", executes="train.py", src_dir=".",
                             python_binary_path=TASK_PY, shell_env={"EPOCHS": "2"},
                             conf={"tony.application.name": "tony-way"}, cwd=tmp_path)
    assert job["name"] == "tony-way", job
    assert client.wait(job["id"], timeout=60)["state"] == "succeeded"
    assert "task 1 2" in client.logs(job["id"], "worker", 1)
    with pytest.raises(weir.ApiError) as info:
        client.submit_tony("missing.xml", executes="train.py", cwd=tmp_path)
    assert "missing.xml" in info.value.message


def test_stream_logs_kill_and_wait_with_a_timeout(client, server):
    job = client.submit(spec({"worker": {"command": "for i in 1 2 3; do echo tick $i; "
                                                    "sleep 0.3; done"}}, name="ticks"))
    text = "".join(client.stream_logs(job["id"]))  # ends when the task has ended
    assert [ln for ln in text.splitlines() if ln.startswith("tick")] == \
        ["tick 1", "tick 2", "tick 3"], text
    assert client.wait(job["id"], timeout=30)["state"] == "succeeded"

    sleeper = client.submit(spec({"worker": {"command": "sleep 600"}}, name="sleeper"))
    server.wait_running(sleeper["id"])
    with pytest.raises(weir.GetTimeoutError):
        client.wait(sleeper["id"], timeout=1)
    # a follower in another thread sees the end when the job is killed
    got = []
    t = threading.Thread(target=lambda: got.append("".join(client.stream_logs(sleeper["id"]))))
    t.start()
    assert client.kill(sleeper["id"])["id"] == sleeper["id"]
    assert client.wait(sleeper["id"], timeout=60)["state"] == "killed"
    t.join(60)
    assert not t.is_alive() and len(got) == 1, got  # the stream ended with the task
    with pytest.raises(weir.ApiError) as info:
        client.kill(sleeper["id"])
    assert info.value.status == 409


def test_errors_carry_the_api_message_and_status(client):
    with pytest.raises(weir.ApiError) as info:
        client.job(999999)
    assert info.value.status == 404
    with pytest.raises(weir.ApiError) as info:
        client.submit({"roles": {"worker": {"memory": "lots", "command": "true"}}})
    assert info.value.status == 400 and "roles.worker.memory" in info.value.message
    with pytest.raises(weir.ResourceError) as info:
        client.submit({"roles": {"worker": {"vcores": 1000, "command": "true"}}})
    assert info.value.status == 422
    assert client.jobs() == []


def test_dags_list_trigger_wait_states_logs_clear(make_dags):
    d = make_dags(files=["gate.yaml"])
    d.wait_dag("gate")
    c = weir.Client(server=d.srv.url, token=d.srv.token)
    assert [g["dag_id"] for g in c.dags()] == ["gate"]
    assert c.dag("gate")["dag_id"] == "gate"

    run = c.trigger("gate", conf={"msg": "from python"}, run_id="py_run_1")
    assert run["dag_run_id"] == "py_run_1" and run["conf"] == {"msg": "from python"}
    assert c.wait_run("gate", "py_run_1", timeout=60)["state"] == "failed"  # no `allow` yet
    assert c.task_states("gate", "py_run_1") == {"greet": "success", "gate": "failed"}
    assert "msg=from python" in c.task_log("gate", "py_run_1", "greet")
    assert [r["dag_run_id"] for r in c.dag_runs("gate")] == ["py_run_1"]

    (d.side / "allow").write_text("")
    cleared = c.clear("gate", "py_run_1", task_ids=["gate"])
    assert [t["task_id"] for t in cleared] == ["gate"]
    assert c.wait_run("gate", "py_run_1", timeout=60)["state"] == "success"
    assert c.task_states("gate", "py_run_1")["gate"] == "success"
    assert "gate open" in c.task_log("gate", "py_run_1", "gate", try_number=2)

    with pytest.raises(weir.ApiError) as info:
        c.trigger("gate", run_id="py_run_1")
    assert info.value.status == 409
    with pytest.raises(weir.ApiError) as info:
        c.dag("nope")
    assert info.value.status == 404 and "nope" in info.value.message
    assert c.import_errors() == []
