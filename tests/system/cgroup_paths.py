"""The agent's tests on both of its paths (docs/internals/limits.md): with the host's cgroups
("host": the groups where the host has a writable one, the fallback where it has none) and
forced without (`WEIR_CGROUP=none`: the fallback on every host).  A test asks which path its
server took (`groups_on`) and checks what holds there, so that none vanishes on a host
without writable cgroups.  Also what the agent says it holds (`agent_status`)."""

import re
import subprocess

import pytest

from conftest import WEIR_BIN


@pytest.fixture(params=["host", "none"])
def cgroups(request):
    """"host" or "none": the path a test's server is started on (`agent_server`)."""
    return request.param


def agent_server(make_server, cgroups="host", config=None, **env):
    """A started server whose agent runs on the `cgroups` path; env: more of its environment."""
    srv = make_server(config=config, start=False) if config else make_server(start=False)
    srv.extra_env.update(env)
    if cgroups == "none":
        srv.extra_env["WEIR_CGROUP"] = "none"
    srv.start()
    if cgroups == "none":
        assert not groups_on(srv), "WEIR_CGROUP=none, yet the server uses cgroups"
    return srv


def agent_status(srv):
    """{"agent_pid": N, "tasks": {key: (shim_pid, pid, state)}} from `weir agent status`, or
    None when no agent answers."""
    r = subprocess.run([WEIR_BIN, "agent", "status", "--home", str(srv.home)],
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        return None
    m = re.match(r"agent pid (\d+)", r.stdout)
    tasks = {}
    for line in r.stdout.splitlines()[2:]:
        parts = line.split()
        if len(parts) == 4:
            tasks[parts[0]] = (int(parts[1]), int(parts[2]), parts[3])
    return {"agent_pid": int(m.group(1)), "tasks": tasks}


def alive(pid):
    """Whether process `pid` lives (a zombie does not)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def groups_on(srv):
    """Whether the server (and so its agent, with the same environment on the same host) puts
    tasks in cgroups: what it said at its start, "weir server: memory limits: cgroup v1 (...)"
    or "... no writable cgroup (why) ..."."""
    m = re.search(r"^weir server: memory limits: (.*)$", srv.log_path.read_text(errors="replace"),
                  re.M)
    assert m, "no memory limits line in the server's log:\n%s" % srv.log_text()
    return m.group(1).startswith("cgroup v")


def cgroup_v1():
    """Whether this host's memory controller is on cgroup v1 (its line in /proc/self/cgroup)."""
    with open("/proc/self/cgroup") as f:
        return any(re.match(r"\d+:(?:[^:]*,)?memory", line) for line in f.read().splitlines())


def group_parents(srv):
    """The folders where the server's agent makes its groups (ROOT/weir under each controller
    it named at its start), [] when it uses none."""
    m = re.search(r"^weir server: memory limits: cgroup v\d+ \(memory at (\S+?)(?:, cpu quota at "
                  r"(\S+?))?(?:, no cpu quota)?\)$", srv.log_path.read_text(errors="replace"), re.M)
    return [r + "/weir" for r in dict.fromkeys(m.groups()) if r] if m else []
