"""Remote functions: @weir.remote, f.remote(...), weir.put, weir.train: a call becomes the
spec of one weir job, whose task runs weir/worker/runner.py with the caller's interpreter.

One call is one weir job of one task.  The call (function and arguments, cloudpickled) is a
file in the object folder linked into the task; `weir.put` objects and large arguments are
tar archives there, which weir unpacks once per content hash into its cache and links into
every task that uses them; the task writes what the function returned or raised into the
folder's results/ (futures.py reads it).
"""

import inspect
import os
import re
import shlex
import sys
import sysconfig
import uuid
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Mapping, Optional, Tuple, Union

from . import objects as _objects
from . import ray_names as _ray
from ..errors import WeirError
from .futures import Future, ObjectRef, get
from .session import _get_session, _Session

# the task side of a call, run as a script (worker/runner.py says why)
RUNNER = Path(__file__).resolve().parent.parent / "worker" / "runner.py"
# the folder that holds the package: first on the task's PYTHONPATH
PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent.parent)
# the runner's exit status after an exception retry_exceptions lists (worker/runner.py)
RETRY_EXIT = 100
# an argument whose pickle is larger than this travels as an archive, as weir.put's do
LARGE_ARG = 1 << 20
AMOUNT = re.compile(r"^\s*\d+(\.\d+)?\s*([kKmMgGtT]([iI]?[bB]?)?)?\s*$")
DURATION = re.compile(r"^\s*(\d+[smhd]?)+\s*$")

Options = Dict[str, Any]


# ---- building a call's job ---------------------------------------------------------------

