"""A Python callable run in another interpreter, for ExternalPythonOperator and
PythonVirtualenvOperator (airflow/operators/python.py), as Airflow 2.x runs it: the function's
source (its decorators left out) written to a script, its arguments serialized (pickle,
dill or cloudpickle) to a file the script reads, its return value serialized back.

PythonVirtualenvOperator's interpreter is a virtual environment made with `python3 -m venv`
(Debian's python3-venv) and its `requirements` installed by that environment's pip.  The
environments are cached: one folder per hash of what makes them (the interpreter's
version, the requirements, system_site_packages, pip's options and index URLs) under
`venv_cache_path`, else $WEIR_AIRFLOW_VENV_CACHE, else ~/.cache/weir/airflow-venvs; a lock
file makes a second task that wants the same one wait for the first, and a marker file
says it is complete (a half-made one is made again).
"""

from __future__ import annotations

import fcntl
import hashlib
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from typing import Any, Callable, Collection, Dict, List, Optional, Sequence

# The context keys whose values are plain strings (and numbers): Airflow's
# BASE_SERIALIZABLE_CONTEXT_KEYS, given to the callable when it names them.
BASE_KEYS = ("ds", "ds_nodash", "expanded_ti_count", "inlets", "map_index_template",
             "next_ds", "next_ds_nodash", "outlets", "prev_ds", "prev_ds_nodash", "run_id",
             "task_instance_key_str", "test_mode", "tomorrow_ds", "tomorrow_ds_nodash", "ts",
             "ts_nodash", "ts_nodash_with_tz", "yesterday_ds", "yesterday_ds_nodash")
# Those whose values are pendulum DateTimes (PENDULUM_SERIALIZABLE_CONTEXT_KEYS): given
# when the other interpreter has pendulum (system_site_packages, or in the requirements).
PENDULUM_KEYS = ("data_interval_end", "data_interval_start", "execution_date", "logical_date",
                 "next_execution_date", "prev_data_interval_end_success",
                 "prev_data_interval_start_success", "prev_execution_date",
                 "prev_execution_date_success", "prev_start_date_success",
                 "prev_end_date_success")
SERIALIZERS = ("pickle", "dill", "cloudpickle")
_READY = "weir-venv-ready"

_RUNNER = '''
import sys
import %(ser)s as _ser
virtualenv_string_args = %(string_args)r
with open(sys.argv[1], "rb") as _f:
    _args, _kwargs = _ser.load(_f)
_result = %(name)s(*_args, **_kwargs)
with open(sys.argv[2], "wb") as _f:
    _ser.dump(_result, _f)
'''


def callable_source(fn: Callable[..., Any], task_id: str) -> str:
    """The source of a function run in another interpreter, its decorators left out (Airflow
    sends the function's text; it must import what it uses inside itself)."""
    if getattr(fn, "__name__", "<lambda>") == "<lambda>" or not inspect.isfunction(fn):
        raise TypeError("task %s: python_callable: expected a function defined with def "
                        "(its source is run in the other interpreter), got %r" % (task_id, fn))
    lines = textwrap.dedent(inspect.getsource(fn)).splitlines()
    while lines and lines[0].lstrip().startswith("@"):
        lines.pop(0)
    return "\n".join(lines) + "\n"


def serializer_of(serializer: Optional[str], use_dill: bool, task_id: str) -> str:
    """The serializer's module name: `serializer`, or dill with the old use_dill=True."""
    name = serializer or ("dill" if use_dill else "pickle")
    if name not in SERIALIZERS:
        raise ValueError("task %s: serializer %r: expected one of %s"
                         % (task_id, name, ", ".join(SERIALIZERS)))
    return name


def context_kwargs(context: Dict[str, Any], pendulum: bool) -> Dict[str, Any]:
    """The part of the context another interpreter can take (Airflow's serializable keys)."""
    keys = BASE_KEYS + (PENDULUM_KEYS if pendulum else ())
    return {k: context[k] for k in keys if k in context}


def run_callable(python: str, fn: Callable[..., Any], task_id: str, args: List[Any],
                 kwargs: Dict[str, Any], serializer: str = "pickle",
                 string_args: Optional[Collection[str]] = None,
                 skip_codes: Collection[int] = ()) -> Any:
    """Runs `fn(*args, **kwargs)` in the interpreter `python` and returns its value; an exit
    status among skip_codes is AirflowSkipException, any other failure AirflowException."""
    from airflow.exceptions import AirflowException, AirflowSkipException

    try:
        ser = __import__(serializer)
    except ImportError:
        raise AirflowException("task %s: serializer %s is not installed here (Debian: "
                               "python3-%s)" % (task_id, serializer, serializer)) from None
    with tempfile.TemporaryDirectory(prefix="weir-python-") as tmp:
        script, args_in, result_out = (os.path.join(tmp, n) for n in
                                       ("script.py", "args.bin", "result.bin"))
        with open(script, "w") as f:
            f.write(callable_source(fn, task_id) + _RUNNER % {
                "ser": serializer, "name": fn.__name__,
                "string_args": [str(s) for s in string_args or []]})
        with open(args_in, "wb") as f:
            ser.dump((list(args), kwargs), f)
        sys.stdout.flush()
        rc = subprocess.call([python, script, args_in, result_out])
        if rc in skip_codes:
            raise AirflowSkipException("Process exited with code %d. Skipping." % rc)
        if rc != 0:
            raise AirflowException("task %s: %s exited %d" % (task_id, python, rc))
        with open(result_out, "rb") as f:
            return ser.load(f)


