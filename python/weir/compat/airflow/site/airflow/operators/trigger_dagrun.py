"""airflow.operators.trigger_dagrun: TriggerDagRunOperator.  weir runs it as its own
`trigger_dag:` task (docs/dags.md): the server starts the run and, with
wait_for_completion, ends the task when the run ends, without a process that polls."""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

from airflow.models.baseoperator import BaseOperator


class TriggerDagRunOperator(BaseOperator):
    """Starts a run of `trigger_dag_id` with `conf`."""

    template_fields: Sequence[str] = ("trigger_dag_id", "trigger_run_id", "logical_date",
                                      "conf")

    def __init__(self, *, trigger_dag_id: str, trigger_run_id: Optional[str] = None,
                 conf: Optional[Dict[str, Any]] = None, logical_date: Any = None,
                 execution_date: Any = None, reset_dag_run: bool = False,
                 wait_for_completion: bool = False, poke_interval: int = 60,
                 allowed_states: Optional[Sequence[str]] = None,
                 failed_states: Optional[Sequence[str]] = None, skip_when_already_exists: bool
                 = False, deferrable: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.trigger_dag_id = trigger_dag_id
        self.trigger_run_id = trigger_run_id
        self.conf = conf
        self.logical_date = logical_date if logical_date is not None else execution_date
        self.reset_dag_run = reset_dag_run
        self.wait_for_completion = wait_for_completion
        self.poke_interval = poke_interval
        self.allowed_states = [str(getattr(s, "value", s)) for s in allowed_states] \
            if allowed_states is not None else None
        self.failed_states = [str(getattr(s, "value", s)) for s in failed_states] \
            if failed_states is not None else None
        self.skip_when_already_exists = skip_when_already_exists
        self.deferrable = deferrable

    def execute(self, context: Dict[str, Any]) -> Any:
        """Not called: the server runs this task (weir's trigger_dag)."""
        raise RuntimeError("TriggerDagRunOperator runs as weir's trigger_dag task")
