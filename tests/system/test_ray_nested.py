"""Nested tasks and objects in Ray programs (docs/ray.md "Nested calls", "Objects in shared
memory"; docs/internals/calls.md), with `weir run` against a real server of 2 vcores: a
task's .remote() and actor creation go through the program (no token in the task); a tree
of calls with num_cpus=1 that waits in ray.get at every level completes on 2 cores (a
waiting worker takes the children); a grandchild's failure reaches the program; refs nested
in lists and dicts, returned refs, num_returns; a numpy array put once and read by four
tasks from one shared segment, freed after del, a put spilled past the store's size;
runtime_env, the runtime context, nodes(), Queue and what is refused (a STRICT_SPREAD
group of two bundles on one node); cancel(recursive)."""


from conftest import wait_no_procs
from test_ray_programs import cli_describe, jobs, write
from test_ray_warm import WORKER_MARK, weir_run

TWO_CORES = """\
resources:
  vcores: 2
  memory: 4g
kill_grace_seconds: 2
"""



def run_two(make_server, prog, **kw):
    srv = make_server(config=TWO_CORES)
    # the pool's cap is the server's cores, whatever this machine has
    r = weir_run(srv, prog, env={"WEIR_WARM_WORKERS": "2"}, **kw)
    return srv, r


def test_a_tree_of_tasks_on_two_cores_does_not_deadlock(make_server, tmp_path):
    prog = write(tmp_path, "fib.py", """\
        import os
        import ray

        @ray.remote(num_cpus=1)
        def fib(n):
            assert "WEIR_TOKEN" not in os.environ
            if n < 2:
                return n
            a, b = fib.remote(n - 1), fib.remote(n - 2)
            return ray.get(a) + ray.get(b)

        @ray.remote(num_cpus=1)
        def tree(depth):
            if depth == 0:
                return 1
            return 1 + sum(ray.get([tree.remote(depth - 1) for _ in range(2)]))

        print("fib", ray.get(fib.remote(7)))
        print("tree", ray.get(tree.remote(4)))
        """)
    srv, r = run_two(make_server, prog, timeout=240)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == ["fib 13", "tree 31"], cli_describe(r)
    # every call ran on a warm worker of the program: never more than the 2 cores' jobs
    names = [j["name"] for j in jobs(srv)]
    assert set(names) == {"warm-worker"}, names
    assert wait_no_procs(marker=WORKER_MARK, timeout=30) == {}


def test_a_task_makes_an_actor_and_a_grandchild_failure_reaches_the_program(make_server,
                                                                             tmp_path):
    prog = write(tmp_path, "kids.py", """\
        import ray

        @ray.remote
        class Acc:
            def __init__(self):
                self.n = 0

            def add(self, k):
                self.n += k
                return self.n

        @ray.remote
        def grandchild(k):
            if k == 3:
                raise KeyError("grandchild %d" % k)
            return k

        @ray.remote
        def child(k):
            return ray.get(grandchild.remote(k))

        @ray.remote
        def parent():
            acc = Acc.remote()
            ray.get([acc.add.remote(k) for k in range(5)])
            total = ray.get(acc.add.remote(0))
            # a ref of a task's own call passed to another of its calls: its value
            doubled = ray.get(child.remote(child.remote(2)))
            return total, doubled, acc

        total, doubled, acc = ray.get(parent.remote())
        print("total", total, "doubled", doubled, "acc", ray.get(acc.add.remote(1)))
        try:
            ray.get(child.remote(3))
        except KeyError as e:
            print("caught", isinstance(e, ray.exceptions.RayTaskError), "grandchild 3" in str(e))
        """)
    srv, r = run_two(make_server, prog, timeout=240)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == ["total 10 doubled 2 acc 11", "caught True True"], \
        cli_describe(r)
    assert wait_no_procs(marker=WORKER_MARK, timeout=30) == {}


