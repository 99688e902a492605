"""ray.util: ActorPool (weir/compat/ray/actors.py), queue.Queue (queue.py),
scheduling_strategies, placement groups as weir gangs (placement_group.py),
inspect_serializability (serializability.py), and multiprocessing.Pool over actors
(multiprocessing.py)."""

from . import multiprocessing, queue, scheduling_strategies
from ..actors import ActorPool
from .placement_group import (PlacementGroup, get_current_placement_group,
                              get_placement_group, placement_group, placement_group_table,
                              remove_placement_group)
from .serializability import inspect_serializability

__all__ = ["ActorPool", "multiprocessing", "queue", "scheduling_strategies", "placement_group",
           "remove_placement_group", "get_current_placement_group", "get_placement_group",
           "placement_group_table", "PlacementGroup", "inspect_serializability"]
