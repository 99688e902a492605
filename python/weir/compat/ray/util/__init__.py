"""ray.util: ActorPool (weir/compat/ray/actors.py), queue.Queue (queue.py),
scheduling_strategies, placement groups as weir gangs (placement_group.py),
inspect_serializability (serializability.py), multiprocessing.Pool over actors
(multiprocessing.py), the program's actors and node in Ray's state API (state.py),
as_completed and map_unordered (helpers.py), and get_node_ip_address."""

from . import multiprocessing, queue, scheduling_strategies, state
from ..actors import ActorPool
from .placement_group import (PlacementGroup, get_current_placement_group,
                              get_placement_group, placement_group, placement_group_table,
                              remove_placement_group)
from .serializability import inspect_serializability
from ..runtime import get_node_ip_address
from .helpers import as_completed, map_unordered

__all__ = ["ActorPool", "multiprocessing", "queue", "state", "scheduling_strategies",
           "placement_group", "remove_placement_group", "get_current_placement_group", "get_placement_group",
           "placement_group_table", "PlacementGroup", "inspect_serializability",
           "get_node_ip_address", "as_completed", "map_unordered"]
