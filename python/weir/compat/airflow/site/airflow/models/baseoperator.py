"""airflow.models.baseoperator: BaseOperator, the task arguments every operator takes,
dependencies (`>>`, `<<`, set_upstream/downstream) and `chain`."""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Union

from airflow.models.dag import DAG, caller_line, current_dag
from airflow.models.abstractoperator import AbstractOperator

# The arguments default_args may give (those weir reads; the others are kept as given).
_DEFAULTABLE = (
    "owner", "email", "email_on_failure", "email_on_retry", "retries", "retry_delay", "retry_exponential_backoff",
    "max_retry_delay", "execution_timeout", "pool", "pool_slots", "queue",
    "priority_weight", "weight_rule", "depends_on_past", "wait_for_downstream", "trigger_rule",
    "start_date", "end_date", "do_xcom_push", "sla", "on_execute_callback",
    "on_success_callback", "on_failure_callback", "on_retry_callback", "on_skipped_callback",
    "max_active_tis_per_dag", "max_active_tis_per_dagrun", "task_concurrency",
)
_TASK_ID = re.compile(r"^[A-Za-z0-9_.-]+$")

DependencyTarget = Union["BaseOperator", "XComArg", Sequence[Union["BaseOperator", "XComArg"]]]


def _as_list(value: Any) -> List[Any]:
    """An `outlets` or `inlets` argument as a list (Airflow takes one item or a list)."""
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple, set)) else [value]


class DependencyMixin:
    """`a >> b`, `a << b`, `[a, b] >> c` in terms of set_upstream/set_downstream (a task, a
    task group), an edge's label in between (EdgeTarget)."""

    def set_upstream(self, other: Any) -> None:
        raise NotImplementedError

    def set_downstream(self, other: Any) -> None:
        raise NotImplementedError

    def __rshift__(self, other: Any) -> Any:
        if isinstance(other, EdgeTarget):
            return other.__rrshift__(self)
        self.set_downstream(other)
        return other

    def __lshift__(self, other: Any) -> Any:
        if isinstance(other, EdgeTarget):
            return other.__rlshift__(self)
        self.set_upstream(other)
        return other

    def __rrshift__(self, other: Any) -> Any:
        self.set_upstream(other)  # [a, b] >> self
        return self

    def __rlshift__(self, other: Any) -> Any:
        self.set_downstream(other)  # [a, b] << self
        return self


