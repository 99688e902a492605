"""Rendering an operator's `template_fields` with Jinja as Airflow 2.x renders them, at run
time, with the context of context.py.

- `get_template_env(dag)`: the DAG's Jinja environment: a sandboxed one (a
  `NativeEnvironment` when the DAG sets `render_template_as_native_obj`), templates loaded
  from the DAG file's folder then each of `template_searchpath`, `undefined` =
  `jinja2.StrictUndefined` unless the DAG sets `template_undefined` (so a misspelt name
  raises `jinja2.UndefinedError`, as in Airflow), the `do` extension, Airflow's filters
  (`ds`, `ds_nodash`, `ts`, `ts_nodash`, `ts_nodash_with_tz`), then the DAG's
  `user_defined_macros` as globals and `user_defined_filters` as filters, and
  `jinja_environment_kwargs` applied last.  Without a DAG: a bare sandboxed environment.
- `render_template_fields(operator, context, jinja_env=None)`: renders each field named in
  `operator.template_fields` in place.  A string ending in one of `operator.template_ext`
  (".sh", ".sql", ".json" ...) names a template file, loaded through the environment's
  search path (no `..`, no absolute path: Jinja refuses them); other strings are templates.
  Lists, tuples (named ones too), sets and dict values are rendered element by element;
  an object with `template_fields` of its own has those rendered in place; an object with
  `resolve` and `iter_references` (an `XComArg`, a `LiteralValue`) is replaced by
  `resolve(context)`; a callable field is called as `field(context=..., jinja_env=...)`;
  empty values and other objects are left as they are.  An error keeps its type (KeyError
  for a missing variable, `jinja2.UndefinedError`, `jinja2.TemplateNotFound`) and gains a
  note naming the task and the field.
- `resolve_template_files(operator, jinja_env=None)`: what Airflow does when the DAG file is
  parsed: a field naming a template file gets the file's text.
"""

from __future__ import annotations

import os
from datetime import date, datetime
from datetime import time as dtime
from typing import Any, Callable, Optional, Union

import jinja2
import jinja2.nativetypes
import jinja2.sandbox

Dateish = Union[date, datetime, dtime, None]


def ds_filter(value: Dateish) -> Optional[str]:
    """`{{ logical_date | ds }}`: YYYY-MM-DD."""
    return None if value is None else value.strftime("%Y-%m-%d")


def ds_nodash_filter(value: Dateish) -> Optional[str]:
    """`{{ logical_date | ds_nodash }}`: YYYYMMDD."""
    return None if value is None else value.strftime("%Y%m%d")


def ts_filter(value: Dateish) -> Optional[str]:
    """`{{ logical_date | ts }}`: the ISO 8601 form, 2018-01-01T00:00:00+00:00."""
    return None if value is None else value.isoformat()


def ts_nodash_filter(value: Dateish) -> Optional[str]:
    """`{{ logical_date | ts_nodash }}`: 20180101T000000."""
    return None if value is None else value.strftime("%Y%m%dT%H%M%S")


def ts_nodash_with_tz_filter(value: Dateish) -> Optional[str]:
    """`{{ logical_date | ts_nodash_with_tz }}`: 20180101T000000+0000."""
    return None if value is None else value.isoformat().replace("-", "").replace(":", "")


FILTERS: dict[str, Callable[..., Any]] = {
    "ds": ds_filter,
    "ds_nodash": ds_nodash_filter,
    "ts": ts_filter,
    "ts_nodash": ts_nodash_filter,
    "ts_nodash_with_tz": ts_nodash_with_tz_filter,
}


class SandboxedEnvironment(jinja2.sandbox.SandboxedEnvironment):
    """Airflow's default environment: sandboxed, with its filters; unlike Jinja's own
    sandbox it lets templates read `_private` attributes (not `__dunder__` ones)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.filters.update(FILTERS)

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        return not attr.startswith("__")


class NativeEnvironment(jinja2.nativetypes.NativeEnvironment):
    """The environment of a DAG with `render_template_as_native_obj=True`: a template
    that is one expression renders to that expression's Python value."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.filters.update(FILTERS)


