"""The old path of the task side of a call, now weir/worker/runner.py: a job submitted by an
earlier weir still runs `PYTHON .../weir/_runner.py`, and this runs the runner in its place
(as a script too, without importing the package)."""

import os
import sys

if __name__ == "__main__":
    _here = os.path.dirname(os.path.abspath(__file__))
    # sys.path[0] is this file's folder: the package's modules must not shadow the user's
    if sys.path and os.path.abspath(sys.path[0]) == _here:
        del sys.path[0]
    import runpy
    runpy.run_path(os.path.join(_here, "worker", "runner.py"), run_name="__main__")
