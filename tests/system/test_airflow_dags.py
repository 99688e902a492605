"""Airflow DAG files in Python in the DAG folder (docs/airflow.md): parsed by the DAG
processor in a child process, run through the REST API; broken files are import errors that
name the file and line while the good files beside them run."""

import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from airflow_schemas import check
from conftest import WEIR_BIN, cli_describe, wait_for
from dagtest import DAGS_SRC, Dags, dag_config


def place(d, name, **subs):
    """tests/system/dags/airflow/NAME into the DAG folder (subfolders kept), whole (a rename)."""
    path = d.dir / name
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / (".%s.tmp" % path.name)
    tmp.write_text(d.text("airflow/" + name, **subs))
    os.replace(tmp, path)


def airflow_dags(make_server, tmp_path, files, timeout=None, ignore=None, env=None):
    """A server whose DAG folder holds tests/system/dags/airflow/FILES (and an
    .airflowignore of `ignore`)."""
    config = dag_config()
    if timeout:
        config += "dagbag_import_timeout: %s\n" % timeout
    srv = make_server(config=config, start=False)
    # the tasks and the processor run this interpreter (jinja2 is there)
    srv.extra_env["WEIR_AIRFLOW_PYTHON"] = sys.executable
    srv.extra_env.update(env or {})
    d = Dags(srv, tmp_path)
    if ignore:
        (d.dir / ".airflowignore").write_text(ignore)
    for name in files:
        place(d, name)
    srv.start()
    return d


def import_errors(d, name):
    errs = d.get("/importErrors")["import_errors"]
    return [e for e in errs if e["filename"].endswith("/" + name)]


def wait_import_error(d, name, timeout=30):
    return wait_for(lambda: import_errors(d, name), timeout, "an import error for " + name)[0]


ENV_DAG = '''\
import os
from airflow import DAG
from airflow.operators.empty import EmptyOperator

seen = sorted(k for k in os.environ if k in ("SYSTEST_API_TOKEN", "WEIR_CONN_DB"))
with DAG("env_seen", description=repr(seen), schedule=None):
    EmptyOperator(task_id="t")
'''


