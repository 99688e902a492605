"""airflow.operators.branch: BaseBranchOperator, a custom operator whose `choose_branch`
returns the direct downstream task ids that run (weir's `branch: true`)."""

from __future__ import annotations

from typing import Any, Dict

from airflow.models.baseoperator import BaseOperator


class BaseBranchOperator(BaseOperator):
    """Subclasses implement choose_branch(context): a task id, a list of them, or None."""

    weir_flow = "branch"

    def choose_branch(self, context: Dict[str, Any]) -> Any:
        """The task ids that run."""
        raise NotImplementedError("%s has no choose_branch()" % type(self).__name__)

    def execute(self, context: Dict[str, Any]) -> Any:
        """The choice (pushed as XCom too, as in Airflow)."""
        return self.choose_branch(context)
