"""The `weir` Python package against a real server: remote functions (seed 002's squares and
its two models trained side by side), exceptions with their remote traceback, weir.put of a
large object written once, weir.train over a 2-worker gloo gang, Ctrl-C of the caller, and
bad input refused before any job exists."""

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import REPO, _python_with, wait_for

sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "examples" / "python"))
import weir  # noqa: E402

SKLEARN_PY = _python_with("sklearn")
TORCH_PY = _python_with("torch")


@pytest.fixture
def pyweir(server):
    """weir connected to the test's server, its object folder under the server's home."""
    weir.init(server=server.url, token=server.token, home=str(server.home))
    yield server
    weir._remote._at_exit()  # what a script's exit does: nothing of this test goes on


def job_count(server):
    return len(server.api("GET", "/api/v1/jobs?limit=100000")[1]["jobs"])


def test_squares_example_four_calls_of_two_cpus(pyweir):
    import squares
    futures = [squares.f.remote(i) for i in range(4)]
    assert weir.get(futures) == [0, 1, 4, 9]
    for fut in futures:
        job = pyweir.job(fut.job_id)
        assert job["name"] == "squares.f" and job["state"] == "succeeded", job
        assert job["spec"]["roles"]["worker"]["vcores"] == 2, job["spec"]
    # a function of the script itself is named without a module
    r = subprocess.run([sys.executable, str(REPO / "examples" / "python" / "squares.py")],
                       capture_output=True, text=True, timeout=120,
                       env=dict(pyweir.cli_env(), PYTHONPATH=str(REPO / "python")))
    assert r.returncode == 0 and r.stdout.strip() == "[0, 1, 4, 9]", r
    assert pyweir.api("GET", "/api/v1/jobs?limit=1")[1]["jobs"][0]["name"] == "f"


def test_value_and_kwargs_and_output_is_the_log(pyweir):
    @weir.remote(memory="256m")
    def greet(who, punct="!"):
        print("hello from the task", who)
        return "hi %s%s" % (who, punct)

    fut = greet.remote("ana", punct="?")
    assert weir.get(fut, timeout=120) == "hi ana?"
    assert "hello from the task ana" in fut.logs()
    assert pyweir.job(fut.job_id)["spec"]["roles"]["worker"]["memory"] == "256m"
    # ready, not ready
    ready, rest = weir.wait([greet.remote("bo"), greet.remote("cy")], num_returns=2,
                            timeout=120)
    assert len(ready) == 2 and rest == [] and weir.get(ready) == ["hi bo!", "hi cy!"]


@pytest.mark.skipif(SKLEARN_PY is None, reason="no python3 with sklearn (python3-sklearn)")
def test_two_sklearn_models_train_at_once_and_come_back_fitted(pyweir, tmp_path):
    import two_models
    side = tmp_path / "side"
    side.mkdir()

    def held(kind, data):
        # each training waits until the other has started: they can only both finish
        # when weir runs them at the same time
        (side / kind).write_text("")
        other = "SVC" if kind == "BAYES" else "BAYES"
        deadline = time.monotonic() + 90
        while not (side / other).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return two_models.fit(kind, data)

    data = weir.put(two_models.prepare(600))
    nb = weir.remote(cpus=1, memory="1g", name="train_bayes")(held)
    svc = weir.remote(cpus=2, memory="2g", name="train_svc")(held)
    futures = [nb.remote("BAYES", data), svc.remote("SVC", data)]

    def both_running():
        jobs = [pyweir.job(f.job_id) for f in futures]
        return all(j["state"] == "running" for j in jobs) and jobs
    jobs = wait_for(both_running, 90, "both trainings running at once")
    assert [j["name"] for j in jobs] == ["train_bayes", "train_svc"]
    assert [j["spec"]["roles"]["worker"]["vcores"] for j in jobs] == [1, 2]

    (m1, acc1), (m2, acc2) = weir.get(futures, timeout=180)
    assert type(m1).__name__ == "GaussianNB" and type(m2).__name__ == "SVC"
    assert hasattr(m1, "theta_") and hasattr(m2, "support_vectors_")  # fitted
    assert 0.7 < acc1 <= 1 and 0.7 < acc2 <= 1, (acc1, acc2)
    row = two_models.prepare(10)[0]
    assert m1.predict([row["features"]])[0] in (0, 1)


@pytest.mark.skipif(SKLEARN_PY is None, reason="no python3 with sklearn (python3-sklearn)")
def test_two_models_example_runs_whole(pyweir):
    r = subprocess.run([sys.executable, str(REPO / "examples" / "python" / "two_models.py"),
                        "--rows", "400"], capture_output=True, text=True, timeout=180,
                       env=dict(pyweir.cli_env(), PYTHONPATH=str(REPO / "python")))
    assert r.returncode == 0, r
    assert "GaussianNB   accuracy" in r.stdout and "best: " in r.stdout, r.stdout


