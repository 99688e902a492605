"""airflow.models.expandinput: MappedArgument, what a mapped task group's function receives
for each argument it is expanded over (_weir_airflow.group_mapping)."""

from __future__ import annotations

from typing import Any


class MappedArgument:
    """The group's argument `name`: in each instance of a task of the group, that
    instance's value (the group's expansion at the task's map index)."""

    def __init__(self, group: Any, name: str) -> None:
        self.group = group
        self.name = name

    def __repr__(self) -> str:
        return "MappedArgument(%s.%s)" % (self.group.group_id, self.name)
