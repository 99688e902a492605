"""TonY's ClusterSubmitter flags end to end, in the seed's command line shape:

    weir submit --python_venv=venv.zip --src_dir=MyPro01/src \\
        --executes=models/movie_comm02.py --task_params="--data_dir X --output_dir Y " \\
        --conf_file=MyPro01/tony-mypro01.xml --python_binary_path=venv/bin/python
"""

import json

from conftest import cli_describe, write_venv_zip

SCRIPT = """\
import json, os, sys
print("ARGS " + json.dumps(sys.argv[1:]))
print("ENV " + json.dumps({k: os.environ.get(k) for k in
      ("VENV_WRAPPER", "FROM_SHELL_ENV", "FROM_CONTAINER_ENV", "WEIR_ROLE", "WEIR_TASK_INDEX")}))
print("HAVE_VENV", os.path.isdir("venv"))
sys.exit(int(os.environ.get("EXIT_WITH", "0")))
"""

TONY_XML = """\
<configuration>
  <property>
    <name>tony.worker.instances</name>
    <value>2</value>
  </property>
  <property>
    <name>tony.worker.memory</name>
    <value>4g</value>
  </property>
</configuration>
"""


def _seed_project(tmp_path):
    """The seed's layout: MyPro01/src/models/movie_comm02.py, MyPro01/tony-mypro01.xml and
    venv.zip (made like `zip -r venv.zip venv`) beside MyPro01."""
    models = tmp_path / "MyPro01" / "src" / "models"
    models.mkdir(parents=True)
    (models / "movie_comm02.py").write_text(SCRIPT)
    (tmp_path / "MyPro01" / "tony-mypro01.xml").write_text(TONY_XML)
    write_venv_zip(tmp_path / "venv.zip", "seed", prefix="venv/")
    return tmp_path


SEED_FLAGS = ["--python_venv=venv.zip", "--src_dir=MyPro01/src",
              "--executes=models/movie_comm02.py",
              "--task_params=--data_dir /tmp/input --output_dir /tmp/output ",
              "--conf_file=MyPro01/tony-mypro01.xml", "--python_binary_path=venv/bin/python"]


def _lines(log, prefix):
    return [json.loads(ln[len(prefix):]) for ln in log.splitlines() if ln.startswith(prefix)]


def test_seed_command_line(server, tmp_path):
    d = _seed_project(tmp_path)
    r = server.cli("submit", *SEED_FLAGS, "--shell_env", "FROM_SHELL_ENV=a=b",
                   "--container_env=FROM_CONTAINER_ENV=c", cwd=d, timeout=180)
    assert r.returncode == 0, cli_describe(r)
    jobs = server.api("GET", "/api/v1/jobs")[1]["jobs"]
    assert len(jobs) == 1, jobs
    job = server.job(jobs[0]["id"])
    assert job["state"] == "succeeded", job
    assert str(job["id"]) in r.stdout + r.stderr, "submit did not print the job id"
    assert sorted((t["role"], t["index"]) for t in job["tasks"]) == \
        [("worker", 0), ("worker", 1)], job["tasks"]
    for i in range(2):
        log = server.log(job["id"], "worker", i)
        (args,) = _lines(log, "ARGS ")
        assert args == ["--data_dir", "/tmp/input", "--output_dir", "/tmp/output"], log
        (env,) = _lines(log, "ENV ")
        assert env["VENV_WRAPPER"] == "1", "not run by the venv's python: %s" % log
        assert env["FROM_SHELL_ENV"] == "a=b", env
        assert env["FROM_CONTAINER_ENV"] == "c", env
        assert env["WEIR_ROLE"] == "worker" and env["WEIR_TASK_INDEX"] == str(i), env
    out = r.stdout + r.stderr
    assert "succeeded" in out.lower(), "no final summary:\n" + cli_describe(r)


def test_conf_overrides_the_file(server, tmp_path):
    d = _seed_project(tmp_path)
    r = server.cli("submit", *SEED_FLAGS, "--conf", "tony.worker.instances=3",
                   "--conf=tony.application.name=renamed", cwd=d, timeout=180)
    assert r.returncode == 0, cli_describe(r)
    job = server.job(server.api("GET", "/api/v1/jobs")[1]["jobs"][0]["id"])
    assert job["name"] == "renamed", job
    assert len(job["tasks"]) == 3, job["tasks"]


def test_failing_program_makes_submit_exit_1(server, tmp_path):
    d = _seed_project(tmp_path)
    r = server.cli("submit", *SEED_FLAGS, "--shell_env", "EXIT_WITH=3", cwd=d, timeout=180)
    assert r.returncode == 1, cli_describe(r)
    job = server.api("GET", "/api/v1/jobs")[1]["jobs"][0]
    assert job["state"] == "failed", job


def test_tony_roles_and_untracked_ps(server, tmp_path):
    d = _seed_project(tmp_path)
    (d / "tf.xml").write_text("""\
<configuration>
  <property><name>tony.application.framework</name><value>tensorflow</value></property>
  <property><name>tony.worker.instances</name><value>2</value></property>
  <property><name>tony.worker.memory</name><value>512m</value></property>
  <property><name>tony.ps.instances</name><value>1</value></property>
  <property><name>tony.ps.memory</name><value>512m</value></property>
  <property><name>tony.ps.command</name><value>sleep 300</value></property>
  <property><name>tony.application.untracked.jobtypes</name><value>ps</value></property>
</configuration>
""")
    flags = [f for f in SEED_FLAGS if not f.startswith("--conf_file")] + ["--conf_file=tf.xml"]
    r = server.cli("submit", *flags, cwd=d, timeout=180)
    assert r.returncode == 0, cli_describe(r)
    job = server.job(server.api("GET", "/api/v1/jobs")[1]["jobs"][0]["id"])
    assert job["state"] == "succeeded", job
    assert job["framework"] == "tensorflow", job
    roles = sorted((t["role"], t["state"]) for t in job["tasks"])
    assert roles[0][0] == "ps" and roles[0][1] in ("killed", "succeeded"), roles
    assert [r_ for r_ in roles if r_[0] == "worker"] == [("worker", "succeeded")] * 2, roles


def test_detach_returns_at_once(server, tmp_path):
    d = _seed_project(tmp_path)
    r = server.cli("submit", "--detach", *SEED_FLAGS, "--shell_env", "EXIT_WITH=0", cwd=d,
                   timeout=60)
    assert r.returncode == 0, cli_describe(r)
    jobs = server.api("GET", "/api/v1/jobs")[1]["jobs"]
    assert len(jobs) == 1 and str(jobs[0]["id"]) in r.stdout, cli_describe(r)
    assert server.wait_job(jobs[0]["id"], timeout=120)["state"] == "succeeded"
