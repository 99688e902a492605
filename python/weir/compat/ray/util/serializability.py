"""ray.util.inspect_serializability(): why an object cannot be pickled (docs/ray.md).

A call's function, its arguments and its result travel as cloudpickle's pickles; when one
cannot be made, this walks what the object holds (a function's globals and closure cells,
an instance's attributes, a class's members, a container's items) to find the innermost
pieces that fail, prints the walk as a tree and returns them.
"""

import inspect
import sys
from typing import Any, Iterator, List, Optional, Set, TextIO, Tuple

import cloudpickle

__all__ = ["inspect_serializability", "FailureTuple"]


class FailureTuple:
    """One piece that cannot be pickled: the object, its name, and the object that holds
    it (None for the object inspected itself)."""

    def __init__(self, obj: Any, name: str, parent: Any) -> None:
        self.obj = obj
        self.name = name
        self.parent = parent

    def __repr__(self) -> str:
        return "FailureTuple(%s [obj=%s, parent=%s])" % (self.name, _short(self.obj),
                                                        _short(self.parent))


def _short(obj: Any, n: int = 60) -> str:
    try:
        text = repr(obj)
    except Exception:
        text = "<%s>" % type(obj).__name__
    return text if len(text) <= n else text[:n - 3] + "..."


def _why(obj: Any) -> Optional[str]:
    """None when obj pickles, else the error's text."""
    try:
        cloudpickle.dumps(obj)
        return None
    except Exception as e:
        return "%s: %s" % (type(e).__name__, e)


def _parts(obj: Any) -> Iterator[Tuple[str, Any]]:
    """(name, piece) of what obj holds, as pickling it would take them."""
    if inspect.isfunction(obj):
        cv = inspect.getclosurevars(obj)
        for k, v in cv.nonlocals.items():
            yield "closure variable %s" % k, v
        for k, v in cv.globals.items():
            if not inspect.ismodule(v):
                yield "global %s" % k, v
        for i, d in enumerate(obj.__defaults__ or ()):
            yield "default %d" % (i + 1), d
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield "key %s" % _short(k, 30), k
            yield "[%s]" % _short(k, 30), v
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for i, v in enumerate(obj):
            yield "item %d" % i, v
    elif inspect.isclass(obj):
        for k, v in vars(obj).items():
            if not (k.startswith("__") and k.endswith("__")):
                yield "member %s" % k, v
    else:
        state = getattr(obj, "__dict__", None)
        if isinstance(state, dict):
            for k, v in state.items():
                yield "attribute %s" % k, v


def inspect_serializability(base_obj: Any, name: Optional[str] = None, depth: int = 3,
                            print_file: Optional[TextIO] = None
                            ) -> Tuple[bool, Set[FailureTuple]]:
    """(whether base_obj pickles, the innermost pieces that do not): the walk goes depth
    levels into what it holds; a piece that fails and holds nothing that fails (or lies at
    the last level) is one of the failures.  The tree is printed to print_file (stdout)."""
    out = print_file or sys.stdout
    top = name or getattr(base_obj, "__qualname__", None) or type(base_obj).__name__
    failures: Set[FailureTuple] = set()
    lines: List[str] = []
    why = _why(base_obj)
    if why is None:
        print("%s can be pickled" % top, file=out)
        return True, failures
    lines.append("%s cannot be pickled: %s" % (top, why))
    seen: Set[int] = set()

    def walk(obj: Any, label: str, parent: Any, level: int, indent: str) -> None:
        """obj fails: its pieces that fail, each a line under it."""
        seen.add(id(obj))
        found = False
        if level < depth:
            for part, piece in _parts(obj):
                if id(piece) in seen:
                    continue
                err = _why(piece)
                if err is None:
                    continue
                found = True
                lines.append("%s- %s (%s) cannot be pickled: %s" % (
                    indent, part, type(piece).__name__, err))
                walk(piece, part, obj, level + 1, indent + "    ")
        if not found:
            failures.add(FailureTuple(obj, label, parent))
            lines.append("%s  => %s is where it fails" % (indent, label))

    walk(base_obj, top, None, 0, "    ")
    print("\n".join(lines), file=out)
    return False, failures
