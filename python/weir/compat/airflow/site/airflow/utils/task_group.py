"""airflow.utils.task_group: TaskGroup, tasks under one id prefix (`group.task`, as Airflow
names them; weir's task ids hold the dots) that `>>` and `<<` treat as one: upstream of a
group means upstream of its roots, downstream of it below its leaves."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional

from airflow.models.baseoperator import DependencyMixin
from airflow.models.dag import DAG, current_dag

if TYPE_CHECKING:
    from airflow.models.baseoperator import BaseOperator

# The `with TaskGroup(...)` blocks open now, innermost last.
_context: List["TaskGroup"] = []


def current_group() -> Optional["TaskGroup"]:
    """The innermost open group, or None."""
    return _context[-1] if _context else None


class TaskGroup(DependencyMixin):
    """A group of tasks: `with TaskGroup("load") as load:` (or `@task_group`)."""

    def __init__(self, group_id: Optional[str], prefix_group_id: bool = True,
                 parent_group: Optional["TaskGroup"] = None, dag: Optional[DAG] = None,
                 default_args: Optional[Dict[str, Any]] = None, tooltip: str = "",
                 ui_color: str = "", ui_fgcolor: str = "", add_suffix_on_collision: bool = False,
                 **_: Any) -> None:
        if group_id is not None and (not isinstance(group_id, str) or not group_id or
                                     "." in group_id):
            raise ValueError("group_id %r: expected a name without '.'" % (group_id,))
        self.parent_group: Optional[TaskGroup] = (
            parent_group if parent_group is not None else current_group())
        self.dag: Optional[DAG] = dag
        if self.dag is None:
            self.dag = self.parent_group.dag if self.parent_group is not None else current_dag()
        self.prefix_group_id = prefix_group_id
        self.default_args: Dict[str, Any] = dict(default_args or {})
        self.tooltip = tooltip
        self.children: Dict[str, Any] = {}
        if group_id is not None and add_suffix_on_collision and self.dag is not None:
            base, n = group_id, 1
            while self._full_id(group_id) in self.dag.task_groups:
                group_id = "%s__%d" % (base, n)
                n += 1
        self._group_id = group_id
        if self.dag is not None and self.group_id is not None:
            groups = self.dag.task_groups
            if self.group_id in groups:
                raise ValueError("group_id %r has already been added to the DAG"
                                 % self.group_id)
            groups[self.group_id] = self
        if self.parent_group is not None and self.group_id is not None:
            self.parent_group.children[self.group_id] = self

    def _full_id(self, group_id: Optional[str]) -> Optional[str]:
        parent = self.parent_group
        if parent is not None and parent.prefix_group_id and parent.group_id and group_id:
            return "%s.%s" % (parent.group_id, group_id)
        return group_id

    @property
    def group_id(self) -> Optional[str]:
        """The full id: the parent's id first, as Airflow prefixes it."""
        return self._full_id(self._group_id)

    @property
    def label(self) -> Optional[str]:
        """The group's own name."""
        return self._group_id

    def child_id(self, label: str) -> str:
        """A child's full id: `group.label` (unless prefix_group_id=False)."""
        if self.prefix_group_id and self.group_id:
            return "%s.%s" % (self.group_id, label)
        if self.parent_group is not None:
            return self.parent_group.child_id(label)
        return label

    def merged_default_args(self) -> Dict[str, Any]:
        """The groups' default_args, outermost first."""
        out = self.parent_group.merged_default_args() if self.parent_group is not None else {}
        out.update(self.default_args)
        return out

    def add(self, task: "BaseOperator") -> None:
        """Registers a task made inside the group."""
        self.children[task.task_id] = task

    def tasks(self) -> List["BaseOperator"]:
        """Every task in the group and its subgroups."""
        out: List["BaseOperator"] = []
        for child in self.children.values():
            out.extend(child.tasks() if isinstance(child, TaskGroup) else [child])
        return out

    def get_roots(self) -> List["BaseOperator"]:
        """The tasks with no upstream inside the group."""
        ids = {t.task_id for t in self.tasks()}
        return [t for t in self.tasks() if not (t.upstream_task_ids & ids)]

    def get_leaves(self) -> List["BaseOperator"]:
        """The tasks with no downstream inside the group."""
        ids = {t.task_id for t in self.tasks()}
        return [t for t in self.tasks() if not (t.downstream_task_ids & ids)]

    # -- dependencies: the group as its roots (below something) or leaves (above) -----------
    def set_upstream(self, other: Any) -> None:
        """`other` runs before the group's roots."""
        for root in self.get_roots():
            root.set_upstream(other)

    def set_downstream(self, other: Any) -> None:
        """`other` runs after the group's leaves."""
        for leaf in self.get_leaves():
            leaf.set_downstream(other)

    def __enter__(self) -> "TaskGroup":
        _context.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _context.pop()

    def __repr__(self) -> str:
        return "<TaskGroup: %s>" % self.group_id


def expand_group_ids(dag: Any, ids: Iterable[str]) -> List[str]:
    """Task ids with each task group's id replaced by its roots' (a branch may choose a
    group, as in Airflow)."""
    groups: Dict[str, TaskGroup] = getattr(dag, "task_groups", {})
    out: List[str] = []
    for i in ids:
        if i in groups and i not in dag.task_dict:
            out.extend(sorted(t.task_id for t in groups[i].get_roots()))
        else:
            out.append(i)
    return out