def base_python(python_version: Optional[str], task_id: str) -> str:
    """The interpreter a virtual environment is made from: this one, or `pythonX.Y` on PATH
    for another python_version."""
    from airflow.exceptions import AirflowException

    if python_version is None:
        return sys.executable
    want = str(python_version)
    have = "%d.%d" % sys.version_info[:2]
    if have == want or have.startswith(want + "."):
        return sys.executable
    found = shutil.which("python" + want)
    if not found:
        raise AirflowException("task %s: python_version %s: no python%s on PATH"
                               % (task_id, want, want))
    return found


def cache_root(venv_cache_path: Optional[str]) -> str:
    """Where the environments are kept."""
    if venv_cache_path:
        return str(venv_cache_path)
    if os.environ.get("WEIR_AIRFLOW_VENV_CACHE"):
        return os.environ["WEIR_AIRFLOW_VENV_CACHE"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "weir", "airflow-venvs")


def _version_of(python: str) -> str:
    out = subprocess.run([python, "-c", "import sys; print(sys.version)"],
                         capture_output=True, text=True, check=False)
    return out.stdout.strip()


def ensure_venv(task_id: str, requirements: Sequence[str], python_version: Optional[str],
                system_site_packages: bool, pip_install_options: Sequence[str],
                index_urls: Sequence[str], venv_cache_path: Optional[str]) -> str:
    """The python of the virtual environment for these settings: the cached one, or one made
    now (pip's failure an AirflowException naming the requirements)."""
    from airflow.exceptions import AirflowException

    base = base_python(python_version, task_id)
    key = json.dumps({"python": _version_of(base), "requirements": list(requirements),
                      "system_site_packages": bool(system_site_packages),
                      "pip_install_options": list(pip_install_options),
                      "index_urls": list(index_urls)}, sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    root = cache_root(venv_cache_path)
    os.makedirs(root, exist_ok=True)
    venv = os.path.join(root, "venv-" + digest)
    python = os.path.join(venv, "bin", "python")
    with open(venv + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(os.path.join(venv, _READY)):
            print("weir: virtual environment %s (cached)" % venv, flush=True)
            return python
        shutil.rmtree(venv, ignore_errors=True)  # a half-made one
        cmd = [base, "-m", "venv"]
        if system_site_packages:
            cmd.append("--system-site-packages")
        if not requirements:
            cmd.append("--without-pip")
        print("weir: making virtual environment %s" % venv, flush=True)
        sys.stdout.flush()
        made = subprocess.run(cmd + [venv], capture_output=True, text=True, check=False)
        if made.returncode != 0:
            raise AirflowException(
                "task %s: %s -m venv failed (exit %d): %s (Debian: python3-venv)"
                % (task_id, base, made.returncode, (made.stderr or made.stdout).strip()))
        if requirements:
            pip = [python, "-m", "pip", "install", "--disable-pip-version-check"]
            if index_urls:
                pip += ["--index-url", index_urls[0]]
                for url in index_urls[1:]:
                    pip += ["--extra-index-url", url]
            listed = os.path.join(venv, "requirements.txt")
            with open(listed, "w") as f:
                f.write("\n".join(requirements) + "\n")
            pip += list(pip_install_options) + ["-r", listed]
            print("weir: %s" % " ".join(pip), flush=True)
            got = subprocess.run(pip, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, check=False)
            print(got.stdout, end="", flush=True)
            if got.returncode != 0:
                shutil.rmtree(venv, ignore_errors=True)
                names = [r for r in requirements if not r.startswith("-")]
                said = [ln for ln in got.stdout.splitlines() if ln.startswith("ERROR:")]
                raise AirflowException("task %s: pip could not install the requirements %s "
                                       "(exit %d)%s" % (task_id, ", ".join(names),
                                                        got.returncode,
                                                        ": " + said[-1] if said else ""))
        open(os.path.join(venv, _READY), "w").close()
    return python


def requirement_lines(requirements: Any, task_id: str) -> List[str]:
    """Airflow's `requirements`: a list of requirement strings, or one string (several
    lines: one each, comments and blank lines left out)."""
    if requirements is None:
        return []
    if isinstance(requirements, str):
        items = requirements.splitlines()
    elif isinstance(requirements, (list, tuple, set)):
        items = [str(r) for r in requirements]
    else:
        raise TypeError("task %s: requirements: expected a list of strings, got %r"
                        % (task_id, requirements))
    return [r.strip() for r in items if r.strip() and not r.strip().startswith("#")]