def test_python_dag_files_run(make_server, tmp_path):
    d = airflow_dags(make_server, tmp_path, ["classic.py", "team/taskflow.py", "helpers.py",
                                              "ignored_one.py"],
                     ignore="# not read\nignored_.*  # a regexp, as Airflow's\n",
                     env={"SYSTEST_API_TOKEN": "s3cr3t", "WEIR_CONN_DB": "sqlite:///x"})
    # a DAG file sees the server's environment as a task does: no credential
    (d.dir / "env.py").write_text(ENV_DAG)
    dag = d.wait_dag("env_seen")
    assert dag["description"] == "[]", dag
    # YAML beside Python, in a subfolder too; a job's spec kept in a subfolder is no DAG file
    (d.dir / "team" / "side.yaml").write_text(
        "dag_id: yaml_side\ntasks:\n  - task_id: t\n    command: 'true'\n")
    (d.dir / "specs").mkdir()
    (d.dir / "specs" / "job.yaml").write_text(
        "name: j\nroles:\n  task: {command: 'true', memory: 256m}\n")
    d.wait_dag("yaml_side")
    dag = d.wait_dag("classic")
    assert dag["fileloc"].endswith("/classic.py"), dag
    assert sorted(t["name"] for t in dag["tags"]) == ["classic", "example"], dag
    assert dag["schedule_interval"]["value"] == "@daily", dag
    tasks = {t["task_id"]: t for t in d.get("/dags/classic/tasks")["tasks"]}
    assert set(tasks) == {"start", "extract", "count_rows", "summary", "templated", "end"}
    assert tasks["count_rows"]["retries"] == 1, tasks["count_rows"]
    assert tasks["end"]["trigger_rule"] == "all_done", tasks["end"]
    assert sorted(tasks["count_rows"]["downstream_task_ids"]) == ["summary", "templated"]

    run = d.trigger("classic", conf={"who": "weir"})
    assert d.wait_run("classic", run["dag_run_id"])["state"] == "success", \
        d.tis("classic", run["dag_run_id"])
    day = run["logical_date"][:10]
    assert d.side_lines("classic_extract") == ["extracted"]
    assert d.side_lines("classic_report") == ["%s 30 weir" % day]
    assert d.side_lines("classic_templated") == ["%s weir 3" % day]
    base = "/dags/classic/dagRuns/%s/taskInstances" % run["dag_run_id"]
    x = d.get(base + "/summary/xcomEntries/return_value?stringify=false")
    assert x["value"] == 30, x
    x = d.get(base + "/count_rows/xcomEntries/return_value?stringify=false")
    assert x["value"] == {"rows": 3, "day": day, "who": "weir"}, x

    # what the official client reads of a Python DAG (get_dag_details, get_tasks, get_task,
    # the source, the task instances) fits Airflow's spec and names the operators' classes
    check("DAGDetail", d.get("/dags/classic/details"))
    tasks = d.get("/dags/classic/tasks")
    check("TaskCollection", tasks)
    refs = {t["task_id"]: t["class_ref"] for t in tasks["tasks"]}
    assert refs["count_rows"] == {"class_name": "PythonOperator",
                                  "module_path": "airflow.operators.python"}, refs
    assert refs["extract"] == {"class_name": "BashOperator",
                               "module_path": "airflow.operators.bash"}, refs
    check("Task", d.get("/dags/classic/tasks/summary"))
    src = d.get("/dagSources/" + d.get("/dags/classic")["file_token"])
    assert src["content"] == (d.dir / "classic.py").read_text(), src
    tis = {t["task_id"]: t["operator"] for t in d.get(base)["task_instances"]}
    assert tis["summary"] == "PythonOperator" and tis["extract"] == "BashOperator", tis

    # TaskFlow, in a subfolder
    d.wait_dag("taskflow_etl")
    run = d.trigger("taskflow_etl")
    assert d.wait_run("taskflow_etl", run["dag_run_id"])["state"] == "success", \
        d.tis("taskflow_etl", run["dag_run_id"])
    assert d.side_lines("taskflow_load") == ["total=3"]
    assert d.side_lines("taskflow_note") == ["noted"]
    x = d.get("/dags/taskflow_etl/dagRuns/%s/taskInstances/transform/xcomEntries/return_value"
              "?stringify=false" % run["dag_run_id"])
    assert x["value"]["total"] == 3, x

    # neither the file that names no DAG nor the ignored one was imported
    errs = d.get("/importErrors")["import_errors"]
    assert not errs, errs
    r = d.srv.cli("dags", "list")
    assert r.returncode == 0, cli_describe(r)
    assert "classic" in r.stdout and "taskflow_etl" in r.stdout, cli_describe(r)