def test_refs_nested_in_arguments_returned_refs_and_num_returns(make_server, tmp_path):
    prog = write(tmp_path, "refs.py", """\
        import ray

        @ray.remote
        def square(x):
            return x * x

        @ray.remote
        def total(top, box):
            # a top-level ref is its value; refs in a list or a dict stay refs
            assert not isinstance(top, ray.ObjectRef), top
            assert all(isinstance(r, ray.ObjectRef) for r in box["refs"]), box
            return top + sum(ray.get(box["refs"])) + ray.get(box["one"])

        @ray.remote
        def make():
            # a ref of the task's own call, returned: the program gets the value with get
            return square.remote(7)

        @ray.remote
        def forward(refs):
            return [ray.get(r) + 1 for r in refs]

        @ray.remote(num_returns=3)
        def three(x):
            return x, x + 1, x + 2

        @ray.remote(num_returns="dynamic")
        def gen_dynamic(n):
            for i in range(n):
                yield i * 10

        @ray.remote(num_returns="streaming")
        def gen_stream(n):
            for i in range(n):
                yield "item-%d" % i

        refs = [square.remote(i) for i in range(4)]
        print("total", ray.get(total.remote(square.remote(10), {"refs": refs,
                                                                 "one": ray.put(1000)})))
        inner = ray.get(make.remote())
        print("returned", isinstance(inner, ray.ObjectRef), ray.get(inner))
        print("forward", ray.get(forward.remote([square.remote(3), square.remote(5)])))
        a, b, c = three.remote(5)
        print("three", ray.get([a, b, c]), ray.get(three.options(num_returns=1).remote(1)))
        gen = ray.get(gen_dynamic.remote(3))
        print("dynamic", [ray.get(r) for r in gen])
        print("streaming", [ray.get(r) for r in gen_stream.remote(2)])

        @ray.remote
        def nested_three():
            x, y, z = three.remote(1)
            return ray.get([z, y, x])

        print("in a task", ray.get(nested_three.remote()))
        """)
    srv, r = run_two(make_server, prog, timeout=240)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == [
        "total 1114", "returned True 49", "forward [10, 26]", "three [5, 6, 7] (1, 2, 3)",
        "dynamic [0, 10, 20]", "streaming ['item-0', 'item-1']", "in a task [3, 2, 1]"], \
        cli_describe(r)
    assert wait_no_procs(marker=WORKER_MARK, timeout=30) == {}


def numpy_python():
    """An interpreter with numpy and cloudpickle (the programs below use numpy), or None."""
    import subprocess
    for py in ("/usr/bin/python3",):
        r = subprocess.run([py, "-c", "import numpy, cloudpickle"], capture_output=True)
        if r.returncode == 0:
            return py
    return None


def test_a_put_array_is_read_by_four_tasks_from_one_shared_segment(make_server, tmp_path):
    import pytest
    py = numpy_python()
    if py is None:
        pytest.skip("no interpreter with numpy")
    prog = write(tmp_path, "shared.py", """\
        import gc
        import os
        import numpy as np
        import ray

        arr = np.arange(25_000_000, dtype=np.float64)  # 200 MB
        ref = ray.put(arr)
        del arr
        path = ref.path
        print("one segment", os.path.getsize(path) >= 200_000_000,
              oct(os.stat(path).st_mode & 0o777))

        @ray.remote
        def look(a):
            # where the array's data lies: a mapping of the segment, not a copy
            addr = a.ctypes.data
            with open("/proc/self/maps") as f:
                for line in f:
                    lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                    if lo <= addr < hi:
                        return line.split()[-1], a.flags.writeable, float(a[-1]), os.getpid()
            return None, a.flags.writeable, float(a[-1]), os.getpid()

        got = ray.get([look.remote(ref) for _ in range(4)])
        print("mapped", all(g[0] == path for g in got), "writeable", any(g[1] for g in got),
              "last", {g[2] for g in got})
        nested = ray.get(look.remote(ref))
        print("again", nested[0] == path)

        @ray.remote
        def put_in_task():
            return [ray.put(np.ones(1000))]

        (inner,) = ray.get(put_in_task.remote())
        print("task put", float(ray.get(inner).sum()), inner.path != path)
        del ref, got, nested
        gc.collect()
        print("freed", not os.path.exists(path))
        """)
    srv = make_server(config=TWO_CORES)
    r = weir_run(srv, prog, env={"WEIR_WARM_WORKERS": "2", "WEIR_RUN_PYTHON": py},
                 timeout=240)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == [
        "one segment True 0o600", "mapped True writeable False last {24999999.0}",
        "again True", "task put 1000.0 True", "freed True"], cli_describe(r)
    assert wait_no_procs(marker=WORKER_MARK, timeout=30) == {}


