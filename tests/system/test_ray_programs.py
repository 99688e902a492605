"""Programs written for Ray, run unchanged with `weir run` against a real server: seed 002's
squares (each call on a GPU of its own; refused at once on a server with no GPU), Ray's
options and .options(), get with a timeout, wait, put, an ObjectRef as an argument, a call
that raises (caught as RayTaskError and as the user's class), retries after the process was
killed and after listed exceptions, detached actors refused, and `python3 -m weir.run`."""

import os
import subprocess
import sys
import textwrap

from conftest import REPO, WEIR_BIN, cli_describe, wait_no_procs

GPU_CONFIG = """\
resources:
  vcores: 16
  memory: 16g
  gpus: 4
kill_grace_seconds: 2
"""

NO_GPU_CONFIG = """\
resources:
  vcores: 16
  memory: 16g
  gpus: 0
kill_grace_seconds: 2
"""

SEED = """\
import ray
ray.init()

@ray.remote(num_cpus=2, num_gpus=1)
def f(x):
    return x * x

futures = [f.remote(i) for i in range(4)]
print(ray.get(futures))
"""


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def weir_run(server, program, *args, env=None, timeout=180):
    """`weir run PROGRAM ARGS` with the server found as the CLI finds it; the program's
    folder is its working directory.  Calls are jobs here (WEIR_RAY_WARM=0) unless env says
    otherwise."""
    e = dict(server.cli_env())
    # the job path (a call, a job): test_ray_warm.py has the warm workers'
    e["WEIR_RAY_WARM"] = "0"
    e.update(env or {})
    e.pop("PYTHONPATH", None)  # `import ray` must come from weir run alone
    return subprocess.run([WEIR_BIN, "run", str(program)] + [str(a) for a in args],
                          capture_output=True, text=True, env=e, timeout=timeout,
                          cwd=str(program.parent), stdin=subprocess.DEVNULL)


def jobs(server):
    return server.api("GET", "/api/v1/jobs?limit=1000")[1]["jobs"]


def named(server, name):
    return [server.job(j["id"]) for j in jobs(server) if j["name"] == name]


def test_seed_002_runs_as_written_each_call_on_a_gpu_of_its_own(make_server, tmp_path):
    server = make_server(GPU_CONFIG)
    prog = write(tmp_path, "seed.py", SEED)
    r = weir_run(server, prog)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.strip() == "[0, 1, 4, 9]", cli_describe(r)
    calls = named(server, "f")
    assert len(calls) == 4, calls
    for job in calls:
        role = job["spec"]["roles"]["worker"]
        assert (role["vcores"], role["gpus"]) == (2, 1), role
        assert job["state"] == "succeeded" and job["attempt"] == 1, job
        assert len(job["tasks"][0]["gpus"].split(",")) == 1, job["tasks"][0]
    # the same from Python: python3 -m weir.run
    e = dict(server.cli_env(), PYTHONPATH=str(REPO / "python"), WEIR_RAY_WARM="0")
    r = subprocess.run([sys.executable, "-m", "weir.run", str(prog)], capture_output=True,
                       text=True, env=e, timeout=180, cwd=str(tmp_path))
    assert r.returncode == 0 and r.stdout.strip() == "[0, 1, 4, 9]", cli_describe(r)
    assert len(named(server, "f")) == 8


