"""Ray's option names for a remote function, turned into weir's: one pure function,
`from_ray`, used by `ray.remote` (weir/compat/ray/) and by `@weir.remote`, which accepts
Ray's names beside its own.

Ray counts resources in fractions and memory in bytes; weir's jobs ask whole cores, whole
GPUs (each one the task's alone) and memory in MiB.  The rules, as close to Ray as weir's
resources allow (docs/ray.md says the same):

  num_cpus      a number >= 0; a fraction is rounded up and 0 asks 1 core (a weir task
                holds at least one); above 1, a whole number (Ray refuses 1.5 too)
  num_gpus      a number >= 0; a fraction below 1 asks one whole GPU (weir does not share
                a GPU between tasks: two calls of 0.5 run on two GPUs, or one after the
                other); above 1, a whole number
  memory        bytes, as Ray: rounded up to MiB ("Nm")
  resources     {} only: weir has no custom resources, so a call asking one could never
                run (Ray would wait for ever); CPU and GPU are refused as Ray does
  max_retries   restarts after the call's process died (-1: as many as weir allows, 1000)
  retry_exceptions  True, or a list of exception classes: also run again after the
                function raised (one of those)
  runtime_env   {"env_vars": {...}} only, for now
  num_returns   1 only, for now
  name          the job's name
  max_calls, scheduling_strategy   accepted; each call is a process of its own already,
                and weir places every call itself
"""

import math
from typing import Any, Dict, Mapping

# what each Ray option becomes; anything else is refused, as Ray refuses unknown options
RAY_FUNCTION_OPTIONS = ("num_cpus", "num_gpus", "memory", "resources", "max_retries",
                        "retry_exceptions", "runtime_env", "num_returns", "name", "max_calls",
                        "scheduling_strategy")
MIB = 1 << 20
MAX_RETRIES = 1000  # the most restarts a weir job takes (JOB_SPEC_MAX_RESTARTS)


def _number(what: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v < 0 \
            or v == math.inf:
        raise ValueError("%s: expected a number >= 0, got %r" % (what, v))
    if v > 1 and int(v) != v:
        raise ValueError("%s: quantities above 1 must be whole numbers, got %r" % (what, v))
    return float(v)


def whole_cpus(v: Any, what: str = "num_cpus") -> int:
    """num_cpus as weir's cores: rounded up, at least 1."""
    return max(1, math.ceil(_number(what, v)))


def whole_gpus(v: Any, what: str = "num_gpus") -> int:
    """num_gpus as weir's GPUs: a fraction below 1 is one whole GPU."""
    return math.ceil(_number(what, v))


def memory_mib(v: Any, what: str = "memory") -> str:
    """Ray's memory (bytes) as weir's amount: "Nm", rounded up to MiB."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < math.inf:
        raise ValueError("%s: expected bytes (a number > 0), as Ray counts memory, got %r"
                         % (what, v))
    return "%dm" % max(1, math.ceil(v / MIB))


def retries(v: Any, what: str = "max_retries") -> int:
    """max_retries as weir's restarts: -1 is the most weir allows."""
    if isinstance(v, bool) or not isinstance(v, int) or v < -1:
        raise ValueError("%s: expected a whole number >= -1 (-1: no limit), got %r" % (what, v))
    return MAX_RETRIES if v == -1 else min(v, MAX_RETRIES)


def retry_on(v: Any, what: str = "retry_exceptions") -> Any:
    """retry_exceptions: a bool, or a tuple of exception classes."""
    if isinstance(v, bool):
        return v
    if isinstance(v, (list, tuple)) and all(isinstance(c, type) and
                                            issubclass(c, BaseException) for c in v):
        return tuple(v) if v else False
    raise ValueError("%s: expected True, False or a list of exception classes, got %r"
                     % (what, v))


def _env_vars(v: Any) -> Dict[str, str]:
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        raise ValueError("runtime_env: expected a dict like {\"env_vars\": {...}}, got %r"
                         % (v,))
    other = sorted(str(k) for k in v if k != "env_vars")
    if other:
        raise NotImplementedError(
            "runtime_env: %s not supported by weir yet (only env_vars is); the call runs "
            "in the caller's interpreter and sees the caller's folders" % ", ".join(other))
    env = v.get("env_vars") or {}
    if not isinstance(env, Mapping) or not all(isinstance(k, str) and isinstance(x, str)
                                               for k, x in env.items()):
        raise ValueError("runtime_env.env_vars: expected a dict of str to str, got %r"
                         % (env,))
    return dict(env)


def _resources(v: Any) -> None:
    if v is None or v == {}:
        return
    if not isinstance(v, Mapping):
        raise ValueError("resources: expected a dict of resource name to amount, got %r"
                         % (v,))
    for k in v:
        if k in ("CPU", "GPU"):
            raise ValueError("resources: use num_cpus and num_gpus, not resources[%r]" % (k,))
    raise ValueError("resources: %s: weir has no custom resources (it counts cores, memory "
                     "and GPUs), so this call could never run; use queue= to send calls to "
                     "a kind of node" % ", ".join(repr(k) for k in v))


def from_ray(opts: Mapping[str, Any], where: str = "ray.remote") -> Dict[str, Any]:
    """Ray's options (any subset of RAY_FUNCTION_OPTIONS) as @weir.remote's keyword
    arguments: cpus, gpus, memory, retries, retry_exceptions, env, name.  ValueError
    names the option and what it takes; NotImplementedError what weir does not do yet."""
    out: Dict[str, Any] = {}
    for k, v in opts.items():
        if k not in RAY_FUNCTION_OPTIONS:
            raise ValueError("%s: unknown option %r; the options of a remote function are "
                             "%s" % (where, k, ", ".join(RAY_FUNCTION_OPTIONS)))
        if k == "num_cpus" and v is not None:
            out["cpus"] = whole_cpus(v)
        elif k == "num_gpus" and v is not None:
            out["gpus"] = whole_gpus(v)
        elif k == "memory" and v is not None:
            out["memory"] = memory_mib(v)
        elif k == "resources":
            _resources(v)
        elif k == "max_retries" and v is not None:
            out["retries"] = retries(v)
        elif k == "retry_exceptions" and v is not None:
            out["retry_exceptions"] = retry_on(v)
        elif k == "runtime_env":
            env = _env_vars(v)
            if env:
                out["env"] = env
        elif k == "num_returns" and v not in (None, 1):
            raise NotImplementedError("num_returns=%r: weir's remote functions return one "
                                      "object for now" % (v,))
        elif k == "name" and v is not None:
            if not isinstance(v, str) or not v:
                raise ValueError("name: expected a non-empty str, got %r" % (v,))
            out["name"] = v
        elif k == "max_calls" and v is not None:
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError("max_calls: expected a whole number >= 0, got %r" % (v,))
    return out


def merge_names(weir: Dict[str, Any], ray: Mapping[str, Any], where: str) -> Dict[str, Any]:
    """weir's options (None: not given) with Ray's names (ray) mapped onto them; a name
    given both ways (cpus= and num_cpus=) is refused, an unknown one is a TypeError."""
    for k in ray:
        if k not in RAY_FUNCTION_OPTIONS:
            raise TypeError("%s() got an unexpected keyword argument %r" % (where, k))
    out = dict(weir)
    for k, v in from_ray(ray, where).items():
        if k == "env" and out.get("env"):
            v = dict(out["env"], **v)
        elif out.get(k) is not None:
            raise ValueError("%s: %s given twice (as %s= and by its Ray name)" % (where, k, k))
        out[k] = v
    return out
