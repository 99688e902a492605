"""airflow.operators.python: PythonOperator, a Python callable run in the task's process with
the context (weir.compat.airflow.run_task); BranchPythonOperator and ShortCircuitOperator,
whose callable decides which tasks downstream run (weir's `branch` and `short_circuit`
tasks, docs/dags.md)."""

from __future__ import annotations

import inspect
from typing import Any, Callable, Collection, Dict, List, Mapping, Optional, Sequence

from airflow.models.baseoperator import BaseOperator, xcom_args_in


def take_callable(task: BaseOperator, python_callable: Callable[..., Any],
                  op_args: Optional[Collection[Any]], op_kwargs: Optional[Mapping[str, Any]],
                  templates_dict: Optional[Dict[str, Any]]) -> None:
    """The arguments a task that calls `python_callable` keeps (a PythonOperator, a
    PythonSensor); the tasks whose XComArgs they hold become its upstream."""
    if not callable(python_callable):
        raise TypeError("python_callable: expected a callable, got %r" % (python_callable,))
    setattr(task, "python_callable", python_callable)
    setattr(task, "op_args", list(op_args or []))
    setattr(task, "op_kwargs", dict(op_kwargs or {}))
    setattr(task, "templates_dict", templates_dict)
    for arg in xcom_args_in([list(op_args or []), dict(op_kwargs or {})]):
        task.set_upstream(arg.operator)


class PythonOperator(BaseOperator):
    """Calls `python_callable(*op_args, **op_kwargs)`, with the context's keys that it names
    (or all of them when it takes `**kwargs`); its return value is pushed as XCom."""

    python_callable: Callable[..., Any]  # these four: take_callable()
    op_args: List[Any]
    op_kwargs: Dict[str, Any]
    templates_dict: Optional[Dict[str, Any]]
    template_fields: Sequence[str] = ("templates_dict", "op_args", "op_kwargs")

    def __init__(
        self,
        *,
        python_callable: Callable[..., Any],
        op_args: Optional[Collection[Any]] = None,
        op_kwargs: Optional[Mapping[str, Any]] = None,
        templates_dict: Optional[Dict[str, Any]] = None,
        show_return_value_in_logs: bool = True,
        multiple_outputs: bool = False,
        templates_exts: Optional[Sequence[str]] = None,
        **kwargs: Any,
    ) -> None:
        kwargs.pop("provide_context", None)  # Airflow 1.10's; context is always given
        super().__init__(**kwargs)
        take_callable(self, python_callable, op_args, op_kwargs, templates_dict)
        self.show_return_value_in_logs = show_return_value_in_logs
        self.multiple_outputs = multiple_outputs  # a dict's keys pushed one by one too
        if templates_exts:  # a template field's value ending so is a template file's name
            self.template_ext = list(templates_exts)

    def execute(self, context: Dict[str, Any]) -> Any:
        """Calls the callable with its arguments and the context it asks for."""
        from _weir_airflow.datasets import run_callable

        ctx = dict(context)
        ctx["templates_dict"] = self.templates_dict
        # a generator's `yield Metadata(...)` fills outlet_events (Airflow 2.10)
        return run_callable(self.python_callable, context.get("outlet_events"),
                            self.op_args, determine_kwargs(
                                self.python_callable, self.op_args, ctx, self.op_kwargs))


def determine_kwargs(fn: Callable[..., Any], args: Collection[Any], context: Mapping[str, Any],
                     kwargs: Mapping[str, Any]) -> Dict[str, Any]:
    """`kwargs` plus the context's keys that `fn` takes by name (all of them when it has
    `**kwargs`), leaving out what the positional arguments already fill."""
    sig = inspect.signature(fn)
    out = dict(kwargs)
    if any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
        for k, v in context.items():
            out.setdefault(k, v)
        return out
    positional = [p.name for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][:len(args)]
    for name, p in sig.parameters.items():
        if name in context and name not in out and name not in positional and \
                p.kind != p.POSITIONAL_ONLY:
            out[name] = context[name]
    return out


class BranchPythonOperator(PythonOperator):
    """The callable returns the task id (or a list of them, or None) of the direct downstream
    tasks that run; the others are skipped (weir's `branch: true`: run_task writes the
    choice as the output's `branch`)."""

    weir_flow = "branch"


