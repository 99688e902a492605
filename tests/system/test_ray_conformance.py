"""Ray Core's API as Ray programs use it, run with `weir run` against a real server: each
program exercises several names and prints what a Ray 2.x program would see (values,
exception classes, the essentials of their messages, states).  The gaps this audit found
and fixed each have a line here: num_returns not matching what the task returned, ray.wait
on an empty list and with a negative timeout, an unpicklable argument named, Ray's other
exception classes, the runtime context's older names, max_calls, and ray.cancel(force=True)
on an actor's call (refused as in Ray, the actor lives).  Round 2 (the tests at the end):
ray.util.multiprocessing.Pool, actor concurrency groups, get_runtime_context().is_canceled(),
ray.util.get_node_ip_address, ray.util.state's lists, as_completed and map_unordered."""


from test_ray_programs import cli_describe, jobs
from test_ray_warm import run_ok, workers, write


def test_functions_objects_errors_and_context(server, tmp_path):
    prog = write(tmp_path, "core.py", """\
        import os
        import tempfile
        import time
        import threading
        import ray

        ctx = ray.init(namespace="audit")
        assert ray.is_initialized() and ctx.address_info["namespace"] == "audit"
        assert ray.init(ignore_reinit_error=True) is not None
        try:
            ray.init()
        except RuntimeError:
            print("reinit RuntimeError")

        @ray.remote
        def sq(x):
            return x * x

        @ray.remote(num_returns=2)
        def pair(x):
            return x, -x

        @ray.remote(num_returns=2)
        def three(x):
            return x, x, x

        @ray.remote
        def nested():
            return [sq.remote(3), ray.put("p")]

        @ray.remote
        def slow(t):
            time.sleep(t)
            return t

        a, b = pair.remote(4)
        print("pair", ray.get([a, b]), ray.get((sq.remote(2), sq.remote(3))))
        try:
            ray.get(three.remote(1)[0])
        except ValueError as e:
            print("num_returns", isinstance(e, ray.exceptions.RayTaskError),
                  "Task returned 3 objects, but num_returns=2." in str(e))
        @ray.remote
        def fails(t):
            time.sleep(t)
            raise KeyError(t)

        try:  # the first error in the list's order, not the first to happen
            ray.get([sq.remote(1), fails.remote(0.5), fails.remote(0)])
        except KeyError as e:
            print("first error", e.cause.args, e.function_name)
        for bad in (5, {"a": sq.remote(1)}):
            try:
                ray.get(bad)
            except ValueError:
                print("get refuses", type(bad).__name__)
        try:
            ray.get([sq.remote(1), 5])
        except TypeError:
            print("get refuses an item")
        refs = ray.get(nested.remote())
        print("nested", [isinstance(r, ray.ObjectRef) for r in refs], ray.get(refs))

        # wait: the order given, an empty list, bad arguments
        fast, late = slow.remote(0), slow.remote(60)
        ready, rest = ray.wait([late, fast], num_returns=1, timeout=30)
        print("wait", ready == [fast], rest == [late], ray.wait([]))
        for bad in ({"num_returns": 3}, {"timeout": -1}):
            try:
                ray.wait([fast, late], **bad)
            except ValueError:
                print("wait refuses", sorted(bad))
        try:
            ray.get(late, timeout=0.2)
        except ray.exceptions.GetTimeoutError as e:
            print("timeout", isinstance(e, TimeoutError))
        ray.cancel(late)
        try:
            ray.get(late)
        except ray.exceptions.TaskCancelledError:
            print("cancelled")

        @ray.remote(max_retries=2)
        def hang(mark):
            open(mark, "w").close()
            time.sleep(60)

        mark = os.path.join(tempfile.mkdtemp(), "running")
        h = hang.remote(mark)
        while not os.path.exists(mark):
            time.sleep(0.02)
        ray.cancel(h, force=True)  # its worker killed, not retried
        try:
            ray.get(h)
        except ray.exceptions.TaskCancelledError as e:
            print("force cancelled", isinstance(e, ray.exceptions.WorkerCrashedError))

        # an unpicklable argument: named, and nothing submitted
        @ray.remote(num_cpus=3)
        def takes(x, lock=None):
            return x
        try:
            takes.remote(1, lock=threading.Lock())
        except TypeError as e:
            print("unpicklable", "argument lock=" in str(e), "_thread.lock" in str(e))

        # Ray's exception classes, those weir never raises too
        names = ["RuntimeEnvSetupError", "ObjectStoreFullError", "OwnerDiedError",
                 "ActorUnschedulableError", "TaskUnschedulableError", "ActorDiedError"]
        print("classes", all(issubclass(getattr(ray.exceptions, n), ray.exceptions.RayError)
                             for n in names),
              issubclass(ray.exceptions.OwnerDiedError, ray.exceptions.ObjectLostError))

        @ray.remote(num_cpus=2)
        def where():
            c = ray.get_runtime_context()
            return c.get(), c.job_id, c.task_id, c.actor_id, c.get_assigned_resources()
        got, job, task, actor, res = ray.get(where.remote())
        rc = ray.get_runtime_context()
        print("context", got["job_id"] == job == rc.get_job_id(), task == got["task_id"],
              actor is None and "actor_id" not in got, got["namespace"],
              "task_id" not in rc.get(), res, rc.get_assigned_resources())

        ray.shutdown()
        print("shutdown", ray.is_initialized())
        print("again", ray.get(sq.remote(5)), ray.is_initialized())
        """)
    r = run_ok(server, prog)
    out = r.stdout
    for line in ("reinit RuntimeError", "pair [4, -4] [4, 9]", "num_returns True True",
                 "first error (0.5,) fails", "get refuses int", "get refuses dict",
                 "get refuses an item",
                 "nested [True, True] [9, 'p']", "wait True True ([], [])",
                 "wait refuses ['num_returns']", "wait refuses ['timeout']",
                 "timeout True", "cancelled", "force cancelled True", "unpicklable True True", "classes True True",
                 "context True True True audit True {'CPU': 2.0} {}", "shutdown False", "again 25 True"):
        assert line in out, (line, cli_describe(r))
    # the unpicklable call made no worker of its shape
    assert not [j for j in workers(server)
                if j["spec"]["roles"]["worker"]["vcores"] == 3], workers(server)


