"""Ray programs' calls on warm workers (docs/internals/calls.md), with `weir run` against a
real server: many calls give the right values in few worker jobs; a call that raises; a
worker killed with kill -9 mid-call (retried, and WorkerCrashedError without retries); a
cancel; the calls' lines in their worker's log through the API; a worker's memory limit
(OutOfMemoryError); no worker process left after the program; the job path under
WEIR_RAY_WARM=0."""

import atexit
import os
import shutil
import tempfile

from conftest import wait_no_procs
from test_ray_programs import cli_describe, jobs, write
from test_ray_programs import weir_run as _weir_run

# The programs' temporary folder in this test run: a program makes its warm workers' folder
# in it, and the workers' environment names that folder (WEIR_WARM_DIR, worker/warm.py), so
# the "no worker left" checks see this run's workers only, never another run's on the machine.
RUN_TMP = tempfile.mkdtemp(prefix="weir-ray-tests-")
atexit.register(shutil.rmtree, RUN_TMP, True)
WORKER_MARK = "WEIR_WARM_DIR=" + RUN_TMP + "/"


def weir_run(server, prog, *args, env=None, **kw):
    return _weir_run(server, prog, *args,
                     env=dict({"WEIR_RAY_WARM": "1", "TMPDIR": RUN_TMP}, **(env or {})), **kw)



def workers(server):
    return [server.job(j["id"]) for j in jobs(server) if j["name"] == "warm-worker"]


def run_ok(server, prog, *args, **kw):
    r = weir_run(server, prog, *args, **kw)
    assert r.returncode == 0, cli_describe(r)
    return r


def test_many_calls_return_their_values_on_a_few_warm_workers(server, tmp_path):
    prog = write(tmp_path, "many.py", """\
        import os
        import ray
        import helper

        @ray.remote
        def f(x):
            return helper.square(x), os.getpid()

        got = ray.get([f.remote(i) for i in range(300)])
        assert [v for v, _ in got] == [i * i for i in range(300)], got
        pids = {p for _, p in got}
        assert os.getpid() not in pids
        # one after the other: the same warm worker answers
        print("sync", ray.get(f.remote(7))[0], ray.get(f.remote(8))[0])
        print("pids", len(pids))
        """)
    (tmp_path / "helper.py").write_text("def square(x):\n    return x * x\n")
    r = run_ok(server, prog, env={"WEIR_WARM_WORKERS": "2"})
    assert "sync 49 64" in r.stdout, cli_describe(r)
    ws = workers(server)
    # 300 calls, at most two workers at once (a worker that left idle may be replaced)
    assert 1 <= len(ws) <= 4, ws
    assert not [j for j in jobs(server) if j["name"] == "f"], "a call became a job"
    assert wait_no_procs(marker=WORKER_MARK, timeout=30) == {}
    for j in ws:
        j = server.wait_job(j["id"], timeout=60)
        assert j["state"] == "succeeded", j


def test_the_job_path_stays_under_weir_ray_warm_0(server, tmp_path):
    prog = write(tmp_path, "cold.py", """\
        import ray

        @ray.remote
        def f(x):
            return x + 1

        print(ray.get([f.remote(i) for i in range(3)]))
        """)
    r = run_ok(server, prog, env={"WEIR_RAY_WARM": "0"})
    assert r.stdout.strip() == "[1, 2, 3]", cli_describe(r)
    assert len([j for j in jobs(server) if j["name"] == "f"]) == 3
    assert workers(server) == []


