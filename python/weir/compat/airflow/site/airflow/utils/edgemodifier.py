"""airflow.utils.edgemodifier: Label, a name on an edge (`a >> Label("ok") >> b`).  weir
keeps the edge and drops the name (the UI draws no labels)."""

from __future__ import annotations

from typing import Any, List

from airflow.models.baseoperator import BaseOperator, EdgeTarget, _operators_of


class Label(EdgeTarget):
    """An edge's label: what stands on its left runs before what stands on its right."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.left: List[BaseOperator] = []   # set by `x >> Label`
        self.right: List[BaseOperator] = []  # set by `Label << x`

    def operators(self, upstream_side: bool) -> List[BaseOperator]:
        """As the upstream of an edge, the tasks on its left; as the downstream, those on
        its right."""
        return self.left if upstream_side else self.right

    @staticmethod
    def _all(other: Any, upstream_side: bool) -> List[BaseOperator]:
        items = other if isinstance(other, (list, tuple, set)) else [other]
        return [op for i in items for op in _operators_of(i, upstream_side)]

    def __rrshift__(self, other: Any) -> "Label":  # a >> Label
        self.left.extend(self._all(other, True))
        return self

    def __rshift__(self, other: Any) -> Any:  # Label >> b
        for op in self.left:
            op.set_downstream(other)
        return other

    def __rlshift__(self, other: Any) -> "Label":  # b << Label
        self.right.extend(self._all(other, False))
        return self

    def __lshift__(self, other: Any) -> Any:  # Label << a
        for op in self.right:
            op.set_upstream(other)
        return other

    def __repr__(self) -> str:
        return "Label(%r)" % self.label