def test_max_calls_gives_each_worker_that_many_calls(server, tmp_path):
    prog = write(tmp_path, "max_calls.py", """\
        import os
        import ray

        @ray.remote(max_calls=1)
        def fresh(i):
            return os.getpid()

        @ray.remote(max_calls=2, num_cpus=2)
        def twice(i):
            return os.getpid()

        @ray.remote
        def reused(i):
            return os.getpid()

        @ray.remote(num_gpus=1)  # Ray's default for a GPU function: max_calls=1
        def on_gpu(i):
            return os.getpid()

        @ray.remote(num_gpus=1, max_calls=0)  # 0: no limit
        def on_gpu_kept(i):
            return os.getpid()

        one = [ray.get(fresh.remote(i)) for i in range(3)]
        two = [ray.get(twice.remote(i)) for i in range(4)]
        many = [ray.get(reused.remote(i)) for i in range(3)]
        print("pids", len(set(one)), len(set(two)), len(set(many)))
        print("gpu pids", len({ray.get(on_gpu.remote(i)) for i in range(2)}),
              len({ray.get(on_gpu_kept.remote(i)) for i in range(2)}))
        print("parallel", sorted(ray.get([fresh.remote(i) for i in range(4)])) != [])
        """)
    r = run_ok(server, prog)
    assert "pids 3 2 1" in r.stdout, cli_describe(r)
    assert "gpu pids 2 1" in r.stdout, cli_describe(r)
    assert "parallel True" in r.stdout, cli_describe(r)
    # the workers that had their calls left as idle ones do: their jobs succeeded
    for j in workers(server):
        j = server.wait_job(j["id"], timeout=60)
        assert j["state"] == "succeeded", j


