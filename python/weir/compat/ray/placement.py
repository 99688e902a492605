"""ray.util.placement_group (util/placement_group.py re-exports it) over weir's gangs (weir/remote/placement.py): a group is one
weir job whose tasks are its bundles, held together; tasks and actors placed in a bundle
run inside it.  Also where a call's scheduling_strategy is read (placement_of).
docs/ray.md, "Placement groups", says what differs from Ray."""

import json
import os
import socket
import sys
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ...errors import ResourceError
from ...remote import placement as _placement
from ...remote import ray_names as _ray
from ...remote import session as _session
from ...remote import warm as _warm
from .util.scheduling_strategies import (NodeAffinitySchedulingStrategy,
                                    PlacementGroupSchedulingStrategy)

STRATEGIES = ("PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD")
# the resources a bundle may name (weir has no custom resources)
BUNDLE_KEYS = ("CPU", "GPU", "memory")


class PlacementGroupID:
    """A group's id: hex() as Ray's (weir's number, in hex)."""

    def __init__(self, gid: int) -> None:
        self._gid = gid

    def hex(self) -> str:
        return "%032x" % self._gid

    def __repr__(self) -> str:
        return "PlacementGroupID(%s)" % self.hex()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PlacementGroupID) and other._gid == self._gid

    def __hash__(self) -> int:
        return hash(self._gid)


class PlacementGroup:
    """A placement group's handle: ready(), wait(), bundle_specs, bundle_count; it can be
    passed to tasks (it pickles to the program's folder and the group's id)."""

    def __init__(self, folder: str, gid: int, bundles: List[Dict[str, float]],
                 strategy: str, name: str) -> None:
        self._folder = folder
        self._gid = gid
        self.id = PlacementGroupID(gid)
        self.bundle_specs = [dict(b) for b in bundles]
        self.strategy = strategy
        self.name = name

    @property
    def bundle_count(self) -> int:
        return len(self.bundle_specs)

    def __repr__(self) -> str:
        return "PlacementGroup(%s, %s)" % (self.id.hex(), self.name or self.strategy)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PlacementGroup) and (other._folder, other._gid) == (
            self._folder, self._gid)

    def __hash__(self) -> int:
        return hash((self._folder, self._gid))

    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...]]:
        return (PlacementGroup, (self._folder, self._gid, self.bundle_specs, self.strategy,
                                 self.name))

    def _group(self) -> "_placement.Group":
        pool = _pool_here(self._folder)
        g = pool.groups.get(self._gid) if pool is not None else None
        if g is None:
            raise ValueError("placement group %s: not a group of this program (a group is "
                             "used by the program that made it, and its tasks through it)"
                             % self.id.hex())
        return g  # type: ignore[no-any-return]

    def ready(self) -> Any:
        """An ObjectRef that is ready (its value True) once every bundle is held."""
        if _pool_here(self._folder) is None:  # in a task: the group holds its bundles
            from . import api
            return api.put(True)
        return _placement.ReadyRef(self._group())

    def wait(self, timeout_seconds: Optional[float] = 30) -> bool:
        """Whether every bundle is held, waiting up to timeout_seconds (None: for ever)."""
        from . import api
        ready, _ = api.wait([self.ready()], timeout=timeout_seconds)
        return bool(ready)


def _pool_here(folder: str) -> Optional[_warm.Pool]:
    from ...remote import actors as _actors
    return _actors.local_pool(folder)


def _in_task() -> bool:
    folder = os.environ.get("WEIR_WARM_DIR")
    return bool(folder) and _pool_here(folder or "") is None


def _bundle(i: Any, b: Any) -> Tuple[int, int, Optional[str]]:
    """A bundle as weir's (cores, GPUs, memory); ValueError naming what is wrong."""
    where = "placement_group: bundles[%s]" % i
    if not isinstance(b, Mapping) or not b:
        raise ValueError("%s: expected a dict of resources ({\"CPU\": 1, \"GPU\": 1, "
                         "\"memory\": BYTES}), got %r" % (where, b))
    for k, v in b.items():
        if k not in BUNDLE_KEYS:
            raise ValueError("%s: %r: weir has no custom resources; a bundle holds %s"
                             % (where, k, ", ".join(BUNDLE_KEYS)))
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
            raise ValueError("%s: %s: expected a number >= 0, got %r" % (where, k, v))
    if not any(b.values()):
        raise ValueError("%s: a bundle must hold something (all its resources are 0)"
                         % where)
    mem = b.get("memory")
    return (_ray.whole_cpus(b.get("CPU", 0), where + "[\"CPU\"]"),
            _ray.whole_gpus(b.get("GPU", 0), where + "[\"GPU\"]"),
            _ray.memory_mib(mem, where + "[\"memory\"]") if mem else None)