def _search_path(dag: Any) -> list[str]:
    folder = getattr(dag, "folder", None)
    if folder is None:
        fileloc = getattr(dag, "fileloc", None)
        folder = os.path.dirname(fileloc) if fileloc else None
    extra = getattr(dag, "template_searchpath", None) or []
    if isinstance(extra, (str, os.PathLike)):
        extra = [extra]
    return ([os.fspath(folder)] if folder else []) + [os.fspath(p) for p in extra]


def get_template_env(dag: Any = None, *, force_sandboxed: bool = False,
                     finalize: Optional[Callable[[Any], Any]] = None) -> jinja2.Environment:
    """The Jinja environment that renders the templates of `dag`'s tasks (see the module's
    docstring); `dag` is read by attribute: `folder` or `fileloc`, `template_searchpath`,
    `template_undefined`, `render_template_as_native_obj`, `user_defined_macros`,
    `user_defined_filters`, `jinja_environment_kwargs`.  None: a bare sandboxed one.
    `finalize`: Jinja's, applied to each value an expression writes (the task runner's
    ShellValues for a BashOperator's command)."""
    if dag is None:
        return SandboxedEnvironment(cache_size=0)
    options: dict[str, Any] = {
        "loader": jinja2.FileSystemLoader(_search_path(dag)),
        "undefined": getattr(dag, "template_undefined", None) or jinja2.StrictUndefined,
        "extensions": ["jinja2.ext.do"],
        "cache_size": 0,
    }
    if finalize is not None:
        options["finalize"] = finalize
    options.update(getattr(dag, "jinja_environment_kwargs", None) or {})
    env: jinja2.Environment
    if getattr(dag, "render_template_as_native_obj", False) and not force_sandboxed:
        env = NativeEnvironment(**options)
    else:
        env = SandboxedEnvironment(**options)
    env.globals.update(getattr(dag, "user_defined_macros", None) or {})
    env.filters.update(getattr(dag, "user_defined_filters", None) or {})
    return env


class _Where:
    """A DAG's template settings with its folder given (its fileloc may be unset yet)."""

    def __init__(self, dag: Any, folder: Optional[str]) -> None:
        self.dag = dag
        self.folder = folder

    def __getattr__(self, name: str) -> Any:
        return getattr(self.dag, name, None)


def dag_doc_md(dag: Any, fileloc: Optional[str]) -> Optional[str]:
    """The DAG's doc_md as Airflow 2's DAG.get_doc_md gives it: a name ending in `.md` is a
    template file found on the DAG's search path (its folder, then `template_searchpath`),
    rendered without a context (a missing one: Airflow's "Templating Error!" text); any
    other text is rendered as a plain Jinja template."""
    doc_md = getattr(dag, "doc_md", None)
    if doc_md is None:
        return None
    text = str(doc_md)
    if not text.endswith(".md"):
        return jinja2.Template(text).render()
    folder = getattr(dag, "folder", None) or (os.path.dirname(fileloc) if fileloc else None)
    env = get_template_env(_Where(dag, folder), force_sandboxed=True)
    try:
        return env.get_template(text).render()
    except jinja2.exceptions.TemplateNotFound:
        return "# Templating Error!\nNot able to find the template file: `%s`.\n" % text


def _template_ext(operator: Any) -> tuple[str, ...]:
    ext = getattr(operator, "template_ext", None) or ()
    return (ext,) if isinstance(ext, str) else tuple(ext)


def _field_names(holder: Any) -> tuple[str, ...]:
    names = getattr(holder, "template_fields", None) or ()
    return (names,) if isinstance(names, str) else tuple(names)