class ShortCircuitOperator(PythonOperator):
    """A false return value skips every task downstream (with the default
    `ignore_downstream_trigger_rules=True`: weir's `short_circuit: true`), or only the
    direct downstream tasks, whose own downstream follow their trigger rules (False: a
    branch that chooses all or none of them)."""

    def __init__(self, *, ignore_downstream_trigger_rules: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ignore_downstream_trigger_rules = ignore_downstream_trigger_rules
        self.weir_flow = "short_circuit" if ignore_downstream_trigger_rules else "branch"

    def weir_choice(self, result: Any) -> Any:
        """The output's `branch` or `result` for this return value."""
        if self.ignore_downstream_trigger_rules:
            return bool(result)
        return sorted(self.downstream_task_ids) if result else []


# The context of the try under way (run_task sets it): what get_current_context() gives.
CURRENT_CONTEXT: List[Dict[str, Any]] = []


def get_current_context() -> Dict[str, Any]:
    """The running task's context (the dict itself: a key set here is seen by the task's
    map_index_template), as Airflow's; outside a task, AirflowException."""
    from airflow.exceptions import AirflowException

    if not CURRENT_CONTEXT:
        raise AirflowException("Current context was requested but no context was found! "
                               "Are you running within an airflow task?")
    return CURRENT_CONTEXT[-1]


def is_venv_installed() -> bool:
    """Whether PythonVirtualenvOperator can make virtual environments: Python's venv with
    ensurepip (Debian: python3-venv)."""
    import importlib.util

    return importlib.util.find_spec("ensurepip") is not None


def callable_source(fn: Callable[..., Any], task_id: str) -> str:
    """The source of a function run in another interpreter (_weir_airflow.venv)."""
    from _weir_airflow import venv

    return venv.callable_source(fn, task_id)


class ExternalPythonOperator(PythonOperator):
    """Runs `python_callable` in the interpreter `python` (its own packages): the function's
    source and its serialized arguments go to a child process, its serialized return value
    comes back (_weir_airflow.venv).  The function gets its op_args and op_kwargs, and the
    context's plain keys it names (`ds`, `ts`, `run_id` ...: Airflow's serializable ones;
    `templates_dict` too)."""

    template_fields: Sequence[str] = ("templates_dict", "op_args", "op_kwargs", "python")

    def __init__(self, *, python: str, skip_on_exit_code: Any = None,
                 serializer: Optional[str] = None, use_dill: bool = False,
                 string_args: Optional[Collection[str]] = None,
                 expect_airflow: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        from _weir_airflow import venv
        from airflow.operators.bash import skip_codes

        self.python = python
        self.skip_on_exit_code = skip_codes(skip_on_exit_code)
        self.serializer = venv.serializer_of(serializer, use_dill, self.task_id)
        self.string_args = list(string_args or [])
        self.expect_airflow = expect_airflow
        callable_source(self.python_callable, self.task_id)  # a lambda: an import error

    def weir_interpreter(self) -> str:
        """The interpreter that runs the callable."""
        return self.python

    def weir_pendulum(self) -> bool:
        """Whether the other interpreter is given the context's pendulum dates."""
        return False

    def execute(self, context: Dict[str, Any]) -> Any:
        """The callable's return value, from the other interpreter."""
        from _weir_airflow import venv

        fn = self.python_callable
        ctx = venv.context_kwargs(context, self.weir_pendulum())
        ctx["templates_dict"] = self.templates_dict
        kwargs = determine_kwargs(fn, self.op_args, ctx, self.op_kwargs)
        return venv.run_callable(self.weir_interpreter(), fn, self.task_id,
                                 list(self.op_args), kwargs, self.serializer,
                                 self.string_args, self.skip_on_exit_code)


class PythonVirtualenvOperator(ExternalPythonOperator):
    """Runs `python_callable` in a virtual environment made with `python3 -m venv` and
    `requirements` installed by its pip, cached by their hash (_weir_airflow.venv)."""

    template_fields: Sequence[str] = ("templates_dict", "op_args", "op_kwargs",
                                      "requirements")
    template_ext: Sequence[str] = (".txt",)

    def __init__(self, *, requirements: Any = None, python_version: Any = None,
                 system_site_packages: bool = True,
                 pip_install_options: Optional[List[str]] = None,
                 index_urls: Any = None, venv_cache_path: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(python="", **kwargs)
        self.requirements = requirements
        self.python_version = python_version
        self.system_site_packages = bool(system_site_packages)
        self.pip_install_options = list(pip_install_options or [])
        self.index_urls = [index_urls] if isinstance(index_urls, str) else \
            list(index_urls or [])
        self.venv_cache_path = None if venv_cache_path is None else str(venv_cache_path)

    def weir_requirements(self) -> List[str]:
        """The requirements as pip gets them (Airflow's: the serializer added without the
        system's packages, sorted so that the hash is stable)."""
        from _weir_airflow import venv

        out = venv.requirement_lines(self.requirements, self.task_id)
        if not self.system_site_packages and self.serializer != "pickle" and \
                self.serializer not in out:
            out.append(self.serializer)
        return sorted(out)

    def weir_pendulum(self) -> bool:
        return self.system_site_packages or any(
            r.lower().startswith("pendulum") for r in self.weir_requirements())

    def weir_interpreter(self) -> str:
        from _weir_airflow import venv

        return venv.ensure_venv(self.task_id, self.weir_requirements(), self.python_version,
                                self.system_site_packages, self.pip_install_options,
                                self.index_urls, self.venv_cache_path)


def task(python_callable: Optional[Callable[..., Any]] = None,
         multiple_outputs: Optional[bool] = None, **kwargs: Any) -> Any:
    """`from airflow.operators.python import task`, Airflow 2.0's path of `@task`, which
    Airflow 2 still imports (with a deprecation warning): `airflow.decorators.task`."""
    import warnings

    from airflow.decorators import task as decorator_task

    warnings.warn("airflow.operators.python.task is deprecated. Use airflow.decorators.task "
                  "instead.", DeprecationWarning, stacklevel=2)
    if multiple_outputs is not None:
        kwargs["multiple_outputs"] = multiple_outputs
    return decorator_task(python_callable, **kwargs)
