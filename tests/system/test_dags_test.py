"""`weir dags test DAG_FILE`: a whole DAG run in process, no server (issue 3, item 6).

Each test runs the real binary on a DAG file, with its temporary home under a TMPDIR of the
test's own and a marker in its environment (inherited by launchers and tasks), so that we can
check afterwards that the home is gone and that no process of the run is left.  Tasks write
what they did into a `side` folder the test reads.
"""

import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from conftest import EXAMPLES, MARK_VAR, WEIR_BIN, find_procs, kill_pids, wait_no_procs


class DagTestRun:
    def __init__(self, tmp):
        self.tmp = Path(tmp)
        self.tmpdir = self.tmp / "tmpdir"
        self.side = self.tmp / "side"
        self.dags = self.tmp / "dags"
        for d in (self.tmpdir, self.side, self.dags):
            d.mkdir()
        self.mark = "weir-systest-" + uuid.uuid4().hex

    def env(self):
        env = dict(os.environ)
        env["TMPDIR"] = str(self.tmpdir)
        env[MARK_VAR] = self.mark
        env.pop("WEIR_LOG", None)
        return env

    def write(self, name, text):
        path = self.dags / name
        path.write_text(text.replace("@SIDE@", str(self.side)))
        return path

    def run(self, *args, timeout=300, cwd=None):
        return subprocess.run([WEIR_BIN, "dags", "test"] + [str(a) for a in args],
                              capture_output=True, text=True, timeout=timeout, env=self.env(),
                              cwd=cwd or str(self.tmp))

    def homes(self):
        return sorted(self.tmpdir.glob("weir-dags-test-*"))

    def check_clean(self):
        """No process of the run is left and the temporary home is gone."""
        left = wait_no_procs(self.mark, timeout=5)
        kill_pids(left)
        assert not left, "processes left behind: %r" % left
        assert self.homes() == []


@pytest.fixture
def tester(tmp_path):
    t = DagTestRun(tmp_path)
    yield t
    kill_pids(find_procs(t.mark))


def describe(r):
    return "exit %s\n--- stdout\n%s\n--- stderr\n%s" % (r.returncode, r.stdout, r.stderr)


def summary(stdout):
    """{(task, map_index): (state, tries)} from the summary table."""
    rows = {}
    lines = stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("TASK "))
    for line in lines[start + 1:]:
        if not line.strip() or line.startswith("---") or line.startswith("kept "):
            break
        task, map_index, state, tries = line.split()[:4]
        rows[(task, map_index)] = (state, int(tries))
    return rows


def test_two_models_example(tester):
    data = tester.side / "two"
    r = tester.run(EXAMPLES / "dags" / "two_models.yaml", "--conf",
                   '{"data_dir": "%s", "models": ["linear", "mean", "median"], "rows": 300}'
                   % data)
    assert r.returncode == 0, describe(r)
    rows = summary(r.stdout)
    assert {k: v[0] for k, v in rows.items()} == {
        ("prepare", "-"): "success", ("train", "0"): "success", ("train", "1"): "success",
        ("train", "2"): "success", ("compare", "-"): "success"}
    ranking = (data / "ranking").read_text().split()
    # the linear model fits y = 3x + 1 best
    assert ranking[1] == "linear" and sorted(ranking[1::2]) == ["linear", "mean", "median"]
    tester.check_clean()


FAILS = """\
dag_id: t_fails
tasks:
  - task_id: ok
    command: echo fine > @SIDE@/ok
  - task_id: bad
    depends_on: [ok]
    command: for i in $(seq 1 40); do echo "output line $i"; done; echo "it broke" >&2; exit 7
  - task_id: after
    depends_on: [bad]
    command: touch @SIDE@/after
"""


def test_failing_dag_exits_1_with_log_tail(tester):
    r = tester.run(tester.write("fails.yaml", FAILS))
    assert r.returncode == 1, describe(r)
    rows = summary(r.stdout)
    assert rows[("ok", "-")] == ("success", 1)
    assert rows[("bad", "-")][0] == "failed"
    assert rows[("after", "-")][0] == "upstream_failed"
    assert "of t_fails failed" in r.stdout
    # the failed task's log tail: its last lines, not the whole log
    tail = r.stdout[r.stdout.index("--- bad failed"):]
    assert "it broke" in tail and "output line 40" in tail
    assert "output line 10\n" not in tail
    assert not (tester.side / "after").exists()
    tester.check_clean()