def test_a_call_that_raises_and_retries_after_listed_exceptions(server, tmp_path):
    prog = write(tmp_path, "raises.py", """\
        import ray

        class BadRow(ValueError):
            pass

        class Other(Exception):
            pass

        tries = []

        @ray.remote(max_retries=1, retry_exceptions=[Other])
        def parse(row):
            e = BadRow("bad row %d" % row)
            e.row = row
            raise e

        @ray.remote(max_retries=2, retry_exceptions=[BadRow])
        def parse_again(row, mark):
            import os
            n = len(os.listdir(mark))
            open(os.path.join(mark, str(n)), "w").close()
            raise BadRow("try %d" % n)

        try:
            ray.get(parse.remote(7))
        except ray.exceptions.RayTaskError as e:
            print("as RayTaskError", isinstance(e, BadRow), e.row, "raise e" in str(e))
        import os, sys
        try:
            ray.get([parse_again.remote(8, sys.argv[1])])
        except BadRow as e:
            print("as BadRow", isinstance(e, ray.exceptions.RayTaskError), e)
        print("after", ray.get(ray.remote(lambda: 5).remote()))
        """)
    mark = tmp_path / "tries"
    mark.mkdir()
    r = weir_run(server, prog, mark)
    assert r.returncode == 0, cli_describe(r)
    lines = r.stdout.splitlines()
    assert lines[0] == "as RayTaskError True 7 True", cli_describe(r)
    # three tries (max_retries=2 after a listed class), the last one's error raised
    assert lines[1].startswith("as BadRow True __main__.BadRow: try 2"), cli_describe(r)
    assert "warm.py" not in r.stdout, "the worker's own frame in the traceback"
    assert lines[-1] == "after 5", cli_describe(r)
    assert sorted(os.listdir(mark)) == ["0", "1", "2"]