def test_broken_python_files_are_import_errors(make_server, tmp_path):
    d = airflow_dags(make_server, tmp_path,
                     ["good.py", "raises.py", "syntax.py", "loops.py", "exits.py", "prints.py",
                      "big.py"],
                     timeout=3)
    d.wait_dag("good")

    e = wait_import_error(d, "raises.py")
    assert "raises.py:9" in e["stack_trace"], e
    assert "the configuration service is down" in e["stack_trace"], e
    assert "Traceback" in e["stack_trace"], e
    # the whole traceback, its last line too
    assert e["stack_trace"].rstrip().endswith(
        "RuntimeError: the configuration service is down"), e
    e = wait_import_error(d, "syntax.py")
    assert "syntax.py:4" in e["stack_trace"] and "SyntaxError" in e["stack_trace"], e
    e = wait_import_error(d, "exits.py")
    assert "sys.exit(3)" in e["stack_trace"], e
    e = wait_import_error(d, "loops.py")
    assert "dagbag_import_timeout (3 s)" in e["stack_trace"], e
    e = wait_import_error(d, "big.py")
    assert "answer passed 8388608 bytes" in e["stack_trace"], e
    # what a file prints goes nowhere: its DAG loads
    d.wait_dag("prints")

    r = d.srv.cli("dags", "list")
    assert r.returncode == 0, cli_describe(r)
    assert "raises.py:9" in r.stdout and "dagbag_import_timeout" in r.stdout, cli_describe(r)

    # the good file beside them runs
    run = d.trigger("good")
    assert d.wait_run("good", run["dag_run_id"])["state"] == "success"
    assert "hello @VERSION@" in d.log("good", run["dag_run_id"], "hello")

    # a second file with the same dag_id: an import error naming the first
    place(d, "dup.py")
    e = wait_import_error(d, "dup.py")
    assert 'dag_id: "good" is already the DAG of' in e["stack_trace"], e
    assert e["stack_trace"].rstrip().endswith("good.py"), e
    os.unlink(d.dir / "dup.py")
    wait_for(lambda: not import_errors(d, "dup.py"), 30, "dup.py's import error to go")

    # a changed file is parsed again; a fixed one loads
    place(d, "good.py", VERSION="v2")
    d.wait_dag("good", pred=lambda dag: True)
    def second_version():
        run2 = d.trigger("good")
        d.wait_run("good", run2["dag_run_id"])
        return "hello v2" in d.log("good", run2["dag_run_id"], "hello")
    wait_for(second_version, 30, "the changed good.py to run")
    d.write("raises.py", (DAGS_SRC / "airflow/raises.py").read_text().replace(
        "    raise RuntimeError", "    # raise RuntimeError"))
    d.wait_dag("raises")
    wait_for(lambda: not import_errors(d, "raises.py"), 30, "raises.py's import error to go")

    # a deleted file's DAG goes
    os.unlink(d.dir / "prints.py")
    def gone():
        status, body = d.srv.api("GET", "/api/v1/dags/prints")
        return status == 404 or body.get("is_active") is False
    wait_for(gone, 30, "DAG prints to go with its file")


WHOAMI = '''\
import os
from datetime import datetime

from airflow import DAG
from airflow.decorators import task

# the processor's uid, where the test can read it
with DAG("whoami", description="parsed by uid %d" % os.getuid(), schedule=None,
         start_date=datetime(2024, 1, 1)):
    @task
    def uid():
        return os.getuid()

    @task
    def show(n):
        print("task uid=%d upstream uid=%d" % (os.getuid(), n))

    show(uid())
'''


@pytest.mark.skipif(os.geteuid() != 0, reason="starts processes as another user: root")
def test_a_dag_file_is_imported_as_the_tasks_user(make_server):
    """A root server imports DAG files as its tasks' user (nobody), as it runs the tasks."""
    nobody = pwd.getpwnam("nobody").pw_uid
    top = Path(tempfile.mkdtemp(prefix="weir-af-", dir="/tmp"))
    try:
        top.chmod(0o711)  # pytest's folders (0700) are closed to other users
        srv = make_server(config=dag_config(), home=top / "home", start=False)
        srv.shared_task_user = False
        srv.extra_env["WEIR_AIRFLOW_PYTHON"] = sys.executable
        d = Dags(srv, top)
        d.write("whoami.py", WHOAMI)
        srv.start()
        dag = d.wait_dag("whoami")
        assert dag["description"] == "parsed by uid %d" % nobody, dag
        run = d.wait_run("whoami", d.trigger("whoami")["dag_run_id"])
        assert run["state"] == "success", d.tis("whoami", run["dag_run_id"])
        assert "task uid=%d upstream uid=%d" % (nobody, nobody) in d.log(
            "whoami", run["dag_run_id"], "show")
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_a_python_dags_run_survives_a_kill9(make_server, tmp_path):
    """kill -9 of the server while a Python DAG's task runs; after the restart the file is
    parsed again, the run goes on, each task ran once, and the value a passed reaches c."""
    d = airflow_dags(make_server, tmp_path, ["survive.py"])
    d.wait_dag("survive")
    d.trigger("survive", run_id="survivor")

    def b_running():
        ti = d.tis("survive", "survivor").get("b")
        return ti if ti and ti["state"] == "running" and d.side_lines("b") else None
    wait_for(b_running, 60, "task b running")
    d.srv.kill9()
    d.srv.start()
    (d.side / "go").write_text("")
    run = d.wait_run("survive", "survivor", timeout=120)
    assert run["state"] == "success", (run, d.tis("survive", "survivor"))
    assert (d.side_lines("a"), d.side_lines("b"), d.side_lines("c")) == (
        ["a"], ["b"], ["c got a"])


