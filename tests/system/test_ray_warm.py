"""Ray programs' calls on warm workers (docs/internals/calls.md), with `weir run` against a
real server: many calls give the right values in few worker jobs; a call that raises; a
worker killed with kill -9 mid-call (retried, and WorkerCrashedError without retries); a
cancel; the calls' lines in their worker's log through the API; a worker's memory limit
(OutOfMemoryError); no worker process left after the program; the job path under
WEIR_RAY_WARM=0."""

import textwrap

from conftest import wait_no_procs
from test_ray_programs import cli_describe, jobs
from test_ray_programs import weir_run as _weir_run

# what the warm workers' environment holds (worker/warm.py): no other process has it
WORKER_MARK = "WEIR_WARM_DIR="


def weir_run(server, prog, env=None, **kw):
    return _weir_run(server, prog, env=dict({"WEIR_RAY_WARM": "1"}, **(env or {})), **kw)


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def workers(server):
    return [server.job(j["id"]) for j in jobs(server) if j["name"] == "warm-worker"]


def run_ok(server, prog, **kw):
    r = weir_run(server, prog, **kw)
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
