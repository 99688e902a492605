"""ray.util.placement_group: placement groups as weir gangs (weir/compat/ray/placement.py)."""

from ..placement import (PlacementGroup, get_current_placement_group, get_placement_group,
                         placement_group, placement_group_table, remove_placement_group)

__all__ = ["PlacementGroup", "placement_group", "remove_placement_group",
           "get_placement_group", "placement_group_table", "get_current_placement_group"]
