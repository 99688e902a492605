"""An actor's calls cancelled and an actor ending itself, as Ray 2.x does them (docs/ray.md
"Actors", docs/internals/calls.md "Actors"), with `weir run` against a real server:
ray.cancel of an async actor's running call cancels its asyncio task (the method sees
CancelledError) while a sync actor's runs to its end; ray.actor.exit_actor() in a sync, a
threaded and an async actor, and handle.__ray_terminate__.remote() after the calls queued
before it: the caller gets RayActorError, later calls too, no restart even with
max_restarts, the actor's atexit handlers run and its job succeeds; a detached actor
ends itself the same way."""


from test_ray_actors import named
from test_ray_programs import cli_describe, jobs, write
from test_ray_warm import run_ok



def test_cancel_interrupts_an_async_actors_running_call_not_a_sync_ones(server, tmp_path):
    prog = write(tmp_path, "cancel.py", """\
        import asyncio
        import os
        import tempfile
        import time
        import ray

        marks = tempfile.mkdtemp()

        def wait_for(name):
            while not os.path.exists(os.path.join(marks, name)):
                time.sleep(0.02)

        @ray.remote
        class Async:
            def __init__(self):
                self.seen = []

            async def long(self, name):
                open(os.path.join(marks, name), "w").close()
                try:
                    await asyncio.sleep(600)
                    self.seen.append("slept")
                except asyncio.CancelledError:
                    self.seen.append("cancelled " + name)
                    raise
                return "done"

            async def swallow(self, name):
                open(os.path.join(marks, name), "w").close()
                try:
                    await asyncio.sleep(600)
                except asyncio.CancelledError:
                    self.seen.append("swallowed " + name)
                return "kept on"

            async def seen_list(self):
                return self.seen

        a = Async.remote()
        r = a.long.remote("one")
        wait_for("one")
        ray.cancel(r)
        try:
            ray.get(r, timeout=60)
        except ray.exceptions.TaskCancelledError:
            print("async cancelled")
        s = a.swallow.remote("two")  # it catches the cancel and returns: still cancelled
        wait_for("two")
        ray.cancel(s)
        try:
            ray.get(s, timeout=60)
        except ray.exceptions.TaskCancelledError:
            print("swallowed cancelled")
        print("seen", ray.get(a.seen_list.remote()))
        one = Async.options(max_concurrency=1).remote()
        first = one.long.remote("three")
        wait_for("three")
        queued = one.long.remote("four")  # waits for the first: cancelled before it runs
        ray.cancel(queued)
        ray.cancel(first)
        for ref in (queued, first):
            try:
                ray.get(ref, timeout=60)
            except ray.exceptions.TaskCancelledError:
                print("one cancelled")
        print("one seen", ray.get(one.seen_list.remote()))

        @ray.remote
        class Sync:
            def __init__(self):
                self.n = 0

            def step(self, name):
                open(os.path.join(marks, name), "w").close()
                time.sleep(1)
                self.n += 1
                return self.n

            def count(self):
                return self.n

        b = Sync.remote()
        r = b.step.remote("five")
        wait_for("five")
        ray.cancel(r)  # not interrupted: the method runs to its end
        try:
            ray.get(r)
        except ray.exceptions.TaskCancelledError:
            print("sync cancelled", ray.get(b.count.remote()))
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == ["async cancelled", "swallowed cancelled",
                                     "seen ['cancelled one', 'swallowed two']",
                                     "one cancelled", "one cancelled",
                                     "one seen ['cancelled three']", "sync cancelled 1"], \
        cli_describe(r)
    # the actor's log says the call was cancelled (the one that caught it returned)
    logs = {}
    for job in named(server, "Async"):
        job = server.wait_job(job["id"], timeout=60)
        logs["swallow" in server.log(job["id"])] = server.log(job["id"])
    assert "Async.long cancelled" in logs[True] and "Async.swallow succeeded" in logs[True]
    assert "Async.long cancelled" in logs[False], logs  # the first; the queued one did not
    assert "cancelled before it started" in logs[False], logs  # start


def test_exit_actor_ends_the_actor_for_good(server, tmp_path):
    prog = write(tmp_path, "exit.py", """\
        import asyncio
        import atexit
        import os
        import sys
        import tempfile
        import time
        import ray

        marks = tempfile.mkdtemp()

        @ray.remote(max_restarts=3)
        class Quitter:
            def __init__(self, name):
                atexit.register(lambda: open(os.path.join(marks, name), "w").close())

            def ping(self):
                return "pong"

            def quit(self):
                ray.actor.exit_actor()
                return "not reached"

        q = Quitter.remote("sync")
        print("ping", ray.get(q.ping.remote()))
        bye = q.quit.remote()
        late = q.ping.remote()  # sent before the actor ended: not run
        for ref, what in ((bye, "quit"), (late, "queued"), (q.ping.remote(), "later")):
            try:
                ray.get(ref, timeout=60)
            except ray.exceptions.RayActorError as e:
                print(what, "RayActorError", "exit_actor" in str(e))
        while not os.path.exists(os.path.join(marks, "sync")):  # atexit ran
            time.sleep(0.05)

        @ray.remote(max_concurrency=4)
        class Threaded:
            def slow(self, t):
                open(os.path.join(marks, "slow"), "w").close()
                time.sleep(t)
                return "slow done"

            def quit(self):
                ray.actor.exit_actor()

        t = Threaded.remote()
        slow = t.slow.remote(1)
        while not os.path.exists(os.path.join(marks, "slow")):  # it runs: quit comes after
            time.sleep(0.02)
        try:
            ray.get(t.quit.remote(), timeout=60)
        except ray.exceptions.RayActorError:
            print("threaded quit RayActorError")
        print("running call", ray.get(slow, timeout=60))  # it ran to its end

        @ray.remote
        class Async:
            async def ping(self):
                return "apong"

            async def quit(self):
                await asyncio.sleep(0)
                try:
                    ray.actor.exit_actor()
                except ray.exceptions.AsyncioActorExit:
                    print("raises AsyncioActorExit", file=sys.stderr)
                    raise

        a = Async.remote()
        print("ping", ray.get(a.ping.remote()))
        try:
            ray.get(a.quit.remote(), timeout=60)
        except ray.exceptions.RayActorError:
            print("async quit RayActorError")
        try:
            ray.get(a.ping.remote(), timeout=60)
        except ray.exceptions.RayActorError:
            print("async later RayActorError")

        @ray.remote
        class Term:
            def __init__(self):
                self.n = 0

            def incr(self):
                time.sleep(0.1)
                self.n += 1
                return self.n

        c = Term.remote()
        refs = [c.incr.remote() for _ in range(3)]
        end = c.__ray_terminate__.remote()
        print("before terminate", ray.get(refs))
        try:
            ray.get(end, timeout=60)
        except ray.exceptions.RayActorError:
            print("terminate RayActorError")
        try:
            ray.get(c.incr.remote(), timeout=60)
        except ray.exceptions.RayActorError:
            print("after terminate RayActorError")
        try:
            ray.actor.exit_actor()
        except TypeError:
            print("outside an actor TypeError")
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == [
        "ping pong", "quit RayActorError True", "queued RayActorError True",
        "later RayActorError True", "threaded quit RayActorError", "running call slow done",
        "ping apong", "async quit RayActorError", "async later RayActorError",
        "before terminate [1, 2, 3]", "terminate RayActorError",
        "after terminate RayActorError", "outside an actor TypeError"], cli_describe(r)
    # each actor's job ended succeeded (its process exited), and none was restarted
    for name in ("Quitter", "Threaded", "Async", "Term"):
        (job,) = named(server, name)
        job = server.wait_job(job["id"], timeout=60)
        assert job["state"] == "succeeded", job
    (job,) = named(server, "Async")
    assert "raises AsyncioActorExit" in server.log(job["id"])


def test_a_detached_actor_ends_itself(server, tmp_path):
    prog = write(tmp_path, "detached.py", """\
        import ray

        @ray.remote
        class Keeper:
            def ping(self):
                return "pong"

            def quit(self):
                ray.actor.exit_actor()

        k = Keeper.options(name="keeper", lifetime="detached").remote()
        print("ping", ray.get(k.ping.remote()))
        try:
            ray.get(k.quit.remote(), timeout=60)
        except ray.exceptions.RayActorError as e:
            print("quit RayActorError", "exit_actor" in str(e))
        try:
            ray.get(k.ping.remote(), timeout=60)
        except ray.exceptions.RayActorError:
            print("later RayActorError")
        try:
            ray.get_actor("keeper")
        except ValueError:
            print("gone")
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == ["ping pong", "quit RayActorError True",
                                     "later RayActorError", "gone"], cli_describe(r)
    job = [j for j in jobs(server) if j["name"] == "keeper"]
    assert len(job) == 1, jobs(server)
    assert server.wait_job(job[0]["id"], timeout=60)["state"] == "succeeded"
