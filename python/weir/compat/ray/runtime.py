"""Where a Ray program's code runs and what the cluster holds: `ray.get_runtime_context()`,
`ray.nodes()`, `ray.get_gpu_ids()`, `ray.cluster_resources()`, `ray.available_resources()`
(docs/ray.md).  The cluster is the weir server's node: its declared resources (`GET
/config`), less what the local jobs that run or start now hold; a resource there is none of
is left out, as Ray does."""

import os
import socket
from typing import Any, Dict, List, Optional, Tuple, Union

from ...remote import actors as _actors_mod
from ...remote import ray_ids as _ids
from ...remote import session as _session
from ...remote import warm as _warm
from . import actors as _actors
from .actors import ActorHandle


def _state() -> Any:
    """The program's Ray state (api.py's; api imports this module)."""
    from . import api

    return api._state


def _ensure() -> None:
    from . import api

    api._ensure()


def _in_task() -> bool:
    from . import api

    return api._in_task()


def _scope() -> str:
    """The program's tag (remote/ray_ids.py's scope): the same in the program and all its
    tasks; a call that is a job (and a detached actor) is a scope of its own."""
    tag = os.environ.get("WEIR_WARM_TAG")
    if tag and _in_task():
        return tag
    if "WEIR_JOB_ID" in os.environ and not os.environ.get("WEIR_WARM_DIR"):
        return job_scope(os.environ["WEIR_JOB_ID"])
    _ensure()
    return str(_warm.pool_of(_session._get_session()).tag)


def job_scope(job: Any) -> str:
    """The scope of a call that is weir job `job` (remote/futures.py's Future says the
    same)."""
    return "weir-job-%s" % job


def _actor_key() -> Optional[Tuple[str, int]]:
    """(scope, number) of the actor whose process this is, or None."""
    aid = os.environ.get("WEIR_WARM_ACTOR", "")
    if aid:
        tag, _, n = aid.rpartition("-")
        return tag, int(n) if n.isdigit() else 0
    entry = os.environ.get("WEIR_DETACHED")
    if entry:  # a detached actor's process: its handles' folder, number 0
        return _actors_mod.DETACHED + entry, 0
    return None


