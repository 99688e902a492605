"""airflow.utils.trigger_rule: the trigger rules' names."""

from enum import Enum


class TriggerRule(str, Enum):
    """When a task runs, from its upstream tasks' states (docs/dags.md, Trigger rules)."""

    ALL_SUCCESS = "all_success"
    ALL_FAILED = "all_failed"
    ALL_DONE = "all_done"
    ONE_SUCCESS = "one_success"
    ONE_FAILED = "one_failed"
    ONE_DONE = "one_done"
    NONE_FAILED = "none_failed"
    NONE_FAILED_MIN_ONE_SUCCESS = "none_failed_min_one_success"
    NONE_SKIPPED = "none_skipped"
    ALL_SKIPPED = "all_skipped"
    ALWAYS = "always"
    ALL_DONE_SETUP_SUCCESS = "all_done_setup_success"

    def __str__(self) -> str:
        return str(self.value)
