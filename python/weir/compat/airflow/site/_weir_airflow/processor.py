"""The DAG processor: `python3 -m _weir_airflow.processor FILE.py [DAGS_FOLDER]` imports
one Airflow DAG file with weir's `airflow` package first on sys.path and prints one JSON line
on its standard output:

    {"file": FILE, "dags": [DOC, ...]}                    the file's DAGs as weir documents
    {"file": FILE, "error": {"line": N, "message": M}}    an import error (M holds the
                                                          traceback, as Airflow shows it)

What the file itself prints goes nowhere (its standard output and error are /dev/null while
it is imported); `sys.exit()` and any exception are import errors.  The server runs this as a
child process with a time limit and a cap on what it reads (docs/internals/airflow.md).
Where the server gives WEIR_AIRFLOW_WARM_DIR, the processor starts the root of the warm
interpreters there first, when none answers (zygote.py).  With WEIR_AIRFLOW_PARSE_VARS=stdin
the server's variables for the parse come on standard input, and the answer says which the
file read, or which it wants (parse_vars.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import traceback
from typing import Any, Dict, List, Optional, TextIO

from _weir_airflow import parse_vars
from _weir_airflow import spec as spec_module
from _weir_airflow.spec import SITE, SpecError, dag_to_spec


def _quiet() -> TextIO:
    """Sends fd 1 and 2 to /dev/null; returns a writer on the real standard output."""
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    sys.stdout = open(os.devnull, "w")
    sys.stderr = open(os.devnull, "w")
    return out


def error_doc(path: str, exc: BaseException) -> Dict[str, Any]:
    """An import error: the line in `path` where it happened, the message and traceback."""
    line = 0
    if isinstance(exc, SyntaxError) and exc.filename == path:
        line = exc.lineno or 0
    elif isinstance(exc, SpecError):
        line = exc.line
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == path:
            line = frame.lineno or line
    if isinstance(exc, SystemExit):
        head = "the file called sys.exit(%r) while it was imported" % (exc.code,)
    elif isinstance(exc, SpecError):
        head = str(exc)
    else:
        head = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    where = "%s:%d" % (path, line) if line else path
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    if isinstance(exc, SpecError):
        tb = ""
    return {"line": line, "message": "%s: %s%s" % (where, head, "\n" + tb if tb else "")}


def import_file(path: str) -> Any:
    """Imports the DAG file as a module of its own (a name made from its path, as Airflow's)."""
    import importlib.util

    stem = os.path.splitext(os.path.basename(path))[0]
    name = "unusual_prefix_%s_%s" % (hashlib.sha1(path.encode()).hexdigest(), stem)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError("%s: cannot be imported as a Python file" % path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def plugins_folder(folder: Optional[str]) -> Optional[str]:
    """Airflow's plugins folder: $AIRFLOW__CORE__PLUGINS_FOLDER, else `plugins` beside the DAG
    folder (AIRFLOW_HOME's dags/ and plugins/); None when it is not a folder."""
    p = os.environ.get("AIRFLOW__CORE__PLUGINS_FOLDER") or (
        os.path.join(os.path.dirname(os.path.abspath(folder)), "plugins") if folder else "")
    return os.path.abspath(p) if p and os.path.isdir(p) else None


def prepare_path(path: str, folder: Optional[str]) -> None:
    """weir's `airflow` first, then the DAG folder and the file's own (as Airflow adds); the
    plugins folder last (Airflow appends it), and kept for the tasks' command (spec.py)."""
    for p in (os.path.dirname(path), folder):
        if p and p not in sys.path:
            sys.path.insert(0, p)
    sys.path.insert(0, SITE)
    plugins = plugins_folder(folder)
    if plugins and plugins not in sys.path:
        sys.path.append(plugins)
    if plugins:
        spec_module.PLUGINS[:] = [plugins]


def dags_of(module: Any) -> List[Any]:
    """The DAGs the import made: registered ones (with-block, @dag, any DAG(...)) that are
    in the module's globals or were entered as a context or made by @dag; one per id (the
    last, as Airflow's bag keeps)."""
    from airflow.models import dag as dagmod

    found: Dict[str, Any] = {}
    top = {id(v) for v in vars(module).values() if isinstance(v, dagmod.DAG)}
    for d in dagmod.registered:
        if id(d) in top or d.entered:
            found[d.dag_id] = d
    return list(found.values())


def process(path: str, folder: Optional[str] = None) -> Dict[str, Any]:
    """The processor's answer for one file (see the module's doc)."""
    path = os.path.abspath(path)
    prepare_path(path, folder)
    if parse_vars.OFFERED is not None:
        parse_vars.start(path)
    try:
        module = import_file(path)
        if parse_vars.REFUSED_HIT is not None:  # the file caught it: an import error still
            raise parse_vars.VariableRefused(parse_vars.refusal(parse_vars.REFUSED_HIT))
        docs = []
        for d in dags_of(module):
            d.fileloc = path
            if d.task_dict:  # weir's DAGs have a task at least: an empty one is left out
                docs.append(dag_to_spec(d, path))
        answer: Dict[str, Any] = {"file": path, "dags": docs}
    except BaseException as exc:  # noqa: B902 - a DAG file's exit or error is an import error
        answer = {"file": path, "error": error_doc(path, exc)}
    return parse_vars.report(answer)


def main(argv: List[str]) -> int:
    """Entry point: prints the answer for argv[1] as one JSON line."""
    if len(argv) < 2:
        print("usage: python3 -m _weir_airflow.processor FILE.py [DAGS_FOLDER]",
              file=sys.stderr)
        return 2
    if os.environ.get("WEIR_AIRFLOW_WARM_DIR"):
        # the root of the warm interpreters the files' Python tasks start from (zygote.py)
        from _weir_airflow import zygote

        zygote.start(argv[2] if len(argv) > 2 else None)
    parse_vars.take_stdin()  # the server's variables for this parse, when it gives them
    out = _quiet()
    answer = process(argv[1], argv[2] if len(argv) > 2 else None)
    out.write(json.dumps(answer, default=str) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    # os._exit: no atexit handler or thread the DAG file started may hold the exit
    rc = main(sys.argv)
    os._exit(rc)
