"""airflow.utils.weight_rule: how a task's priority weight adds up (Airflow's
`weight_rule`): its own weight plus every task's below it (downstream, the default), above
it (upstream), or its own alone (absolute)."""

from enum import Enum


class WeightRule(str, Enum):
    """The rules of `weight_rule`."""

    DOWNSTREAM = "downstream"
    UPSTREAM = "upstream"
    ABSOLUTE = "absolute"


__all__ = ["WeightRule"]