def test_templates_see_the_runs_context(make_server, tmp_path):
    """Airflow's context in a BashOperator's command, a PythonOperator's templates_dict and
    op_args, and a .sh template file from template_searchpath, checked value by value; the
    dates are the server's run's, the conf overrides the params, and a conf value that holds
    shell code reaches bash as one word, never as code."""
    tpl = tmp_path / "tpl"
    tpl.mkdir()
    d = airflow_dags(make_server, tmp_path, [])
    (tpl / "report.sh").write_text(d.text("airflow/tpl/report.sh"))
    path = d.dir / "templated.py"
    path.write_text(d.text("airflow/templated.py", TPL=tpl))
    d.wait_dag("templated")
    run = d.trigger("templated", conf={"x": "over ride"},
                    logical_date="2024-03-05T00:00:00+00:00")
    rid = run["dag_run_id"]
    assert d.wait_run("templated", rid)["state"] == "success", d.tis("templated", rid)
    got = d.get("/dags/templated/dagRuns/%s" % rid)

    def xcom(task):
        return d.get("/dags/templated/dagRuns/%s/taskInstances/%s/xcomEntries/return_value"
                     "?stringify=false" % (rid, task))["value"]

    conf = "{'x': 'over ride'}"
    py = xcom("py")
    assert py["ds"] == "2024-03-05" and py["nodash"] == "20240305", py
    assert py["yesterday"] == "2024-03-04", py
    assert py["x"] == "over ride" and py["conf"] == conf, py
    assert py["up"] == "from up", py
    assert py["run_type"] == "manual", py
    # a manual run: prev_ds and next_ds are its own date, as in Airflow
    assert py["prev_ds"] == py["next_ds"] == "2024-03-05", py
    # the data interval is the server's run's
    assert py["start"][:19] == got["data_interval_start"][:19], (py, got)
    assert py["end"][:19] == got["data_interval_end"][:19], (py, got)
    assert py["logical"].startswith("2024-03-05T00:00:00"), py
    assert xcom("bash") == "2024-03-05 2024-03-04 over ride %s from up" % conf
    assert xcom("script") == "script 20240305 over ride"

    # shell code in the conf is a value, not code
    mark = tmp_path / "pwned"
    run = d.trigger("templated", conf={"x": "$(touch %s); `touch %s`" % (mark, mark)})
    rid = run["dag_run_id"]
    assert d.wait_run("templated", rid)["state"] == "success", d.tis("templated", rid)
    assert xcom("script").endswith("$(touch %s); `touch %s`" % (mark, mark))
    assert not mark.exists()


CHECKED_DAG = '''\
from datetime import datetime
from airflow import DAG
from airflow.operators.bash import BashOperator
from airflow.operators.python import PythonOperator

def up():
    return 41

def down(ti, ds, params):
    with open(params["out"], "w") as f:
        f.write("%s %s %s\\n" % (ti.xcom_pull(task_ids="up") + 1, ds, params["who"]))

with DAG("checked", schedule="@daily", start_date=datetime(2024, 1, 1),
         params={"who": "nobody", "out": ""}):
    PythonOperator(task_id="up", python_callable=up) >> PythonOperator(
        task_id="down", python_callable=down) >> BashOperator(task_id="bye", bash_command="true")
'''


