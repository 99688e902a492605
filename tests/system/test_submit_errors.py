"""Bad input is refused with a message that names the problem, and `weir submit` exits 2."""

import pytest

from conftest import TASK_PY, cli_describe, spec

GOOD_ROLE = "    instances: 1\n    memory: 128m\n    vcores: 1\n    command: \"true\"\n"


def _out(r):
    return r.stdout + r.stderr


@pytest.mark.parametrize("name,text,expect", [
    ("bad-memory", "name: x\nroles:\n  worker:\n    instances: 1\n    memory: lots\n"
     "    vcores: 1\n    command: \"true\"\n", ["memory", "lots"]),
    ("zero-instances", "name: x\nroles:\n  worker:\n    instances: 0\n    memory: 128m\n"
     "    vcores: 1\n    command: \"true\"\n", ["instances"]),
    ("unknown-key", "name: x\ncolour: blue\nroles:\n  worker:\n" + GOOD_ROLE, ["colour"]),
    ("bad-framework", "name: x\nframework: caffe\nroles:\n  worker:\n" + GOOD_ROLE,
     ["framework", "caffe"]),
    ("bad-role-name", "name: x\nroles:\n  Worker!:\n" + GOOD_ROLE, ["Worker!"]),
    ("not-yaml", "name: x\nroles: [\n  worker: {\n", []),
    ("no-roles", "name: x\n", ["roles"]),
])
def test_bad_spec_exits_2_naming_the_problem(server, tmp_path, name, text, expect):
    path = tmp_path / (name + ".yaml")
    path.write_text(text)
    r = server.cli("submit", path, timeout=60)
    assert r.returncode == 2, cli_describe(r)
    out = _out(r)
    assert name + ".yaml" in out, "the message does not name the file:\n" + cli_describe(r)
    for word in expect:
        assert word in out, "the message does not name %r:\n%s" % (word, cli_describe(r))
    assert server.api("GET", "/api/v1/jobs")[1]["jobs"] == [], "a bad spec created a job"


def test_missing_spec_file_exits_2(server, tmp_path):
    r = server.cli("submit", tmp_path / "nope.yaml", timeout=60)
    assert r.returncode == 2, cli_describe(r)
    assert "nope.yaml" in _out(r), cli_describe(r)


def _tony_xml(props):
    body = "".join("  <property>\n    <name>%s</name>\n    <value>%s</value>\n  </property>\n"
                   % kv for kv in props)
    return "<?xml version=\"1.0\"?>\n<configuration>\n%s</configuration>\n" % body


def _tony_project(tmp_path, xml_text):
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    (src / "hello.py").write_text("print('hello from', __import__('os').environ.get("
                                  "'WEIR_ROLE'))\n")
    conf = tmp_path / "tony.xml"
    conf.write_text(xml_text)
    return src, conf


@pytest.mark.parametrize("xml_text,expect", [
    ("<configuration><property><name>tony.worker.instances</name>"
     "<value>2</value></property>\n", []),  # not well-formed: unclosed element
    (_tony_xml([("tony.worker.instances", "two")]), ["tony.worker.instances", "two"]),
    (_tony_xml([("tony.worker.instances", "1"), ("tony.worker.memory", "huge")]),
     ["tony.worker.memory", "huge"]),
    (_tony_xml([("tony.application.framework", "caffe")]), ["tony.application.framework"]),
])
def test_bad_tony_xml_exits_2_naming_the_problem(server, tmp_path, xml_text, expect):
    src, conf = _tony_project(tmp_path, xml_text)
    r = server.cli("submit", "--conf_file", conf, "--src_dir", src, "--executes", "hello.py",
                   "--python_binary_path", TASK_PY, timeout=60)
    assert r.returncode == 2, cli_describe(r)
    out = _out(r)
    assert "tony.xml" in out, "the message does not name the file:\n" + cli_describe(r)
    for word in expect:
        assert word in out, "the message does not name %r:\n%s" % (word, cli_describe(r))


def test_bad_submit_flag_exits_2(server, tmp_path):
    src, conf = _tony_project(tmp_path, _tony_xml([("tony.worker.instances", "1")]))
    r = server.cli("submit", "--conf_file", conf, "--no_such_flag", "x", timeout=60)
    assert r.returncode == 2, cli_describe(r)
    assert "no_such_flag" in _out(r), cli_describe(r)
    r = server.cli("submit", "--conf_file", conf, "--conf", "not-a-pair", timeout=60)
    assert r.returncode == 2, cli_describe(r)
    assert "not-a-pair" in _out(r), cli_describe(r)


def test_unknown_tony_key_warns_once_and_job_runs(server, tmp_path):
    src, conf = _tony_project(tmp_path, _tony_xml([
        ("tony.worker.instances", "1"), ("tony.worker.memory", "256m"),
        ("tony.yarn.queue", "default"), ("tony.application.node-label", "gpu"),
        ("tony.application.security.enabled", "true")]))
    r = server.cli("submit", "--conf_file", conf, "--src_dir", src, "--executes", "hello.py",
                   "--python_binary_path", TASK_PY, timeout=120)
    assert r.returncode == 0, cli_describe(r)
    out = _out(r)
    for key in ("tony.application.node-label", "tony.application.security.enabled"):
        lines = [ln for ln in out.splitlines() if key in ln]
        assert len(lines) == 1, "expected one warning line for %s:\n%s" % (key, cli_describe(r))
    jobs = server.api("GET", "/api/v1/jobs")[1]["jobs"]
    assert len(jobs) == 1 and jobs[0]["state"] == "succeeded", jobs
    assert "hello from worker" in server.log(jobs[0]["id"])


def test_api_bad_json_is_400(server):
    status, body = server.api("POST", "/api/v1/jobs", raw_body="{this is not json")
    assert status == 400, body
    assert isinstance(body, dict) and body.get("error"), body


def test_api_bad_spec_is_400_naming_the_field(server):
    bad = spec({"worker": {"instances": 2, "memory": "lots", "command": "true"}})
    status, body = server.api("POST", "/api/v1/jobs", bad)
    assert status == 400, body
    assert "memory" in body["error"] and "worker" in body["error"], body
    bad = spec({"worker": {"instances": 1, "command": "true"}}, frobnicate=1)
    status, body = server.api("POST", "/api/v1/jobs", bad)
    assert status == 400, body
    assert "frobnicate" in body["error"], body


def test_api_unknown_job_is_404(server):
    for method, path in (("GET", "/api/v1/jobs/999999"), ("DELETE", "/api/v1/jobs/999999"),
                         ("GET", "/api/v1/no-such-route")):
        status, body = server.api(method, path)
        assert status == 404, (method, path, body)
        assert body.get("error"), body


def test_more_gpus_than_the_node_has_is_422(server):
    # the default test config declares gpus: 3
    status, body = server.api("POST", "/api/v1/jobs",
                              spec({"worker": {"instances": 1, "gpus": 4, "command": "true"}}))
    assert status == 422, body
    msg = body["error"]
    assert "gpu" in msg.lower() and "4" in msg and "3" in msg, msg
    assert server.api("GET", "/api/v1/jobs")[1]["jobs"] == []


def test_more_memory_than_the_node_has_is_422(server):
    # 16g declared: 3 instances of 8g can never fit together (gang)
    status, body = server.api("POST", "/api/v1/jobs",
                              spec({"worker": {"instances": 3, "memory": "8g",
                                               "command": "true"}}))
    assert status == 422, body
    assert "memory" in body["error"].lower(), body
