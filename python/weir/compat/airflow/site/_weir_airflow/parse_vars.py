"""The variables a DAG file's parse is given (docs/airflow.md, "Variables at a file's parse").

The server gives a parse the variables the file names literally (spec.variables_named(), the
scan that also decides what its tasks get): `{"values": {KEY: TEXT or null}, "refused": [KEY]}`
(null: the server has no such variable; refused: a secret key, never given to a parse).  A
cold processor reads it on standard input (WEIR_AIRFLOW_PARSE_VARS=stdin), a warm one's child
from its request (`give()`).  A top-level `Variable.get` then reads it through `read()`:

- a key the file does not name literally (computed) is not given: default_var, else KeyError;
- a secret key is refused: the file's import error names it, whatever its default_var;
- a named key the server did not offer (it learns a file's names from its parse) ends the
  parse with `variables_wanted`: the server parses the file again with them;
- every named key read is reported (`variables_read`): the server parses the file again when
  one of them changes.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict, List, Optional, Set, Tuple

# None: this parse was given no variables (`weir dags check`, a processor run by hand)
OFFERED: Optional[Dict[str, Optional[str]]] = None
REFUSED: Set[str] = set()
NAMED: Set[str] = set()
READ: List[str] = []
# every key read outside a task, given or not: a warm interpreter (zygote.py) refuses such a file
TOUCHED: List[str] = []
WANTED = False
REFUSED_HIT: Optional[str] = None

ENV = "WEIR_AIRFLOW_PARSE_VARS"


class WantVariables(BaseException):
    """The file read a variable it names that the server did not offer: the parse ends here
    (a BaseException: the file's `except Exception` does not keep it going)."""


class VariableRefused(KeyError):
    """A secret variable read at the file's parse."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def give(doc: Any) -> None:
    """Takes the server's `{"values": {...}, "refused": [...]}`; anything else gives none."""
    global OFFERED
    if not isinstance(doc, dict) or not isinstance(doc.get("values"), dict):
        return
    OFFERED = {str(k): (v if isinstance(v, str) else None) for k, v in doc["values"].items()}
    REFUSED.update(str(k) for k in doc.get("refused") or [] if isinstance(k, str))


def take_stdin() -> None:
    """A cold processor's: the variables on standard input when the server says so (the
    flag leaves the environment: the file's own processes do not see it)."""
    if os.environ.pop(ENV, "") != "stdin":
        return
    try:
        text = sys.stdin.read()
        give(json.loads(text) if text.strip() else None)
    except (OSError, ValueError):
        pass


_PATH: List[str] = []  # the file being parsed: its names are read at its first read


def start(path: str) -> None:
    """Before the import: the file whose names `read()` scans for, at its first read (a file
    that reads no variable at its top level costs nothing more)."""
    _PATH[:] = [path]
    NAMED.clear()


def _named() -> Set[str]:
    if _PATH:
        from _weir_airflow.spec import variables_named

        NAMED.update(variables_named(_PATH.pop()))
    return NAMED


def refusal(key: str) -> str:
    return ("Variable %s is secret (its key holds a sensitive name: Airflow's list or the "
            "server's sensitive_var_conn_names) and weir gives no secret variable to a DAG "
            "file's parse: what the parse makes is kept and shown (the DAG's tasks, their "
            "commands). Read it in a task or a template, {{ var.value.%s }}, where its value "
            "is masked in the log" % (key, key))


def read(key: str) -> Tuple[bool, Optional[str], str]:
    """A top-level read of `key`: (given, text or None, why for a KeyError)."""
    global WANTED, REFUSED_HIT
    TOUCHED.append(key)
    if OFFERED is None:
        return False, None, ("weir's DAG processor was given no variables for this parse "
                             "(`weir dags check` and `weir dags test` parse without the "
                             "server's): give Variable.get a default_var, or read it in a task")
    if key not in _named():
        return False, None, ("its name is not written out in the DAG file: a parse, as a "
                             "task, gets the variables its file names literally, "
                             "Variable.get(\"KEY\"); write the key out or give a default_var")
    if key not in READ:
        READ.append(key)
    if key in REFUSED:
        REFUSED_HIT = REFUSED_HIT or key
        raise VariableRefused(refusal(key))
    if key not in OFFERED:
        WANTED = True
        raise WantVariables(key)
    return True, OFFERED[key], ""


def report(answer: Dict[str, Any]) -> Dict[str, Any]:
    """The processor's answer with what the server must know: the parse again with the
    file's names, or the keys read; a refused read the file caught is its import error all
    the same."""
    if OFFERED is None:
        return answer
    if WANTED:
        return {"file": answer.get("file"), "variables_wanted": sorted(NAMED)}
    answer["variables_read"] = sorted(READ)
    return answer