def test_retry_then_success(tester):
    path = tester.write("flaky.yaml", """\
dag_id: t_flaky
tasks:
  - task_id: flaky
    retries: 2
    retry_delay: 1s
    command: |
      n=$(cat @SIDE@/count 2>/dev/null || echo 0); echo $((n + 1)) > @SIDE@/count
      [ "$n" -ge 1 ]
""")
    r = tester.run(path)
    assert r.returncode == 0, describe(r)
    assert "flaky up_for_retry" in r.stdout
    assert summary(r.stdout)[("flaky", "-")] == ("success", 2)
    assert (tester.side / "count").read_text().strip() == "2"
    tester.check_clean()


def test_broken_file_exits_2_naming_file_and_line(tester):
    path = tester.write("broken.yaml", """\
dag_id: t_broken
tasks:
  - task_id: a
    command: echo a
  - task_id: b
    depends_on: [nowhere]
    command: echo b
""")
    r = tester.run(path)
    assert r.returncode == 2, describe(r)
    assert "%s:6:" % path in r.stderr and "nowhere" in r.stderr
    assert "triggered" not in r.stdout
    assert tester.homes() == []


def test_bad_conf_exits_2(tester):
    path = tester.write("hello.yaml", HELLO)
    for conf in ("not json", "[1, 2]"):
        r = tester.run(path, "--conf", conf)
        assert r.returncode == 2, describe(r)
        assert "--conf" in r.stderr
    r = tester.run(path, "--logical-date", "yesterday-ish")
    assert r.returncode == 2, describe(r)
    r = tester.run(tester.dags / "absent.yaml")
    assert r.returncode == 2, describe(r)
    assert tester.homes() == []


HELLO = """\
dag_id: t_hello
params:
  greeting: hello
tasks:
  - task_id: say
    command: printf '%s %s\\n' {{ params.greeting }} {{ ds }} > @SIDE@/said
"""


def test_conf_overrides_params(tester):
    path = tester.write("hello.yaml", HELLO)
    r = tester.run(path, "--logical-date", "2024-05-06")
    assert r.returncode == 0, describe(r)
    assert (tester.side / "said").read_text() == "hello 2024-05-06\n"
    # a conf value lands quoted: no word splitting, no injection
    r = tester.run(path, "--conf", '{"greeting": "bonjour; touch %s/pwned"}' % tester.side,
                   "--logical-date", "2024-05-07")
    assert r.returncode == 0, describe(r)
    assert (tester.side / "said").read_text() == "bonjour; touch %s/pwned 2024-05-07\n" \
        % tester.side
    assert not (tester.side / "pwned").exists()
    tester.check_clean()


def test_relative_paths_resolve_against_the_file(tester):
    scripts = tester.dags / "scripts"
    scripts.mkdir()
    (scripts / "hello.sh").write_text("#!/bin/sh\necho from-script > \"$1\"/script\n")
    (scripts / "hello.sh").chmod(0o755)
    path = tester.write("rel.yaml", """\
dag_id: t_rel
tasks:
  - task_id: run_script
    cwd: ./scripts
    command: ./hello.sh @SIDE@
""")
    r = tester.run(path, cwd="/")
    assert r.returncode == 0, describe(r)
    assert (tester.side / "script").read_text() == "from-script\n"
    tester.check_clean()


def test_a_schedule_makes_no_run_of_its_own(tester):
    # with catchup, a server would make a run for every day since 2024: the test makes one
    path = tester.write("daily.yaml", """\
dag_id: t_daily
schedule: "@daily"
start_date: 2024-01-01
catchup: true
max_active_runs: 1
tasks:
  - task_id: mark
    command: echo {{ run_id }} {{ ds }} {{ data_interval_end }} >> @SIDE@/runs
""")
    r = tester.run(path, "--logical-date", "2024-02-10")
    assert r.returncode == 0, describe(r)
    assert (tester.side / "runs").read_text().splitlines() == [
        "manual__2024-02-10T00:00:00+00:00 2024-02-10 2024-02-11T00:00:00+00:00"]
    tester.check_clean()


def test_keep_prints_the_home(tester):
    path = tester.write("hello.yaml", HELLO)
    r = tester.run(path, "--keep")
    assert r.returncode == 0, describe(r)
    homes = tester.homes()
    assert len(homes) == 1 and ("kept the test's home: %s" % homes[0]) in r.stdout
    assert (homes[0] / "weir.db").exists()


def test_no_process_left_behind(tester):
    # a task that leaves a daemon behind, one that runs for a while: both end with the run
    path = tester.write("bg.yaml", """\
dag_id: t_bg
tasks:
  - task_id: daemon
    command: (sleep 300 & echo $! > @SIDE@/daemon.pid); echo started
  - task_id: busy
    command: sleep 1; echo done
""")
    r = tester.run(path)
    assert r.returncode == 0, describe(r)
    pid = int((tester.side / "daemon.pid").read_text())
    assert not _alive(pid), "the daemon %d outlived the run" % pid
    tester.check_clean()