def weir_cli(tmp_path, *args, timeout=120):
    """`weir ARGS...` run in tmp_path, the processor and the tasks on this interpreter."""
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    env = dict(os.environ, WEIR_AIRFLOW_PYTHON=sys.executable, TMPDIR=str(tmp),
               HOME=str(tmp_path))
    env.pop("WEIR_LOG", None)
    return subprocess.run([WEIR_BIN] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=str(tmp_path))


def test_dags_check_loads_files_as_the_server_does(tmp_path):
    """`weir dags check FILE...`: each file's DAGs or its import error; exit 1 when one
    failed, 0 when all loaded; a file that loops is killed at dagbag_import_timeout."""
    src = DAGS_SRC / "airflow"
    good = tmp_path / "checked.py"
    good.write_text(CHECKED_DAG)
    yaml = DAGS_SRC / "branch.yaml"
    (tmp_path / "weir.yaml").write_text("dagbag_import_timeout: 2\n")
    r = weir_cli(tmp_path, "dags", "check", "--config", tmp_path / "weir.yaml", good, yaml,
                 src / "raises.py", src / "syntax.py", src / "loops.py", src / "helpers.py")
    assert r.returncode == 1, cli_describe(r)
    out = r.stdout
    assert "%s: DAG checked: schedule @daily; 3 tasks: up down bye\n" % good in out, out
    assert "%s: DAG branch: schedule none;" % yaml in out, out
    assert "%s: import error: %s:9: RuntimeError: the configuration service is down" % (
        src / "raises.py", src / "raises.py") in out, out
    assert "%s: import error: %s:4:" % (src / "syntax.py", src / "syntax.py") in out, out
    assert "SyntaxError" in out, out
    assert "longer than dagbag_import_timeout (2 s)" in out, out
    assert "%s: no DAG\n" % (src / "helpers.py") in out, out
    assert out.endswith("6 files, 2 DAGs, 3 import errors\n"), out

    r = weir_cli(tmp_path, "dags", "check", good, yaml)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.endswith("2 files, 2 DAGs, 0 import errors\n"), r.stdout
    r = weir_cli(tmp_path, "dags", "check")
    assert r.returncode == 2, cli_describe(r)


def test_dags_test_runs_a_python_dag_file(tmp_path):
    """`weir dags test FILE.py` runs the file's DAG as it runs a YAML one: the conf over
    the params, the logical date, values passed by XCom; a broken file exits 2 naming it."""
    path = tmp_path / "checked.py"
    path.write_text(CHECKED_DAG)
    out = tmp_path / "out"
    r = weir_cli(tmp_path, "dags", "test", path, "--logical-date", "2024-02-03",
                 "--conf", '{"who": "me", "out": "%s"}' % out)
    assert r.returncode == 0, cli_describe(r)
    assert "weir dags test: DAG checked (3 tasks) from %s" % path in r.stdout, r.stdout
    assert out.read_text() == "42 2024-02-03 me\n"

    r = weir_cli(tmp_path, "dags", "test", DAGS_SRC / "airflow" / "raises.py")
    assert r.returncode == 2, cli_describe(r)
    assert "raises.py:9: RuntimeError: the configuration service is down" in r.stderr, \
        cli_describe(r)


