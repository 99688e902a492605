"""Ray programs' actors (docs/ray.md "Actors", docs/internals/calls.md "Actors"), with
`weir run` against a real server: a counter keeps its state and the order of its calls,
as a job of its own with its log and its calls recorded; a threaded actor and an async
one run calls at once; a handle passed to a task (a warm worker's, or a job's) and to an
actor, and a named actor found by get_actor; ActorPool; an actor killed with kill -9
mid-call (RayActorError, restarted with max_restarts, the call sent again with
max_task_retries), ray.kill, an actor out of memory, a method that raises, a constructor
that raises; no actor process left after the program, even one killed with kill -9."""


from conftest import wait_no_procs
from test_ray_programs import cli_describe, jobs, write
from test_ray_warm import WORKER_MARK, run_ok, weir_run

# what an actor's worker has in its environment (remote/actors.py): no other process has it
ACTOR_MARK = "WEIR_WARM_ACTOR="



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


def test_threaded_and_async_actors_run_calls_at_once(server, tmp_path):
    prog = write(tmp_path, "at_once.py", """\
        import asyncio, threading
        import ray

        @ray.remote(max_concurrency=3)
        class Gate:
            def __init__(self):
                self.inside = 0
                self.lock = threading.Lock()
                self.all_in = threading.Event()

            def enter(self):
                with self.lock:
                    self.inside += 1
                    if self.inside == 3:
                        self.all_in.set()
                # three calls wait here together: one at a time would never get past
                return self.all_in.wait(60)

        @ray.remote
        class AsyncGate:
            def __init__(self):
                self.waiting = 0
                self.event = None

            async def enter(self, n):
                if self.event is None:
                    self.event = asyncio.Event()
                self.waiting += 1
                if self.waiting == n:
                    self.event.set()
                await asyncio.wait_for(self.event.wait(), 60)
                return self.waiting

            def plain(self):
                return "plain"

        g = Gate.remote()
        print("threaded", ray.get([g.enter.remote() for _ in range(3)]))
        a = AsyncGate.remote()
        print("async", ray.get([a.enter.remote(50) for _ in range(50)])[-1],
              ray.get(a.plain.remote()))
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == ["threaded [True, True, True]", "async 50 plain"], \
        cli_describe(r)


def test_a_handle_passed_to_tasks_and_actors_and_a_named_actor(server, tmp_path):
    prog = write(tmp_path, "handles.py", """\
        import ray

        @ray.remote
        class Store:
            def __init__(self):
                self.items = {}

            def put(self, k, v):
                self.items[k] = v
                return len(self.items)

            def get(self, k):
                return self.items[k]

        @ray.remote
        def writer(store, k):
            return ray.get(store.put.remote(k, k * 10))

        @ray.remote
        def by_name(k):
            s = ray.get_actor("store", namespace="ns")
            return ray.get(s.get.remote(k))

        @ray.remote
        class Reader:
            def __init__(self, store):
                self.store = store

            def read(self, k):
                return ray.get(self.store.get.remote(k))

        s = Store.options(name="store", namespace="ns").remote()
        print("writers", sorted(ray.get([writer.remote(s, k) for k in range(4)])))
        print("named", ray.get(by_name.remote(3)), ray.get(Reader.remote(s).read.remote(2)))
        same = ray.get_actor("store", namespace="ns")
        print("same", same == s, ray.get(same.get.remote(1)))
        try:
            ray.get_actor("nobody")
        except ValueError as e:
            print("missing", "nobody" in str(e))
        try:
            Store.options(name="store", namespace="ns").remote()
        except ValueError:
            print("taken")
        try:
            ray.get(s.get.remote(99))
        except KeyError as e:
            print("raised", isinstance(e, ray.exceptions.RayTaskError))
        print("alive", ray.get(s.get.remote(0)))
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == ["writers [1, 2, 3, 4]", "named 30 20", "same True 10",
                                     "missing True", "taken", "raised True", "alive 0"], \
        cli_describe(r)


def test_a_task_that_is_a_job_calls_an_actor_through_its_handle(server, tmp_path):
    prog = write(tmp_path, "job_path.py", """\
        import ray

        @ray.remote
        class C:
            def __init__(self):
                self.n = 0

            def incr(self):
                self.n += 1
                return self.n

        @ray.remote
        def task(c):
            return ray.get([c.incr.remote() for _ in range(3)])

        c = C.remote()
        print(ray.get(task.remote(c)), ray.get(c.incr.remote()))
        """)
    # calls are a job each here; the actor is a worker all the same
    r = run_ok(server, prog, env={"WEIR_RAY_WARM": "0"})
    assert r.stdout.strip() == "[1, 2, 3] 4", cli_describe(r)
    assert len(named(server, "task")) == 1 and len(named(server, "C")) == 1


def test_a_task_finds_a_named_actor_in_the_programs_namespace(server, tmp_path):
    prog = write(tmp_path, "namespace.py", """\
        import ray
        ray.init(namespace="mine")

        @ray.remote
        class Box:
            def get(self):
                return "boxed"

        @ray.remote
        def find():
            return ray.get(ray.get_actor("box").get.remote()), \\
                ray.get_runtime_context().namespace

        Box.options(name="box").remote()
        print(*ray.get(find.remote()))
        try:
            ray.get_actor("box", namespace="other")
        except ValueError:
            print("not in other")
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == ["boxed mine", "not in other"], cli_describe(r)


def test_actor_pool_map_and_submit(server, tmp_path):
    prog = write(tmp_path, "pool.py", """\
        import os
        import ray
        from ray.util import ActorPool

        @ray.remote
        class Doubler:
            def double(self, v):
                return 2 * v, os.getpid()

        pool = ActorPool([Doubler.remote(), Doubler.remote()])
        got = list(pool.map(lambda a, v: a.double.remote(v), range(10)))
        print("map", [v for v, _ in got], len({p for _, p in got}))
        print("unordered", sorted(v for v, _ in pool.map_unordered(
            lambda a, v: a.double.remote(v), range(5))))
        pool.submit(lambda a, v: a.double.remote(v), 7)
        pool.submit(lambda a, v: a.double.remote(v), 8)
        pool.submit(lambda a, v: a.double.remote(v), 9)
        out = []
        while pool.has_next():
            out.append(pool.get_next()[0])
        print("submit", out)
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == ["map [0, 2, 4, 6, 8, 10, 12, 14, 16, 18] 2",
                                     "unordered [0, 2, 4, 6, 8]", "submit [14, 16, 18]"], \
        cli_describe(r)


def test_an_actor_killed_mid_call_restarts_or_raises_ray_actor_error(server, tmp_path):
    prog = write(tmp_path, "killed.py", """\
        import os, signal, sys, time
        import ray

        MARK = sys.argv[1]

        @ray.remote(max_restarts=1)
        class Fragile:
            def __init__(self):
                self.n = 0

            def pid(self):
                return os.getpid()

            def hang(self, tag):
                open(MARK + tag, "w").close()
                time.sleep(600)

            def incr(self):
                self.n += 1
                return self.n

        def started(tag):
            while not os.path.exists(MARK + tag):
                time.sleep(0.01)

        a = Fragile.remote()
        print("n", ray.get(a.incr.remote()))
        pid = ray.get(a.pid.remote())
        hung = a.hang.remote("a")
        started("a")
        os.kill(pid, signal.SIGKILL)
        try:
            ray.get(hung)
        except ray.exceptions.RayActorError as e:
            print("died", "died" in str(e), isinstance(e, ray.exceptions.RayError))
        # restarted: its constructor ran again
        print("restarted", ray.get(a.incr.remote()), ray.get(a.pid.remote()) != pid)
        hung = a.hang.remote("b")
        started("b")
        ray.kill(a)
        try:
            ray.get(hung)
        except ray.exceptions.RayActorError as e:
            print("killed", "ray.kill" in str(e))
        try:
            ray.get(a.incr.remote())
        except ray.exceptions.ActorDiedError:
            print("dead")

        @ray.remote
        class Bad:
            def __init__(self):
                raise ValueError("no")

            def f(self):
                return 1

        try:
            ray.get(Bad.remote().f.remote())
        except ray.exceptions.RayActorError as e:
            print("constructor", "constructor raised ValueError: no" in str(e))

        @ray.remote(max_restarts=-1, max_task_retries=1)
        class Retried:
            def once_killed(self, tag):
                if not os.path.exists(MARK + tag):
                    open(MARK + tag, "w").close()
                    os.kill(os.getpid(), signal.SIGKILL)
                return "ran again"

        r = Retried.remote()
        print("retried", ray.get(r.once_killed.remote("c")))
        """)
    r = weir_run(server, prog, tmp_path / "mark-")
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == ["n 1", "died True True", "restarted 1 True",
                                     "killed True", "dead", "constructor True",
                                     "retried ran again"], cli_describe(r)
    # two worker jobs of the actor: the one killed with kill -9 and its restart
    states = sorted(server.wait_job(j["id"], timeout=60)["state"]
                    for j in named(server, "Fragile"))
    assert states == ["failed", "failed"], states
    # the calls the kills cut short are recorded "crashed" with their cause
    crashed = [c for j in named(server, "Fragile") for c in server.api(
        "GET", "/api/v1/jobs/%d/calls" % j["id"])[1]["calls"] if c["state"] == "crashed"]
    assert sorted(c["error"].split(" (")[0].split(":")[0] for c in crashed) == [
        "it was killed by ray.kill()", "its worker"], crashed


def test_an_actor_past_its_memory_raises_ray_actor_error(server, tmp_path):
    prog = write(tmp_path, "hog.py", """\
        import ray

        @ray.remote(memory=128 * 1024 ** 2)
        class Hog:
            def __init__(self):
                self.chunks = []

            def grow(self, mib):
                self.chunks += [bytes([1]) * (1 << 20) for _ in range(mib)]
                return len(self.chunks)

        h = Hog.remote()
        print("small", ray.get(h.grow.remote(10)))
        try:
            ray.get(h.grow.remote(600))
        except ray.exceptions.RayActorError as e:
            print("oom", "out of memory" in str(e))
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == ["small 10", "oom True"], cli_describe(r)
    (job,) = named(server, "Hog")
    assert job["spec"]["roles"]["worker"]["memory"] in ("128m", "128M", 128), job


ACTOR_FOREVER = """\
    import os, signal, sys, time
    import ray

    @ray.remote
    class Sleeper:
        def sleep(self, path):
            open(path, "w").close()
            time.sleep(600)

    @ray.remote
    class Idle:
        def ping(self):
            return 1

    i = Idle.remote()
    ray.get(i.ping.remote())
    Sleeper.remote().sleep.remote(sys.argv[1])
    while not os.path.exists(sys.argv[1]):
        time.sleep(0.01)
    if sys.argv[2] == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    """


def test_no_actor_outlives_its_program_even_killed(server, tmp_path):
    prog = write(tmp_path, "forever.py", ACTOR_FOREVER)
    run_ok(server, prog, tmp_path / "started-1", "exit")
    assert wait_no_procs(marker=ACTOR_MARK, timeout=30) == {}
    r = weir_run(server, prog, tmp_path / "started-2", "kill")
    assert r.returncode == -9, cli_describe(r)
    assert wait_no_procs(marker=ACTOR_MARK, timeout=30) == {}
    assert wait_no_procs(marker=WORKER_MARK, timeout=30) == {}
