"""Ray's ids in Ray's forms (remote/ray_ids.py), ray.util.inspect_serializability and the
events of ray.timeline (remote/call_records.py), without a server."""

import io
import json
import pickle
import threading

from weir.compat import ray
from weir.remote import ray_ids
from weir.remote.call_records import CallRecords


def test_the_ids_have_rays_lengths_and_nest_as_rays_do():
    job = ray_ids.job_hex("abc")
    actor = ray_ids.actor_hex("abc", 3)
    task = ray_ids.task_hex("abc", 7)
    method = ray_ids.task_hex("abc", 8, 3)
    obj = ray_ids.object_hex(method, 2)
    assert [len(x) for x in (job, actor, task, method, obj)] == [8, 32, 48, 48, 56]
    assert all(int(x, 16) >= 0 for x in (job, actor, task, obj))
    # an actor's id ends with its job's; a method's task with its actor's; a function's
    # task with a nil actor of its job; an object starts with its task, then its index
    assert actor.endswith(job) and method.endswith(actor)
    assert task.endswith("ff" * 12 + job) and obj == method + "02000000"
    assert len(ray_ids.node_hex("host")) == 56 and len(ray_ids.put_hex("sha")) == 56
    # the same weir ids, the same Ray ids; others differ
    assert ray_ids.task_hex("abc", 7) == task != ray_ids.task_hex("abd", 7)
    assert ray_ids.actor_hex("abc", 4) != actor
    assert ray_ids.scope_of_folder("/tmp/weir-warm-abc") == "abc"


def test_id_objects_and_an_actor_number():
    t = ray_ids.TaskID(ray_ids.task_hex("abc", 1))
    assert t == t.hex() and t.binary() == bytes.fromhex(t.hex()) and t.size() == 24
    assert hash(t) == hash(t.hex()) and not t.is_nil()
    assert t != ray_ids.JobID(t.hex())  # another kind of id
    n = ray_ids.ActorNumber(5, "abc")
    assert n == 5 and "%d" % n == "5" and n.hex() == ray_ids.actor_hex("abc", 5)
    back = pickle.loads(pickle.dumps(n))
    assert back == 5 and back.hex() == n.hex()


def test_inspect_serializability_names_the_innermost_failure():
    lock = threading.Lock()

    class Holder:
        def __init__(self):
            self.lock = lock
            self.n = 1

    holder = Holder()

    def uses(x):
        return holder.n + x

    out = io.StringIO()
    ok, failures = ray.util.inspect_serializability(uses, name="uses", print_file=out)
    assert not ok
    (f,) = failures
    assert f.obj is lock and f.parent is holder and f.name == "attribute lock"
    text = out.getvalue()
    assert text.startswith("uses cannot be pickled: TypeError")
    assert "closure variable holder (Holder)" in text and "attribute lock (lock)" in text
    out = io.StringIO()
    assert ray.util.inspect_serializability({"a": [1, 2]}, print_file=out) == (True, set())
    assert "can be pickled" in out.getvalue()
    ok, failures = ray.util.inspect_serializability([1, {"k": lock}], print_file=out)
    assert not ok and [f.name for f in failures] == ["['k']"]


def test_timeline_events_of_the_ended_tries():
    rec = CallRecords(None, lambda: True)  # closed: its thread sends nothing
    rec.note(4, 1, "f", 1, "running")
    rec.note(4, 1, "f", 1, "succeeded")
    rec.note(4, 2, "Counter.incr", 1, "running")
    rec.note(5, 3, "g", 2, "failed", "ValueError")
    rec.note(4, 2, "Counter.incr", 1, "running")  # not ended: not an event yet
    events = rec.chrome_events("box")
    assert [e["name"] for e in events] == ["f", "g"], events
    f, g = events
    assert {k: f[k] for k in ("cat", "ph", "pid", "tid")} == {
        "cat": "task", "ph": "X", "pid": "Node box", "tid": "worker job 4"}
    assert isinstance(f["ts"], int) and f["ts"] > 1_600_000_000 * 10**6 and f["dur"] >= 0
    assert g["args"] == {"state": "failed", "tries": 2, "worker_job": 5, "call": 3,
                         "error": "ValueError"}
    json.dumps(events)  # Chrome's format is JSON