def test_dags_check_walks_a_folder_as_the_server_does(tmp_path):
    """`weir dags check FOLDER`: its subfolders and .airflowignore as the server reads them; a
    job's spec kept in a subfolder is no DAG file."""
    top = tmp_path / "dags"
    (top / "team").mkdir(parents=True)
    (top / "specs").mkdir()
    (top / "checked.py").write_text(CHECKED_DAG)
    raises = (DAGS_SRC / "airflow" / "raises.py").read_text()
    (top / "team" / "raises.py").write_text(raises)
    (top / "team" / "ignored_one.py").write_text(raises)
    (top / ".airflowignore").write_text("ignored_.*\n")
    (top / "team" / "side.yaml").write_text(
        "dag_id: side\ntasks:\n  - task_id: t\n    command: 'true'\n")
    (top / "specs" / "job.yaml").write_text(
        "name: j\nroles:\n  task: {command: 'true', memory: 256m}\n")
    r = weir_cli(tmp_path, "dags", "check", top)
    assert r.returncode == 1, cli_describe(r)
    lines = [line for line in r.stdout.splitlines() if line.startswith(str(top))]
    assert [line.split(":")[0] for line in lines] == [
        "%s/checked.py" % top, "%s/team/raises.py" % top, "%s/team/side.yaml" % top], lines
    assert "import error" in lines[1] and "DAG side" in lines[2], lines
    assert r.stdout.endswith("3 files, 2 DAGs, 1 import error\n"), r.stdout


def test_dags_test_runs_a_dag_of_a_folder_by_id(tmp_path):
    """`weir dags test DAG_ID --dags DIR`: the DAG found in the folder as the server finds it
    (a broken file beside it does not stop it); an id no file defines is exit 2."""
    top = tmp_path / "dags"
    (top / "team").mkdir(parents=True)
    (top / "team" / "checked.py").write_text(CHECKED_DAG)
    (top / "raises.py").write_text((DAGS_SRC / "airflow" / "raises.py").read_text())
    out = tmp_path / "out"
    r = weir_cli(tmp_path, "dags", "test", "checked", "--dags", top, "--logical-date",
                 "2024-02-04", "--conf", '{"who": "folder", "out": "%s"}' % out)
    assert r.returncode == 0, cli_describe(r)
    assert "from %s/team/checked.py" % top in r.stdout, r.stdout
    assert out.read_text() == "42 2024-02-04 folder\n"
    r = weir_cli(tmp_path, "dags", "test", "nope", "--dags", top)
    assert r.returncode == 2, cli_describe(r)
    assert "no DAG file defines a DAG nope" in r.stderr, cli_describe(r)


GLOB_IGNORE = """\
# Airflow's glob syntax (dag_ignore_file_syntax: glob): gitignore's rules
*_draft.py          # a name at any depth
/top_only.py        # anchored at this folder
scratch/            # a folder, whatever its depth
**/old/**           # everything below any folder named old
!keep_draft.py      # the last line that matches decides
"""


def small_dag(dag_id):
    return ('from airflow import DAG\nfrom airflow.operators.empty import EmptyOperator\n'
            'with DAG(%r, schedule=None):\n    EmptyOperator(task_id="t")\n' % dag_id)


