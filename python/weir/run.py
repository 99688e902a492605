"""`python3 -m weir.run PROGRAM.py [ARGS]`: runs a Python program written for Ray (or
Airflow) with weir's compatible modules first on its path, so that its `import ray` is
weir's (weir/compat/ray/site/ray) and its calls run as weir jobs.  `weir run` (the CLI)
runs this module.

The program runs as `python3 PROGRAM.py ARGS` would run it: as `__main__`, with sys.argv
[PROGRAM, ARGS...] and its own folder first on sys.path; the compat folders come right after
it, before anything installed (a real `ray` included), and are put first on $PYTHONPATH too,
so that the processes it starts (its calls' tasks among them) import the same.  The server
is found as the CLI finds it ($WEIR_SERVER, $WEIR_HOME, HOME/token).
"""

import os
import runpy
import sys
import traceback
from pathlib import Path
from typing import List, Optional

PACKAGE_PARENT = Path(__file__).resolve().parent.parent
COMPAT = Path(__file__).resolve().parent / "compat"

USAGE = "usage: python3 -m weir.run PROGRAM.py [ARGS...]\n"


def site_dirs() -> List[str]:
    """The folders that make `import ray` (and `import airflow`) weir's: each compat
    module's site/, when it has one."""
    return [str(COMPAT / name / "site") for name in ("ray", "airflow")
            if (COMPAT / name / "site").is_dir()]


def python_path(old: Optional[str]) -> str:
    """$PYTHONPATH for the program: the compat folders, this package's parent, then old
    (without repeating any)."""
    out: List[str] = []
    for p in site_dirs() + [str(PACKAGE_PARENT)] + (old or "").split(os.pathsep):
        if p and p not in out:
            out.append(p)
    return os.pathsep.join(out)


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        sys.stderr.write(USAGE)
        return 2
    if args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    program = args[0]
    if not os.path.isfile(program):
        sys.stderr.write("weir run: %s: no such program file\n" % program)
        return 2
    os.environ["PYTHONPATH"] = python_path(os.environ.get("PYTHONPATH"))
    here = os.path.dirname(os.path.abspath(program))
    # as `python3 PROGRAM.py`: its folder first (not this module's caller's cwd), then the
    # compat folders before whatever is installed
    rest = [p for p in sys.path[1:] if p not in site_dirs()]
    sys.path[:] = [here] + site_dirs() + rest
    sys.argv = args
    try:
        runpy.run_path(program, run_name="__main__")
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as e:
        # the traceback as `python3 PROGRAM.py` prints it: from the program's frames on
        tb = e.__traceback__
        while tb is not None and (tb.tb_frame.f_code.co_filename == __file__ or
                                  tb.tb_frame.f_code.co_filename.startswith("<frozen")):
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