def test_past_the_store_size_a_put_spills_to_the_object_folder(make_server, tmp_path):
    prog = write(tmp_path, "spill.py", """\
        import ray

        ray.init(object_store_memory=1 << 20)
        small = ray.put(b"x" * 1000)
        big = ray.put(b"y" * (2 << 20))
        print("small shared", hasattr(small, "path"), "big spilled", not hasattr(big, "path"))

        @ray.remote
        def size(a, b):
            return len(a), len(b)

        print("read", ray.get(size.remote(small, big)))
        """)
    srv, r = run_two(make_server, prog, timeout=240)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == ["small shared True big spilled True",
                                     "read (1000, 2097152)"], cli_describe(r)


def test_runtime_env_context_nodes_queue_and_what_is_refused(make_server, tmp_path):
    lib = tmp_path / "libs" / "helperpkg"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text("WHO = 'helperpkg'\n")
    wd = tmp_path / "wd"
    wd.mkdir()
    (wd / "data.txt").write_text("from the working dir\n")
    prog = write(tmp_path, "env.py", """\
        import os
        import sys
        import ray
        from ray.util.queue import Queue, Empty
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = os.path.dirname(os.path.abspath(__file__))
        renv = {"working_dir": os.path.join(here, "wd"),
                "py_modules": [os.path.join(here, "libs", "helperpkg")],
                "env_vars": {"GREETING": "hi"}}

        @ray.remote(runtime_env=renv)
        def look():
            import helperpkg
            with open("data.txt") as f:
                return f.read().strip(), helperpkg.WHO, os.environ["GREETING"]

        print("env", ray.get(look.remote()))

        @ray.remote
        def ids():
            c = ray.get_runtime_context()
            return c.get_job_id(), c.get_task_id(), c.get_node_id()

        job, task, node = ray.get(ids.remote())
        ctx = ray.get_runtime_context()
        print("ids", job == ctx.get_job_id(), bool(task), node == ctx.get_node_id(),
              ctx.get_task_id())
        print("nodes", len(ray.nodes()), ray.nodes()[0]["Resources"]["CPU"])

        strat = NodeAffinitySchedulingStrategy(ctx.get_node_id(), soft=True)
        print("strategy", ray.get(ids.options(scheduling_strategy=strat).remote())[0] == job)

        q = Queue(maxsize=10)

        @ray.remote
        def produce(q, n):
            for i in range(n):
                q.put(i)
            return n

        ray.get(produce.remote(q, 5))
        print("queue", [q.get(timeout=30) for _ in range(5)], q.empty())
        try:
            q.get(block=False)
        except Empty:
            print("empty raised")

        for bad in ({"pip": ["requests"]}, {"conda": {"dependencies": ["x"]}}):
            try:
                ray.remote(runtime_env=bad)(look)
            except NotImplementedError as e:
                print("refused", "weir does not" in str(e))
        try:
            ray.util.placement_group([{"CPU": 1}, {"CPU": 1}], strategy="STRICT_SPREAD")
        except ValueError as e:
            print("placement group refused", "could never be placed" in str(e))
        """)
    srv, r = run_two(make_server, prog, timeout=240)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == [
        "env ('from the working dir', 'helperpkg', 'hi')", "ids True True True None",
        "nodes 1 2.0", "strategy True", "queue [0, 1, 2, 3, 4] True", "empty raised",
        "refused True", "refused True", "placement group refused True"], cli_describe(r)
    assert wait_no_procs(marker=WORKER_MARK, timeout=30) == {}


def test_cancel_recursive_stops_the_calls_a_call_made(make_server, tmp_path):
    prog = write(tmp_path, "cancel.py", """\
        import os
        import sys
        import time
        import ray

        here = os.path.dirname(os.path.abspath(__file__))
        started, stopped = os.path.join(here, "started"), os.path.join(here, "stopped")

        @ray.remote
        def child():
            open(started, "w").close()
            try:
                time.sleep(300)
            except KeyboardInterrupt:
                open(stopped, "w").close()
                raise

        @ray.remote
        def parent():
            return ray.get(child.remote())

        p = parent.remote()
        while not os.path.exists(started):  # the child runs
            time.sleep(0.05)
        ray.cancel(p, recursive=True)
        try:
            ray.get(p, timeout=120)
        except ray.exceptions.TaskCancelledError:
            print("parent cancelled")
        while not os.path.exists(stopped):  # the child was interrupted
            time.sleep(0.05)
        print("child stopped")
        """)
    srv, r = run_two(make_server, prog, timeout=240)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == ["parent cancelled", "child stopped"], cli_describe(r)
    assert wait_no_procs(marker=WORKER_MARK, timeout=30) == {}
