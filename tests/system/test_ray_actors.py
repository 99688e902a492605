"""Ray programs' actors (docs/ray.md "Actors", docs/internals/calls.md "Actors"), with
`weir run` against a real server: a counter keeps its state and the order of its calls,
as a job of its own with its log and its calls recorded; a threaded actor and an async
one run calls at once; a handle passed to a task and a named actor found by get_actor;
ActorPool; an actor killed with kill -9 mid-call (RayActorError, and restarted with
max_restarts), ray.kill, an actor out of memory, a method that raises, a constructor that
raises; no actor process left after the program, even one killed with kill -9."""

import os
import textwrap

from conftest import wait_no_procs
from test_ray_programs import cli_describe, jobs
from test_ray_warm import WORKER_MARK, run_ok, weir_run

# what an actor's worker has in its environment (remote/actors.py): no other process has it
ACTOR_MARK = "WEIR_WARM_ACTOR="


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def named(server, name):
    return [server.job(j["id"]) for j in jobs(server) if j["name"] == name]


def test_a_counter_keeps_its_state_and_the_order_of_its_calls(server, tmp_path):
    prog = write(tmp_path, "counter.py", """\
        import os
        import ray

        @ray.remote
        class Counter:
            def __init__(self, start):
                self.n = start
                self.seen = []

            def incr(self, by=1):
                self.n += by
                self.seen.append(by)
                print("incr by", by, flush=True)
                return self.n

            def seen_order(self):
                return self.seen, os.getpid(), ray.get_runtime_context().get_actor_id()

            @ray.method(num_returns=2)
            def pair(self):
                return self.n, -self.n

        c = Counter.remote(10)
        refs = [c.incr.remote(i) for i in range(1, 101)]
        got = ray.get(refs)
        assert got == [10 + i * (i + 1) // 2 for i in range(1, 101)], got
        seen, pid, aid = ray.get(c.seen_order.remote())
        assert seen == list(range(1, 101)), seen
        assert pid != os.getpid() and aid, (pid, aid)
        a, b = c.pair.remote()
        print("pair", ray.get(a), ray.get(b))
        print("sync", ray.get(c.incr.remote()), ray.get(c.incr.remote(by=2)))
        other = Counter.options(name="other").remote(0)
        print("other", ray.get(other.incr.remote()))
        try:
            Counter(1)
        except TypeError as e:
            print("direct", "Counter.remote" in str(e))
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == ["pair 5060 -5060", "sync 5061 5063", "other 1",
                                     "direct True"], cli_describe(r)
    # the actor is a job named after the class, its log has what the methods printed
    # and a line a call; its calls are recorded under it
    (job,) = named(server, "Counter")
    assert len(named(server, "other")) == 1
    job = server.wait_job(job["id"], timeout=60)
    assert job["state"] == "succeeded", job
    text = server.log(job["id"])
    assert "incr by 100" in text and "Counter.incr succeeded" in text, text[-2000:]
    calls = server.api("GET", "/api/v1/jobs/%d/calls?limit=1000" % job["id"])[1]
    assert calls["counts"].get("succeeded") == 105, calls["counts"]
    assert not [j for j in jobs(server) if j["name"] == "warm-worker"], jobs(server)
    assert wait_no_procs(marker=ACTOR_MARK, timeout=30) == {}