def test_actor_cancel_force_is_refused_and_the_actor_knows_itself(server, tmp_path):
    prog = write(tmp_path, "actor.py", """\
        import os
        import signal
        import tempfile
        import time
        import ray

        @ray.remote(max_restarts=1)
        class Worker:
            def __init__(self):
                self.n = 0

            def sleep(self, t):
                time.sleep(t)
                return t

            def who(self):
                c = ray.get_runtime_context()
                return (c.get_actor_name(), c.was_current_actor_reconstructed,
                        c.actor_id == c.get_actor_id() is not None, os.getpid())

            def fail(self):
                raise IndexError("no")

            def step(self, mark):
                open(mark, "w").close()
                time.sleep(1)
                self.n += 1
                return self.n

            def count(self):
                return self.n

            def me(self):
                return ray.get_runtime_context().current_actor

            @ray.method(num_returns=2)
            def two(self, t):
                time.sleep(t)
                return t, t

        w = Worker.options(name="w1").remote()
        name, again, ids, pid = ray.get(w.who.remote())
        print("who", name, again, ids)
        try:
            ray.get(w.fail.remote())
        except IndexError as e:
            print("method error", e.function_name)
        blocker = w.sleep.remote(0.5)  # r waits behind it
        r = w.sleep.remote(60)
        try:
            ray.cancel(r, force=True)
        except ValueError as e:
            print("force refused", "actor" in str(e))
        ray.cancel(r)  # not started: dropped
        try:
            ray.get(r)
        except ray.exceptions.TaskCancelledError:
            print("cancelled")
        mark = os.path.join(tempfile.mkdtemp(), "running")
        r = w.step.remote(mark)
        while not os.path.exists(mark):
            time.sleep(0.02)
        ray.cancel(r)  # running: not interrupted, as in Ray (the actor's state stays whole)
        try:
            ray.get(r)
        except ray.exceptions.TaskCancelledError:
            print("running cancelled", ray.get(w.count.remote()))
        first, second = w.two.remote(0.5)
        ray.cancel(second)  # one of a call's refs cancels the call
        try:
            ray.get(first)
        except ray.exceptions.TaskCancelledError:
            print("part cancelled")
        print("alive", ray.get(w.sleep.remote(0)), ray.get(w.who.remote())[3] == pid)
        me = ray.get(w.me.remote())  # its own handle, made in the actor
        print("current_actor", me == w, ray.get(me.count.remote()),
              ray.get(list(me.two.remote(0))))
        os.kill(pid, signal.SIGKILL)
        while True:  # its calls fail until it has restarted
            try:
                name, again, ids, pid2 = ray.get(w.who.remote())
                break
            except ray.exceptions.RayActorError:
                time.sleep(0.1)
        print("restarted", name, again, pid2 != pid)
        """)
    r = run_ok(server, prog)
    for line in ("who w1 False True", "method error w1.fail", "force refused True", "cancelled", "running cancelled 1", "part cancelled", "current_actor True 1 [0, 0]",
                 "alive 0 True", "restarted w1 True True"):
        assert line in r.stdout, (line, cli_describe(r))
    assert len([j for j in jobs(server) if j["name"] == "w1"]) == 2, jobs(server)


def test_init_local_starts_a_private_server_even_where_one_is_named(server, tmp_path):
    """ray.init(address="local") is a private server whatever $WEIR_SERVER (and
    $WEIR_TOKEN) name, as Ray starts a local cluster whatever RAY_ADDRESS says; after its
    shutdown, ray.init() finds the named one.  cluster_resources() leaves out what there is
    none of (GPUs here), as Ray does."""
    prog = write(tmp_path, "local.py", """\
        import os
        import ray

        ctx = ray.init(address="local", num_cpus=3, num_gpus=0)

        @ray.remote
        def f(x):
            return x + 1

        res = ray.cluster_resources()
        print("private", ctx.address_info["address"] != os.environ["WEIR_SERVER"],
              res["CPU"], res["memory"] > 0, "GPU" in res, ray.get(f.remote(1)),
              "GPU" in ray.nodes()[0]["Resources"])
        ray.shutdown()
        ctx = ray.init()
        print("named", ctx.address_info["address"] == os.environ["WEIR_SERVER"],
              ray.get(f.remote(2)), ray.cluster_resources()["GPU"])
        """)
    r = run_ok(server, prog)
    # a resource there is none of is left out, as in Ray
    assert "private True 3.0 True False 2 False" in r.stdout, cli_describe(r)
    assert "named True 3 3.0" in r.stdout, cli_describe(r)
    assert len(workers(server)) == 1, jobs(server)  # the named server ran the last call only