def _check_int(name: str, v: Any, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v or v < lo:
        raise ValueError("%s: expected a whole number >= %d, got %r" % (name, lo, v))
    return int(v)


def _options(cpus: Any = 1, gpus: Any = 0, memory: Any = None, retries: Any = 0,
             retry_exceptions: Any = False, timeout: Any = None, queue: Any = None,
             name: Optional[str] = None, python: Any = None, venv: Any = None,
             env: Optional[Mapping[str, Any]] = None, priority: Optional[int] = None,
             slurm: Optional[Mapping[str, Any]] = None) -> Options:
    """The call's options checked, each error naming the option and what it takes."""
    o: Options = {"cpus": _check_int("cpus", cpus, 1), "gpus": _check_int("gpus", gpus, 0),
         "retries": _check_int("retries", retries, 0),
         # True, or the exception classes (a tuple) after which the call runs again
         "retry_exceptions": _ray.retry_on(retry_exceptions or False)}
    if memory is not None:
        if isinstance(memory, bool) or not (isinstance(memory, int) and memory > 0 or
                                            isinstance(memory, str) and AMOUNT.match(memory)):
            raise ValueError("memory: expected an amount like \"4g\" or \"512m\" (or MiB as a "
                             "number), got %r" % (memory,))
    o["memory"] = memory
    if timeout is not None:
        if isinstance(timeout, bool) or not (isinstance(timeout, (int, float)) and timeout >= 0
                                             or isinstance(timeout, str) and
                                             DURATION.match(timeout)):
            raise ValueError("timeout: expected seconds or a duration like \"90s\", \"1h30m\", "
                             "got %r" % (timeout,))
        timeout = int(timeout) if isinstance(timeout, (int, float)) else timeout.strip()
    o["timeout"] = timeout
    if queue is not None and (not isinstance(queue, str) or not re.match(r"^[A-Za-z0-9_.-]{1,64}$",
                                                                        queue)):
        raise ValueError("queue: expected a queue name of the server ([A-Za-z0-9_.-], at most "
                         "64), got %r" % (queue,))
    o["queue"] = queue
    if python is not None and venv is not None:
        raise ValueError("give python= or venv=, not both")
    if venv is not None:
        python = os.path.join(os.path.abspath(os.fspath(venv)), "bin", "python")
    o["python"] = os.fspath(python) if python is not None else (sys.executable or "python3")
    if env is not None:
        for k in env:
            if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", str(k)):
                raise ValueError("env: %r is not a variable name" % (k,))
    o["env"] = dict(env or {})
    o["name"] = name
    o["priority"] = priority
    o["slurm"] = slurm
    return o


def _job_name(fn: Any) -> str:
    mod = getattr(fn, "__module__", None) or ""
    qual = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or "call"
    qual = qual.rsplit("<locals>.", 1)[-1]  # a nested function by its own name
    name = qual if mod in ("__main__", "", "__mp_main__") else "%s.%s" % (mod, qual)
    return "".join(ch if ch.isprintable() else "_" for ch in name)[:128] or "call"


def _task_path() -> str:
    """PYTHONPATH for the task: this package, then the caller's own folders (its script's,
    $PYTHONPATH's, the current directory), not the interpreter's own."""
    own = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    own.update(os.path.realpath(p) for p in sysconfig.get_paths().values())
    out = [PACKAGE_PARENT]
    for p in sys.path:
        p = os.path.abspath(p or os.getcwd())
        rp = os.path.realpath(p)
        if not os.path.isdir(p) or "site-packages" in rp or "dist-packages" in rp:
            continue
        if any(rp == o or rp.startswith(o + os.sep) for o in own if o != "/"):
            continue
        if p not in out:
            out.append(p)
    return os.pathsep.join(out)


def _spec(name: str, o: Options, objects_dir: Path, call_file: Path, shas: Iterable[str],
          result: Path, workers: int = 1, framework: str = "none") -> Dict[str, Any]:
    role: Dict[str, Any] = {"instances": workers, "vcores": o["cpus"], "gpus": o["gpus"],
                            "command": "%s %s" % (shlex.quote(o["python"]),
                                                  shlex.quote(str(RUNNER)))}
    if o["memory"] is not None:
        role["memory"] = o["memory"]
    env = {"PYTHONPATH": _task_path(), "PYTHONUNBUFFERED": "1",
           "WEIR_PY_OBJECTS": str(objects_dir), "WEIR_PY_RESULT": str(result)}
    env.update({str(k): str(v) for k, v in o["env"].items()})
    arts = [{"path": str(call_file), "name": "weir-call.pkl", "archive": False}]
    arts += [{"path": str(_objects.archive_path(objects_dir, s)),
              "name": _objects.artifact_name(s), "archive": True} for s in sorted(shas)]
    spec: Dict[str, Any] = {"name": o["name"] or name, "framework": framework,
                            "roles": {"worker": role}, "env": env, "artifacts": arts}
    if workers > 1:
        role["stop_on_failure"] = True
        spec["success_policy"] = "all"
    if o["retries"]:
        # the runner exits RETRY_EXIT after an exception of retry_exceptions' classes, 1
        # after another: the restart's range of exit codes tells them apart
        rx = o["retry_exceptions"]
        spec["restart"] = {"max_restarts": o["retries"], "retry_exit_codes":
                           "%d-255" % RETRY_EXIT if isinstance(rx, tuple) else
                           "1-255" if rx else "128-255"}
    if o["timeout"] is not None:
        spec["timeouts"] = {"execution": o["timeout"]}
    if o["queue"] is not None:
        spec["queue"] = o["queue"]
    if o["priority"] is not None:
        spec["priority"] = o["priority"]
    if o["slurm"] is not None:
        spec["slurm"] = dict(o["slurm"])
    return spec


def _prepare_args(s: _Session, args: Tuple[Any, ...],
                  kwargs: Dict[str, Any]) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    """Futures among the arguments are waited for; large arguments become put objects."""
    def one(i: Any, a: Any) -> Any:
        if isinstance(a, Future):
            value = get(a)
            # a result in shared memory (remote/results.py) goes as its segment: mapped, not
            # copied, by the task
            ref = getattr(a, "_shm", None)
            return value if ref is None else ref
        if isinstance(a, ObjectRef):
            return a
        data = _objects.dumps(a, "argument %s" % i)
        if len(data) > LARGE_ARG:
            s.objects_dir.mkdir(parents=True, exist_ok=True)
            return ObjectRef(_objects.write_archive(s.objects_dir, data))
        return a
    return (tuple(one(i, a) for i, a in enumerate(args)),
            {k: one(repr(k), v) for k, v in kwargs.items()})


def _submit(fn: Callable[..., Any], args: Tuple[Any, ...], kwargs: Dict[str, Any], o: Options,
            mode: str, workers: int = 1,
            framework: str = "none", extra: Any = None) -> Future:
    s = _get_session()
    name = _job_name(fn)
    args, kwargs = _prepare_args(s, args, kwargs)
    with _objects.collecting() as c:
        data = _objects.dumps((mode, fn, args, kwargs, extra), "the call of %s" % name)
    call_id = uuid.uuid4().hex
    result = _objects.result_path(s.objects_dir, call_id)
    try:
        (s.objects_dir / "results").mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise WeirError("object folder %s: %s (set WEIR_OBJECTS or weir.init(objects_dir=...) "
                        "to a folder every task reads)" % (s.objects_dir, e)) from e
    for sha in c.found:
        if not _objects.archive_path(s.objects_dir, sha).exists():
            raise WeirError("ObjectRef %s: no such object in %s (was it put with another "
                            "object folder?)" % (sha[:16], s.objects_dir))
    call_file, new = _objects.write_call(s.objects_dir, data)
    s.hold_call(call_file, new)
    spec = _spec(name, o, s.objects_dir, call_file, c.found, result, workers, framework)
    try:
        job = s.client.submit(spec)
    except BaseException:
        s.release_call(call_file)
        raise
    s.track(job["id"], name)
    return Future(s, job, result, spec["name"], call_file, ranks=workers if mode == "train"
                  else 1)


# the options of weir's own names (RemoteFunction.options)
WEIR_OPTIONS = ("cpus", "gpus", "memory", "retries", "retry_exceptions", "timeout", "queue",
                "name", "python", "venv", "env", "priority", "slurm")


class RemoteFunction:
    """A function whose calls run as weir jobs: f.remote(*args, **kwargs) -> Future."""

    def __init__(self, fn: Callable[..., Any], options: Options) -> None:
        if not callable(fn):
            raise TypeError("weir.remote: %r is not callable" % (fn,))
        if inspect.isclass(fn):
            raise TypeError("weir.remote: classes (actors) are not supported; decorate a "
                            "function")
        self._fn = fn
        self._options = options
        self.__name__ = getattr(fn, "__name__", "remote")
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def __repr__(self) -> str:
        return "<weir.remote %s>" % _job_name(self._fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("%s is a remote function: call %s.remote(...), or .local(...) to run "
                        "it here" % (self.__name__, self.__name__))

    def local(self, *args: Any, **kwargs: Any) -> Any:
        """Runs the function here, in this process."""
        return self._fn(*args, **kwargs)

    def remote(self, *args: Any, **kwargs: Any) -> Future:
        """Starts one call as a weir job and returns its Future at once."""
        rx = self._options["retry_exceptions"]
        extra = {"retry_on": rx} if isinstance(rx, tuple) else None
        return _submit(self._fn, args, kwargs, self._options, "call", extra=extra)

    def options(self, **overrides: Any) -> "RemoteFunction":
        """The same function with some options changed: f.options(cpus=4).remote(x) (Ray's
        names too: num_cpus=4)."""
        cur = {k: v for k, v in self._options.items()}
        ray = {k: overrides.pop(k) for k in list(overrides) if k not in WEIR_OPTIONS}
        mine = _ray.merge_names({k: overrides.get(k) for k in WEIR_OPTIONS}, ray,
                                "%s.options" % self.__name__)
        overrides.update({k: v for k, v in mine.items() if v is not None or k in overrides})
        merged = dict(cpus=cur["cpus"], gpus=cur["gpus"], memory=cur["memory"],
                      retries=cur["retries"], retry_exceptions=cur["retry_exceptions"],
                      timeout=cur["timeout"], queue=cur["queue"], name=cur["name"],
                      python=cur["python"], env=cur["env"], priority=cur["priority"],
                      slurm=cur["slurm"])
        if "venv" in overrides:
            merged.pop("python")  # the venv's interpreter replaces the one chosen before
        merged.update(overrides)
        return RemoteFunction(self._fn, _options(**merged))


def remote(fn: Optional[Callable[..., Any]] = None, *, cpus: Optional[int] = None,
           gpus: Optional[int] = None, memory: Union[str, int, None] = None,
           retries: Optional[int] = None, retry_exceptions: Any = False,
           timeout: Union[str, int, None] = None, queue: Optional[str] = None,
           name: Optional[str] = None, python: Optional[str] = None,
           venv: Optional[str] = None, env: Optional[Mapping[str, str]] = None,
           priority: Optional[int] = None, slurm: Optional[Mapping[str, Any]] = None,
           **ray_options: Any
           ) -> Union[RemoteFunction, Callable[[Callable[..., Any]], RemoteFunction]]:
    """Makes a function remote: each f.remote(...) call runs as one weir job.

        @weir.remote(cpus=2, gpus=1, memory="4g", retries=1, timeout="1h")
        def train(x): ...
        futures = [train.remote(i) for i in range(4)]
        weir.get(futures)

    cpus, gpus, memory: what the call's one task asks (weir's vcores, gpus, memory; memory
    default: the server's, 2g).  retries: restarts after the task died (a signal, out of
    memory); with retry_exceptions=True also after the function raised.  timeout: the
    execution limit ("90s", "1h30m", or seconds).  queue: a queue of the server (docs/
    slurm.md: local or Slurm).  python / venv: the interpreter the call runs (default: this
    one, sys.executable).  name: the job's name (default: the function's).  env: extra
    environment.  slurm: the job's own Slurm settings (partition, account, qos, time).
    retry_exceptions may also list exception classes: only those are run again.

    Ray's names are accepted too (weir/remote/ray_names.py): num_cpus, num_gpus (fractions
    rounded up), max_retries, runtime_env={"env_vars": ...}, resources={}, num_returns=1,
    max_calls, scheduling_strategy.  memory= keeps weir's meaning here (a number is MiB);
    ray.remote's memory= is in bytes.
    """
    given = _ray.merge_names(dict(cpus=cpus, gpus=gpus, retries=retries,
                                  retry_exceptions=retry_exceptions or None, name=name,
                                  env=env), ray_options, "weir.remote")

    def dflt(k: str, v: Any) -> Any:
        return v if given[k] is None else given[k]
    opts = _options(cpus=dflt("cpus", 1), gpus=dflt("gpus", 0), memory=memory,
                    retries=dflt("retries", 0),
                    retry_exceptions=given["retry_exceptions"] or False, timeout=timeout,
                    queue=queue, name=given["name"], python=python, venv=venv,
                    env=given["env"], priority=priority, slurm=slurm)
    if fn is not None:
        return RemoteFunction(fn, opts)
    return lambda f: RemoteFunction(f, opts)


def put(value: Any) -> ObjectRef:
    """Stores value once in the object folder and returns its reference; pass it to any
    number of calls: it is written once, and weir unpacks it once per node."""
    s = _get_session()
    data = _objects.dumps(value, "the value given to weir.put")
    try:
        s.objects_dir.mkdir(parents=True, exist_ok=True)
        return ObjectRef(_objects.write_archive(s.objects_dir, data))
    except OSError as e:
        raise WeirError("weir.put: object folder %s: %s" % (s.objects_dir, e)) from e


def train(fn: Callable[..., Any], config: Any = None, *, workers: int = 2, framework: str = "pytorch",
          cpus: int = 1, gpus: int = 0, memory: Union[str, int, None] = None,
          timeout: Union[str, int, None] = None, queue: Optional[str] = None,
          retries: int = 0, name: Optional[str] = None, python: Optional[str] = None,
          venv: Optional[str] = None, env: Optional[Mapping[str, str]] = None,
          backend: Optional[str] = None, init_process_group: bool = True,
          wait: bool = True) -> Any:
    """Runs fn in every task of a gang of `workers` and returns rank 0's return value.

    fn(config) is called (fn() when config is None) with the framework's environment set
    by weir: framework="pytorch" gives MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, ... and,
    unless init_process_group=False, torch.distributed's process group is initialised
    before fn and destroyed after (backend: "gloo", or "nccl" with gpus); "tensorflow" sets
    TF_CONFIG.  cpus, gpus, memory are per worker.  With wait=False a Future is returned.
    An exception in any rank is raised with its traceback; the other ranks are stopped."""
    workers = _check_int("workers", workers, 1)
    if framework not in ("pytorch", "tensorflow", "mxnet", "horovod", "none"):
        raise ValueError("framework: expected pytorch, tensorflow, mxnet, horovod or none, "
                         "got %r" % (framework,))
    o = _options(cpus=cpus, gpus=gpus, memory=memory, retries=retries, timeout=timeout,
                 queue=queue, name=name, python=python, venv=venv, env=env)
    extra = {"config": config, "has_config": config is not None, "framework": framework,
             "backend": backend or ("nccl" if o["gpus"] else "gloo"),
             "init_process_group": bool(init_process_group)}
    fut = _submit(fn, (), {}, o, "train", workers, framework, extra)
    return get(fut) if wait else fut
