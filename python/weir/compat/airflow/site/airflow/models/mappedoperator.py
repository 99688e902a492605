"""airflow.models.mappedoperator: dynamic task mapping as a DAG file writes it.

`Op.partial(**fixed).expand(arg=...)`, `.expand_kwargs(...)`, a `@task`'s
`.partial(...).expand(...)`, and the XComArgs `.map(fn)` and `.zip(...)` make a
MappedOperator: one task of the DAG whose instances weir's `foreach` makes (the spec in
_weir_airflow.mapping), each of which builds the real operator with its own arguments when
it runs (mapping.unmap), as Airflow's MappedOperator unmaps at run time.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

from airflow.models.baseoperator import BaseOperator, XComArg, xcom_args_in

_NOTSET: Any = object()


class MapXComArg(XComArg):
    """`xcom_arg.map(fn)`: each item of the upstream's list passed through `fn` (and the
    functions after it), lazily, in the task that reads it."""

    def __init__(self, source: XComArg, fns: Sequence[Callable[[Any], Any]]) -> None:
        super().__init__(source.operator, source.key)
        self.source = source
        self.fns = list(fns)

    def map(self, fn: Callable[[Any], Any]) -> "MapXComArg":
        """One more function after these."""
        return MapXComArg(self.source, self.fns + [fn])

    def sources(self) -> List[XComArg]:
        """The plain XComArgs it reads."""
        return sources_of(self.source)

    def __repr__(self) -> str:
        return "%r.map(%s)" % (self.source, ", ".join(getattr(f, "__name__", "?")
                                                      for f in self.fns))


class ZipXComArg(XComArg):
    """`xcom_arg.zip(other, ..., fillvalue=...)`: tuples of the lists' items, as Python's
    `zip` (the shortest list's length), or `itertools.zip_longest` with a fillvalue."""

    def __init__(self, args: Sequence[XComArg], fillvalue: Any = _NOTSET) -> None:
        super().__init__(args[0].operator, args[0].key)
        self.args = list(args)
        self.fillvalue = fillvalue

    def sources(self) -> List[XComArg]:
        """The plain XComArgs it reads."""
        return [s for a in self.args for s in sources_of(a)]

    def __repr__(self) -> str:
        return "zip(%s)" % ", ".join(repr(a) for a in self.args)


def xcom_map(arg: XComArg, fn: Callable[[Any], Any]) -> MapXComArg:
    """XComArg.map()."""
    if isinstance(arg, MapXComArg):
        return arg.map(fn)
    return MapXComArg(arg, [fn])


def xcom_zip(arg: XComArg, others: Sequence[Any], fillvalue: Any = _NOTSET) -> ZipXComArg:
    """XComArg.zip()."""
    for o in others:
        if not isinstance(o, XComArg):
            raise TypeError("zip: expected XComArgs, got %r" % (o,))
    return ZipXComArg([arg, *others], fillvalue)


def sources_of(value: Any) -> List[XComArg]:
    """The plain XComArgs (a task and a key) a value reads: a map's or a zip's sources."""
    if isinstance(value, (MapXComArg, ZipXComArg)):
        return value.sources()
    return [x for v in xcom_args_in(value) for x in
            (v.sources() if isinstance(v, (MapXComArg, ZipXComArg)) else [v])]


# The arguments a partial() keeps for the task itself (BaseOperator's), not for each
# instance's operator only; the others are kept too, for the operator built at run time.
class OperatorPartial:
    """What `Op.partial(task_id=..., **fixed)` returns: `expand()` or `expand_kwargs()`
    make the mapped task."""

    def __init__(self, operator_class: Any, kwargs: Dict[str, Any],
                 decorated: Optional[Any] = None) -> None:
        if "task_id" not in kwargs:
            raise TypeError("partial() of %s: missing task_id" % operator_class.__name__)
        self.operator_class = operator_class
        self.kwargs = kwargs
        self.decorated = decorated  # the @task factory, or None for an operator class

    def expand(self, **mapped: Any) -> Any:
        """One instance per item of each list (several: their cross product, the last
        argument varying fastest, as Airflow); an XComArg is the upstream's list."""
        if not mapped:
            raise TypeError("expand() of %s: no argument to map over" % self.kwargs["task_id"])
        for name, value in mapped.items():
            if name in self.kwargs or (self.decorated is not None and
                                       name in self.kwargs.get("op_kwargs", {})):
                raise TypeError("expand(): %s is given to partial() too" % name)
            if not isinstance(value, (XComArg, list, tuple, dict)):
                raise ValueError("expand(%s=%r): expected a list, a dict or an XComArg"
                                 % (name, value))
        return self._made(MappedOperator(self, "dict", mapped))

    def expand_kwargs(self, kwargs: Any) -> Any:
        """One instance per dict of the list (or the upstream's list of dicts): its keys
        are the instance's arguments."""
        if not isinstance(kwargs, (XComArg, list, tuple)):
            raise ValueError("expand_kwargs(%r): expected a list of dicts or an XComArg"
                             % (kwargs,))
        if isinstance(kwargs, (list, tuple)):
            for item in kwargs:
                if not isinstance(item, dict):
                    raise ValueError("expand_kwargs: expected dicts, got %r" % (item,))
        return self._made(MappedOperator(self, "list", kwargs))

    def _made(self, op: "MappedOperator") -> Any:
        return XComArg(op) if self.decorated is not None else op


class MappedOperator(BaseOperator):
    """A mapped task: its task arguments (retries, pool, trigger_rule, ...) are the
    partial()'s; `expand_input` is ("dict", {name: list or XComArg}) or ("list", list of
    dicts or XComArg)."""

    def __init__(self, partial: OperatorPartial, kind: str, value: Any) -> None:
        kwargs = dict(partial.kwargs)
        if partial.decorated is not None:
            kwargs.pop("python_callable", None)
            kwargs.pop("op_args", None)
            kwargs.pop("op_kwargs", None)
            kwargs.pop("multiple_outputs", None)
        self.map_index_template: Optional[str] = kwargs.pop("map_index_template", None)
        super().__init__(**kwargs)
        self.weir_operator_class = partial.operator_class
        self.partial_kwargs = dict(partial.kwargs)
        self.decorated = partial.decorated
        self.expand_input = (kind, value)
        # a run's default_args for the operator each instance builds
        merged: Dict[str, Any] = dict(self.dag.default_args) if self.dag is not None else {}
        if self.task_group is not None:
            merged.update(self.task_group.merged_default_args())
        self.weir_default_args = merged
        for key, v in kwargs.items():
            if key.endswith("conn_id"):
                setattr(self, key, v)  # the connections the task lists
        if partial.decorated is not None:
            self.op_kwargs = dict(partial.kwargs.get("op_kwargs") or {})
        for arg in sources_of([value, partial.kwargs]):
            self.set_upstream(arg.operator)

    def __repr__(self) -> str:
        return "<Mapped(%s): %s>" % (self.weir_operator_class.__name__, self.task_id)


def partial_of(operator_class: Any, kwargs: Dict[str, Any]) -> OperatorPartial:
    """BaseOperator.partial()."""
    return OperatorPartial(operator_class, kwargs)