def test_refs_are_awaited_in_an_async_actor_and_in_the_program(server, tmp_path):
    prog = write(tmp_path, "awaits.py", """\
        import asyncio
        import ray

        @ray.remote
        def sq(x):
            return x * x

        @ray.remote
        def boom():
            raise KeyError("k")

        @ray.remote
        class Store:
            def val(self):
                return 7

        @ray.remote
        class Async:
            def __init__(self, store):
                self.store = store

            async def run(self, x):
                a = await sq.remote(x)  # a call the program makes for the actor
                b = await self.store.val.remote()
                try:
                    await boom.remote()
                except KeyError as e:
                    return a, b, isinstance(e, ray.exceptions.RayTaskError)

            async def slow(self):
                await asyncio.sleep(0.3)
                return "slow"

            async def quick(self):
                return "quick"

        a = Async.remote(Store.remote())
        print("in actor", ray.get(a.run.remote(3)))
        print("future", sq.remote(4).future().result(timeout=60))

        async def main():
            v = await sq.remote(5)
            try:
                await boom.remote()
            except ray.exceptions.RayTaskError as e:
                err = isinstance(e, KeyError)
            return v, err, await asyncio.gather(a.slow.remote(), a.quick.remote())
        print("in program", asyncio.run(main()))

        from ray.util.queue import Empty, Queue
        q = Queue()

        async def queue_main():
            await q.put_async(1)
            got = await q.get_async(timeout=30)
            try:
                await q.get_async(timeout=0.1)
            except Empty:
                return got, "Empty"
        print("queue", asyncio.run(queue_main()))
        """)
    r = run_ok(server, prog)
    for line in ("in actor (9, 7, True)", "future 16",
                 "in program (25, True, ['slow', 'quick'])", "queue (1, 'Empty')"):
        assert line in r.stdout, (line, cli_describe(r))


def test_a_call_given_refs_of_calls_not_ended_is_made_at_once(server, tmp_path):
    """As in Ray, f.remote(ref) returns at once and the call runs when the ref's call has
    ended (it waited in .remote() before); the upstream error is the call's; its other
    arguments are what they were at .remote(); a cancel while it waits drops it."""
    prog = write(tmp_path, "deps.py", """\
        import os
        import tempfile
        import time
        import ray

        folder = tempfile.mkdtemp()

        @ray.remote
        def wait_for(name):
            deadline = time.time() + 30
            while not os.path.exists(os.path.join(folder, name)):
                if time.time() > deadline:
                    raise TimeoutError("no " + name)
                time.sleep(0.02)
            return 10

        @ray.remote
        def inc(x, by=1):
            return x + by

        @ray.remote
        def total(x, items):
            return x + sum(items)

        @ray.remote
        def fails():
            raise KeyError("upstream")

        def release(name):
            open(os.path.join(folder, name), "w").close()

        a = wait_for.remote("a")
        b = inc.remote(a, by=a)  # the same ref twice, a keyword too
        c = inc.remote(b)  # a chain: made before either ran
        items = [1, 2]
        t = total.remote(a, items)
        items.append(100)  # after .remote(): not the call's
        print("made", ray.wait([c, t], num_returns=1, timeout=0)[0] == [])
        release("a")
        print("values", ray.get([b, c, t]))
        try:
            ray.get(inc.remote(fails.remote()))
        except KeyError as e:
            print("upstream", isinstance(e, ray.exceptions.RayTaskError), e.cause.args)
        w = inc.remote(wait_for.remote("w"))
        ray.cancel(w)
        release("w")
        try:
            ray.get(w)
        except ray.exceptions.TaskCancelledError:
            print("cancelled while waiting")
        """)
    r = run_ok(server, prog)
    for line in ("made True", "values [20, 21, 13]", "upstream True ('upstream',)",
                 "cancelled while waiting"):
        assert line in r.stdout, (line, cli_describe(r))


