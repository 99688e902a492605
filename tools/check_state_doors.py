#!/usr/bin/env python3
"""check_state_doors.py: every change of a job's, task's, task instance's,
run's or agent task's state goes through its one setter (its "door").

Reads the C files that hold those nouns' rows (src/server/job_manager/,
src/server/dag_manager/, src/launch/agent*.c under the given src folder)
and fails when a statement assigns a `state` field (`x.state = ...;`,
`x->state = ...;`) outside the setters named in DOORS.  Not counted as a
move:
  - a copy of another record's state (`v.state = row.state;`): a view or a
    decision's input, read from the row, not a change of it;
  - a designated initializer (`{.state = ...}`): a new value (a query, a
    decision, a try's record), not a move of an existing row.
Prints each offence as FILE:LINE: text, and exits 1 when there is one.
Usage: python3 tools/check_state_doors.py [src]
"""
import os
import re
import sys

# the setters, one per noun (docs/internals/sched.md, "States")
DOORS = {
    "jm_job_set_state",
    "jm_task_set_state",
    "dm_ti_set_state",
    "dm_run_set_state",
    "dm_book_started",
    "agent_task_set_state",
}

ASSIGN = re.compile(r"^\s*[\w)\]][\w\[\]().>*-]*?(\.|->)state\s*=(?!=)\s*(?P<rhs>.*)$")
COPY = re.compile(r"^[\w\[\]().>-]*(\.|->)state\s*;")
# a function's definition starts at column 0 (clang-format): its name is the
# word before the first parenthesis
FUNC = re.compile(r"^[A-Za-z_][^(;]*?\b(?P<name>\w+)\s*\([^;]*$")


def files(src):
    for sub in ("server/job_manager", "server/dag_manager"):
        d = os.path.join(src, sub)
        if os.path.isdir(d):
            for f in sorted(os.listdir(d)):
                if f.endswith(".c"):
                    yield os.path.join(d, f)
    d = os.path.join(src, "launch")
    if os.path.isdir(d):
        for f in sorted(os.listdir(d)):
            if f.startswith("agent") and f.endswith(".c"):
                yield os.path.join(d, f)


def strip_comment(line):
    return re.sub(r"/\*.*?\*/", "", line).split("//")[0]


def check(path):
    bad = []
    func = None
    in_comment = False
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if in_comment:
                if "*/" not in line:
                    continue
                line = line.split("*/", 1)[1]
                in_comment = False
            line = strip_comment(line)
            if "/*" in line:
                line, in_comment = line.split("/*", 1)[0], True
            if line.startswith("}"):
                func = None
                continue
            m = FUNC.match(line)
            if m:
                func = m.group("name")
                continue
            a = ASSIGN.match(line)
            if not a or func in DOORS:
                continue
            if COPY.match(a.group("rhs").strip()):
                continue
            bad.append("%s:%d: %s" % (path, n, raw.strip()))
    return bad


def main(argv):
    src = argv[1] if len(argv) > 1 else "src"
    bad = []
    for p in files(src):
        bad += check(p)
    for b in bad:
        print(b + "   <- a state changed outside its setter (%s)" % ", ".join(sorted(DOORS)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
