"""ray.util.scheduling_strategies: Ray's strategies, given as scheduling_strategy= and read
by placement_group.py's placement_of (docs/ray.md, "Scheduling strategies")."""

from typing import Any, Optional


class NodeAffinitySchedulingStrategy:
    """Runs the call on the node of that id (ray.nodes()' NodeID); soft=True falls back
    to any node when that one is not there."""

    def __init__(self, node_id: str, soft: bool, _spill_on_unavailable: bool = False,
                 _fail_on_unavailable: bool = False) -> None:
        self.node_id = node_id
        self.soft = soft


class PlacementGroupSchedulingStrategy:
    """Runs the call (or the actor) in a bundle of a placement group: the one of that index,
    or any (-1); with capture_child_tasks, the calls it makes go there too."""

    def __init__(self, placement_group: Any, placement_group_bundle_index: int = -1,
                 placement_group_capture_child_tasks: Optional[bool] = None) -> None:
        self.placement_group = placement_group
        self.placement_group_bundle_index = placement_group_bundle_index
        self.placement_group_capture_child_tasks = placement_group_capture_child_tasks


__all__ = ["NodeAffinitySchedulingStrategy", "PlacementGroupSchedulingStrategy"]