class BaseOperator(DependencyMixin, AbstractOperator):
    """A task.  Subclasses set what it runs; weir reads the arguments below."""

    _log_config_logger_name = "airflow.task.operators"

    template_fields: Sequence[str] = ()
    template_ext: Sequence[str] = ()
    # "branch" or "short_circuit": the task's return value decides what runs downstream
    # (weir's task keys of the same names); weir_choice() turns it into the output's value
    weir_flow: Optional[str] = None

    def weir_choice(self, result: Any) -> Any:
        """The output's `branch` (task ids) or `result` (a truth) for a return value."""
        return result

    def __init__(
        self,
        task_id: str,
        dag: Optional[DAG] = None,
        default_args: Optional[Dict[str, Any]] = None,
        **kwargs: Any,
    ) -> None:
        from airflow.utils.task_group import current_group

        if not isinstance(task_id, str) or not _TASK_ID.match(task_id):
            raise ValueError("task_id %r: expected letters, digits, '_', '-' or '.'" % (task_id,))
        group = kwargs.pop("task_group", None) or current_group()
        self.task_group = group
        self.task_id = group.child_id(task_id) if group is not None else task_id
        self.lineno = caller_line()
        self.dag: Optional[DAG] = dag if dag is not None else (
            group.dag if group is not None and group.dag is not None else current_dag())
        merged: Dict[str, Any] = {}
        if self.dag is not None:
            merged.update(self.dag.default_args)
        if group is not None:
            merged.update(group.merged_default_args())
        merged.update(default_args or {})
        for key in _DEFAULTABLE:
            if key not in kwargs and key in merged:
                kwargs[key] = merged[key]
        self.owner: str = kwargs.pop("owner", "airflow")
        self.retries: int = int(kwargs.pop("retries", 0) or 0)
        self.retry_delay: Any = kwargs.pop("retry_delay", _dt.timedelta(seconds=300))
        self.retry_exponential_backoff: bool = bool(kwargs.pop("retry_exponential_backoff", False))
        self.max_retry_delay: Any = kwargs.pop("max_retry_delay", None)
        self.execution_timeout: Any = kwargs.pop("execution_timeout", None)
        self.pool: Optional[str] = kwargs.pop("pool", None)
        self.pool_slots: int = int(kwargs.pop("pool_slots", 1))
        self.queue: Optional[str] = kwargs.pop("queue", None)
        self.priority_weight: int = int(kwargs.pop("priority_weight", 1))
        # task concurrency (weir's max_active_tis_per_dag(run) task keys); task_concurrency is
        # Airflow 2's old name of the first, read when the new one is not given
        old = kwargs.pop("task_concurrency", None)
        per_dag = kwargs.pop("max_active_tis_per_dag", None)
        self.max_active_tis_per_dag: Optional[int] = old if per_dag is None else per_dag
        self.max_active_tis_per_dagrun: Optional[int] = kwargs.pop("max_active_tis_per_dagrun",
                                                                   None)
        self.task_concurrency: Optional[int] = self.max_active_tis_per_dag
        rule_w = kwargs.pop("weight_rule", "downstream")
        self.weight_rule: str = str(getattr(rule_w, "value", rule_w))
        if self.weight_rule not in ("downstream", "upstream", "absolute"):
            raise ValueError("task %s: weight_rule %r: expected downstream, upstream or "
                             "absolute" % (self.task_id, rule_w))
        self.depends_on_past: bool = bool(kwargs.pop("depends_on_past", False))
        self.wait_for_downstream: bool = bool(kwargs.pop("wait_for_downstream", False))
        rule = kwargs.pop("trigger_rule", "all_success")
        self.trigger_rule: str = str(getattr(rule, "value", rule))
        self.do_xcom_push: bool = bool(kwargs.pop("do_xcom_push", True))
        self.doc_md: Optional[str] = kwargs.pop("doc_md", None)
        self.start_date: Any = kwargs.pop("start_date", None)
        self.end_date: Any = kwargs.pop("end_date", None)
        # Datasets: each success of the task is an update of its outlets' URIs
        self.outlets: List[Any] = _as_list(kwargs.pop("outlets", None))
        self.inlets: List[Any] = _as_list(kwargs.pop("inlets", None))
        # the task's own params, over the DAG's in its context (Airflow's)
        self.params: Dict[str, Any] = dict(kwargs.pop("params", None) or {})
        self.is_setup = False
        self.is_teardown = False
        self.on_failure_fail_dagrun = False
        self.other: Dict[str, Any] = kwargs  # accepted, not used by weir yet
        self.upstream_task_ids: Set[str] = set()
        self.downstream_task_ids: Set[str] = set()
        if self.dag is not None:
            self.dag.add_task(self)
        if group is not None:
            group.add(self)
        for frame in _SETUP_TEARDOWN_BLOCKS:
            frame.created.append(self)

    # -- dependencies -------------------------------------------------------------------------
    def _relate(self, other: DependencyTarget, upstream: bool) -> None:
        items: Iterable[Any] = other if isinstance(other, (list, tuple, set)) else [other]
        for item in items:
            for op in _operators_of(item, upstream_side=upstream):
                if self.dag is None and op.dag is not None:
                    self.dag = op.dag
                    op.dag.add_task(self)
                if upstream:
                    self.upstream_task_ids.add(op.task_id)
                    op.downstream_task_ids.add(self.task_id)
                else:
                    self.downstream_task_ids.add(op.task_id)
                    op.upstream_task_ids.add(self.task_id)

    def set_upstream(self, other: DependencyTarget) -> None:
        """`other` runs before this task."""
        self._relate(other, upstream=True)

    def set_downstream(self, other: DependencyTarget) -> None:
        """`other` runs after this task."""
        self._relate(other, upstream=False)

    def as_setup(self) -> "BaseOperator":
        """Marks the task a setup: a teardown below it runs once it succeeded."""
        self.is_setup = True
        return self

    def as_teardown(self, setups: Any = None,
                    on_failure_fail_dagrun: Optional[bool] = None) -> "BaseOperator":
        """Marks the task a teardown: it runs when its upstream are done and one of its setups
        succeeded (trigger rule all_done_setup_success), and its failure does not fail the
        run unless on_failure_fail_dagrun; `setups` become its upstream."""
        self.is_teardown = True
        self.trigger_rule = "all_done_setup_success"
        if on_failure_fail_dagrun is not None:
            self.on_failure_fail_dagrun = bool(on_failure_fail_dagrun)
        if setups is not None:
            items = setups if isinstance(setups, (list, tuple, set)) else [setups]
            for s in items:
                _operator_of(s).as_setup()
            self.set_upstream(setups)
        return self

    @classmethod
    def partial(cls, **kwargs: Any) -> Any:
        """The fixed arguments of a mapped task: `.expand()` or `.expand_kwargs()` next
        (airflow.models.mappedoperator)."""
        from airflow.models.mappedoperator import partial_of

        return partial_of(cls, kwargs)

    @property
    def output(self) -> "XComArg":
        """This task's return value, for a downstream task's argument."""
        return XComArg(self)

    def execute(self, context: Dict[str, Any]) -> Any:
        """What the task does; a subclass says."""
        raise NotImplementedError("%s has no execute()" % type(self).__name__)

    def __repr__(self) -> str:
        return "<Task(%s): %s>" % (type(self).__name__, self.task_id)

    # -- `with teardown:` / `with setup >> teardown:` (Airflow 2.7's setup-teardown blocks) --
    def __enter__(self) -> "BaseOperator":
        if not (self.is_setup or self.is_teardown):
            raise TypeError("task %s: only a setup or a teardown task can be used in a "
                            "`with` block" % self.task_id)
        _SETUP_TEARDOWN_BLOCKS.append(_SetupTeardownBlock(self))
        return self

    def __exit__(self, *exc: Any) -> None:
        _SETUP_TEARDOWN_BLOCKS.pop().close()