def test_airflowignore_in_glob_syntax(make_server, tmp_path):
    """`dag_ignore_file_syntax: glob`: .airflowignore's lines are gitignore-style globs
    relative to their folder (`*`, `**`, a leading `/`, a trailing `/`, `!`), in the
    server's walk and `weir dags check`'s alike; the default stays Airflow's regexps."""
    files = ["a.py", "a_draft.py", "keep_draft.py", "top_only.py", "team/top_only.py",
             "team/b_draft.py", "team/scratch/c.py", "scratch/d.py", "x/old/y/e.py",
             "team/sub/f.py", "team/sub/g.py"]
    top = tmp_path / "dags"
    for name in files:
        path = top / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(small_dag(re.sub(r"\W", "_", name[:-3])))
    (top / ".airflowignore").write_text(GLOB_IGNORE)
    # a deeper file's patterns hold below its folder, relative to it
    (top / "team" / "sub" / ".airflowignore").write_text("/g.py\n")
    (tmp_path / "weir.yaml").write_text("dag_ignore_file_syntax: glob\n")
    r = weir_cli(tmp_path, "dags", "check", "--config", tmp_path / "weir.yaml", top)
    assert r.returncode == 0, cli_describe(r)
    seen = sorted(line.split(":")[0][len(str(top)) + 1:] for line in r.stdout.splitlines()
                  if line.startswith(str(top)))
    kept = ["a.py", "keep_draft.py", "team/sub/f.py", "team/top_only.py"]
    assert seen == kept, r.stdout

    # regexp syntax, the default: the same file's lines are regular expressions
    r = weir_cli(tmp_path, "dags", "check", top)
    assert "%s/team/b_draft.py: DAG" % top in r.stdout, r.stdout

    (tmp_path / "weir.yaml").write_text("dag_ignore_file_syntax: fnmatch\n")
    r = weir_cli(tmp_path, "dags", "check", "--config", tmp_path / "weir.yaml", top)
    assert r.returncode == 2, cli_describe(r)
    assert "dag_ignore_file_syntax: expected regexp or glob" in r.stderr, cli_describe(r)

    # the server walks the folder the same way
    srv = make_server(config=dag_config() + "dag_ignore_file_syntax: glob\n", start=False)
    srv.extra_env["WEIR_AIRFLOW_PYTHON"] = sys.executable
    d = Dags(srv, tmp_path)
    shutil.copytree(top, d.dir, dirs_exist_ok=True)
    srv.start()
    for name in kept:
        d.wait_dag(re.sub(r"\W", "_", name[:-3]))
    wait_for(lambda: len(d.get("/dags")["dags"]) >= len(kept), 30, "the DAGs")
    ids = sorted(x["dag_id"] for x in d.get("/dags")["dags"])
    assert ids == sorted(re.sub(r"\W", "_", n[:-3]) for n in kept), ids


WARM = '''\
import os
import sys
from airflow import DAG
from airflow.operators.empty import EmptyOperator

# who imported this file: the warm processor's forked child, pendulum already loaded
seen = "ppid=%d preloaded=%s" % (os.getppid(), "pendulum" in sys.modules)
with DAG("@ID@", description=seen, schedule=None):
    EmptyOperator(task_id="t")
'''
FORKS = '''\
import os
import time
from airflow import DAG
from airflow.operators.empty import EmptyOperator

if os.fork() == 0:  # a child that outlives the import, holding the processor's pipe
    time.sleep(600)
    os._exit(0)
with DAG("forks", schedule=None):
    EmptyOperator(task_id="t")
'''


def test_the_warm_processor_forks_a_child_per_file(make_server, tmp_path):
    """Python DAG files are imported in children forked by one warm processor that loaded
    weir's `airflow` once; a file that forks still loads (its fork is killed); the warm
    processor killed -9, files are parsed cold and a changed one loads."""
    d = airflow_dags(make_server, tmp_path, [])
    d.write("w1.py", WARM.replace("@ID@", "w1"))
    d.write("w2.py", WARM.replace("@ID@", "w2"))
    d.write("forks.py", FORKS)
    m = wait_for(lambda: re.search(r"the warm DAG processor started \(pid (\d+)\)",
                                   d.srv.log_text()), 30, "the warm processor")
    warm = int(m.group(1))
    for dag_id in ("w1", "w2"):
        assert d.wait_dag(dag_id)["description"] == "ppid=%d preloaded=True" % warm
    d.wait_dag("forks")
    cmd = Path("/proc/%d/cmdline" % warm).read_bytes().split(b"\0")
    assert b"_weir_airflow.warm_processor" in cmd, cmd

    os.kill(warm, 9)
    wait_for(lambda: "the warm DAG processor ended (signal 9)" in d.srv.log_text(), 30,
             "the server to see the warm processor's end")
    d.write("w1.py", WARM.replace("@ID@", "w1").replace("seen =", "seen = 'v2 ' +"))
    dag = d.wait_dag("w1", pred=lambda dag: dag["description"].startswith("v2 "))
    assert "preloaded=False" in dag["description"], dag  # a cold processor's
