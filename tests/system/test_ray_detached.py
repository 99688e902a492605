"""Detached actors and ray.kill / ray.cancel from a task (docs/ray.md "Actors", "Nested
calls"; docs/internals/calls.md "Detached actors"), with `weir run` against a real server:
an actor made with lifetime="detached" outlives its program, a later program finds it by
name and namespace, calls it (and passes it to a task), get_if_exists gives it, ray.kill
ends it; its key is in the home (0600) and in no log or job spec; a detached actor whose
constructor raises; a task that holds a handle kills the actor; a task cancels a call it
made."""

import json
import stat

from conftest import wait_no_procs
from test_ray_programs import cli_describe, jobs, write
from test_ray_warm import RUN_TMP, WORKER_MARK, run_ok, weir_run

# a detached actor's socket folder is made in its program's TMPDIR, this test run's own
# (test_ray_warm.py): the check sees this run's actors only
DETACHED_MARK = "WEIR_DETACHED_SOCK=" + RUN_TMP + "/"



COUNTER = """\
        import os
        import ray

        @ray.remote
        class Counter:
            def __init__(self, start):
                self.n = start

            def incr(self, by=1):
                self.n += by
                return self.n

            def pid(self):
                return os.getpid()
"""


def test_a_detached_actor_outlives_its_program_and_a_later_one_kills_it(server, tmp_path):
    first = write(tmp_path, "first.py", COUNTER + """\
        ray.init(namespace="shop")
        c = Counter.options(name="keeper", lifetime="detached").remote(10)
        print("first", ray.get(c.incr.remote()), ray.get(c.incr.remote(5)))
        again = Counter.options(name="keeper", lifetime="detached",
                                get_if_exists=True).remote(0)
        print("get_if_exists", ray.get(again.incr.remote()))
        try:
            Counter.options(name="keeper", lifetime="detached").remote(0)
        except ValueError as e:
            print("taken", "exists already" in str(e))
        """)
    r = run_ok(server, first)
    assert r.stdout.splitlines() == ["first 11 16", "get_if_exists 17", "taken True"], \
        cli_describe(r)
    (job,) = [server.job(j["id"]) for j in jobs(server) if j["name"] == "keeper"]
    assert job["state"] == "running", job  # its program has ended, it has not
    # its key is in the home, 0600, in a 0700 folder; not in its job's spec or log
    folder = server.home / "ray" / "actors"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    (key,) = list(folder.glob("*.key"))
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    secret = key.read_bytes()
    assert secret.hex() not in json.dumps(job) and secret.hex() not in server.log(job["id"])

    second = write(tmp_path, "second.py", """\
        import ray
        ray.init(namespace="shop")
        c = ray.get_actor("keeper")
        print("second", ray.get(c.incr.remote()))

        @ray.remote
        def use(h):
            return ray.get(h.incr.remote(100))

        @ray.remote
        def find():
            return ray.get(ray.get_actor("keeper", namespace="shop").incr.remote())

        print("task", ray.get(use.remote(c)), ray.get(find.remote()))
        try:
            ray.get_actor("keeper", namespace="other")
        except ValueError as e:
            print("other namespace", "no actor named" in str(e))
        ray.kill(c)
        try:
            ray.get_actor("keeper")
        except ValueError as e:
            print("killed", "no actor named" in str(e))
        """)
    r = run_ok(server, second)
    assert r.stdout.splitlines() == ["second 18", "task 118 119", "other namespace True",
                                     "killed True"], cli_describe(r)
    assert server.wait_job(job["id"], timeout=60)["state"] in ("succeeded", "killed")
    assert list(folder.iterdir()) == []
    assert wait_no_procs(marker=DETACHED_MARK, timeout=30) == {}


