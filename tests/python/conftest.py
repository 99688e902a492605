"""Unit tests of the Python package (python/weir): no server, no `weir` program unless a
test says so.  The package is imported from the source tree, as the system tests do."""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