def test_an_exception_comes_back_with_its_remote_traceback(pyweir):
    @weir.remote
    def parse(text):
        def deeper(t):
            return int(t)
        return deeper(text)

    fut = parse.remote("not a number")
    with pytest.raises(ValueError) as info:  # the original class still catches it
        weir.get(fut, timeout=120)
    err = info.value
    assert isinstance(err, weir.RemoteError) and err.job_id == fut.job_id
    assert err.type_name == "ValueError"
    tb = err.remote_traceback
    assert "in deeper" in tb and "in parse" in tb and "invalid literal for int()" in tb, tb
    assert "_runner.py" not in tb, tb
    assert "Remote traceback" in str(err)
    job = pyweir.job(fut.job_id)
    assert job["state"] == "failed" and job["exit_code"] == 1, job
    assert "invalid literal" in fut.logs()  # the traceback is in the job's log too
    # the same future raises again
    with pytest.raises(weir.RemoteError):
        fut.result()


def test_a_job_killed_under_the_call_is_jobfailed(pyweir):
    @weir.remote
    def forever():
        time.sleep(600)

    fut = forever.remote()
    pyweir.wait_running(fut.job_id)
    fut.kill()
    with pytest.raises(weir.JobFailed) as info:
        weir.get(fut, timeout=60)
    assert info.value.job["state"] == "killed"
    with pytest.raises(weir.GetTimeoutError):
        weir.get(forever.remote(), timeout=0.5)


def _tree_bytes(root):
    total, files = 0, []
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = os.path.join(dirpath, n)
            if os.path.isfile(p) and not os.path.islink(p):
                total += os.path.getsize(p)
                files.append(p)
    return total, files


def test_put_of_100mb_used_by_8_calls_is_written_once(pyweir):
    blob = os.urandom(100 << 20)
    want = hashlib.sha256(blob).hexdigest()
    ref = weir.put(blob)
    assert weir.put(blob) == ref  # the same content: the same object, not written again

    @weir.remote(memory="1g")
    def check(data, i):
        import hashlib as h
        import os as o
        linked = [e for e in o.listdir(".") if e.startswith("weir-obj-")]
        return i, h.sha256(data).hexdigest(), [o.path.realpath(e) for e in linked]

    out = weir.get([check.remote(ref, i) for i in range(8)], timeout=300)
    assert [o[0] for o in out] == list(range(8))
    assert all(o[1] == want for o in out)
    # every call linked the same unpacked copy
    targets = {t for o in out for t in o[2]}
    assert len(targets) == 1, targets
    cache = pyweir.home / "cache"
    assert Path(next(iter(targets))).parent == cache.resolve(), targets

    objects = pyweir.home / "objects"
    tars = sorted(objects.glob("*.tar"))
    assert len(tars) == 1 and tars[0].stat().st_size >= 100 << 20, tars
    unpacked = [d for d in cache.iterdir() if d.is_dir() and len(d.name) == 64]
    assert len(unpacked) == 1, unpacked
    # bytes written, all told: the archive and its one unpacked copy, not one per call
    total, files = _tree_bytes(pyweir.home)
    assert 2 * (100 << 20) <= total < 2 * (100 << 20) + (8 << 20), (total, files)
    big = [f for f in files if os.path.getsize(f) >= 100 << 20]
    assert len(big) == 2, big


@pytest.mark.slow
@pytest.mark.skipif(TORCH_PY is None, reason="no python3 with torch (python3-torch)")
def test_train_two_workers_gloo_all_reduce_returns_rank_0(pyweir):
    def step(config):
        import os as o
        import torch
        import torch.distributed as dist
        rank = dist.get_rank()
        t = torch.tensor([float(rank + 1)])
        dist.all_reduce(t)  # 1 + 2
        return {"rank": rank, "world": dist.get_world_size(), "sum": t.item(),
                "scale": config["scale"] * t.item(), "env_rank": o.environ["RANK"]}

    got = weir.train(step, {"scale": 10}, workers=2, memory="1g", timeout="5m")
    assert got == {"rank": 0, "world": 2, "sum": 3.0, "scale": 30.0, "env_rank": "0"}, got
    job = pyweir.api("GET", "/api/v1/jobs?limit=1")[1]["jobs"][0]
    assert job["name"] == "test_python_remote.step" and job["framework"] == "pytorch", job
    assert job["tasks_by_state"] == {"succeeded": 2}, job

    def fails_on_rank_1():
        import torch.distributed as dist
        if dist.get_rank() == 1:
            raise RuntimeError("rank 1 gave up")
        dist.barrier()

    with pytest.raises(RuntimeError) as info:
        weir.train(fails_on_rank_1, workers=2, memory="1g", timeout="5m")
    assert "rank 1 gave up" in info.value.remote_traceback