class RuntimeContext:
    """ray.get_runtime_context(): where the code runs, its ids in Ray's forms (hex strings
    of Ray's lengths, remote/ray_ids.py).  The job is Ray's: the program (the same in the
    program and all its tasks); the task is the call (None in the program itself); the
    worker is the weir job that runs it; the node is the host."""

    @property
    def namespace(self) -> Optional[str]:
        return _state().namespace or os.environ.get("WEIR_RAY_NAMESPACE")

    def get_job_id(self) -> str:
        """The program's job id: 8 hex digits."""
        return _ids.job_hex(_scope())

    def get_task_id(self) -> Optional[str]:
        """The call's task id (48 hex digits, the ref's task_id().hex() in the caller);
        None in the program."""
        import sys
        from ...worker import warm as _wmod
        worker = getattr(sys.modules.get(_wmod.CURRENT_MODULE), "worker", None)
        actor = _actor_key()
        if worker is not None:
            cid = _running_call(worker)
            if cid:
                return _ids.task_hex(os.environ.get("WEIR_WARM_TAG", "x"), cid,
                                     actor[1] if actor is not None else None)
        job = os.environ.get("WEIR_JOB_ID")
        if job is None:
            return None
        return _ids.task_hex(job_scope(job), 0)

    def get_worker_id(self) -> Optional[str]:
        """The weir job of the worker that runs this (None in the program)."""
        return os.environ.get("WEIR_JOB_ID")

    def get_node_id(self) -> str:
        """The node's id: 56 hex digits (ray.nodes()' NodeID)."""
        return _ids.node_hex(socket.gethostname())

    def get_actor_id(self) -> Optional[str]:
        """The actor's id (32 hex digits, its handles' `_actor_id.hex()`) in an actor's
        method (or constructor), else None."""
        key = _actor_key()
        return _ids.actor_hex(*key) if key is not None else None

    def get_actor_name(self) -> Optional[str]:
        """The actor's name= in a named actor's method, else None."""
        return os.environ.get("WEIR_WARM_ACTOR_NAME") or None if self.get_actor_id() \
            else None

    @property
    def current_actor(self) -> ActorHandle:
        """The handle of the actor whose method runs here (to pass to others)."""
        import sys
        from ...worker import warm as _wmod
        aid = os.environ.get("WEIR_WARM_ACTOR")
        folder = os.environ.get("WEIR_WARM_DIR")
        if not aid or not folder:
            raise RuntimeError("ray.get_runtime_context().current_actor: this is not an "
                               "actor's process")
        worker = getattr(sys.modules.get(_wmod.CURRENT_MODULE), "worker", None)
        cls = type(getattr(worker, "instance", None))
        return _actors._rebuild(folder, int(aid.rsplit("-", 1)[1]),
                                os.environ.get("WEIR_WARM_ACTOR_HANDLE") or cls.__name__,
                                _actors_mod._num_returns(cls))

    def is_canceled(self) -> bool:
        """Whether ray.cancel() was called on the call that runs this code (a sync actor's
        method runs on when cancelled, and may stop itself).  RuntimeError in the program
        and in an async actor, as in Ray (there the call's asyncio task is cancelled)."""
        import sys
        from ...worker import warm as _wmod
        worker = getattr(sys.modules.get(_wmod.CURRENT_MODULE), "worker", None)
        cid = _running_call(worker) if worker is not None else 0
        if worker is None or not cid:
            raise RuntimeError("is_canceled() is for the code of a task or an actor's "
                               "method; the program (the driver) runs none")
        if getattr(worker, "aloop", None) is not None:
            raise RuntimeError("is_canceled() is not for an async actor: ray.cancel cancels "
                               "its call's asyncio task (asyncio.CancelledError)")
        return bool(worker.is_canceled(cid))

    @property
    def was_current_actor_reconstructed(self) -> bool:
        """Whether this actor's worker is a restart (max_restarts) of one that died."""
        return self.get_actor_id() is not None and \
            os.environ.get("WEIR_WARM_ACTOR_RESTARTS", "0") not in ("", "0")

    # Ray's older names: the ids as Ray's id objects (each equal to its hex string too)
    @property
    def job_id(self) -> _ids.JobID:
        return _ids.JobID(self.get_job_id())

    @property
    def task_id(self) -> Optional[_ids.TaskID]:
        t = self.get_task_id()
        return _ids.TaskID(t) if t is not None else None

    @property
    def actor_id(self) -> Optional[_ids.ActorID]:
        a = self.get_actor_id()
        return _ids.ActorID(a) if a is not None else None

    @property
    def node_id(self) -> _ids.NodeID:
        return _ids.NodeID(self.get_node_id())

    @property
    def gcs_address(self) -> str:
        """The weir server's address (Ray's: its GCS)."""
        return _state().address or os.environ.get("WEIR_SERVER", "")

    @property
    def runtime_env(self) -> Dict[str, Any]:
        """The env_vars ray.init gave every call (in the program)."""
        env = {k: v for k, v in _state().env_vars.items() if not k.startswith("WEIR_")}
        return {"env_vars": env} if env else {}

    def get_runtime_env_string(self) -> str:
        import json
        return json.dumps(self.runtime_env)

    def get(self) -> Dict[str, Any]:
        """Ray's older form: the ids as a dict (task_id and actor_id where there are)."""
        out: Dict[str, Any] = {"job_id": self.job_id, "node_id": self.node_id,
                               "namespace": self.namespace}
        if self.task_id is not None:
            out["task_id"] = self.task_id
        if self.actor_id is not None:
            out["actor_id"] = self.actor_id
        return out

    def get_accelerator_ids(self) -> Dict[str, List[str]]:
        return {"GPU": [str(g) for g in get_gpu_ids()]}

    def get_assigned_resources(self) -> Dict[str, float]:
        """What the worker running this holds: {"CPU": its cores, "GPU": its GPUs} (those
        there are; {} in the program)."""
        out: Dict[str, float] = {}
        cpus = os.environ.get("WEIR_WARM_CPUS", "")
        if cpus.isdigit() and "WEIR_JOB_ID" in os.environ:
            out["CPU"] = float(cpus)
        if get_gpu_ids():
            out["GPU"] = float(len(get_gpu_ids()))
        return out


