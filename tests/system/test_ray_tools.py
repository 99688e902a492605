"""Ray's ids, ray.timeline() and ray.util.inspect_serializability in a Ray program run
with `weir run` against a real server (docs/ray.md): the ids are hex strings of Ray's
lengths, the same in the program and in the calls (a ref's task_id() is the call's
get_task_id(), an actor's handle's _actor_id.hex() its get_actor_id()); the timeline has
an event per call that ended, written as JSON; an unpicklable closure is explained."""

import json

from test_ray_programs import cli_describe, write
from test_ray_warm import run_ok



def test_ids_timeline_and_serializability(server, tmp_path):
    trace = tmp_path / "trace.json"
    prog = write(tmp_path, "tools.py", """\
        import re
        import sys
        import threading
        import ray

        def is_hex(s, n):
            return isinstance(s, str) and re.fullmatch("[0-9a-f]{%d}" % n, s) is not None

        @ray.remote
        def ids(x):
            c = ray.get_runtime_context()
            return c.get_job_id(), c.get_task_id(), c.get_node_id(), c.get_actor_id()

        @ray.remote
        class Who:
            def ids(self):
                c = ray.get_runtime_context()
                return c.get_job_id(), c.get_task_id(), c.get_actor_id()

            async def aids(self):
                return ray.get_runtime_context().get_task_id()

        @ray.remote
        class AsyncWho:
            async def ids(self):
                return ray.get_runtime_context().get_task_id()

        @ray.remote(max_concurrency=2)
        class Threads:
            def ids(self, mark, other):
                import os
                import time
                open(mark, "w").close()
                while not os.path.exists(other):  # both run at once
                    time.sleep(0.01)
                return ray.get_runtime_context().get_task_id()

        ctx = ray.get_runtime_context()
        ref = ids.remote(1)
        job, task, node, actor = ray.get(ref)
        print("job", is_hex(job, 8), job == ctx.get_job_id(), ctx.job_id == job,
              ctx.job_id.hex() == job)
        print("task", is_hex(task, 48), task == ref.task_id().hex(),
              ctx.get_task_id() is None)
        print("ref", is_hex(ref.hex(), 56), ref.hex().startswith(task),
              ref.hex() != ids.remote(2).hex())
        print("node", is_hex(node, 56), node == ctx.get_node_id() == ray.nodes()[0]["NodeID"])
        print("actor in a task", actor)
        w = Who.remote()
        r = w.ids.remote()
        ajob, atask, aid = ray.get(r)
        print("actor", is_hex(aid, 32), aid == w._actor_id.hex(), ajob == job,
              atask == r.task_id().hex(), atask.endswith(aid))
        a = AsyncWho.remote()
        r2 = a.ids.remote()
        print("async actor", ray.get(r2) == r2.task_id().hex())
        import tempfile
        d = tempfile.mkdtemp()
        th = Threads.remote()
        t1, t2 = th.ids.remote(d + "/1", d + "/2"), th.ids.remote(d + "/2", d + "/1")
        print("threaded actor", ray.get([t1, t2]) == [t1.task_id().hex(), t2.task_id().hex()])
        p = ray.put(b"x" * 10)
        print("put", is_hex(p.hex(), 56))

        ray.timeline(filename=sys.argv[1])
        events = ray.timeline()
        print("timeline", sorted({e["name"] for e in events}) ==
              ["AsyncWho.__init__", "AsyncWho.ids", "Threads.__init__", "Threads.ids",
               "Who.__init__", "Who.ids", "ids"],
              all(e["ph"] == "X" and e["dur"] >= 0 for e in events))

        lock = threading.Lock()

        def uses():
            return lock

        ok, failures = ray.util.inspect_serializability(uses, name="uses")
        print("serializability", ok, [f.name for f in failures])
        """)
    r = run_ok(server, prog, str(trace))
    lines = r.stdout.splitlines()
    assert lines[:10] == ["job True True True True", "task True True True",
                         "ref True True True", "node True True", "actor in a task None",
                         "actor True True True True True", "async actor True",
                         "threaded actor True", "put True", "timeline True True"], \
        cli_describe(r)
    assert "serializability False ['global lock']" in lines, cli_describe(r)
    assert "uses cannot be pickled" in r.stdout and "- global lock (lock)" in r.stdout
    events = json.loads(trace.read_text())
    names = [e["name"] for e in events]
    assert names.count("ids") == 2 and "Who.ids" in names, events
    for e in events:
        assert set(e) >= {"name", "cat", "ph", "ts", "dur", "pid", "tid"}, e
        assert e["tid"].startswith("worker job "), e