def test_a_detached_actors_calls_run_at_once_in_threads_or_on_its_event_loop(server, tmp_path):
    """max_concurrency=2: two calls meet at a barrier (one at a time, the barrier's guard
    would break it); an async actor's awaiting call lets the next one run."""
    prog = write(tmp_path, "conc.py", """\
        import asyncio
        import threading
        import ray

        @ray.remote
        class Meet:
            def __init__(self):
                self.barrier = threading.Barrier(2, timeout=120)  # a guard, not a wait

            def meet(self):
                return self.barrier.wait() in (0, 1)

            def count(self, n):
                yield from range(n)

        @ray.remote
        class Gate:
            def __init__(self):
                self.opened = None

            async def wait(self):
                if self.opened is None:
                    self.opened = asyncio.Event()
                await self.opened.wait()
                return "through"

            async def ticks(self, n):
                for i in range(n):
                    yield i * 10

            async def open(self):
                if self.opened is None:
                    self.opened = asyncio.Event()
                self.opened.set()
                return "opened"

        m = Meet.options(name="meet", lifetime="detached", max_concurrency=2).remote()
        print("threads", ray.get([m.meet.remote(), m.meet.remote()]))
        g = Gate.options(name="gate", lifetime="detached").remote()
        w = g.wait.remote()
        print("loop", ray.get(g.open.remote()), ray.get(w))
        print("items", [ray.get(r) for r in m.count.remote(3)],
              [ray.get(r) for r in g.ticks.remote(2)])
        ray.kill(m)
        ray.kill(g)
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == ["threads [True, True]", "loop opened through",
                                     "items [0, 1, 2] [0, 10]"], \
        cli_describe(r)
    assert wait_no_procs(marker=DETACHED_MARK, timeout=30) == {}


def test_a_detached_actor_is_restarted_after_its_process_is_killed(server, tmp_path):
    """max_restarts=1: kill -9 of its process fails the call in flight (RayActorError),
    its constructor runs again in a new process, and the handle held before calls it; a
    second death ends it (no restarts left)."""
    prog = write(tmp_path, "restart.py", COUNTER + """\
        import signal
        import time

        @ray.remote
        class Phoenix:
            def __init__(self, start):
                self.n = start

            def incr(self):
                self.n += 1
                return self.n

            def pid(self):
                return os.getpid()

            def nap(self):
                time.sleep(600)

            def reborn(self):
                return ray.get_runtime_context().was_current_actor_reconstructed

        c = Phoenix.options(name="phoenix", lifetime="detached", max_restarts=1).remote(10)
        print("first", ray.get(c.incr.remote()), ray.get(c.reborn.remote()))
        pid = ray.get(c.pid.remote())
        napping = c.nap.remote()
        os.kill(pid, signal.SIGKILL)
        try:
            ray.get(napping)
        except ray.exceptions.RayActorError as e:
            print("in flight", "process died" in str(e))
        again = ray.get(c.pid.remote())
        print("restarted", again != pid, ray.get(c.incr.remote()),  # constructed again
              ray.get(c.reborn.remote()))
        print("by name", ray.get(ray.get_actor("phoenix").incr.remote()))
        napping = c.nap.remote()
        os.kill(again, signal.SIGKILL)
        try:
            ray.get(napping)
        except ray.exceptions.RayActorError:
            pass
        try:
            ray.get(c.pid.remote())
        except ray.exceptions.RayActorError as e:
            print("ended", "no restarts left" in str(e) or str(e))
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == ["first 11 False", "in flight True", "restarted True 11 True",
                                     "by name 12", "ended True"], cli_describe(r)
    (job,) = [j for j in jobs(server) if j["name"] == "phoenix"]
    assert server.wait_job(job["id"], timeout=60)["state"] == "failed"
    assert wait_no_procs(marker=DETACHED_MARK, timeout=30) == {}


def test_a_detached_actors_call_in_flight_is_sent_again_after_its_restart(server, tmp_path):
    """max_task_retries=1: the call its process was running when killed runs again on
    the restarted one, and its ref gives that value."""
    prog = write(tmp_path, "retry.py", """\
        import os
        import signal
        import time
        import ray

        @ray.remote
        class Waiter:
            def pid(self):
                return os.getpid()

            def wait_for(self, path):
                while not os.path.exists(path):
                    time.sleep(0.01)  # polls for the file the program makes
                return os.getpid()

        w = Waiter.options(name="retry", lifetime="detached", max_restarts=1,
                           max_task_retries=1).remote()
        pid = ray.get(w.pid.remote())
        gate = os.path.abspath("gate")  # the actor runs in a folder of its own
        ref = w.wait_for.remote(gate)
        os.kill(pid, signal.SIGKILL)
        open(gate, "w").close()
        print("retried", ray.get(ref) not in (None, pid))
        ray.kill(w)
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == ["retried True"], cli_describe(r)
    assert wait_no_procs(marker=DETACHED_MARK, timeout=30) == {}


def test_a_detached_actors_methods_make_ray_calls_after_its_program_ended(server, tmp_path):
    """Its methods call functions, make actors and find named ones, as the program that
    made it did, after that program has ended; the token they use is in no spec or log."""
    first = write(tmp_path, "hub.py", COUNTER + """\
        @ray.remote
        def square(x):
            return x * x

        @ray.remote
        class Hub:
            def squares(self, n):
                return sum(ray.get([square.remote(i) for i in range(n)]))

            def counted(self):
                c = Counter.remote(100)
                return ray.get([c.incr.remote(), c.incr.remote()])

            def find(self, name):
                return ray.get(ray.get_actor(name).incr.remote(1000))

        ray.init(namespace="hubs")
        Counter.options(name="tally", lifetime="detached").remote(0)
        h = Hub.options(name="hub", lifetime="detached").remote()
        print("first", ray.get(h.squares.remote(4)))
        """)
    r = run_ok(server, first)
    assert r.stdout.splitlines() == ["first 14"], cli_describe(r)
    second = write(tmp_path, "later.py", """\
        import ray
        ray.init(namespace="hubs")
        h = ray.get_actor("hub")
        print("later", ray.get(h.squares.remote(5)), ray.get(h.counted.remote()),
              ray.get(h.find.remote("tally")))
        ray.kill(h)
        ray.kill(ray.get_actor("tally"))
        """)
    r = run_ok(server, second)
    assert r.stdout.splitlines() == ["later 30 [101, 102] 1000"], cli_describe(r)
    (job,) = [server.job(j["id"]) for j in jobs(server) if j["name"] == "hub"]
    assert server.wait_job(job["id"], timeout=60)["state"] in ("succeeded", "killed")
    token = server.token
    assert token not in json.dumps(job) and token not in server.log(job["id"])
    assert list((server.home / "ray" / "actors").iterdir()) == []
    assert wait_no_procs(marker=DETACHED_MARK, timeout=30) == {}
    assert wait_no_procs(marker=WORKER_MARK, timeout=30) == {}


def test_ray_cancel_of_a_detached_actors_calls(server, tmp_path):
    """ray.cancel of a detached actor's call, as of an ordinary actor's: an async method's
    running call has its task cancelled (even when it catches the error and returns), a
    call queued behind a one-at-a-time actor's running one never runs and its get raises
    at once, a sync running call runs to its end (its get raises all the same);
    force=True is refused; the actor serves on."""
    prog = write(tmp_path, "cancel.py", """\
        import asyncio
        import os
        import tempfile
        import time
        import ray
        from ray.exceptions import TaskCancelledError

        marks = tempfile.mkdtemp()

        def touch(name):
            open(os.path.join(marks, name), "w").close()

        def wait_for(name):
            while not os.path.exists(os.path.join(marks, name)):
                time.sleep(0.02)

        @ray.remote
        class Nap:
            async def nap(self):
                touch("nap")
                try:
                    await asyncio.sleep(600)
                except asyncio.CancelledError:
                    touch("nap-saw")
                return "slept"

            async def ping(self):
                return "alive"

        @ray.remote
        class One:
            def __init__(self):
                self.done = []

            def hold(self, tag):
                touch(tag)
                wait_for(tag + "-go")
                self.done.append(tag)
                return tag

            def done_list(self):
                return self.done

        def outcome(ref):
            try:
                return "value %r" % (ray.get(ref, timeout=60),)
            except TaskCancelledError:
                return "cancelled"

        a = Nap.options(name="nap", lifetime="detached").remote()
        r = a.nap.remote()
        wait_for("nap")
        ray.cancel(r)
        print("async", outcome(r), os.path.exists(os.path.join(marks, "nap-saw")),
              ray.get(a.ping.remote(), timeout=60))
        try:
            ray.cancel(a.ping.remote(), force=True)
        except ValueError:
            print("force refused")
        o = One.options(name="one", lifetime="detached").remote()
        first = o.hold.remote("first")
        wait_for("first")
        second = o.hold.remote("second")
        ray.cancel(second)
        print("queued", outcome(second))  # while the first still runs
        ray.cancel(first)
        touch("first-go")
        print("sync", outcome(first), ray.get(o.done_list.remote(), timeout=60),
              os.path.exists(os.path.join(marks, "second")))
        ray.kill(a)
        ray.kill(o)
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == ["async cancelled True alive", "force refused",
                                     "queued cancelled", "sync cancelled ['first'] False"], \
        cli_describe(r)
    assert wait_no_procs(marker=DETACHED_MARK, timeout=30) == {}


def test_a_detached_actor_whose_constructor_raises(server, tmp_path):
    prog = write(tmp_path, "bad.py", """\
        import ray

        @ray.remote
        class Bad:
            def __init__(self):
                raise ValueError("no stock")

            def f(self):
                return 1

        b = Bad.options(name="bad", lifetime="detached").remote()
        try:
            ray.get(b.f.remote())
        except ray.exceptions.RayActorError as e:
            print("died", "has ended" in str(e))
        try:
            Bad.options(lifetime="detached").remote()
        except ValueError as e:
            print("unnamed", "give it a name" in str(e))
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == ["died True", "unnamed True"], cli_describe(r)
    (job,) = [j for j in jobs(server) if j["name"] == "bad"]
    assert server.wait_job(job["id"], timeout=60)["state"] == "failed"


def test_a_task_kills_an_actor_and_cancels_a_call_it_made(server, tmp_path):
    prog = write(tmp_path, "fromtask.py", COUNTER + """\
        import time

        @ray.remote
        def killer(h):
            ray.kill(h)
            return "done"

        @ray.remote
        def forever():
            time.sleep(600)

        @ray.remote
        def canceller():
            ref = forever.remote()
            ray.cancel(ref)
            try:
                ray.get(ref)
            except ray.exceptions.TaskCancelledError:
                return "cancelled"

        c = Counter.remote(0)
        print("alive", ray.get(c.incr.remote()))
        print(ray.get(killer.remote(c)))
        try:
            ray.get(c.incr.remote())
        except ray.exceptions.RayActorError as e:
            print("killed", "ray.kill()" in str(e))
        print(ray.get(canceller.remote()))
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == ["alive 1", "done", "killed True", "cancelled"], \
        cli_describe(r)
    assert wait_no_procs(marker=WORKER_MARK, timeout=30) == {}


def test_a_detached_actor_in_a_placement_group_is_refused(server, tmp_path):
    """A group ends with its program, a detached actor does not: the pair is refused."""
    prog = write(tmp_path, "opts.py", COUNTER + """\
        from ray.util.placement_group import placement_group
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy
        pg = placement_group([{"CPU": 1}])
        try:
            Counter.options(name="x", lifetime="detached",
                            scheduling_strategy=PlacementGroupSchedulingStrategy(pg)).remote(0)
        except NotImplementedError as e:
            print("refused", "placement group" in str(e))
        """)
    r = weir_run(server, prog)
    assert r.returncode == 0 and r.stdout.splitlines() == ["refused True"], cli_describe(r)
