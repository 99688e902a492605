"""A Ray program on a server that sends its jobs to Slurm (a real local cluster): its calls
and its actors run on warm workers that Slurm starts, reaching the program over its TCP
channel (docs/internals/calls.md, "The TCP channel"; bound to loopback here, where the test
cluster's nodes are).  The right values from Slurm's nodes in few worker jobs and no job a
call; an actor's state; a nested call and an actor handle used in a task (the task's link
over TCP too); a cancel; the key never in clear in a job's spec as the API shows it, in a
log, or in the calls' environment; a connection without the key dropped; no worker left
after the program.  And the server killed with kill -9 while calls and an actor's methods
run on Slurm (test_chaos_ray.py's rounds): every result, each call once."""

import json
import re
import textwrap
import uuid

from conftest import cli_describe, wait_no_procs
from test_chaos_ray import kill_server, run_rounds
from slurmtest import slurm_cluster  # noqa: F401 (a fixture)
from slurmtest import slurm_server_of
from test_ray_programs import jobs
from test_ray_warm import weir_run

CONFIG = """\
executor: slurm
kill_grace_seconds: 2
"""

TCP = {"WEIR_WARM_LISTEN": "127.0.0.1"}

PROGRAM = """\
import os, socket, sys, time
import ray

# in every worker's and actor's environment: the test finds this program's processes by it
ray.init(runtime_env={"env_vars": {"RAY_SLURM_MARK": sys.argv[2]}})

@ray.remote
def f(x):
    return x * x, os.environ.get("SLURMD_NODENAME"), os.environ.get("WEIR_WARM_KEY")

@ray.remote
class Counter:
    def __init__(self):
        self.n = 0

    def incr(self, by):
        self.n += by
        return self.n

@ray.remote
def nested(counter, k):
    # a nested call and an actor's method, from a worker on a Slurm node: its link to
    # the program goes over TCP too
    return ray.get(f.remote(k))[0] + ray.get(counter.incr.remote(100))

@ray.remote
def slow(mark):
    open(mark, "w").close()
    while True:
        time.sleep(0.01)

got = ray.get([f.remote(i) for i in range(40)])
assert [g[0] for g in got] == [i * i for i in range(40)], got
print("nodes", sorted({g[1] for g in got}))
print("key in a call's environment", any(g[2] for g in got))
c = Counter.remote()
print("counter", ray.get([c.incr.remote(i) for i in range(4)]))
print("nested", ray.get(nested.remote(c, 5)))
mark = os.path.join(sys.argv[1], "slow")
ref = slow.remote(mark)
while not os.path.exists(mark):
    time.sleep(0.01)
ray.cancel(ref)
try:
    ray.get(ref, timeout=120)
except ray.exceptions.TaskCancelledError:
    print("cancelled")
print("sync", ray.get(f.remote(9))[0])
"""


def test_calls_and_actors_run_warm_on_slurm_over_tcp(make_server, slurm_cluster, tmp_path):
    srv = slurm_server_of(make_server, slurm_cluster, CONFIG)
    prog = tmp_path / "on_slurm.py"
    prog.write_text(textwrap.dedent(PROGRAM))
    mark = uuid.uuid4().hex
    r = weir_run(srv, prog, tmp_path, mark, env=dict(TCP, WEIR_WARM_WORKERS="2"), timeout=300)
    assert r.returncode == 0, cli_describe(r)
    out = r.stdout.splitlines()
    nodes = eval(out[0][len("nodes "):])
    assert nodes and set(nodes) <= set(slurm_cluster.nodes), cli_describe(r)
    assert out[1:] == ["key in a call's environment False", "counter [0, 1, 3, 6]",
                       "nested 131", "cancelled", "sync 81"], cli_describe(r)
    all_jobs = [srv.job(j["id"]) for j in jobs(srv)]
    assert not [j for j in all_jobs if j["name"] in ("f", "nested", "slow")], \
        "a call became a job"
    workers = [j for j in all_jobs if j["name"] == "warm-worker"]
    assert 1 <= len(workers) <= 8, workers
    assert [j for j in all_jobs if j["name"] == "Counter"], all_jobs
    assert wait_no_procs(marker="RAY_SLURM_MARK=" + mark, timeout=60) == {}
    for j in workers + [j for j in all_jobs if j["name"] == "Counter"]:
        j = srv.wait_job(j["id"], timeout=120)
        assert j["executor"] == "slurm", j
        env = j["spec"]["env"]
        # the key: *** in the spec as the API shows it, and in clear in no log
        assert env["WEIR_WARM_KEY"] == "***", env
        assert not re.search(r"[0-9a-f]{64}", json.dumps(j)), j
        assert env["WEIR_WARM_ADDR"].startswith("127.0.0.1:"), env
        log = srv.log(j["id"])
        assert "reached the program over TCP at 127.0.0.1:" in log, log
        assert not re.search(r"[0-9a-f]{64}", log), log
    assert any("weir-call" in srv.log(j["id"]) for j in workers)


def test_the_tcp_port_drops_a_connection_without_the_key(make_server, slurm_cluster,
                                                         tmp_path):
    """A peer that reaches the port but does not know the key is dropped: with a wrong key,
    and with no hello at all past a few KiB; the program's calls go on."""
    srv = slurm_server_of(make_server, slurm_cluster, CONFIG)
    prog = tmp_path / "probe.py"
    prog.write_text(textwrap.dedent("""\
        import os, socket, struct, sys
        import ray

        @ray.remote
        def f(x):
            return x + 1

        print(ray.get(f.remote(1)))
        from weir.remote import warm
        from weir.worker import warm as w
        pool = next(iter(warm._pools.values()))
        host, port = pool.tcp[1], pool.tcp[2]

        def dropped(data):
            s = socket.create_connection((host, port), timeout=30)
            try:
                s.sendall(data)
                s.shutdown(socket.SHUT_WR)
                return s.recv(100) == b""  # closed without an answer
            finally:
                s.close()

        bad = w.encode(w.HELLO, 0, w.hello_body(b"x" * 32, 1, "1"))
        print("wrong key dropped", dropped(bad))
        link = w.encode(w.LINK, 0, b"y" * 32 + b"1")
        print("wrong link key dropped", dropped(link))
        big = struct.pack("<IBQ", 1 << 29, w.HELLO, 0) + b"z" * 8192
        print("no hello dropped", dropped(big))
        print(ray.get(f.remote(2)))
        """))
    r = weir_run(srv, prog, env=TCP, timeout=300)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == ["2", "wrong key dropped True", "wrong link key dropped True",
                                     "no hello dropped True", "3"], cli_describe(r)


def test_calls_on_slurm_survive_the_servers_kill_9(make_server, slurm_cluster, tmp_path):
    run_rounds(lambda: slurm_server_of(make_server, slurm_cluster, CONFIG), tmp_path,
               kill_server, "ray calls on Slurm, kill_server", env=TCP)