CTRL_C = """
import sys, time
import weir

@weir.remote(memory="128m")
def sleeper(i):
    time.sleep(600)

futures = [sleeper.remote(i) for i in range(2)]
print("JOBS", *[f.job_id for f in futures], flush=True)
weir.get(futures)
"""


def test_ctrl_c_of_the_caller_kills_its_running_jobs(pyweir, tmp_path):
    script = tmp_path / "caller.py"
    script.write_text(CTRL_C)
    env = dict(pyweir.cli_env(), PYTHONPATH=str(REPO / "python"))
    # Ctrl-C as a terminal delivers it: SIGINT at its default, even when the suite itself runs
    # with it ignored (started in the background by a shell), which the package respects
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        line = p.stdout.readline()
        assert line.startswith("JOBS "), (line, p.stderr.read() if p.poll() is not None else "")
        ids = [int(x) for x in line.split()[1:]]
        for i in ids:
            pyweir.wait_running(i)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(10)
    assert p.returncode != 0 and "KeyboardInterrupt" in err, (p.returncode, err)
    assert "killing jobs %d, %d" % tuple(ids) in err, err
    for i in ids:
        assert pyweir.wait_job(i, timeout=60)["state"] == "killed"


def test_bad_input_is_refused_before_any_job_exists(pyweir):
    before = job_count(pyweir)
    calls = pyweir.home / "objects" / "calls"

    @weir.remote
    def take(x):
        return x

    with pytest.raises(weir.SerializationError) as info:
        take.remote(threading.Lock())
    assert isinstance(info.value, TypeError) and "argument 0" in str(info.value)

    with pytest.raises(weir.ResourceError) as info:
        weir.remote(cpus=64)(take).remote(1)
    assert info.value.status == 422 and "vcores" in info.value.message, info.value
    assert isinstance(info.value, ValueError)

    with pytest.raises(weir.ResourceError) as info:
        weir.remote(queue="nowhere")(take).remote(1)
    assert "nowhere" in info.value.message

    for bad in (dict(cpus=0), dict(cpus=1.5), dict(memory="lots"), dict(gpus=-1),
                dict(timeout="soon"), dict(queue="a b"), dict(python="p", venv="v")):
        with pytest.raises(ValueError):
            weir.remote(**bad)(take)
    with pytest.raises(TypeError):
        take(1)  # a remote function is called with .remote
    assert job_count(pyweir) == before
    assert not calls.exists() or list(calls.iterdir()) == []


IN_VENV = """
import sys
import weir

@weir.remote(memory="128m")
def where():
    import weir as w
    return sys.prefix, sys.executable, w.__file__

print(repr(weir.get(where.remote())))
"""


def test_pip_install_into_a_venv_and_the_call_runs_in_that_venv(pyweir, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, timeout=120)
    src = tmp_path / "python"  # a copy: pip builds in the folder it is given
    shutil.copytree(REPO / "python", src, ignore=shutil.ignore_patterns("__pycache__"))
    r = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-index", str(src)], capture_output=True, text=True, timeout=300,
                       cwd=tmp_path)
    assert r.returncode == 0, r
    script = tmp_path / "in_venv.py"
    script.write_text(IN_VENV)
    env = pyweir.cli_env()
    env.pop("PYTHONPATH", None)
    r = subprocess.run([str(venv / "bin" / "python"), str(script)], capture_output=True,
                       text=True, timeout=120, env=env, cwd=tmp_path)
    assert r.returncode == 0, r
    prefix, exe, module = eval(r.stdout.strip())
    assert prefix == str(venv) and exe == str(venv / "bin" / "python"), r.stdout
    assert module.startswith(str(venv)), module  # the installed package, not the tree's


def test_retries_wait_on_many_and_tensorflow_cluster(pyweir):
    @weir.remote(retries=1, retry_exceptions=True, memory="128m")
    def flaky():
        import os as o
        if o.environ["WEIR_ATTEMPT"] == "1":
            raise RuntimeError("first attempt fails")
        return "attempt " + o.environ["WEIR_ATTEMPT"]

    fut = flaky.remote()
    assert weir.get(fut, timeout=120) == "attempt 2"
    assert pyweir.job(fut.job_id)["attempt"] == 2

    @weir.remote(memory="128m")
    def ident(i):
        return i

    futures = [ident.remote(i) for i in range(6)]  # more than a few: one list request a round
    ready, rest = weir.wait(futures, num_returns=6, timeout=180)
    assert rest == [] and sorted(weir.get(ready)) == list(range(6))

    def tf_config():
        import json
        import os as o
        return json.loads(o.environ["TF_CONFIG"])

    cfg = weir.train(tf_config, workers=2, framework="tensorflow", memory="128m")
    assert cfg["task"] == {"type": "worker", "index": 0}, cfg
    assert len(cfg["cluster"]["worker"]) == 2, cfg
