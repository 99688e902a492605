"""Chaos: the node's agent killed with `kill -9` at random moments, the server and the agent
killed together, a random shim killed, and all of these mixed, while a DAG run and a 4-worker
job go on (chaostest.py).  The run and the job succeed; every task not itself killed runs
exactly once with the one try the store records; a task whose shim was killed ends that try
lost and is tried again per its retries (the job per its restart policy), each try at most
once; every result is recorded once; afterwards no process, cgroup or spare folder of the
test is left (docs/internals/recovery.md, "What each kill does").

The short variants run in `make check`; WEIR_CHAOS_FULL=1 (`make chaos`) runs the issue's
sizes: 10 agent kills, 5 of both, 5 shims, 20 mixed rounds, on both of the agent's paths
(the host's cgroups and WEIR_CGROUP=none).  One line is printed per round.
"""

import pytest

from chaostest import FULL, Load, kill_agent, kill_both, kill_server, kill_shim, pause, seeded
from chaostest import stress  # noqa: F401  (the fixture)

# rounds of each kind: (full, short)
ROUNDS = {"agent": (10, 3), "both": (5, 2), "shim": (5, 2), "mixed": (20, 4)}
if FULL:
    CASES = [(k, c) for k in ROUNDS for c in ("host", "none")]
else:
    # one path each, both paths among them
    CASES = [("agent", "host"), ("both", "none"), ("shim", "host"), ("mixed", "none")]


def one_kill(kind, load, rng):
    """One round's kill of `kind` ("mixed": one of the others, drawn); its words."""
    if kind == "mixed":
        kind = rng.choice(["server", "agent", "both", "shim"])
    if kind == "agent":
        return "agent %d killed" % kill_agent(load)
    if kind == "both":
        return kill_both(load, rng)
    if kind == "server":
        return kill_server(load, rng)
    hit = kill_shim(load, rng)
    return "shim %d of %s killed" % (hit[1], hit[0]) if hit else "no shim running"


@pytest.mark.parametrize("kind,cgroups", CASES)
def test_kill_9_of_agent_and_shims_loses_nothing(make_server, tmp_path, stress, kind, cgroups):
    n = ROUNDS[kind][0 if FULL else 1]
    seed, rng = seeded("%d rounds of %s kills, cgroups %s" % (n, kind, cgroups))
    load = Load(make_server, tmp_path, cgroups)
    for k in range(n):
        pause(rng, 1.5)  # a random moment: somewhere in the next 1.5 s
        load.round(k, n, one_kill(kind, load, rng))
    load.check(seed)
    load.agent()
    load.check_nothing_left(seed)
