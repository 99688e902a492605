"""The object folder (weir/remote/objects.py) and the task side of a call
(weir/worker/runner.py, run as a script the way a job's task runs it), without a server."""

import os
import pickle
import subprocess
import sys
import threading

import cloudpickle
import pytest

from conftest import REPO
from weir.errors import SerializationError
from weir.remote import objects
from weir.remote.functions import RUNNER
from weir.remote.futures import ObjectRef


def test_a_put_archive_is_written_once_and_read_back(tmp_path):
    data = objects.dumps({"w": [1, 2, 3]}, "the value")
    sha = objects.write_archive(tmp_path, data)
    path = objects.archive_path(tmp_path, sha)
    assert sha == objects.digest(data) and path.name == sha + ".tar"
    first = path.stat().st_mtime_ns
    assert objects.write_archive(tmp_path, data) == sha
    assert path.stat().st_mtime_ns == first  # there already: not written again
    assert objects.read_archive_value(tmp_path, sha) == {"w": [1, 2, 3]}
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary left


def test_a_tasks_linked_copy_is_read_before_the_folder(tmp_path):
    sha = objects.write_archive(tmp_path / "objs", objects.dumps("in the folder", "v"))
    work = tmp_path / "work"
    (work / objects.artifact_name(sha)).mkdir(parents=True)
    (work / objects.artifact_name(sha) / objects.VALUE_MEMBER).write_bytes(
        objects.dumps("linked", "v"))
    assert objects.read_archive_value(tmp_path / "objs", sha, work) == "linked"
    assert objects.read_archive_value(tmp_path / "objs", sha, tmp_path) == "in the folder"
    with pytest.raises(FileNotFoundError, match="no object folder"):
        objects.read_archive_value(None, sha, tmp_path)


def test_a_call_file_is_named_by_its_content(tmp_path):
    data = objects.dumps(("call", len, ([1],), {}, None), "the call")
    path, new = objects.write_call(tmp_path, data)
    assert new and path == tmp_path / "calls" / (objects.digest(data) + ".pkl")
    assert objects.write_call(tmp_path, data) == (path, False)
    assert objects.result_path(tmp_path, "abc") == tmp_path / "results" / "abc.pkl"


def test_what_cannot_be_pickled_is_named():
    with pytest.raises(SerializationError, match="argument 2 cannot be pickled"):
        objects.dumps(threading.Lock(), "argument 2")


def test_pickling_a_ref_notes_it_while_collecting():
    ref = ObjectRef("ab" * 32)
    with objects.collecting() as c:
        data = cloudpickle.dumps([1, {"x": ref}])
    assert c.found == {"ab" * 32}
    assert pickle.loads(data)[1]["x"] == ref
    cloudpickle.dumps(ref)  # outside: nothing collects, nothing fails


def run_call(tmp_path, call, runner=RUNNER):
    """Runs a call as a task does: the runner as a script in the task's folder."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "weir-call.pkl").write_bytes(cloudpickle.dumps(call, protocol=5))
    result = tmp_path / "result.pkl"
    env = dict(os.environ, WEIR_PY_RESULT=str(result), WEIR_PY_OBJECTS=str(tmp_path / "objs"),
               PYTHONPATH=str(REPO / "python"))
    r = subprocess.run([sys.executable, str(runner)], cwd=work, env=env, capture_output=True,
                       text=True, timeout=60)
    with open(result, "rb") as f:
        return r, cloudpickle.load(f)


def test_the_runner_runs_a_call_and_writes_its_value(tmp_path):
    def add(a, b=0):
        return a + b
    r, rec = run_call(tmp_path, ("call", add, (2,), {"b": 3}, None))
    assert r.returncode == 0, r.stderr
    assert rec == ("ok", 5)


def test_the_runner_writes_what_the_function_raised(tmp_path):
    def parse(text):
        return int(text)
    r, rec = run_call(tmp_path, ("call", parse, ("x",), {}, None))
    assert r.returncode == 1
    kind, name, message, tb, exc = rec
    assert (kind, name) == ("error", "ValueError") and "invalid literal" in message
    assert "in parse" in tb and "runner.py" not in tb, tb
    assert isinstance(cloudpickle.loads(exc), ValueError)
    assert "invalid literal" in r.stderr  # the traceback is in the task's log too


def test_the_runner_gives_a_put_objects_value_for_its_ref(tmp_path):
    sha = objects.write_archive(tmp_path / "objs", objects.dumps([1, 2, 3], "v"))

    def total(xs):
        return sum(xs)
    r, rec = run_call(tmp_path, ("call", total, (ObjectRef(sha),), {}, None))
    assert r.returncode == 0, r.stderr
    assert rec == ("ok", 6)


def test_the_runners_old_path_still_runs_a_call(tmp_path):
    """A job submitted before the runner moved names weir/_runner.py."""
    def hello():
        return "hi"
    r, rec = run_call(tmp_path, ("call", hello, (), {}, None),
                      runner=REPO / "python" / "weir" / "_runner.py")
    assert r.returncode == 0, r.stderr
    assert rec == ("ok", "hi")
