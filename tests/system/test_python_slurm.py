"""The same Python code, another place: `queue=` sends remote calls (and weir.put objects,
which the server ships to the shared folder) to a real local Slurm cluster; the calls that
name no queue stay on the server's machine."""

import hashlib
import sys

import pytest

from conftest import REPO
from slurmtest import slurm_cluster  # noqa: F401 (a fixture)

sys.path.insert(0, str(REPO / "python"))
import weir  # noqa: E402

CONFIG = """\
executor: local
resources:
  vcores: 4
  memory: 4g
  gpus: 0
kill_grace_seconds: 2
slurm:
  shared_dir: %s
queues:
  train: {executor: slurm}
"""


@pytest.fixture
def routed(make_server, slurm_cluster, tmp_path):
    srv = make_server(config=CONFIG % (tmp_path / "shared"), start=False)
    srv.extra_env = dict(slurm_cluster.env)
    srv.start()
    weir.init(server=srv.url, token=srv.token, home=str(srv.home))
    yield srv
    weir._remote._at_exit()


def test_queue_sends_the_calls_to_slurm_and_nothing_else_changes(routed, slurm_cluster,
                                                                tmp_path):
    table = weir.put({"rows": list(range(1000))})

    def where(data, k):
        import os
        return k * sum(data["rows"]), os.environ.get("SLURMD_NODENAME")

    here = weir.remote(memory="256m")(where)
    there = here.options(queue="train", cpus=2)
    futures = [there.remote(table, k) for k in (1, 2)] + [here.remote(table, 3)]
    got = weir.get(futures, timeout=240)
    assert [g[0] for g in got] == [499500, 999000, 1498500], got
    assert got[0][1] in slurm_cluster.nodes and got[1][1] in slurm_cluster.nodes, got
    assert got[2][1] is None, got  # no queue: the server's own machine
    jobs = [routed.job(f.job_id) for f in futures]
    assert [j["executor"] for j in jobs] == ["slurm", "slurm", "local"], jobs
    assert [j["queue"] for j in jobs] == ["train", "train", None]
    assert all(j["name"] == "test_python_slurm.where" for j in jobs)
    # the object's archive went to the shared folder under its content hash, once
    shipped = list((tmp_path / "shared" / "artifacts").glob("*.tar"))
    ours = routed.home / "objects" / (table.sha + ".tar")
    assert [p.name for p in shipped] == [hashlib.sha256(ours.read_bytes()).hexdigest()
                                         + ".tar"], shipped