def render_template(
    value: Any,
    context: dict[str, Any],
    jinja_env: jinja2.Environment,
    template_ext: tuple[str, ...] = (),
    seen: Optional[set[int]] = None,
) -> Any:
    """`value` rendered with `context` (see the module's docstring for what is rendered and
    how); `template_ext`: the suffixes that make a string a template file's name."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return value
    if isinstance(value, str):
        if template_ext and value.endswith(template_ext):
            template = jinja_env.get_template(value)
        else:
            template = jinja_env.from_string(value)
        return template.render(context)
    if hasattr(value, "resolve") and hasattr(value, "iter_references"):
        return value.resolve(context)
    if value.__class__ is tuple:
        return tuple(render_template(v, context, jinja_env, template_ext, seen) for v in value)
    if isinstance(value, tuple):  # a named tuple
        return value.__class__(
            *(render_template(v, context, jinja_env, template_ext, seen) for v in value)
        )
    if isinstance(value, list):
        return [render_template(v, context, jinja_env, template_ext, seen) for v in value]
    if isinstance(value, dict):
        return {
            k: render_template(v, context, jinja_env, template_ext, seen) for k, v in value.items()
        }
    if isinstance(value, set):
        return {render_template(v, context, jinja_env, template_ext, seen) for v in value}
    seen.add(id(value))
    if _field_names(value):
        _render_fields(value, _field_names(value), context, jinja_env, template_ext, seen, value)
    return value


def _render_fields(
    holder: Any,
    names: tuple[str, ...],
    context: dict[str, Any],
    jinja_env: jinja2.Environment,
    template_ext: tuple[str, ...],
    seen: set[int],
    operator: Any,
) -> None:
    for name in names:
        if not hasattr(holder, name):
            raise AttributeError(
                f"{name!r} is named in template_fields but {type(holder).__name__} "
                "has no such attribute"
            )
        value = getattr(holder, name)
        try:
            if not value:
                continue
        except Exception:  # objects whose truth is undefined (data frames) are rendered
            pass
        try:
            if callable(value) and not hasattr(value, "template_fields"):
                rendered = value(context=context, jinja_env=jinja_env)
            else:
                rendered = render_template(value, context, jinja_env, template_ext, seen)
        except Exception as exc:
            task_id = getattr(operator, "task_id", type(operator).__name__)
            exc.add_note(f"while rendering the template field {name!r} of task {task_id!r}")
            raise
        setattr(holder, name, rendered)


def render_template_fields(
    operator: Any,
    context: dict[str, Any],
    jinja_env: Optional[jinja2.Environment] = None,
    field_envs: Optional[dict[str, jinja2.Environment]] = None,
) -> None:
    """Render, in place, every field of `operator` named in its `template_fields`, with
    `context` (build_context's) in `jinja_env` (default: `get_template_env(operator.dag)`);
    a field named in `field_envs` in the environment given there."""
    if jinja_env is None:
        jinja_env = get_template_env(getattr(operator, "dag", None))
    seen = {id(operator)}
    names, ext = _field_names(operator), _template_ext(operator)
    for name in names:
        env = (field_envs or {}).get(name, jinja_env)
        _render_fields(operator, (name,), context, env, ext, seen, operator)


def resolve_template_files(operator: Any, jinja_env: Optional[jinja2.Environment] = None) -> None:
    """Replace each template field that names a template file (a string, or strings in a
    list, ending in one of `template_ext`) by the file's text, as Airflow does when it
    parses the DAG file.  A file that cannot be read raises `jinja2.TemplateNotFound`."""
    ext = _template_ext(operator)
    if not ext:
        return
    if jinja_env is None:
        jinja_env = get_template_env(getattr(operator, "dag", None))
    loader = jinja_env.loader
    if loader is None:
        return
    for name in _field_names(operator):
        value = getattr(operator, name, None)
        if isinstance(value, str) and value.endswith(ext):
            setattr(operator, name, loader.get_source(jinja_env, value)[0])
        elif isinstance(value, list):
            files = [
                loader.get_source(jinja_env, v)[0] if isinstance(v, str) and v.endswith(ext) else v
                for v in value
            ]
            setattr(operator, name, files)