def test_a_worker_killed_mid_call_is_retried_or_a_worker_crashed_error(server, tmp_path):
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
        print(ray.get(once_killed.remote("a")))
        """)
    r = weir_run(server, prog, tmp_path / "mark-")
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == ["ran again", "crashed True", "ran again"], cli_describe(r)
    # the killed workers' jobs ended failed (a signal), the others succeeded
    states = sorted(server.wait_job(j["id"])["state"] for j in workers(server))
    assert states.count("failed") == 2, states


def test_cancel_a_running_call_a_queued_one_and_with_force(server, tmp_path):
    prog = write(tmp_path, "cancel.py", """\
        import os, sys, time
        import ray

        MARK = sys.argv[1]

        @ray.remote
        def slow(tag):
            open(MARK + tag, "w").close()
            while True:
                time.sleep(0.01)

        @ray.remote
        def quick(x):
            return x

        def started(tag):
            while not os.path.exists(MARK + tag):
                time.sleep(0.01)

        a = slow.remote("a")
        started("a")
        ray.cancel(a)
        try:
            ray.get(a)
        except ray.exceptions.TaskCancelledError:
            print("cancelled a")
        # the worker survives a cancel without force: the next call runs there
        print("quick", ray.get(quick.remote(3)))
        b = slow.remote("b")
        started("b")
        ray.cancel(b, force=True)
        try:
            ray.get(b, timeout=60)
        except ray.exceptions.TaskCancelledError:
            print("cancelled b")
        print("quick", ray.get(quick.remote(4)))
        """)
    r = weir_run(server, prog, tmp_path / "mark-", env={"WEIR_WARM_WORKERS": "1"})
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == ["cancelled a", "quick 3", "cancelled b", "quick 4"], \
        cli_describe(r)


def test_calls_are_records_in_the_api_and_lines_of_their_workers_log(server, tmp_path):
    prog = write(tmp_path, "logged.py", """\
        import ray

        @ray.remote
        def shout(x):
            print("shouting", x)
            if x == 2:
                raise KeyError(x)
            return x

        for i in range(4):
            try:
                ray.get(shout.remote(i))
            except KeyError:
                pass
        """)
    run_ok(server, prog, env={"WEIR_WARM_WORKERS": "1"})
    (w,) = workers(server)
    w = server.wait_job(w["id"])
    log = server.log(w["id"])
    assert "weir-call 1 shout succeeded" in log, log
    assert "weir-call 3 shout failed" in log and "KeyError" in log, log
    assert "shouting 3" in log, log
    assert w["state"] == "succeeded", w
    # and as records of the store, sent by the program in batches
    status, got = server.api("GET", "/api/v1/jobs/%d/calls" % w["id"])
    assert status == 200, got
    calls = got["calls"]
    assert [(c["id"], c["name"], c["state"]) for c in calls] == [
        (1, "shout", "succeeded"), (2, "shout", "succeeded"), (3, "shout", "failed"),
        (4, "shout", "succeeded")], calls
    assert calls[2]["error"] == "KeyError" and calls[0]["tries"] == 1, calls
    assert all(c["duration_ms"] >= 0 and c["started_at"] and c["ended_at"] for c in calls)
    assert got["counts"] == {"running": 0, "succeeded": 3, "failed": 1, "cancelled": 0,
                             "crashed": 0}, got
    status, got = server.api("GET", "/api/v1/jobs/%d/calls?after=2&limit=1" % w["id"])
    assert [c["id"] for c in got["calls"]] == [3], got


def test_the_calls_route_checks_its_input_and_an_end_never_changes(server):
    job = server.submit({"name": "any", "framework": "none",
                         "roles": {"worker": {"instances": 1, "command": "true"}}})
    url = "/api/v1/jobs/%d/calls" % job["id"]
    ok = {"id": 1, "name": "f", "state": "succeeded", "started_at": 1000, "ended_at": 1500}
    status, got = server.api("POST", url, {"calls": [dict(ok, state="running"), ok]})
    assert (status, got) == (200, {"received": 2, "recorded": 2}), got
    # a late "running" of an ended call changes nothing
    status, got = server.api("POST", url, {"calls": [dict(ok, state="running")]})
    assert (status, got) == (200, {"received": 1, "recorded": 0}), got
    (c,) = server.api("GET", url)[1]["calls"]
    assert (c["state"], c["duration_ms"]) == ("succeeded", 500), c
    for body, words in [
            ({"calls": [dict(ok, state="done")]}, "calls[0].state: expected running"),
            ({"calls": [ok, dict(ok, id=0)]}, "calls[1].id: expected a whole number >= 1"),
            ({"calls": [dict(ok, name="x" * 129)]}, "calls[0].name: expected a string"),
            ({"calls": [dict(ok, colour=1)]}, 'calls[0]: unknown field "colour"'),
            ({"calls": [ok] * 1001}, "1001 records, at most 1000"),
            ({"calls": {}}, 'expected {"calls": [...]} alone')]:
        status, got = server.api("POST", url, body)
        assert status == 400 and words in got["error"], (body if len(str(body)) < 200
                                                          else words, got)
    assert server.api("POST", "/api/v1/jobs/999/calls", {"calls": [ok]})[0] == 404
    assert server.api("GET", "/api/v1/jobs/999/calls")[0] == 404
    assert server.api("GET", url + "?limit=0")[0] == 400


def test_a_call_past_its_memory_is_an_out_of_memory_error(server, tmp_path):
    prog = write(tmp_path, "hog.py", """\
        import ray

        @ray.remote(memory=128 * 1024 ** 2, max_retries=0)
        def hog():
            chunks = [bytes([1]) * (1 << 20) for _ in range(600)]
            return len(chunks)

        @ray.remote(memory=128 * 1024 ** 2)
        def small():
            return len([bytes([1]) * (1 << 20) for _ in range(20)])

        print("small", ray.get(small.remote()))
        try:
            ray.get(hog.remote())
        except ray.exceptions.OutOfMemoryError as e:
            print("oom", isinstance(e, ray.exceptions.RayError))
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == ["small 20", "oom True"], cli_describe(r)
    roles = [j["spec"]["roles"]["worker"] for j in workers(server)]
    assert all(role["memory"] in ("128m", "128M", 128) for role in roles), roles


FOREVER = """\
    import os, signal, sys, time
    import ray

    @ray.remote
    def forever(path):
        open(path, "w").close()
        time.sleep(600)

    forever.remote(sys.argv[1])
    while not os.path.exists(sys.argv[1]):
        time.sleep(0.01)
    if sys.argv[2] == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    """


