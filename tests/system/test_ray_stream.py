"""Streaming generators and results in shared memory in Ray programs (docs/ray.md
"Generators" and "Objects in shared memory"; docs/internals/calls.md "Streaming generators",
"Results in shared memory"), with `weir run` against a real server of 2 vcores: a
generator's items reach the caller one by one while the worker computes the next (the
generator waits for a file the program makes after it saw the first item), ray.wait on the
generator, an exception raised mid-stream delivered at that point, ray.cancel stopping the
worker's generator; the same on the job path (WEIR_RAY_WARM=0: the items through files); a large
result mapped from one segment by the program and its tasks, freed when its refs are
dropped, spilled past the store's size; a worker killed mid-write leaving nothing behind."""


import pytest

from conftest import find_procs, wait_for
from test_ray_nested import TWO_CORES, numpy_python
from test_ray_programs import cli_describe, write
from test_ray_warm import WORKER_MARK, weir_run


def no_workers_of(tmp_path):
    """Waits until no warm worker of this test's server is left (other servers' workers on
    the machine are not this test's)."""
    def none_left():
        left = {pid: cmd for pid, cmd in find_procs(marker=WORKER_MARK).items()
                if str(tmp_path) in _environ(pid)}
        return not left
    wait_for(none_left, 30, "the warm workers of %s to leave" % tmp_path)


def _environ(pid):
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""



STREAM = """\
    import os
    import sys
    import time
    import ray

    flag = sys.argv[1]

    @ray.remote
    def gen(flag):
        # a generator function streams by default (Ray 2.8+)
        yield "one"
        while not os.path.exists(flag):  # made by the program once it saw "one"
            time.sleep(0.01)
        yield "two"
        raise ValueError("mid-stream")

    g = gen.remote(flag)
    print("type", type(g).__name__)
    ready, _ = ray.wait([g], timeout=60)
    print("wait", len(ready))
    print("first", ray.get(next(g)))
    with open(flag, "w"):
        pass
    print("second", ray.get(next(g)))
    try:
        ray.get(next(g))
    except ValueError as e:
        print("raised", "mid-stream" in str(e))
    try:
        next(g)
    except StopIteration:
        print("end")

    @ray.remote(num_returns="streaming")
    def count(n):
        for i in range(n):
            yield i

    c = count.remote(4)
    print("items", [ray.get(r) for r in c], ray.get(c.completed()), c.is_finished())
    dyn = ray.get(count.options(num_returns="dynamic").remote(3))
    print("dynamic", [ray.get(r) for r in dyn])
    """


def test_a_generators_items_reach_the_caller_as_they_are_yielded(make_server, tmp_path):
    prog = write(tmp_path, "stream.py", STREAM)
    srv = make_server(config=TWO_CORES)
    r = weir_run(srv, prog, tmp_path / "flag", env={"WEIR_WARM_WORKERS": "2"}, timeout=240)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == [
        "type ObjectRefGenerator", "wait 1", "first one", "second two", "raised True", "end",
        "items [0, 1, 2, 3] None True", "dynamic [0, 1, 2]"], cli_describe(r)
    no_workers_of(tmp_path)


def test_on_the_job_path_the_items_stream_too(make_server, tmp_path):
    prog = write(tmp_path, "cold.py", STREAM)
    srv = make_server(config=TWO_CORES)
    r = weir_run(srv, prog, tmp_path / "flag", env={"WEIR_RAY_WARM": "0"}, timeout=240)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == [
        "type ObjectRefGenerator", "wait 1", "first one", "second two", "raised True", "end",
        "items [0, 1, 2, 3] None True", "dynamic [0, 1, 2]"], cli_describe(r)
    # each item's file is removed once read
    assert not list((srv.home / "objects" / "results").glob("*.item.*"))


def test_cancel_stops_the_workers_generator(make_server, tmp_path):
    prog = write(tmp_path, "cancel.py", """\
        import os
        import sys
        import time
        import ray

        marker = sys.argv[1]

        @ray.remote
        def gen(marker):
            try:
                yield 1
                while True:  # never ends by itself
                    time.sleep(0.01)
            finally:
                with open(marker, "w") as f:
                    f.write("closed")

        g = gen.remote(marker)
        print("first", ray.get(next(g)))
        ray.cancel(g)
        try:
            ray.get(next(g))
        except ray.exceptions.TaskCancelledError:
            print("cancelled")
        print("generator closed", open(marker).read())

        @ray.remote
        def after():
            return "the worker runs on"

        print(ray.get(after.remote()))
        """)
    srv = make_server(config=TWO_CORES)
    r = weir_run(srv, prog, tmp_path / "marker", env={"WEIR_WARM_WORKERS": "2"}, timeout=240)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == ["first 1", "cancelled", "generator closed closed",
                                     "the worker runs on"], cli_describe(r)


