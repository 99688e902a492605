"""airflow.operators.empty: EmptyOperator, a task that does nothing (a join, a marker)."""

from typing import Any, Dict

from airflow.models.baseoperator import BaseOperator


class EmptyOperator(BaseOperator):
    """Does nothing; weir runs it as the command `true`."""

    def execute(self, context: Dict[str, Any]) -> None:
        """Nothing."""