class _SetupTeardownBlock:
    """A `with` block of a setup or teardown task: the tasks made inside it run after its
    setups (the roots among them) and before its teardowns (the leaves), as Airflow's."""

    def __init__(self, task: BaseOperator) -> None:
        dag = task.dag

        def around(ids: Set[str]) -> List[BaseOperator]:
            return [dag.task_dict[i] for i in sorted(ids)] if dag is not None else []

        self.teardowns: List[BaseOperator]
        self.setups: List[BaseOperator]
        if task.is_teardown:
            self.teardowns = [task]
            self.setups = [t for t in around(task.upstream_task_ids) if t.is_setup]
        else:
            self.setups = [task]
            self.teardowns = [t for t in around(task.downstream_task_ids) if t.is_teardown]
        self.created: List[BaseOperator] = []

    def close(self) -> None:
        ends = set(id(t) for t in self.setups + self.teardowns)
        inside = [t for t in self.created if id(t) not in ends]
        ids = set(t.task_id for t in inside)
        for t in inside:
            if not (t.upstream_task_ids & ids):
                for s in self.setups:
                    t.set_upstream(s)
            if not (t.downstream_task_ids & ids):
                for d in self.teardowns:
                    t.set_downstream(d)


# the `with` blocks of setups and teardowns open now, innermost last
_SETUP_TEARDOWN_BLOCKS: List[_SetupTeardownBlock] = []


class XComArg:
    """A task's return value (its XCom `return_value`), as an argument of a task downstream."""

    def __init__(self, operator: BaseOperator, key: str = "return_value") -> None:
        if isinstance(operator, XComArg):  # XComArg(a_task_call(), key=...): its task
            operator = operator.operator
        self.operator = operator
        self.key = key

    def as_setup(self) -> "XComArg":
        """As the operator's."""
        self.operator.as_setup()
        return self

    def as_teardown(self, setups: Any = None,
                    on_failure_fail_dagrun: Optional[bool] = None) -> "XComArg":
        """As the operator's."""
        self.operator.as_teardown(setups, on_failure_fail_dagrun)
        return self

    def __getitem__(self, key: str) -> "XComArg":
        """The XCom `key` of the same task (a `multiple_outputs` task's key)."""
        return XComArg(self.operator, key)

    def map(self, fn: Any) -> "XComArg":
        """The upstream's list with `fn` applied to each item, when a task reads it."""
        from airflow.models.mappedoperator import xcom_map

        return xcom_map(self, fn)

    def zip(self, *others: Any, **kw: Any) -> "XComArg":
        """Tuples of this list's and the others' items (`fillvalue=`: to the longest)."""
        from airflow.models.mappedoperator import xcom_zip

        return xcom_zip(self, others, **kw)

    def __enter__(self) -> "XComArg":
        self.operator.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.operator.__exit__(*exc)

    def __rshift__(self, other: Any) -> Any:
        return self.operator.__rshift__(other)

    def __lshift__(self, other: Any) -> Any:
        return self.operator.__lshift__(other)

    def __rrshift__(self, other: Any) -> "XComArg":
        self.operator.set_upstream(other)
        return self

    def __rlshift__(self, other: Any) -> "XComArg":
        self.operator.set_downstream(other)
        return self

    def set_upstream(self, other: DependencyTarget) -> None:
        """As the operator's."""
        self.operator.set_upstream(other)

    def set_downstream(self, other: DependencyTarget) -> None:
        """As the operator's."""
        self.operator.set_downstream(other)

    def __repr__(self) -> str:
        return "XComArg(%s, %s)" % (self.operator.task_id, self.key)

    def __str__(self) -> str:
        """The template that pulls this value (Airflow's: an XComArg in an f-string of a
        templated field, example_xcom's bash_pull)."""
        args = ["task_ids='%s'" % self.operator.task_id]
        if self.operator.dag is not None:
            args.append("dag_id='%s'" % self.operator.dag.dag_id)
        args.append("key='%s'" % self.key)
        return "{{ task_instance.xcom_pull(%s) }}" % ", ".join(args)


