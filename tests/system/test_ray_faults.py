"""Failures of issue 28's list not covered elsewhere, on warm workers: an argument that cannot
be pickled (a TypeError at .remote(), as Ray's "Could not serialize the argument", nothing
sent, the program and its workers go on), also to an actor's method; a value that cannot be
pickled back (a RayTaskError naming it; the worker lives on).  The others: a call that
raises, a worker killed with kill -9, cancels, out of memory, a program killed mid-call
(test_ray_warm.py); an actor killed mid-call (test_ray_actors.py); the server's and the
agent's kill -9 (test_chaos_ray.py)."""

import textwrap
import uuid

from conftest import cli_describe, wait_no_procs
from test_ray_warm import weir_run


def test_an_argument_or_a_value_that_cannot_be_pickled(server, tmp_path):
    prog = tmp_path / "unpicklable.py"
    prog.write_text(textwrap.dedent("""\
        import sys, threading
        import ray

        # in every worker's and actor's environment: the test finds its processes by it
        ray.init(runtime_env={"env_vars": {"RAY_FAULTS_MARK": sys.argv[1]}})

        @ray.remote
        def f(x):
            return x

        @ray.remote
        def lock_back():
            return threading.Lock()

        @ray.remote
        class A:
            def echo(self, x):
                return x

        print(ray.get(f.remote(1)))
        try:
            f.remote(threading.Lock())
        except TypeError as e:
            print("TypeError", "cannot be pickled" in str(e))
        a = A.remote()
        try:
            a.echo.remote(threading.Lock())
        except TypeError as e:
            print("actor TypeError", "cannot be pickled" in str(e))
        try:
            ray.get(lock_back.remote())
        except ray.exceptions.RayTaskError as e:
            print("value", "cannot be pickled" in str(e))
        print(ray.get(f.remote(2)), ray.get(a.echo.remote(3)))
        """))
    mark = uuid.uuid4().hex
    r = weir_run(server, prog, mark)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == ["1", "TypeError True", "actor TypeError True",
                                     "value True", "2 3"], cli_describe(r)
    assert wait_no_procs(marker="RAY_FAULTS_MARK=" + mark, timeout=30) == {}