def test_the_scikit_learn_example_trains_two_models_from_one_put_table(server, tmp_path):
    """examples/python/ray_two_models.py (seed 002's article: a table put once, two models
    trained side by side, stored), on warm workers as a Ray program runs by default."""
    example = REPO / "examples" / "python" / "ray_two_models.py"
    prog = write(tmp_path, "ray_two_models.py", example.read_text())
    out = tmp_path / "models"
    r = weir_run(server, prog, "--rows", "600", "--out", out,
                 env={"WEIR_RAY_WARM": "1", "WEIR_RUN_PYTHON": sys.executable},
                 timeout=300)
    assert r.returncode == 0, cli_describe(r)
    lines = {ln.split()[0]: ln for ln in r.stdout.splitlines() if "accuracy" in ln}
    assert set(lines) == {"bayes", "forest"}, cli_describe(r)
    pids = set()
    for name, line in lines.items():
        assert float(line.split()[2]) > 0.8, line
        pids.add(line.split()[-1].rstrip(")"))
    assert len(pids) == 2, r.stdout  # two processes, the two calls side by side
    # the stored models are the fitted estimators, usable as they are
    check = subprocess.run(
        [sys.executable, "-c", "import pickle, sys\n"
         "for n in ('bayes', 'forest'):\n"
         "    m = pickle.load(open(sys.argv[1] + '/' + n + '.pkl', 'rb'))\n"
         "    print(type(m).__name__, m.predict([[0.0] * 20])[0] in (0, 1))\n", str(out)],
        capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stderr
    assert check.stdout.split("\n")[:2] == ["GaussianNB True", "RandomForestClassifier True"], \
        check.stdout
    # each call asked its own CPUs and memory (Ray's memory= in bytes)
    workers = named(server, "warm-worker")
    shapes = sorted((j["spec"]["roles"]["worker"]["vcores"],
                     j["spec"]["roles"]["worker"]["memory"]) for j in workers)
    assert (1, "1g") in shapes and (2, "2g") in shapes, shapes


def test_seed_002_on_a_server_without_gpus_fails_at_once(make_server, tmp_path):
    server = make_server(NO_GPU_CONFIG)
    prog = write(tmp_path, "seed.py", SEED)
    r = weir_run(server, prog)
    assert r.returncode == 1, cli_describe(r)
    assert "f.remote()" in r.stderr and "num_gpus=1" in r.stderr, r.stderr
    assert "gpu" in r.stderr.lower().split("num_gpus=1")[1], r.stderr
    assert "[0, 1, 4, 9]" not in r.stdout
    assert jobs(server) == []  # nothing was submitted


def test_options_put_wait_get_timeout_and_objectref_arguments(server, tmp_path):
    flag = tmp_path / "go"
    prog = write(tmp_path, "prog.py", """\
        import os, sys, time
        import ray
        from ray.exceptions import GetTimeoutError

        ray.init(namespace="tests", runtime_env={"env_vars": {"GREETING": "hola"}})
        assert ray.is_initialized()
        FLAG = sys.argv[1]

        @ray.remote
        def greeting():
            return os.environ["GREETING"]

        @ray.remote(num_cpus=0.5, memory=300 * 1024 * 1024)
        def total(xs, k=1):
            return sum(xs) * k

        @ray.remote
        def inc(x):
            return x + 1

        @ray.remote(max_retries=0)
        def held(path):
            deadline = time.time() + 120
            while not os.path.exists(path) and time.time() < deadline:
                time.sleep(0.05)
            return "late"

        data = ray.put(list(range(10)))
        assert isinstance(data, ray.ObjectRef)
        r1 = total.remote(data, k=2)
        r2 = total.options(num_cpus=3, name="total3").remote(data)
        r3 = inc.remote(inc.remote(1))
        print("values", ray.get([r1, r2]), ray.get(r3), ray.get(greeting.remote()),
              ray.get(data)[:3])

        slow = held.remote(FLAG)
        try:
            ray.get(slow, timeout=0.5)
            print("no timeout")
        except GetTimeoutError as e:
            print("timed out", isinstance(e, TimeoutError))
        ready, rest = ray.wait([slow], timeout=0)
        print("wait0", len(ready), len(rest))
        ready, rest = ray.wait([slow, r1, data], num_returns=2)
        print("wait2", ready == [r1, data], rest == [slow])
        open(FLAG, "w").close()
        ready, rest = ray.wait([slow], num_returns=1, timeout=120)
        print("wait1", ready == [slow], ray.get(slow))
        r5, deadline, got = inc.remote(5), time.time() + 120, None
        while got is None and time.time() < deadline:  # timeout=0: ready or not, now
            try:
                got = ray.get(r5, timeout=0)
            except GetTimeoutError:
                time.sleep(0.05)
        print("polled", got)
        stuck = held.remote(FLAG + ".never")
        ray.cancel(stuck)
        try:
            ray.get(stuck)
        except ray.exceptions.TaskCancelledError:
            print("cancelled")
        print("resources", ray.cluster_resources()["CPU"], ray.cluster_resources()["GPU"],
              ray.available_resources()["CPU"])
        ray.shutdown()
        print("after shutdown", ray.is_initialized())
        """)
    r = weir_run(server, prog, flag)
    assert r.returncode == 0, cli_describe(r)
    out = r.stdout.splitlines()
    assert out[0] == "values [90, 45] 3 hola [0, 1, 2]", out
    assert out[1:5] == ["timed out True", "wait0 0 1", "wait2 True True",
                        "wait1 True late"], out
    assert out[5] == "polled 6", out
    assert out[6] == "cancelled", out
    assert out[7] == "resources 16.0 3.0 16.0", out
    assert out[8] == "after shutdown False", out
    (t,) = [j for j in named(server, "total") if j["spec"]["roles"]["worker"]["vcores"] == 1]
    assert t["spec"]["roles"]["worker"]["memory"] == "300m", t["spec"]
    assert t["spec"]["restart"]["max_restarts"] == 3  # Ray's default max_retries
    (t3,) = named(server, "total3")
    assert t3["spec"]["roles"]["worker"]["vcores"] == 3, t3["spec"]
    h, stuck = sorted(named(server, "held"), key=lambda j: j["id"])
    assert h["spec"]["restart"]["max_restarts"] == 0, h["spec"]
    assert stuck["state"] == "killed", stuck
    assert h["spec"]["env"]["GREETING"] == "hola"


def test_a_call_that_raises_is_a_ray_task_error_and_the_users_class(server, tmp_path):
    prog = write(tmp_path, "raises.py", """\
        import ray

        class BadRow(ValueError):
            pass

        def bad_row(row):
            e = BadRow("bad row %d" % row)
            e.row = row
            return e

        class Other(Exception):
            pass

        @ray.remote(max_retries=1, retry_exceptions=[Other])
        def parse(row):
            raise bad_row(row)

        @ray.remote(max_retries=1, retry_exceptions=[BadRow])
        def parse_again(row):
            raise bad_row(row)

        try:
            ray.get(parse.remote(7))
        except ray.exceptions.RayTaskError as e:
            print("as RayTaskError", isinstance(e, BadRow), e.row, type(e.cause).__name__,
                  "raise bad_row(row)" in str(e))
        try:
            ray.get([parse_again.remote(8)])
        except BadRow as e:
            print("as BadRow", isinstance(e, ray.exceptions.RayTaskError), e.row)
        """)
    r = weir_run(server, prog)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == ["as RayTaskError True 7 BadRow True",
                                     "as BadRow True 8"], cli_describe(r)
    # retried only after an exception retry_exceptions lists
    (p,) = named(server, "parse")
    (p2,) = named(server, "parse_again")
    assert (p["attempt"], p2["attempt"]) == (1, 2), (p, p2)


def test_max_retries_runs_a_call_again_after_its_process_was_killed(server, tmp_path):
    prog = write(tmp_path, "killed.py", """\
        import os, signal, sys
        import ray

        MARK = sys.argv[1]

        @ray.remote(max_retries=1)
        def once_killed(tag):
            if not os.path.exists(MARK + tag):
                open(MARK + tag, "w").close()
                os.kill(os.getpid(), signal.SIGKILL)
            return "ran again"

        print(ray.get(once_killed.remote("a")))
        try:
            ray.get(once_killed.options(max_retries=0).remote("b"))
        except ray.exceptions.WorkerCrashedError as e:
            print("crashed", isinstance(e, ray.exceptions.RayError))
        """)
    r = weir_run(server, prog, tmp_path / "mark-")
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == ["ran again", "crashed True"], cli_describe(r)
    attempts = sorted(j["attempt"] for j in named(server, "once_killed"))
    assert attempts == [1, 2], attempts


def test_a_bad_lifetime_and_a_second_init_are_refused_clearly(server, tmp_path):
    prog = write(tmp_path, "refused.py", """\
        import sys
        import ray
        ray.init()
        try:
            ray.init()
        except RuntimeError as e:
            print("twice:", "ignore_reinit_error" in str(e))
        ray.init(ignore_reinit_error=True)
        try:
            @ray.remote(num_cpus=1, lifetime="forever")
            class Counter:
                pass
        except ValueError as e:
            print("actor:", "lifetime" in str(e))

        @ray.remote
        def f():
            return 1
        try:
            f()
        except TypeError as e:
            print("direct:", "f.remote(" in str(e))
        try:
            ray.remote(resources={"TPU": 1})(f)
        except ValueError as e:
            print("resources:", "TPU" in str(e))
        sys.exit(int(sys.argv[1]))
        """)
    r = weir_run(server, prog, 7)
    assert r.returncode == 7, cli_describe(r)
    assert r.stdout.splitlines() == ["twice: True", "actor: True", "direct: True",
                                     "resources: True"], cli_describe(r)
    assert jobs(server) == []


def test_weir_run_says_when_it_finds_no_package(server, tmp_path):
    prog = write(tmp_path, "p.py", "print('hi')\n")
    r = weir_run(server, prog, env={"WEIR_PYTHON_DIR": str(tmp_path / "none")})
    assert r.returncode == 2, cli_describe(r)
    assert "WEIR_PYTHON_DIR" in r.stderr and str(tmp_path / "none") in r.stderr, r.stderr
    r = weir_run(server, tmp_path / "missing.py")
    assert r.returncode == 2 and "missing.py" in r.stderr, cli_describe(r)
    assert os.access(WEIR_BIN, os.X_OK)


def test_ray_init_local_starts_a_private_server_gone_at_exit(tmp_path):
    """Ray's local mode: ray.init(address="local") (and ray.init() where no server is
    found) runs the program on a weir server of its own, in a temporary home, with the
    resources init names; at exit its calls are killed and nothing of it is left."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    pidfile = tmp_path / "pid"
    prog = write(tmp_path, "local.py", """\
        import os, sys, time
        import ray
        ray.init(address="local", num_cpus=4, num_gpus=2)

        @ray.remote(num_cpus=2, num_gpus=1)
        def f(x):
            return x * x

        @ray.remote
        def forever(path):
            with open(path, "w") as out:
                out.write(str(os.getpid()))
            time.sleep(600)

        print(ray.get([f.remote(i) for i in range(4)]))
        res = ray.cluster_resources()
        print(res["CPU"], res["GPU"])
        forever.remote(sys.argv[1])
        while not os.path.exists(sys.argv[1]) or not open(sys.argv[1]).read():
            time.sleep(0.05)
        """)
    env = {k: v for k, v in os.environ.items() if k not in ("WEIR_SERVER", "WEIR_TOKEN",
                                                              "PYTHONPATH")}
    env.update(TMPDIR=str(tmp), WEIR_HOME=str(tmp_path / "no-home"), WEIR_RAY_WARM="0")
    r = subprocess.run([WEIR_BIN, "run", str(prog), str(pidfile)], capture_output=True,
                       text=True, env=env, timeout=180, cwd=str(tmp_path),
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == ["[0, 1, 4, 9]", "4.0 2.0"], cli_describe(r)
    assert "stopping the private server: killing job" in r.stderr, r.stderr
    assert int(pidfile.read_text()) > 0
    # the server, its agent and the task: each has TMPDIR in its environment, the home
    # in its command line or its working directory
    assert wait_no_procs(marker=str(tmp), cwd_prefix=str(tmp), timeout=30) == {}
    assert list(tmp.iterdir()) == [], list(tmp.iterdir())  # the home is removed
