"""A real local Slurm cluster for system tests: tests/slurm/start.sh in a temporary directory.

A test module uses it with `from slurmtest import slurm_cluster` and a test argument named
`slurm_cluster`.  The fixture is module-scoped: one cluster (2 nodes, fake GPUs, munge of its
own, free ports) per module, stopped at the module's end by tests/slurm/stop.sh, which cancels
its jobs and stops exactly the daemons it started, even when a test failed.  It yields a
`SlurmCluster`: `env` (SLURM_CONF, to add to a command's environment), `nodes`, `run(cmd)`.

The Slurm packages are not optional: `make check` installs them (tests/install-deps.sh), so a
missing one fails the module.  Not being root skips it: slurmd and munged run as root here.
docs/internals/slurm_tests.md describes the cluster.
"""

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
START = REPO / "tests" / "slurm" / "start.sh"
STOP = REPO / "tests" / "slurm" / "stop.sh"


class SlurmCluster:
    """One cluster started by tests/slurm/start.sh in `dir`."""

    def __init__(self, dir, nodes=2, gpus=2, options=()):
        self.dir = Path(dir)
        self.options = list(options)  # more of start.sh's options, e.g. ["--max-jobs", "1"]
        self.want_nodes = nodes
        self.gpus = gpus
        self.env = {}
        self.nodes = []
        self.start_seconds = None

    # -- life ------------------------------------------------------------------------------
    def start(self, timeout=60):
        t0 = time.monotonic()
        r = subprocess.run(["bash", str(START), "--nodes", str(self.want_nodes), "--gpus",
                            str(self.gpus)] + self.options + [str(self.dir)],
                           capture_output=True, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)
        self.start_seconds = time.monotonic() - t0
        if r.returncode != 0:
            raise RuntimeError("tests/slurm/start.sh failed (exit %s):\n%s\n%s"
                               % (r.returncode, r.stdout[-4000:], r.stderr[-8000:]))
        for line in r.stdout.splitlines():
            if line.startswith("export ") and "=" in line:
                name, value = line[len("export "):].split("=", 1)
                self.env[name] = value
        if "SLURM_CONF" not in self.env:
            raise RuntimeError("tests/slurm/start.sh printed no SLURM_CONF:\n" + r.stdout)
        self.nodes = sorted(self.node_states())
        return self

    def stop(self, timeout=60):
        r = subprocess.run(["bash", str(STOP), str(self.dir)], capture_output=True, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)
        return r.returncode, r.stderr

    # -- commands --------------------------------------------------------------------------
    def full_env(self, extra=None):
        """This process's environment without any SLURM_ variable of an enclosing job,
        plus the cluster's, plus `extra`."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        env.update(self.env)
        env.update(extra or {})
        return env

    def run(self, cmd, check=True, timeout=60, env=None, **kw):
        """Runs a command (a list, or a string for the shell) against this cluster; returns
        the CompletedProcess (text).  check: fail the test, with the output, on a non-zero
        exit."""
        r = subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=True, text=True,
                           timeout=timeout, env=self.full_env(env), stdin=subprocess.DEVNULL,
                           **kw)
        if check and r.returncode != 0:
            pytest.fail("%s exited %s\n--- stdout\n%s\n--- stderr\n%s\n%s"
                        % (cmd, r.returncode, r.stdout[-4000:], r.stderr[-4000:],
                           self.log_tails()))
        return r

    def node_states(self):
        """{node name: state} as sinfo shows them ("idle", "mixed", "allocated", ...)."""
        out = self.run(["sinfo", "-h", "-N", "-o", "%N %T"]).stdout
        return dict(line.split(None, 1) for line in out.splitlines() if line.strip())

    def job_state(self, job_id):
        """The job's state from `scontrol show job` (e.g. RUNNING, COMPLETED), or None once
        slurmctld has forgotten it."""
        r = self.run(["scontrol", "-o", "show", "job", str(job_id)], check=False)
        for word in r.stdout.split():
            if word.startswith("JobState="):
                return word.split("=", 1)[1]
        return None

    def stepds(self, job_id=None):
        """{pid: title} of this cluster's live slurmstepd processes (of job `job_id` if
        given).  They run in the cluster's directory, inherited from slurmd."""
        found = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            base = "/proc/" + name
            try:
                with open(base + "/comm") as f:
                    if f.read().strip() != "slurmstepd":
                        continue
                if os.readlink(base + "/cwd") != str(self.dir.resolve()):
                    continue
                with open(base + "/cmdline", "rb") as f:
                    title = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                continue
            if job_id is None or ("[%s." % job_id) in title:
                found[int(name)] = title
        return found

    def log_tails(self, lines=20):
        out = []
        for path in sorted((self.dir / "log").glob("*")):
            try:
                text = path.read_text(errors="replace").splitlines()[-lines:]
            except OSError:
                continue
            if text:
                out.append("---- %s\n%s" % (path.name, "\n".join(text)))
        return "\n".join(out)


def cluster_running(dir, **kw):
    """A generator for fixtures: a SlurmCluster(dir, **kw) started, then stopped."""
    if os.geteuid() != 0:
        pytest.skip("the Slurm test cluster needs root (slurmd and munged run as root)")
    cluster = SlurmCluster(dir, **kw)
    try:
        try:
            cluster.start()
        except RuntimeError:
            # The ports are chosen free but not held: another start may have taken one.
            cluster.stop()
            cluster.start()
        print("slurm test cluster: %d nodes up in %.2fs in %s"
              % (len(cluster.nodes), cluster.start_seconds, cluster.dir))
        yield cluster
    finally:
        rc, err = cluster.stop()
        if rc != 0:
            print("tests/slurm/stop.sh exited %s:\n%s" % (rc, err))


@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory):
    yield from cluster_running(tmp_path_factory.mktemp("slurm"))


def slurm_server_of(make_server, cluster, config):
    """A started weir server whose sbatch, squeue and scancel reach the test cluster."""
    srv = make_server(config=config, start=False)
    srv.extra_env = dict(cluster.env)
    srv.start()
    return srv


def slurm_job_id(server, job_id):
    """The Slurm job id from the job's events ("... slurm job N submitted", or N_I for an
    element of a job array), or None."""
    for e in server.events(job_id):
        m = re.search(r"slurm job (\d+(?:_\d+)?) submitted", e["message"])
        if m:
            return m.group(1)
    return None


def restart_after_sbatch_death(srv):
    """The server was started with WEIR_TEST_DIE_AFTER_SBATCH: waits for it to die (SIGKILL,
    right after Slurm took the job and before the id is stored), then starts it again
    without the hook.  Skips the test on a weir built without test hooks."""
    try:
        srv.proc.wait(30)
    except Exception:
        pytest.skip("this weir was built without test hooks (make DEVELOPER=1)")
    assert srv.proc.returncode == -9, srv.log_text()
    del srv.extra_env["WEIR_TEST_DIE_AFTER_SBATCH"]
    srv.start()
