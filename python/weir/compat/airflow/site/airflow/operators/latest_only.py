"""airflow.operators.latest_only: LatestOnlyOperator, which skips its direct downstream tasks
unless the run is the latest (an external trigger, or now within the interval after the
run's): a branch that chooses all or none of them."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict, List

from airflow.operators.branch import BaseBranchOperator


class LatestOnlyOperator(BaseBranchOperator):
    """Runs its downstream only in the latest scheduled run, and in triggered runs."""

    def choose_branch(self, context: Dict[str, Any]) -> List[str]:
        """All the direct downstream tasks, or none when a later run is due already."""
        from _weir_airflow.intervals import next_interval_end

        downstream = sorted(self.downstream_task_ids)
        dag_run = context["dag_run"]
        if dag_run.external_trigger:
            return downstream
        left = context["data_interval_end"]
        right = next_interval_end(context["dag"], left)
        now = _dt.datetime.now(_dt.timezone.utc)
        if right is None or left < now <= right:
            return downstream
        print("Not the latest run (now %s is past the window %s..%s): skipping %s"
              % (now.isoformat(), left.isoformat(), right.isoformat(), downstream))
        return []
