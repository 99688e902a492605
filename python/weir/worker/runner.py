"""The task side of a remote call: run by the caller's interpreter as a script,
`PYTHON .../weir/worker/runner.py`, in the task's working directory, where weir has linked the
call (`weir-call.pkl`) and every object it uses (`weir-obj-<sha>/value.pkl`).

It unpickles (mode, function, args, kwargs, extra), replaces top-level ObjectRefs by their
values, runs the function and writes ("ok", value) or ("error", type, message, traceback,
pickled exception) to $WEIR_PY_RESULT (per rank for weir.train: RESULT.<rank>.pkl, rank 0's
being the answer).  Exit status: 0, or 1 when the function raised (100 when the exception is
one of the classes the call's retry_exceptions lists, which the job restarts on).  Run as a script rather
than with -m so that a call does not pay for importing the client's half of the package.
"""

import os
import sys

# sys.path[0] is this file's folder: the package's modules must not shadow the user's
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    del sys.path[0]

from types import TracebackType  # noqa: E402
from typing import Any, Dict, List, Optional, Tuple  # noqa: E402

import cloudpickle  # noqa: E402

CALL = "weir-call.pkl"
# the exit status after an exception of the call's retry_exceptions classes (the job's
# restart range starts there: remote/functions.py)
RETRY_EXIT = 100
# where ObjectRef lives: loaded while unpickling the call when an argument is one
REFS_MODULE = "weir.remote.futures"


def _write(path: str, obj: Any) -> None:
    tmp = "%s.tmp-%d" % (path, os.getpid())
    try:
        data = cloudpickle.dumps(obj, protocol=5)
    except Exception as e:
        import traceback
        data = cloudpickle.dumps(("error", "weir.errors.SerializationError",
                                  "the result cannot be pickled: %s: %s" % (type(e).__name__, e),
                                  traceback.format_exc(), None), protocol=5)
    with open(tmp, "wb") as f:
        f.write(data)
    os.rename(tmp, path)


# the attribute of a streaming generator's function (worker/warm.py's STREAM_ATTR)
STREAM_ATTR = "__weir_stream__"


def item_path(result: str, index: int) -> str:
    """Where a call that is a job writes its generator's item INDEX: RESULT.item.INDEX."""
    return "%s.item.%d" % (result, index)


def _stream(gen: Any, result: str) -> Any:
    """A streaming generator's items, each written to its own file as it is yielded (the
    caller's ObjectRefGenerator reads them while the job runs); the list of them, the
    call's value, at the end."""
    import inspect
    if not inspect.isgenerator(gen) and not isinstance(gen, (list, tuple)):
        raise TypeError("num_returns=\"streaming\"/\"dynamic\" expects a generator, got %s"
                        % type(gen).__name__)
    out: List[Any] = []
    for item in gen:
        _write(item_path(result, len(out)), ("ok", item))
        out.append(item)
    return out


def _error_record(e: BaseException) -> Tuple[str, str, str, str, Optional[bytes]]:
    import traceback
    # the traceback from the user's function on: this file's own frame left out
    tb_obj: Optional[TracebackType] = e.__traceback__
    while tb_obj is not None and tb_obj.tb_frame.f_code.co_filename == __file__:
        tb_obj = tb_obj.tb_next
    tb = "".join(traceback.format_exception(type(e), e, tb_obj))
    cause = getattr(e, "cause", None)
    if isinstance(cause, BaseException) and \
            any(c.__name__ == "RemoteError" for c in type(e).__mro__):
        # a call's error raised on by its caller (a nested call): the class made for the
        # pair does not pickle; the original one does, and is the caller's error's class
        e = cause
    try:
        exc: Optional[bytes] = cloudpickle.dumps(e, protocol=5)
        cloudpickle.loads(exc)  # one that cannot be read back is sent as text only
    except Exception:
        exc = None
    cls = type(e)
    name = cls.__qualname__ if cls.__module__ == "builtins" else "%s.%s" % (
        cls.__module__, cls.__qualname__)
    return ("error", name, str(e), tb, exc)


def _resolve(args: Tuple[Any, ...],
             kwargs: Dict[str, Any]) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    from weir.remote.futures import ObjectRef, _get_ref
    args = tuple(_get_ref(a) if isinstance(a, ObjectRef) else a for a in args)
    kwargs = {k: _get_ref(v) if isinstance(v, ObjectRef) else v for k, v in kwargs.items()}
    return args, kwargs


def apply_runtime_env() -> None:
    """Ray's runtime_env in a task (remote/ray_names.py sets the variables):
    $WEIR_RAY_PY_MODULES's entries first on sys.path; $WEIR_RAY_WORKING_DIR the working
    directory and before them."""
    mods = os.environ.get("WEIR_RAY_PY_MODULES")
    if mods:
        sys.path[:0] = [p for p in mods.split(os.pathsep) if p]
    wd = os.environ.get("WEIR_RAY_WORKING_DIR")
    if wd:
        os.chdir(wd)
        sys.path.insert(0, wd)


def _train(fn: Any, extra: Dict[str, Any]) -> Any:
    pg: Any = None
    if extra["framework"] == "pytorch" and extra["init_process_group"]:
        import torch.distributed
        pg = torch.distributed
        pg.init_process_group(backend=extra["backend"])
    value = fn(extra["config"]) if extra["has_config"] else fn()
    # only after a success: a rank that raised keeps its connections until its error is
    # written, so that its peers' "connection closed" errors come after it
    if pg is not None and pg.is_initialized():
        pg.destroy_process_group()
    return value


def main() -> int:
    result = os.environ["WEIR_PY_RESULT"]
    with open(CALL, "rb") as f:
        mode, fn, args, kwargs, extra = cloudpickle.load(f)
    if mode == "train":
        rank = int(os.environ.get("RANK") or os.environ.get("WEIR_TASK_INDEX") or 0)
        result = "%s.%d.pkl" % (result[:-4] if result.endswith(".pkl") else result, rank)
    try:
        if mode == "train":
            value = _train(fn, extra)
        else:
            # an ObjectRef among the arguments imported its module while unpickling;
            # without one the task does not pay for importing the package
            if REFS_MODULE in sys.modules and (args or kwargs):
                args, kwargs = _resolve(args, kwargs)
            apply_runtime_env()  # after the linked objects were read here
            stream = getattr(fn, STREAM_ATTR, None) if mode == "call" else None
            if stream is not None:
                value = _stream(stream(*args, **kwargs), result)
            else:
                value = fn(*args, **kwargs)
    except Exception as e:
        rec = _error_record(e)
        sys.stderr.write(rec[3])
        _write(result, rec)
        sys.stdout.flush()
        retry_on = extra.get("retry_on") if mode == "call" and extra else None
        return RETRY_EXIT if retry_on and isinstance(e, retry_on) else 1
    _write(result, ("ok", value))
    return 0


if __name__ == "__main__":
    sys.exit(main())
