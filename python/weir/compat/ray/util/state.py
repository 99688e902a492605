"""ray.util.state (a part): list_actors, get_actor and list_nodes over what the program
knows of itself: its actors (remote/actors.py, the pool's) and the server's node, in Ray's
fields (docs/ray.md).  Ray asks its GCS for every job's actors; weir's program answers for
its own, so they are refused in a task (the program holds them)."""

import socket
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ....remote import ray_ids as _ids
from .. import api
from .. import runtime as _runtime


class _State:
    """A record with Ray's fields as attributes (and as keys: record["state"])."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)

    def __getitem__(self, key: str) -> Any:
        return self.__dict__[key]

    def __repr__(self) -> str:
        return "%s(%s)" % (type(self).__name__, ", ".join(
            "%s=%r" % kv for kv in sorted(self.__dict__.items())))

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.__dict__ == self.__dict__


class ActorState(_State):
    """An actor: actor_id, class_name, state (PENDING_CREATION, ALIVE, RESTARTING, DEAD),
    name, ray_namespace, job_id, node_id, pid, num_restarts, death_cause, is_detached."""


class NodeState(_State):
    """A node: node_id, node_ip, node_name, state (ALIVE), is_head_node, resources_total."""


def _matches(value: Any, op: str, want: Any) -> bool:
    return (str(value) == str(want)) == (op == "=")


def _filtered(rows: List[Any], filters: Optional[Sequence[Tuple[str, str, Any]]],
              limit: int, what: str) -> List[Any]:
    for f in filters or []:
        if len(f) != 3 or f[1] not in ("=", "!="):
            raise ValueError("%s: filters: expected (key, \"=\" or \"!=\", value) each, got %r"
                             % (what, f))
    out = [r for r in rows
           if all(_matches(getattr(r, key, None), op, value) for key, op, value in filters or [])]
    return out[:limit]


def _in_program(what: str) -> Any:
    if api._in_task():
        raise RuntimeError("%s: in a task: weir's program holds its actors' states; call it "
                           "in the program" % what)
    api._ensure()
    from ....remote import actors as _actors
    from ....remote.session import _get_session
    return _actors.pool_of(_get_session())


def _actor_state(pool: Any, a: Any) -> ActorState:
    w = a.worker
    if a.dead is not None:
        state = "DEAD"
    elif w is not None and w.sock is not None and not w.gone:
        state = "ALIVE"
    else:
        state = "RESTARTING" if a.restarts else "PENDING_CREATION"
    scope = _ids.scope_of_folder(pool.dir)
    return ActorState(actor_id=_ids.actor_hex(scope, a.id), class_name=a.cls.__name__,
                      state=state, name=a.label or "", ray_namespace=a.namespace,
                      job_id=_ids.job_hex(scope), node_id=_ids.node_hex(socket.gethostname()),
                      pid=(w.pid if w is not None and state == "ALIVE" else None),
                      num_restarts=a.restarts, death_cause=a.dead, is_detached=False)


def list_actors(address: Optional[str] = None,
                filters: Optional[Sequence[Tuple[str, str, Any]]] = None, limit: int = 100,
                timeout: int = 30, detail: bool = False, raise_on_missing_output: bool = True,
                _explain: bool = False) -> List[ActorState]:
    """The program's actors (the dead ones too), oldest first; filters: (key, "=" or "!=",
    value) each, all to hold."""
    pool = _in_program("ray.util.state.list_actors")
    with pool.lock:
        actors = sorted(pool.actors.values(), key=lambda a: int(a.id))
    return _filtered([_actor_state(pool, a) for a in actors], filters, limit,
                     "list_actors")


def get_actor(id: str, address: Optional[str] = None, timeout: int = 30,
              _explain: bool = False) -> Optional[ActorState]:
    """The program's actor of that id (32 hex digits), or None."""
    found = [a for a in list_actors(limit=1 << 30) if a["actor_id"] == id]
    return found[0] if found else None


def list_nodes(address: Optional[str] = None,
               filters: Optional[Sequence[Tuple[str, str, Any]]] = None, limit: int = 100,
               timeout: int = 30, detail: bool = False, raise_on_missing_output: bool = True,
               _explain: bool = False) -> List[NodeState]:
    """The server's node (ray.nodes()' one)."""
    rows = []
    for n in _runtime.nodes():
        res: Dict[str, Any] = dict(n["Resources"])
        rows.append(NodeState(node_id=n["NodeID"], node_ip=n["NodeManagerAddress"],
                              node_name=n["NodeName"], state="ALIVE", is_head_node=True,
                              resources_total=res))
    return _filtered(rows, filters, limit, "list_nodes")


__all__ = ["list_actors", "get_actor", "list_nodes", "ActorState", "NodeState"]