SHARED = """\
    import gc
    import os
    import numpy as np
    import ray

    def where(a):
        # the file that the array's data lies in (a mapping), or None for a copy
        addr = a.ctypes.data
        with open("/proc/self/maps") as f:
            for line in f:
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                if lo <= addr < hi:
                    return line.split()[-1] if line.split()[-1].startswith("/") else None
        return None

    @ray.remote
    def make(n):
        return np.arange(n, dtype=np.float64)

    @ray.remote
    def look(a):
        return where(a), a.flags.writeable, float(a[-1])

    @ray.remote
    def stream(n):
        for i in range(2):
            yield np.full(n, i, dtype=np.float64)

    ref = make.remote(4_000_000)  # 32 MB
    arr = ray.get(ref)
    path = where(arr)
    print("program", path.startswith("/dev/shm/weir-obj-"), "writeable", arr.flags.writeable,
          "last", float(arr[-1]))
    got = ray.get([look.remote(ref) for _ in range(2)])
    print("tasks", all(g[0] == path for g in got), "writeable", any(g[1] for g in got))

    @ray.remote
    def look_nested(refs):  # a ref inside a list: fetched from the program, still mapped
        return where(ray.get(refs[0]))

    @ray.remote
    def child():  # a task's own call's large result
        return where(ray.get(make.remote(1_000_000)))

    # (a ref passed inside a structure is held until the program ends: another one here)
    nref = make.remote(2_000_000)
    print("nested", ray.get(look_nested.remote([nref])) == where(ray.get(nref)),
          ray.get(child.remote()).startswith("/dev/shm/weir-obj-"))
    refs = list(stream.remote(1_000_000))  # an item's segment lives while its ref does
    items = [ray.get(r) for r in refs]
    ipaths = [where(a) for a in items]
    print("items", [float(a.sum()) for a in items],
          all(p.startswith("/dev/shm/weir-obj-") for p in ipaths))
    del refs
    gc.collect()
    print("items freed", not any(os.path.exists(p) for p in ipaths))
    small = ray.get(make.remote(10))
    print("small inline", where(small) is None)
    del ref, arr, got
    gc.collect()
    print("freed", not os.path.exists(path))
    """


def test_a_large_result_is_mapped_from_one_segment_and_freed(make_server, tmp_path):
    py = numpy_python()
    if py is None:
        pytest.skip("no interpreter with numpy")
    prog = write(tmp_path, "shared.py", SHARED)
    srv = make_server(config=TWO_CORES)
    r = weir_run(srv, prog, env={"WEIR_WARM_WORKERS": "2", "WEIR_RUN_PYTHON": py},
                 timeout=240)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == [
        "program True writeable False last 3999999.0", "tasks True writeable False",
        "nested True True",
        "items [0.0, 1000000.0] True", "items freed True", "small inline True",
        "freed True"], cli_describe(r)
    no_workers_of(tmp_path)


def test_past_the_store_size_a_result_spills_to_the_object_folder(make_server, tmp_path):
    py = numpy_python()
    if py is None:
        pytest.skip("no interpreter with numpy")
    prog = write(tmp_path, "spill.py", """\
        import gc
        import os
        import numpy as np
        import ray

        def weir_tag():  # the program's tag, which names its segments (remote/shm.py)
            from weir.compat.ray import api
            from weir.remote import session, warm
            api._ensure()  # connected, as a call would connect it
            return warm.pool_of(session._get_session()).tag

        ray.init(object_store_memory=1 << 20)

        @ray.remote
        def make(n):
            return np.ones(n, dtype=np.uint8)

        ref = make.remote(4 << 20)
        arr = ray.get(ref)
        path = ref._shm.path
        print("spilled", not path.startswith("/dev/shm/"), "sum", int(arr.sum()))
        print("no segment", not [n for n in os.listdir("/dev/shm")
                                 if n.startswith("weir-obj-" + weir_tag())])
        del ref, arr
        gc.collect()
        print("freed", not os.path.exists(path))
        """)
    srv = make_server(config=TWO_CORES)
    r = weir_run(srv, prog, env={"WEIR_WARM_WORKERS": "2", "WEIR_RUN_PYTHON": py},
                 timeout=240)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == ["spilled True sum 4194304", "no segment True",
                                     "freed True"], cli_describe(r)