def placement_group(bundles: List[Dict[str, float]], strategy: str = "PACK",
                    name: str = "", lifetime: Optional[str] = None,
                    _max_cpu_fraction_per_node: Any = None,
                    _soft_target_node_id: Any = None) -> PlacementGroup:
    """Reserves the bundles as one weir gang job (held until removed, or the program's
    end); a bundle the node can never hold is refused here, with the server's words."""
    from . import api
    if _in_task():
        raise NotImplementedError("placement_group: a group is made by the program, not in "
                                  "a task (pass the group to the task instead)")
    if not isinstance(bundles, (list, tuple)) or not bundles:
        raise ValueError("placement_group: bundles: expected a non-empty list of dicts, got "
                         "%r" % (bundles,))
    if strategy not in STRATEGIES:
        raise ValueError("placement_group: strategy: expected one of %s, got %r"
                         % (", ".join(STRATEGIES), strategy))
    if lifetime == "detached":
        raise NotImplementedError("placement_group: lifetime=\"detached\": weir's groups "
                                  "end with the program that made them; leave lifetime out")
    if lifetime is not None:
        raise ValueError("placement_group: lifetime: expected None or \"detached\", got %r"
                         % (lifetime,))
    if not isinstance(name, str):
        raise ValueError("placement_group: name: expected a str, got %r" % (name,))
    held = [_bundle(i, b) for i, b in enumerate(bundles)]
    api._ensure()
    nodes = api.nodes()
    if strategy == "STRICT_SPREAD" and len(bundles) > len(nodes):
        raise ValueError("placement_group: STRICT_SPREAD puts each of the %d bundles on a node "
                         "of its own, and the weir server at %s runs its calls on %d node%s: "
                         "it could never be placed (use SPREAD, which places them where it "
                         "can)" % (len(bundles), api._state.address, len(nodes),
                                   "" if len(nodes) == 1 else "s"))
    pool = _warm.pool_of(_session._get_session())
    if name:
        with pool.lock:
            taken = any(g.name == name and g.ended is None for g in pool.groups.values())
        if taken:
            raise ValueError("placement_group: a group named %r exists already" % name)
    try:
        g = _placement.create(pool, held, strategy, name, api._state.python or
                              sys.executable or "python3", dict(api._state.env_vars))
    except ResourceError as e:
        raise ResourceError(e.status, "placement_group(): the weir server at %s cannot hold "
                            "the bundles %s: %s" % (api._state.address, list(bundles),
                                                    e.message)) from None
    g.specs = [dict(b) for b in bundles]  # type: ignore[attr-defined]
    return PlacementGroup(pool.dir, g.id, g.specs, strategy, name)  # type: ignore


def remove_placement_group(placement_group: PlacementGroup) -> None:
    """Removes the group: its job killed, its tasks and actors with it."""
    if not isinstance(placement_group, PlacementGroup):
        raise TypeError("remove_placement_group: expected a PlacementGroup, got %r"
                        % (placement_group,))
    _placement.remove(placement_group._group())


def _handle(pool: _warm.Pool, g: "_placement.Group") -> PlacementGroup:
    return PlacementGroup(pool.dir, g.id, getattr(g, "specs", []), g.strategy, g.name)


def get_placement_group(placement_group_name: str) -> PlacementGroup:
    """The program's group of that name; ValueError when there is none."""
    from . import api
    api._ensure()
    pool = _warm.pool_of(_session._get_session())
    with pool.lock:
        found = [g for g in pool.groups.values() if g.name == placement_group_name and
                 g.state != "REMOVED"]
    if not found:
        raise ValueError("Failed to look up placement group with name: %s"
                         % placement_group_name)
    return _handle(pool, found[-1])


def placement_group_table(placement_group: Optional[PlacementGroup] = None
                          ) -> Dict[str, Any]:
    """Ray's table: a group's state, bundles and strategy (all the program's groups by
    hex id, without an argument)."""
    from . import api
    api._ensure()
    pool = _warm.pool_of(_session._get_session())
    host = socket.gethostname()

    def row(g: "_placement.Group") -> Dict[str, Any]:
        specs = getattr(g, "specs", [])
        return {"placement_group_id": "%032x" % g.id, "name": g.name,
                "bundles": {i: dict(b) for i, b in enumerate(specs)},
                "bundles_to_node_id": {i: host for i in range(len(specs))}
                if g.ready() else {}, "strategy": g.strategy, "state": g.state,
                "weir_job_id": g.job_id, "stats": {}}
    if placement_group is not None:
        return row(placement_group._group())
    with pool.lock:
        groups = list(pool.groups.values())
    return {"%032x" % g.id: row(g) for g in groups}


def get_current_placement_group() -> Optional[PlacementGroup]:
    """The group the current task or actor runs in, else None (in the program: None)."""
    gid = os.environ.get("WEIR_RAY_PG")
    folder = os.environ.get("WEIR_WARM_DIR")
    if not gid or not folder or not _in_task():
        return None
    info = json.loads(os.environ.get("WEIR_RAY_PG_INFO") or "{}")
    return PlacementGroup(folder, int(gid), info.get("bundles", []), info.get("strategy", ""),
                          info.get("name", ""))


