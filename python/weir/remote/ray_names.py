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
  memory        bytes, as Ray: rounded up to MiB ("Nm"); 0 asks none (Ray's default)
  resources     {} only: weir has no custom resources, so a call asking one could never
                run (Ray would wait for ever); CPU and GPU are refused as Ray does
  max_retries   restarts after the call's process died (-1: as many as weir allows, 1000)
  retry_exceptions  True, or a list of exception classes: also run again after the
                function raised (one of those)
  runtime_env   env_vars; working_dir (a local folder: the tasks' working directory, first
                on their sys.path); py_modules (local packages, modules or wheels: on the
                tasks' sys.path); pip only as local wheels or a folder of them, conda only
                as a local environment (its interpreter runs the call): weir installs
                nothing
  num_returns   1 here (weir's own remote functions); ray.remote takes the others
  name          the job's name
  max_calls     checked here; a call that is a job is a process of its own already, and
                ray.remote gives it to the warm workers (a worker leaves after that many)
  scheduling_strategy, placement_group, placement_group_bundle_index,
  placement_group_capture_child_tasks   accepted and not used here (each of weir.remote's
                calls is a job the server places); ray.remote reads the strategy and the
                placement group options (compat/ray/placement.py)
"""

import math
import os
from typing import Any, Dict, List, Mapping

# what each Ray option becomes; anything else is refused, as Ray refuses unknown options
RAY_FUNCTION_OPTIONS = ("num_cpus", "num_gpus", "memory", "resources", "max_retries",
                        "retry_exceptions", "runtime_env", "num_returns", "name", "max_calls",
                        "scheduling_strategy", "placement_group",
                        "placement_group_bundle_index", "placement_group_capture_child_tasks")
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


RUNTIME_ENV_KEYS = ("env_vars", "working_dir", "py_modules", "pip", "conda", "config")
# what a task reads (worker/runner.py, apply_runtime_env)
WORKING_DIR_VAR = "WEIR_RAY_WORKING_DIR"
PY_MODULES_VAR = "WEIR_RAY_PY_MODULES"


def _local_path(what: str, v: Any) -> str:
    if not isinstance(v, (str, os.PathLike)) or "://" in str(v):
        raise NotImplementedError("runtime_env.%s: %r: weir takes a local path only (no "
                                  "URI: the tasks of a program run on its node)" % (what, v))
    p = os.path.abspath(os.path.expanduser(os.fspath(v)))
    if not os.path.exists(p):
        raise ValueError("runtime_env.%s: %s does not exist" % (what, p))
    return p


def _import_path(what: str, v: Any) -> str:
    """The sys.path entry that makes a package, a module or a wheel importable."""
    p = _local_path(what, v)
    if os.path.isfile(p) and p.endswith((".whl", ".zip", ".egg")):
        return p
    return os.path.dirname(p)  # a package's folder, a module's file: their parent


def _wheels(v: Any) -> List[str]:
    """pip's entries as local wheels (a .whl, or a folder of them); NotImplementedError
    for anything weir would have to install."""
    items = v.get("packages") if isinstance(v, Mapping) else v
    if isinstance(items, str):
        items = [items]
    if not isinstance(items, (list, tuple)):
        raise ValueError("runtime_env.pip: expected a list of requirements, got %r" % (v,))
    out: List[str] = []
    for it in items:
        p = os.path.abspath(os.path.expanduser(str(it)))
        if os.path.isfile(p) and p.endswith(".whl"):
            out.append(p)
        elif os.path.isdir(p) and any(n.endswith(".whl") for n in os.listdir(p)):
            out += sorted(os.path.join(p, n) for n in os.listdir(p) if n.endswith(".whl"))
        else:
            raise NotImplementedError(
                "runtime_env.pip: %r: weir does not install packages; give a local wheel or "
                "a folder of wheels, py_modules=[...], or conda= / python= an environment "
                "that has it" % (it,))
    return out


def _conda_python(v: Any) -> str:
    """The interpreter of a local conda environment (its folder, or its name)."""
    if not isinstance(v, str):
        raise NotImplementedError("runtime_env.conda: %r: weir does not create environments;"
                                  " give the name or folder of one that exists" % (v,))
    cands = [os.path.expanduser(v)]
    roots = [os.environ.get("CONDA_PREFIX", ""), os.environ.get("CONDA_ROOT", ""),
             "~/miniconda3", "~/anaconda3", "~/miniforge3", "~/.conda"]
    cands += [os.path.join(os.path.expanduser(r), "envs", v) for r in roots if r]
    for c in cands:
        py = os.path.join(c, "bin", "python")
        if os.path.isdir(c) and os.access(py, os.X_OK):
            return os.path.abspath(py)
    raise NotImplementedError("runtime_env.conda: no local environment named %r (weir does "
                              "not create environments; give one that exists)" % (v,))


def runtime_env(v: Any) -> Dict[str, Any]:
    """runtime_env as {"env": {...}} plus {"python": ...} for a conda environment."""
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        raise ValueError("runtime_env: expected a dict like {\"env_vars\": {...}}, got %r"
                         % (v,))
    other = sorted(str(k) for k in v if k not in RUNTIME_ENV_KEYS)
    if other:
        raise NotImplementedError(
            "runtime_env: %s not supported by weir (it takes %s)"
            % (", ".join(other), ", ".join(RUNTIME_ENV_KEYS)))
    env = v.get("env_vars") or {}
    if not isinstance(env, Mapping) or not all(isinstance(k, str) and isinstance(x, str)
                                               for k, x in env.items()):
        raise ValueError("runtime_env.env_vars: expected a dict of str to str, got %r"
                         % (env,))
    env = dict(env)
    out: Dict[str, Any] = {}
    if v.get("working_dir") is not None:
        wd = _local_path("working_dir", v["working_dir"])
        if not os.path.isdir(wd):
            raise ValueError("runtime_env.working_dir: %s is not a folder" % wd)
        env[WORKING_DIR_VAR] = wd
    paths: List[str] = []
    mods = v.get("py_modules")
    if mods is not None:
        if not isinstance(mods, (list, tuple)):
            raise ValueError("runtime_env.py_modules: expected a list of paths, got %r"
                             % (mods,))
        paths += [_import_path("py_modules", m) for m in mods]
    if v.get("pip") is not None:
        paths += _wheels(v["pip"])
    if paths:
        env[PY_MODULES_VAR] = os.pathsep.join(dict.fromkeys(paths))
    if v.get("conda") is not None:
        out["python"] = _conda_python(v["conda"])
    if env:
        out["env"] = env
    return out


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
        elif k == "memory" and v is not None and not (v == 0 and not isinstance(v, bool)):
            out["memory"] = memory_mib(v)  # 0: none asked, as Ray's default
        elif k == "resources":
            _resources(v)
        elif k == "max_retries" and v is not None:
            out["retries"] = retries(v)
        elif k == "retry_exceptions" and v is not None:
            out["retry_exceptions"] = retry_on(v)
        elif k == "runtime_env":
            out.update(runtime_env(v))
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