def _operator_of(item: Any) -> BaseOperator:
    if isinstance(item, XComArg):
        return item.operator
    if isinstance(item, BaseOperator):
        return item
    raise TypeError("expected a task or an XComArg, got %r" % (item,))


def _operators_of(item: Any, upstream_side: bool) -> List[BaseOperator]:
    """A task, an XComArg, or a task group: its leaves when it is on the upstream side of
    an edge, its roots on the downstream side (Airflow's rule for groups)."""
    from airflow.utils.task_group import TaskGroup

    if isinstance(item, TaskGroup):
        return item.get_leaves() if upstream_side else item.get_roots()
    if isinstance(item, EdgeTarget):
        return item.operators(upstream_side)
    return [_operator_of(item)]


class EdgeTarget:
    """What may stand on either side of `>>` beside tasks (a Label)."""

    def operators(self, upstream_side: bool) -> List[BaseOperator]:
        """The tasks it stands for."""
        raise NotImplementedError

    def __rrshift__(self, other: Any) -> Any:
        raise NotImplementedError

    def __rlshift__(self, other: Any) -> Any:
        raise NotImplementedError


def xcom_args_in(value: Any) -> List[XComArg]:
    """The XComArgs inside an argument (lists, tuples, sets and dict values, nested)."""
    if isinstance(value, XComArg):
        return [value]
    if isinstance(value, dict):
        return [x for v in value.values() for x in xcom_args_in(v)]
    if isinstance(value, (list, tuple, set)):
        return [x for v in value for x in xcom_args_in(v)]
    return []


def field_xcom_args(task: Any) -> List[XComArg]:
    """The XComArgs in a task's template fields (`bash_command=XComArg(t, key="cmd")`, a
    PythonOperator's op_args): Airflow makes their tasks upstream and passes their values."""
    fields = [getattr(task, f) for f in getattr(task, "template_fields", ()) if hasattr(task, f)]
    return xcom_args_in(fields)


def cross_downstream(from_tasks: Sequence[Any], to_tasks: Any) -> None:
    """Every task of `from_tasks` runs before every task of `to_tasks`."""
    for task in from_tasks:
        for op in _operators_of(task, upstream_side=True):
            op.set_downstream(to_tasks)


def chain(*tasks: Any) -> None:
    """Each argument runs before the next; a list beside a list of the same length pairs
    them one to one, a list beside a task joins them all (Airflow's rules)."""
    for up, down in zip(tasks, tasks[1:]):
        up_list = isinstance(up, (list, tuple))
        down_list = isinstance(down, (list, tuple))
        if up_list and down_list:
            if len(up) != len(down):
                raise ValueError("chain: lists of different lengths: %d and %d"
                                 % (len(up), len(down)))
            for a, b in zip(up, down):
                _downstream(a, b)
        elif up_list:
            for a in up:
                _downstream(a, down)
        else:
            _downstream(up, down)


def chain_linear(*elements: Any) -> None:
    """Every task of each argument (a task or a list) runs before every task of the next
    (Airflow 2.7's chain_linear: `chain_linear(a, [b, c], [d, e])` makes b and c each run
    before d and e)."""
    if len(elements) < 2:
        raise ValueError("chain_linear: expected two arguments at least")
    for up, down in zip(elements, elements[1:]):
        for a in (up if isinstance(up, (list, tuple)) else [up]):
            _downstream(a, down)


def _downstream(up: Any, down: Any) -> None:
    """`up >> down` for a task, an XComArg, a group or a Label on the left; a Label on the
    right takes `up` as its left side (`chain(a, [Label("x"), Label("y")], [b, c])`)."""
    if isinstance(down, (list, tuple)):
        for d in down:
            _downstream(up, d)
        return
    if isinstance(down, EdgeTarget):
        down.__rrshift__(up)
        return
    for op in _operators_of(up, upstream_side=True):
        op.set_downstream(down)