def test_a_worker_killed_mid_write_leaves_no_segment(make_server, tmp_path):
    py = numpy_python()
    if py is None:
        pytest.skip("no interpreter with numpy")
    prog = write(tmp_path, "torn.py", """\
        import os
        import signal
        import sys
        import threading
        import numpy as np
        import ray

        def weir_tag():  # the program's tag, which names its segments (remote/shm.py)
            from weir.compat.ray import api
            from weir.remote import session, warm
            api._ensure()  # connected, as a call would connect it
            return warm.pool_of(session._get_session()).tag

        pidfile = sys.argv[1]

        @ray.remote(max_retries=0)
        def big(pidfile):
            with open(pidfile + ".tmp", "w") as f:
                f.write(str(os.getpid()))
            os.rename(pidfile + ".tmp", pidfile)
            return np.ones(1 << 30, dtype=np.uint8)  # 1 GiB: its write takes a while

        tag = weir_tag()
        ref = big.remote(pidfile)

        def ours():
            return [n for n in os.listdir("/dev/shm") if n.startswith("weir-obj-%s-" % tag)]

        # the worker is killed once its segment's temporary file is there
        while not [n for n in ours() if n.endswith(".tmp")]:
            if ref.done():
                break
        while not os.path.exists(pidfile):
            pass
        os.kill(int(open(pidfile).read()), signal.SIGKILL)
        try:
            ray.get(ref)
            print("not killed in time")
        except ray.exceptions.WorkerCrashedError:
            print("crashed")
        print("left", ours())
        """)
    srv = make_server(config=TWO_CORES)
    r = weir_run(srv, prog, tmp_path / "pid", env={"WEIR_WARM_WORKERS": "2",
                                                   "WEIR_RUN_PYTHON": py}, timeout=240)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == ["crashed", "left []"], cli_describe(r)


def test_an_actors_generator_methods_stream_sync_and_async(make_server, tmp_path):
    prog = write(tmp_path, "actor.py", """\
        import asyncio
        import os
        import sys
        import time
        import ray

        flag = sys.argv[1]

        @ray.remote
        class Source:
            def __init__(self):
                self.n = 0

            def gen(self, flag):  # a generator method streams (Ray 2.8+)
                yield "a"
                while not os.path.exists(flag):
                    time.sleep(0.01)
                yield "b"

            @ray.method(num_returns="streaming")
            def fail(self):
                yield 1
                raise KeyError("in the actor")

            def count(self):
                self.n += 1
                return self.n

        @ray.remote
        class AsyncSource:
            async def agen(self, n):
                for i in range(n):
                    await asyncio.sleep(0)
                    yield i * 2

            async def ping(self):
                return "pong"

        s = Source.remote()
        g = s.gen.remote(flag)
        print("actor first", ray.get(next(g)))
        with open(flag, "w"):
            pass
        print("actor second", ray.get(next(g)), ray.get(s.count.remote()))
        f = s.fail.remote()
        print("fail first", ray.get(next(f)))
        try:
            ray.get(next(f))
        except KeyError:
            print("fail raised")
        ray.kill(s)  # its core, for the actor and the task below (2 cores)
        a = AsyncSource.remote()
        print("async", [ray.get(r) for r in a.agen.remote(3)], ray.get(a.ping.remote()))

        @ray.remote
        def through_a_task(src):
            return [ray.get(r) for r in src.agen.remote(2)]

        print("in a task", ray.get(through_a_task.remote(a)))
        """)
    srv = make_server(config=TWO_CORES)
    r = weir_run(srv, prog, tmp_path / "flag", env={"WEIR_WARM_WORKERS": "2"}, timeout=240)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == [
        "actor first a", "actor second b 1", "fail first 1", "fail raised",
        "async [0, 2, 4] pong", "in a task [0, 2]"], cli_describe(r)
    no_workers_of(tmp_path)