def strategy_of(options: Mapping[str, Any]) -> Tuple[Any, Optional[PlacementGroup], int, bool]:
    """(strategy, group, bundle index, capture) of Ray's options: scheduling_strategy, or
    the old placement_group= options; checked, ValueError naming what is wrong."""
    s = options.get("scheduling_strategy")
    pg = options.get("placement_group")
    if pg == "default":
        pg = None
    index = options.get("placement_group_bundle_index", -1)
    capture = options.get("placement_group_capture_child_tasks")
    if isinstance(s, PlacementGroupSchedulingStrategy):
        pg, index, capture = (s.placement_group, s.placement_group_bundle_index,
                              s.placement_group_capture_child_tasks)
    elif s is not None and not isinstance(s, NodeAffinitySchedulingStrategy) and \
            s not in ("DEFAULT", "SPREAD"):
        raise ValueError("scheduling_strategy: expected \"DEFAULT\", \"SPREAD\", a "
                         "PlacementGroupSchedulingStrategy or a NodeAffinitySchedulingStrategy"
                         ", got %r" % (s,))
    if pg is not None and not isinstance(pg, PlacementGroup):
        raise ValueError("placement_group: expected a PlacementGroup "
                         "(ray.util.placement_group()), got %r" % (pg,))
    if isinstance(index, bool) or not isinstance(index, int) or index < -1 or (
            pg is not None and index >= pg.bundle_count and pg.bundle_count):
        raise ValueError("placement_group_bundle_index: expected -1 (any) or 0 to %d, got %r"
                         % ((pg.bundle_count - 1) if pg is not None else 0, index))
    return s, pg, index, bool(capture)


def captured(options: Dict[str, Any]) -> Dict[str, Any]:
    """In a task of a group made with placement_group_capture_child_tasks: a call or
    actor without a strategy of its own goes to the same group (as in Ray)."""
    if os.environ.get("WEIR_RAY_PG_CAPTURE") != "1" or options.get("placement_group") or \
            options.get("scheduling_strategy") not in (None, "DEFAULT"):
        return options
    pg = get_current_placement_group()
    if pg is None:
        return options
    return dict(options, scheduling_strategy=PlacementGroupSchedulingStrategy(pg, -1, True))


def placement_of(options: Mapping[str, Any], o: Dict[str, Any], what: str
                 ) -> Optional[Tuple[int, int, int, bool]]:
    """Where a call (or an actor) of weir options o goes, from Ray's options: None (the
    server places its worker), or (group, bundle index, the most workers of its shape the
    group holds, capture).  A node affinity to another node than the server's is refused
    (soft=True falls back to any); a call that no bundle of its group could ever hold is
    refused at once (Ray would wait for ever)."""
    s, pg, index, capture = strategy_of(options)
    if isinstance(s, NodeAffinitySchedulingStrategy):
        host = socket.gethostname()
        from ...remote.ray_ids import node_hex
        if s.node_id not in (host, node_hex(host)) and not s.soft:
            raise ValueError("%s: NodeAffinitySchedulingStrategy(node_id=%r, soft=False): no "
                             "such node; the weir server runs its calls on %r (NodeID %s in "
                             "ray.nodes()); soft=True falls back to it"
                             % (what, s.node_id, host, node_hex(host)))
        return None
    if pg is None:
        return None
    g = pg._group()
    if g.ended is not None:
        raise ValueError("%s: placement group %s was removed" % (what, pg.id.hex()))
    targets = g.bundles if index < 0 else [g.bundles[index]]
    fit = [b for b in targets if b.fits(o["cpus"], o["gpus"])]
    if not fit:
        raise ValueError(
            "%s: it needs %d core%s and %d GPU%s, more than %s of placement group %s holds "
            "(%s): it could never run there" % (
                what, o["cpus"], "" if o["cpus"] == 1 else "s", o["gpus"],
                "" if o["gpus"] == 1 else "s", "bundle %d" % index if index >= 0 else
                "any bundle", pg.id.hex(), ", ".join("%d: %d cores, %d GPUs" % (
                    b.index, b.cpus, b.gpus) for b in targets)))
    if not _warm.enabled() or not _warm.eligible(o):
        raise ValueError("%s: a call placed in a placement group runs on the group's warm "
                         "workers: not with timeout, queue or Slurm settings, nor with "
                         "WEIR_RAY_WARM=0" % what)
    cap = sum(b.cpus // max(1, o["cpus"]) for b in fit)
    return (g.id, index, max(1, cap), capture)


__all__ = ["PlacementGroup", "placement_group", "remove_placement_group",
           "get_placement_group", "placement_group_table", "get_current_placement_group"]
