"""PythonVirtualenvOperator and `@task.virtualenv` in Python DAG files run by a real server
(docs/airflow.md): the callable runs in a virtual environment made with `python3 -m venv`,
its requirements installed by pip from a wheel the test builds (no index reachable), the
environment cached by the requirements' hash and used again by the next task; without the
system's packages the environment sees none of them; a requirement pip cannot find fails the
task naming it; `@task.docker` and DockerOperator are import errors that say why."""

import json
import zipfile

from test_airflow_operators import run_ok, server_with

DAG_FILE = '''\
from datetime import datetime
from airflow import DAG
from airflow.decorators import task
from airflow.operators.python import PythonOperator, PythonVirtualenvOperator

REQS = ["--no-index", "--find-links @WHEELS@", "weirdemo==1.0"]


@task.virtualenv(requirements=REQS, system_site_packages=False)
def first(n, ds=None):
    import sys
    import weirdemo
    return {"value": weirdemo.VALUE * n, "ds": ds, "prefix": sys.prefix}


@task.virtualenv(requirements=REQS, system_site_packages=False)
def again(got):
    import sys
    import weirdemo
    try:
        import jinja2  # the system's, not in this environment
        seen = True
    except ImportError:
        seen = False
    return {"value": got["value"] + weirdemo.VALUE, "prefix": sys.prefix, "jinja2": seen}


def with_system(prefix):
    import jinja2
    import sys
    return [sys.prefix != prefix, jinja2.__name__]


def keep(ti):
    import json
    with open("@SIDE@/out.json", "w") as f:
        json.dump([ti.xcom_pull(task_ids=t) for t in ("first", "again", "system")], f)


with DAG("venvs", start_date=datetime(2024, 1, 1), schedule=None,
         default_args={"retries": 0}):
    a = first(2)
    b = again(a)
    s = PythonVirtualenvOperator(task_id="system", python_callable=with_system,
                                 op_args=["{{ ti.xcom_pull(task_ids='first')['prefix'] }}"],
                                 venv_cache_path="@SIDE@/own-cache")
    a >> s
    [b, s] >> PythonOperator(task_id="keep", python_callable=keep)
    PythonVirtualenvOperator(task_id="missing", python_callable=with_system,
                             requirements=["--no-index", "weir-no-such-package==9"])
'''

DOCKER_FILE = '''\
from datetime import datetime
from airflow import DAG
from airflow.decorators import task

with DAG("boxed", start_date=datetime(2024, 1, 1), schedule=None):
    @task.docker(image="python:3.11")
    def inside():
        return 1
    inside()
'''

DOCKER_OP_FILE = '''\
from datetime import datetime
from airflow import DAG
from airflow.providers.docker.operators.docker import DockerOperator

with DAG("boxed_op", start_date=datetime(2024, 1, 1), schedule=None):
    DockerOperator(task_id="inside", image="python:3.11", command="python -V")
'''


def wheel(folder):
    """weirdemo 1.0 as a wheel (VALUE = 21), written by hand: pip installs it offline."""
    folder.mkdir()
    path = folder / "weirdemo-1.0-py3-none-any.whl"
    info = "weirdemo-1.0.dist-info/"
    files = {"weirdemo/__init__.py": "VALUE = 21\n",
             info + "METADATA": "Metadata-Version: 2.1\nName: weirdemo\nVersion: 1.0\n",
             info + "WHEEL": "Wheel-Version: 1.0\nGenerator: weir-test\n"
                             "Root-Is-Purelib: true\nTag: py3-none-any\n"}
    files[info + "RECORD"] = "".join("%s,,\n" % n for n in list(files) + [info + "RECORD"])
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return folder


def test_virtualenv_tasks_run_in_cached_environments(make_server, tmp_path):
    wheels = wheel(tmp_path / "wheels")
    cache = tmp_path / "venv-cache"
    d = server_with(make_server, tmp_path,
                    {"venvs.py": DAG_FILE.replace("@WHEELS@", str(wheels)),
                     "boxed.py": DOCKER_FILE, "docker_op.py": DOCKER_OP_FILE},
                    env={"WEIR_AIRFLOW_VENV_CACHE": str(cache)})
    run = run_ok(d, "venvs", timeout=240, logical_date="2024-05-06T00:00:00Z")
    rid = run["dag_run_id"]
    tis = d.tis("venvs", rid)
    for t in ("first", "again", "system", "keep"):
        assert tis[t]["state"] == "success", (t, d.log("venvs", rid, t))
    first, again, system = json.loads((d.side / "out.json").read_text())
    # weirdemo from the wheel, the context's ds, one environment made and used again
    assert first["value"] == 42 and first["ds"] == "2024-05-06", first
    assert again["value"] == 63 and again["prefix"] == first["prefix"], again
    assert first["prefix"].startswith(str(cache) + "/venv-"), first
    assert again["jinja2"] is False
    assert "weir: making virtual environment" in d.log("venvs", rid, "first")
    assert "(cached)" in d.log("venvs", rid, "again")
    assert len([p for p in cache.iterdir() if p.is_dir()]) == 1
    # with the system's packages (the default), in venv_cache_path
    assert system == [True, "jinja2"], system
    assert any(p.name.startswith("venv-") for p in (d.side / "own-cache").iterdir())
    # pip's failure fails the task, naming the requirement
    assert tis["missing"]["state"] == "failed"
    log = d.log("venvs", rid, "missing")
    assert "pip could not install the requirements weir-no-such-package==9" in log, log
    assert run["state"] == "failed"
    # no containers: import errors that say so
    errors = d.get("/importErrors")["import_errors"]
    text = {e["filename"].rsplit("/", 1)[-1]: e["stack_trace"] for e in errors}
    assert "@task.docker: not supported: weir runs no containers" in text["boxed.py"], text
    assert "DockerOperator (airflow.providers.docker.operators.docker): not supported" in \
        text["docker_op.py"], text