def _running_call(worker: Any) -> int:
    """The call of a warm worker that runs this code: in an async actor the one of the
    current asyncio task, else the one this thread runs (a threaded actor's), else the one
    the worker runs now (0: none)."""
    if getattr(worker, "aloop", None) is not None:
        import asyncio
        try:
            me = asyncio.current_task()
        except RuntimeError:
            me = None
        for cid, task in list(worker.atasks.items()):
            if task is me:
                return int(cid)
    return int(getattr(getattr(worker, "local", None), "cid", 0) or worker.current or 0)


def nodes() -> List[Dict[str, Any]]:
    """The nodes, as Ray lists them: weir's server runs its calls on one node here (its
    declared resources); Slurm's nodes are not listed."""
    _ensure()
    res = _present(_declared())
    host = socket.gethostname()
    return [{"NodeID": _ids.node_hex(host), "Alive": True,
             "NodeManagerAddress": get_node_ip_address(),
             "NodeManagerHostname": host, "NodeName": host, "Resources": res,
             "alive": True}]


def get_node_ip_address(address: str = "8.8.8.8:53") -> str:
    """ray.util.get_node_ip_address(): the IP address this machine reaches ADDRESS from
    (a UDP socket connected there: no packet is sent), as Ray finds a node's; 127.0.0.1
    when it has no route.  It is nodes()' NodeManagerAddress on the server's machine."""
    host, _, port = address.rpartition(":")
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((host, int(port)))
            return str(s.getsockname()[0])
    except (OSError, ValueError):
        return "127.0.0.1"


def get_runtime_context() -> RuntimeContext:
    return RuntimeContext()


def get_gpu_ids() -> List[Union[int, str]]:
    """The GPUs weir gave this call (CUDA_VISIBLE_DEVICES); [] in the program itself."""
    cvd = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    if "WEIR_JOB_ID" not in os.environ or not cvd.strip():
        return []
    return [int(g) if g.strip().isdigit() else g.strip() for g in cvd.split(",") if g.strip()]


def _amount_bytes(text: Any) -> int:
    s = str(text).strip().lower().rstrip("ib")
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    if s and s[-1] in units:
        return int(float(s[:-1]) * units[s[-1]])
    return int(float(s or 0)) << 20  # a bare number is MiB, as weir counts


def _declared() -> Dict[str, float]:
    client = _session._get_session().client
    sec = client.request("GET", "/config", params={"section": "resources"})
    opts = {o["key"]: o["value"] for s in sec.get("sections", []) for o in s["options"]}
    gpus = [g for g in str(opts.get("gpus", "")).split(",") if g.strip()]
    out = {"CPU": float(opts.get("vcores", 0)), "memory": float(int(opts.get("memory_mb", 0))
                                                               << 20)}
    out["GPU"] = float(len(gpus))
    if _state().private is not None:
        # a private server left to find its cores and memory (0 in its configuration) finds
        # this machine's: so does this
        if not out["CPU"]:
            out["CPU"] = float(len(os.sched_getaffinity(0)))
        if not out["memory"]:
            out["memory"] = float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    return out


def _present(res: Dict[str, float]) -> Dict[str, float]:
    """Ray's form: a resource none of which there is (a node without GPUs, the GPUs all
    held) is left out, so that `"GPU" in ray.cluster_resources()` says whether there are."""
    return {k: v for k, v in res.items() if v > 0}


def cluster_resources() -> Dict[str, float]:
    """What the server's node declares: {"CPU", "GPU", "memory" (bytes)}, those it has."""
    _ensure()
    return _present(_declared())


def available_resources() -> Dict[str, float]:
    """cluster_resources() less what the jobs that run or start now hold."""
    _ensure()
    out = _declared()
    client = _session._get_session().client
    for state in ("starting", "running"):
        for listed in client.jobs(state=state, limit=100000):
            if listed.get("executor") not in (None, "local"):
                continue
            job = client.job(listed["id"])  # the list leaves the spec out
            for role in (job.get("spec") or {}).get("roles", {}).values():
                n = int(role.get("instances", 1))
                out["CPU"] -= n * int(role.get("vcores", 1))
                out["GPU"] -= n * int(role.get("gpus", 0))
                if role.get("memory"):
                    out["memory"] -= n * _amount_bytes(role["memory"])
    return _present(out)