def test_multiprocessing_pool_over_actors(server, tmp_path):
    """Round 2: ray.util.multiprocessing.Pool, a drop-in multiprocessing.Pool (it was
    missing: ImportError)."""
    prog = write(tmp_path, "mpool.py", """\
        import os
        import threading
        from ray.util.multiprocessing import Pool, TimeoutError
        import ray.util.multiprocessing as mp_mod

        def init(tag):
            os.environ["POOL_TAG"] = tag

        def sq(x):
            return x * x, os.environ.get("POOL_TAG"), os.getpid()

        def add(a, b):
            return a + b

        def boom(x):
            if x == 3:
                raise KeyError("three")
            return x

        def wait_for(path):
            while not os.path.exists(path):
                pass
            return "late"

        with Pool(processes=2, initializer=init, initargs=("t",)) as pool:
            got = pool.map(sq, range(10))
            print("map", [v for v, _, _ in got], {t for _, t, _ in got},
                  len({p for _, _, p in got}), os.getpid() in {p for _, _, p in got})
            print("starmap", pool.starmap(add, [(1, 2), (3, 4)]))
            print("imap", [v for v, _, _ in pool.imap(sq, range(5), chunksize=2)])
            print("imap_unordered", sorted(v for v, _, _ in pool.imap_unordered(sq, range(5))))
            print("apply", pool.apply(add, (2, 3)), pool.apply(add, (), {"a": 1, "b": 1}))
            done = threading.Event()
            seen = []
            r = pool.apply_async(add, (5, 6), callback=lambda v: (seen.append(v), done.set()))
            print("apply_async", r.get(timeout=60), r.successful())
            done.wait(60)
            print("callback", seen)
            errs = []
            bad = pool.map_async(boom, range(5), error_callback=errs.append)
            try:
                bad.get()
            except KeyError as e:
                print("error KeyError", "three" in str(e))
            bad.wait()
            print("successful", bad.successful())
            flag = os.path.join(os.environ["TMPDIR"], "pool-flag-%d" % os.getpid())
            late = pool.apply_async(wait_for, (flag,))
            try:
                late.get(timeout=0.2)
            except TimeoutError as e:
                print("timeout", isinstance(e, TimeoutError), late.ready())
            open(flag, "w").close()
            print("late", late.get())
            os.unlink(flag)
        try:
            pool.map(sq, [1])
        except ValueError as e:
            print("closed", e)
        p2 = Pool(1)
        r = p2.map_async(add, [])
        p2.close()
        try:
            p2.apply(add, (1, 2))
        except ValueError:
            print("close refuses")
        p2.join()
        print("empty", r.get())
        try:
            Pool(0)
        except ValueError:
            print("zero refused")
        print("module", mp_mod.Pool is Pool)
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == [
        "map [0, 1, 4, 9, 16, 25, 36, 49, 64, 81] {'t'} 2 False",
        "starmap [3, 7]",
        "imap [0, 1, 4, 9, 16]",
        "imap_unordered [0, 1, 4, 9, 16]",
        "apply 5 2",
        "apply_async 11 True",
        "callback [11]",
        "error KeyError True",
        "successful False",
        "timeout True False",
        "late late",
        "closed Pool not running",
        "close refuses",
        "empty []",
        "zero refused",
        "module True",
    ], cli_describe(r)


def test_actor_concurrency_groups(server, tmp_path):
    """Round 2: concurrency groups (were refused: 'not an option of an actor'): a method
    of the "io" group runs while the default group's one call waits; the group's size
    bounds its calls; .options(concurrency_group=) sends a call to another group; an
    async actor's groups; a group the actor lacks."""
    prog = write(tmp_path, "groups.py", """\
        import asyncio
        import os
        import threading
        import ray

        @ray.remote(concurrency_groups={"io": 2, "compute": 1})
        class Service:
            def __init__(self):
                self.gate = threading.Event()
                self.lock = threading.Lock()
                self.inside = 0
                self.most = 0

            def wait_gate(self):  # the default group (max_concurrency 1)
                self.gate.wait(60)
                return "default done"

            @ray.method(concurrency_group="io")
            def open_gate(self):
                self.gate.set()
                return "opened"

            @ray.method(concurrency_group="io")
            def two_at_once(self, barrier_path):
                with self.lock:
                    self.inside += 1
                    self.most = max(self.most, self.inside)
                while self.most < 2 and not os.path.exists(barrier_path):
                    pass
                with self.lock:
                    self.inside -= 1
                return self.most

            def thread(self):
                return threading.current_thread().name

        s = Service.remote()
        blocked = s.wait_gate.remote()
        print(ray.get(s.open_gate.remote()), ray.get(blocked))
        flag = os.path.join(os.environ["TMPDIR"], "groups-%d" % os.getpid())
        print("io at once", max(ray.get([s.two_at_once.remote(flag) for _ in range(2)])))
        print("default", "weir-actor-" not in ray.get(s.thread.remote()).replace("weir-actor_", ""))
        print("options", ray.get(s.thread.options(concurrency_group="compute").remote())
              .startswith("weir-actor-compute"))
        try:
            ray.get(s.thread.options(concurrency_group="nope").remote())
        except ValueError as e:
            print("unknown group", "nope" in str(e))

        @ray.remote(concurrency_groups={"slow": 1})
        class Async:
            def __init__(self):
                self.ev = asyncio.Event()

            @ray.method(concurrency_group="slow")
            async def hold(self):
                await self.ev.wait()
                return "released"

            async def release(self):
                self.ev.set()
                return "set"

        a = Async.remote()
        held = a.hold.remote()
        print(ray.get(a.release.remote()), ray.get(held))

        class Bad:
            @ray.method(concurrency_group="gpu")
            def f(self):
                return 1
        try:
            ray.remote(concurrency_groups={"io": 1})(Bad).remote()
        except ValueError as e:
            print("bad group", "gpu" in str(e))
        try:
            ray.remote(concurrency_groups={"io": 0})(Bad)
        except ValueError:
            print("bad size")

        @ray.remote
        class Plain:
            def f(self):
                return 1
        p = Plain.remote()
        try:
            ray.get(p.f.options(concurrency_group="io").remote())
        except ValueError as e:
            print("no groups", "io" in str(e), ray.get(p.f.remote()))
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == [
        "opened default done",
        "io at once 2",
        "default True",
        "options True",
        "unknown group True",
        "set released",
        "bad group True",
        "bad size",
        "no groups True 1",
    ], cli_describe(r)


def test_is_canceled_in_actors_and_tasks(server, tmp_path):
    """Round 2: get_runtime_context().is_canceled() (was missing: AttributeError): a sync
    actor's method, which ray.cancel does not interrupt, sees its cancel and stops; False
    in a call not cancelled; RuntimeError in the program and in an async actor."""
    prog = write(tmp_path, "canceled.py", """\
        import os
        import ray

        @ray.remote
        class Worker:
            def __init__(self):
                self.stopped = False

            def spin(self, flag):
                open(flag, "w").close()
                while not ray.get_runtime_context().is_canceled():
                    pass
                self.stopped = True
                return "stopped"

            def was_stopped(self):
                return self.stopped, ray.get_runtime_context().is_canceled()

        @ray.remote
        class Async:
            async def check(self):
                try:
                    ray.get_runtime_context().is_canceled()
                except RuntimeError:
                    return "RuntimeError"

        @ray.remote
        def plain():
            return ray.get_runtime_context().is_canceled()

        for name, cls in (("Worker", Worker), ("Threaded", Worker.options(max_concurrency=2))):
            a = cls.remote()
            flag = os.path.join(os.environ["TMPDIR"], "spin-%d-%s" % (os.getpid(), name))
            ref = a.spin.remote(flag)
            while not os.path.exists(flag):
                pass
            ray.cancel(ref)
            try:
                ray.get(ref)
            except ray.exceptions.TaskCancelledError:
                print(name, "TaskCancelledError")
            print(name, ray.get(a.was_stopped.remote()))
            os.unlink(flag)
        print("task", ray.get(plain.remote()))
        print("async", ray.get(Async.remote().check.remote()))
        try:
            ray.get_runtime_context().is_canceled()
        except RuntimeError:
            print("driver RuntimeError")
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == [
        "Worker TaskCancelledError",
        "Worker (True, False)",
        "Threaded TaskCancelledError",
        "Threaded (True, False)",
        "task False",
        "async RuntimeError",
        "driver RuntimeError",
    ], cli_describe(r)


def test_node_ip_and_the_state_api(server, tmp_path):
    """Round 2: ray.util.get_node_ip_address() (missing), nodes()' NodeManagerAddress as
    that address (it was the host name), and ray.util.state's list_actors, get_actor and
    list_nodes (missing: ModuleNotFoundError) over the program's actors."""
    prog = write(tmp_path, "state.py", """\
        import ray
        from ray.util.state import get_actor, list_actors, list_nodes

        @ray.remote
        class Box:
            def ping(self):
                return ray.util.get_node_ip_address()

        @ray.remote
        def in_task():
            try:
                list_actors()
            except RuntimeError:
                return "RuntimeError"

        ip = ray.util.get_node_ip_address()
        print("ip", ip.count(".") == 3, ray.nodes()[0]["NodeManagerAddress"] == ip)
        a = Box.options(name="box").remote()
        b = Box.remote()
        print("same ip", ray.get(a.ping.remote()) == ip)
        ray.get(b.ping.remote())
        ray.kill(b)
        try:
            ray.get(b.ping.remote())
        except ray.exceptions.RayActorError:
            pass
        rows = list_actors()
        print("actors", [(r.class_name, r.name, r.state) for r in rows])
        print("ids", rows[0].actor_id == a._actor_id.hex(), rows[0]["state"],
              isinstance(rows[0].pid, int))
        print("alive", [r.name for r in list_actors(filters=[("state", "=", "ALIVE")])])
        print("get", get_actor(a._actor_id.hex()).name, get_actor("0" * 32))
        (node,) = list_nodes()
        print("node", node.node_id == ray.get_runtime_context().get_node_id(),
              node.node_ip == ip, node.state)
        print("task", ray.get(in_task.remote()))
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == [
        "ip True True",
        "same ip True",
        "actors [('Box', 'box', 'ALIVE'), ('Box', '', 'DEAD')]",
        "ids True ALIVE True",
        "alive ['box']",
        "get box None",
        "node True True ALIVE",
        "task RuntimeError",
    ], cli_describe(r)


def test_as_completed_and_map_unordered(server, tmp_path):
    """Round 2: ray.util.as_completed and ray.util.map_unordered (Ray 2.x's helpers; were
    missing): results as their calls end, a chunk at a time, refs with yield_obj_refs."""
    prog = write(tmp_path, "helpers.py", """\
        import os
        import ray

        @ray.remote
        def wait_for(path):
            while not os.path.exists(path):
                pass
            return "slow"

        @ray.remote
        def sq(x):
            return x * x

        flag = os.path.join(os.environ["TMPDIR"], "helpers-%d" % os.getpid())
        it = ray.util.as_completed([wait_for.remote(flag), sq.remote(3)], chunk_size=1)
        print("first", next(it))
        open(flag, "w").close()
        print("then", list(it))
        os.unlink(flag)
        print("map", sorted(ray.util.map_unordered(sq, range(7), backpressure_size=2,
                                                   chunk_size=2)))
        refs = list(ray.util.map_unordered(sq, [5], yield_obj_refs=True))
        print("refs", isinstance(refs[0], ray.ObjectRef), ray.get(refs))
        print("empty", list(ray.util.as_completed([])))
        try:
            ray.util.as_completed([sq.remote(1)], chunk_size=0)
        except ValueError:
            print("chunk refused")
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == [
        "first 9",
        "then ['slow']",
        "map [0, 1, 4, 9, 16, 25, 36]",
        "refs True [25]",
        "empty []",
        "chunk refused",
    ], cli_describe(r)