def test_ctrl_c_kills_the_run(tester):
    path = tester.write("slow.yaml", """\
dag_id: t_slow
default_args:
  retries: 3
tasks:
  - task_id: slow
    command: echo $$ > @SIDE@/slow.pid; sleep 300
  - task_id: next
    depends_on: [slow]
    command: touch @SIDE@/next
""")
    p = subprocess.Popen([WEIR_BIN, "dags", "test", str(path)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=tester.env())
    try:
        deadline = time.monotonic() + 60
        while not (tester.side / "slow.pid").exists():
            assert time.monotonic() < deadline and p.poll() is None, "the task never started"
            time.sleep(0.1)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130, "exit %s\n%s\n%s" % (p.returncode, out, err)
    assert not _alive(int((tester.side / "slow.pid").read_text()))
    assert not (tester.side / "next").exists()
    tester.check_clean()


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


SERVER_CONFIG = """\
pools: {train: 2}
queues:
  cpu: {executor: local}
  gpu: {executor: slurm, partition: gpu}
"""

QUEUED_DAG = """\
dag_id: t_queues
tasks:
  - task_id: prep
    command: echo prep > @SIDE@/prep
    queue: cpu
    pool: train
  - task_id: fit
    depends_on: [prep]
    command: echo fit > @SIDE@/fit
    queue: gpu
"""


def test_reads_the_servers_configuration(tester):
    """Queues and pools come from the server's weir.yaml (--config, else HOME/weir.yaml);
    --executor local runs the Slurm queue's task here."""
    cfg = tester.tmp / "weir.yaml"
    cfg.write_text(SERVER_CONFIG)
    path = tester.write("queued.yaml", QUEUED_DAG)
    r = tester.run(path, "--config", cfg, "--executor", "local")
    assert r.returncode == 0, describe(r)
    assert summary(r.stdout) == {("prep", "-"): ("success", 1), ("fit", "-"): ("success", 1)}
    assert (tester.side / "prep").exists() and (tester.side / "fit").exists()
    assert "not in the server's configuration" not in r.stdout
    tester.check_clean()

    # the default: the server's home (--home, else WEIR_HOME), as `weir server` finds it
    home = tester.tmp / "home"
    home.mkdir()
    (home / "weir.yaml").write_text(SERVER_CONFIG)
    r = subprocess.run([WEIR_BIN, "--home", str(home), "dags", "test", str(path),
                        "--executor", "local"],
                       capture_output=True, text=True, timeout=300, env=tester.env())
    assert r.returncode == 0, describe(r)
    tester.check_clean()

    r = tester.run(path, "--config", cfg, "--executor", "slurm")
    assert r.returncode == 2, describe(r)
    assert "--executor" in r.stderr
    r = tester.run(path, "--config", tester.tmp / "nope.yaml")
    assert r.returncode == 2, describe(r)
    assert "nope.yaml" in r.stderr


def test_errors_name_the_users_file(tester):
    """A queue the server lacks is the user's file and line, not a copy's."""
    cfg = tester.tmp / "weir.yaml"
    cfg.write_text(SERVER_CONFIG)
    path = tester.write("badq.yaml", """\
dag_id: t_badq
tasks:
  - task_id: a
    command: echo a

  - task_id: b
    command: echo b
    queue: nowhere
""")
    r = tester.run(path, "--config", cfg)
    assert r.returncode == 2, describe(r)
    assert "%s:8: tasks[1].queue" % path in r.stderr, describe(r)
    assert "cpu, gpu" in r.stderr
    assert ".json" not in r.stderr and "weir-dags-test-" not in r.stderr, describe(r)
    assert "triggered" not in r.stdout
    assert tester.homes() == []


def test_pool_slots_hold_the_whole_pool(tester):
    """Two independent tasks in a 2-slot pool: with pool_slots 2 (here from default_args)
    they never overlap; a task wanting more than the pool has is refused at load."""
    cfg = tester.tmp / "weir.yaml"
    cfg.write_text("pools: {train: 2}\n")
    step = ("date +%s.%N > @SIDE@/{0}.start; sleep 1; date +%s.%N > @SIDE@/{0}.end")
    path = tester.write("slots.yaml", """\
dag_id: t_slots
default_args: {pool: train, pool_slots: 2}
tasks:
  - task_id: one
    command: %s
  - task_id: two
    command: %s
""" % (step.format("one"), step.format("two")))
    r = tester.run(path, "--config", cfg)
    assert r.returncode == 0, describe(r)
    t = {n: (float((tester.side / ("%s.start" % n)).read_text()),
             float((tester.side / ("%s.end" % n)).read_text())) for n in ("one", "two")}
    first, second = sorted(t.values())
    assert first[1] <= second[0], t  # the second started after the first ended
    tester.check_clean()

    path = tester.write("toobig.yaml", """\
dag_id: t_toobig
tasks:
  - task_id: a
    command: 'true'
    pool: train
    pool_slots: 3
""")
    r = tester.run(path, "--config", cfg)
    assert r.returncode == 2, describe(r)
    assert "%s:6: tasks[0].pool_slots: task a takes 3 slots, but pool train has 2" % path \
        in r.stderr, describe(r)
    assert tester.homes() == []


# ---- `weir tasks test DAG TASK [DATE]`: one task, its upstream ignored (Airflow's) ----------

TWO_STEPS = """\
dag_id: two_steps
params:
  region: eu
tasks:
  - task_id: extract
    command: echo extract >> @SIDE@/extract
  - task_id: publish
    depends_on: [extract]
    command: echo "publishing {{ params.region }} for {{ ds }}"; echo published >> @SIDE@/publish
"""

PY_TASK = """\
from datetime import datetime

from airflow import DAG
from airflow.operators.python import PythonOperator


def report(ds, params, **context):
    print("report for", ds, "in", params["region"])
    return ds


with DAG("py_report", start_date=datetime(2024, 1, 1), schedule=None,
         params={"region": "eu"}) as dag:
    first = PythonOperator(task_id="first", python_callable=lambda: print("first ran"))
    first >> PythonOperator(task_id="report", python_callable=report)
"""


def tasks_test(t, *args):
    return subprocess.run([WEIR_BIN, "tasks", "test"] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=300, env=t.env(),
                          cwd=str(t.tmp))


def test_tasks_test_runs_one_task_alone_and_prints_its_log(tester):
    path = tester.write("two_steps.yaml", TWO_STEPS)
    r = tasks_test(tester, path, "publish", "2024-03-01", "--conf", '{"region": "us"}')
    assert r.returncode == 0, describe(r)
    assert summary(r.stdout) == {("publish", "-"): ("success", 1)}, r.stdout
    assert "publishing us for 2024-03-01" in r.stdout.split("--- its log:", 1)[1], r.stdout
    # the upstream did not run; only the task did
    assert not (tester.side / "extract").exists()
    assert (tester.side / "publish").read_text() == "published\n"
    tester.check_clean()

    # by DAG id from a folder, and from the server's DAG folder (WEIR_HOME/dags)
    r = tasks_test(tester, "two_steps", "extract", "--dags", tester.dags)
    assert r.returncode == 0, describe(r)
    home = tester.tmp / "home"
    (home / "dags").mkdir(parents=True)
    (home / "dags" / "two_steps.yaml").write_text(path.read_text())
    r = tasks_test(tester, "two_steps", "extract", "--home", home)
    assert r.returncode == 0, describe(r)
    assert (tester.side / "extract").read_text() == "extract\nextract\n"
    tester.check_clean()


def test_tasks_test_of_a_python_dag_file(tester):
    path = tester.write("py_report.py", PY_TASK)
    r = tasks_test(tester, path, "report", "2024-03-01T06:00:00Z")
    assert r.returncode == 0, describe(r)
    log = r.stdout.split("--- its log:", 1)[1]
    assert "report for 2024-03-01 in eu" in log and "first ran" not in r.stdout, r.stdout
    tester.check_clean()


def test_tasks_test_bad_input(tester):
    path = tester.write("two_steps.yaml", TWO_STEPS)
    r = tasks_test(tester, path, "nope")
    assert r.returncode == 2 and "DAG two_steps has no task nope" in r.stderr, describe(r)
    r = tasks_test(tester, path)
    assert r.returncode == 2 and "needs a DAG (id or file) and a task id" in r.stderr, \
        describe(r)
    r = tasks_test(tester, path, "extract", "2024-01-01", "--logical-date", "2024-01-02")
    assert r.returncode == 2 and "logical date given twice" in r.stderr, describe(r)
    r = tasks_test(tester, "missing_dag", "extract", "--dags", tester.dags)
    assert r.returncode == 2 and "no DAG file defines a DAG missing_dag" in r.stderr, \
        describe(r)
    assert not (tester.side / "extract").exists()