def test_no_worker_outlives_its_program_even_mid_call(server, tmp_path):
    prog = write(tmp_path, "forever.py", FOREVER)
    # the program ends with the call running: its worker's job is killed
    r = run_ok(server, prog, tmp_path / "started-1", "exit")
    assert "weir: exiting: killing warm worker job" in r.stderr, cli_describe(r)
    assert wait_no_procs(marker=WORKER_MARK, timeout=30) == {}
    # the program killed (-9) with the call running: its worker sees the socket's end
    r = weir_run(server, prog, tmp_path / "started-2", "kill")
    assert r.returncode == -9, cli_describe(r)
    assert wait_no_procs(marker=WORKER_MARK, timeout=30) == {}
    states = sorted(server.wait_job(j["id"])["state"] for j in workers(server))
    assert states == ["killed", "succeeded"], states


def test_put_refs_large_values_wait_and_get_timeout(server, tmp_path):
    prog = write(tmp_path, "objects.py", """\
        import time
        import ray

        @ray.remote
        def total(xs):
            return sum(xs)

        @ray.remote
        def size(b):
            return len(b)

        @ray.remote
        def big(n):
            return b"x" * n

        @ray.remote
        def nap(s):
            time.sleep(s)
            return s

        ref = ray.put(list(range(100)))
        print("put", ray.get(total.remote(ref)))
        first = total.remote([1, 2, 3])
        print("ref arg", ray.get(total.remote([ray.get(first), 4])), ray.get(size.remote(
            b"y" * (3 << 20))))
        print("chained", ray.get(size.remote(big.remote(10))))
        print("big result", len(ray.get(big.remote(5 << 20))))
        slow = nap.remote(30)
        quick = [nap.remote(0) for _ in range(3)]
        ready, rest = ray.wait(quick + [slow], num_returns=3, timeout=60)
        print("wait", len(ready), len(rest), slow in rest)
        try:
            ray.get(slow, timeout=0.2)
        except ray.exceptions.GetTimeoutError:
            print("timeout")
        ray.cancel(slow, force=True)
        """)
    r = run_ok(server, prog, env={"WEIR_WARM_WORKERS": "2"})
    assert r.stdout.splitlines() == ["put 4950", "ref arg 10 3145728", "chained 10",
                                     "big result 5242880", "wait 3 1 True", "timeout"], \
        cli_describe(r)
    assert not [j for j in jobs(server) if j["name"] != "warm-worker"], jobs(server)


def test_a_call_the_server_cannot_place_fails_at_remote(make_server, tmp_path):
    server = make_server("resources:\n  vcores: 4\n  memory: 4g\n  gpus: 0\n")
    prog = write(tmp_path, "gpu.py", """\
        import ray

        @ray.remote(num_gpus=1)
        def f(x):
            return x

        @ray.remote
        def g(x):
            return x

        try:
            f.remote(1)
        except ValueError as e:
            print("refused", "cannot run it (num_cpus=1, num_gpus=1)" in str(e))
        print(ray.get(g.remote(2)))
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == ["refused True", "2"], cli_describe(r)


def test_an_idle_worker_leaves_and_the_next_call_starts_another(server, tmp_path):
    prog = write(tmp_path, "idle.py", """\
        import os, time
        import ray

        @ray.remote
        def pid():
            return os.getpid()

        first = ray.get(pid.remote())
        deadline = time.time() + 60
        while os.path.exists("/proc/%d" % first) and time.time() < deadline:
            time.sleep(0.05)
        print("left", not os.path.exists("/proc/%d" % first))
        print("another", ray.get(pid.remote()) != first)
        """)
    r = run_ok(server, prog, env={"WEIR_WARM_IDLE": "1", "WEIR_WARM_WORKERS": "1"})
    assert r.stdout.splitlines() == ["left True", "another True"], cli_describe(r)
    states = [server.wait_job(j["id"])["state"] for j in workers(server)]
    assert states == ["succeeded", "succeeded"], states
