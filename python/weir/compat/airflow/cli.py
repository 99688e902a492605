"""The `airflow` command on weir: the subcommands that ops scripts call, against a weir server.

Installed beside `weir` as a link to it (`airflow -> weir`): the binary sees its name and runs
this module, so a script that calls `airflow dags trigger NAME --conf '{...}'` or Airflow 1's
`airflow trigger_dag NAME` works unchanged.  It talks to the server over weir's REST API (the
same one Airflow's official client uses), found as every `weir` command finds it
(`WEIR_SERVER`, `WEIR_TOKEN`, `WEIR_HOME`/token); Airflow's own CLI reads its metadata
database instead.

Served (Airflow 2's names, then Airflow 1's):

    dags trigger DAG_ID [-c CONF] [-r RUN_ID] [-e DATE] [-o FMT]     trigger_dag
    dags list [-o FMT]                                               list_dags
    dags list-runs -d DAG_ID [--state S] [-o FMT]
    dags state DAG_ID DATE                                           dag_state
    dags pause DAG_ID / dags unpause DAG_ID                          pause / unpause
    dags list-import-errors [-o FMT]
    tasks list DAG_ID                                                list_tasks
    tasks state DAG_ID TASK_ID DATE_OR_RUN_ID                        task_state
    tasks states-for-dag-run DAG_ID DATE_OR_RUN_ID [-o FMT]
    version

FMT is `table` (default), `json`, `yaml` or `plain`, as Airflow's `--output`.  Exit status 0
on success, 1 when the server refuses or a DAG or run is not found, 2 for bad flags (as
argparse).  docs/airflow.md, "The airflow command", lists what differs from Airflow's.
"""

import argparse
import datetime
import json
import sys
import urllib.parse
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, TextIO

from ..._version import __version__
from ...client import Client
from ...errors import ApiError, WeirError

#: The Airflow version whose command line this one follows.
AIRFLOW_VERSION = "2.10.5"

Row = Mapping[str, Any]


class CommandError(Exception):
    """What the command prints on stderr before it exits 1."""


# ---- output, as Airflow's --output ---------------------------------------------------------

def _cell(value: Any) -> str:
    """A value as a table or plain cell: Python's own text (None, True), JSON for structures."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _yaml_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)  # JSON is YAML's flow style
    return json.dumps(str(value))


def render(rows: Sequence[Row], fmt: str) -> str:
    """The rows as `fmt` says: a table with a header, plain columns, JSON or YAML.  Columns are
    the first row's keys in order; no rows prints "No data found" in a table or plain."""
    if fmt == "json":
        return json.dumps([dict(r) for r in rows], default=str)
    if fmt == "yaml":
        if not rows:
            return "[]"
        out: List[str] = []
        for r in rows:
            for i, (k, v) in enumerate(r.items()):
                out.append(("- " if i == 0 else "  ") + "%s: %s" % (k, _yaml_scalar(v)))
        return "\n".join(out)
    if not rows:
        return "No data found"
    keys = list(rows[0].keys())
    cells = [[_cell(r.get(k)) for k in keys] for r in rows]
    widths = [max([len(k)] + [len(c[i]) for c in cells]) for i, k in enumerate(keys)]

    def line(values: Sequence[str], sep: str) -> str:
        return sep.join(v.ljust(w) for v, w in zip(values, widths)).rstrip()

    if fmt == "plain":
        return "\n".join([line(keys, "  ")] + [line(c, "  ") for c in cells])
    rule = "=+=".join("=" * w for w in widths)
    return "\n".join([line(keys, " | "), rule] + [line(c, " | ") for c in cells])


# ---- dates -------------------------------------------------------------------------------

def parse_date(text: str) -> datetime.datetime:
    """A date as Airflow's CLI takes one (`2024-03-01`, `2024-03-01T06:00:00`, with or without
    an offset or `Z`); a date without an offset is UTC (Airflow's default time zone)."""
    t = text.strip()
    if t.endswith("Z"):
        t = t[:-1] + "+00:00"
    try:
        d = datetime.datetime.fromisoformat(t)
    except ValueError:
        raise CommandError("%r is not a date: expected ISO 8601, e.g. 2024-03-01 or "
                           "2024-03-01T06:00:00+00:00" % text) from None
    if d.tzinfo is None:
        d = d.replace(tzinfo=datetime.timezone.utc)
    return d


def _iso(d: datetime.datetime) -> str:
    return d.isoformat()


# ---- the commands --------------------------------------------------------------------------

def _dag(c: Client, dag_id: str) -> Dict[str, Any]:
    try:
        return c.dag(dag_id)
    except ApiError as e:
        if e.status == 404:
            raise CommandError("Dag id %s not found" % dag_id) from None
        raise


def _run_row(r: Row) -> Dict[str, Any]:
    keys = ("conf", "dag_id", "dag_run_id", "data_interval_start", "data_interval_end",
            "end_date", "external_trigger", "last_scheduling_decision", "logical_date",
            "run_type", "start_date", "state")
    return {k: r.get(k) for k in keys}


def dags_trigger(c: Client, a: argparse.Namespace) -> List[Row]:
    conf: Optional[Dict[str, Any]] = None
    if a.conf:
        try:
            conf = json.loads(a.conf)
        except ValueError as e:
            raise CommandError("--conf: not JSON (%s): %s" % (e, a.conf)) from None
        if not isinstance(conf, dict):
            raise CommandError("--conf: expected a JSON object, got %s" % a.conf)
    date = _iso(parse_date(a.exec_date)) if a.exec_date else None
    try:
        run = c.trigger(a.dag_id, conf=conf, run_id=a.run_id, logical_date=date)
    except ApiError as e:
        if e.status == 404:
            raise CommandError("Dag id %s not found" % a.dag_id) from None
        raise
    return [_run_row(run)]


def dags_list(c: Client, a: argparse.Namespace) -> List[Row]:
    dags = sorted(c.dags(), key=lambda d: str(d.get("dag_id")))
    return [{"dag_id": d.get("dag_id"), "fileloc": d.get("fileloc"),
             "owners": ", ".join(d.get("owners") or []), "is_paused": d.get("is_paused")}
            for d in dags]


def _runs_of(c: Client, dag_id: str, **params: Any) -> List[Dict[str, Any]]:
    _dag(c, dag_id)
    return c.dag_runs(dag_id, **params)


def dags_list_runs(c: Client, a: argparse.Namespace) -> List[Row]:
    params: Dict[str, Any] = {"order_by": "-execution_date"}
    if a.state:
        params["state"] = a.state.lower()
    if a.start_date:
        params["execution_date_gte"] = _iso(parse_date(a.start_date))
    if a.end_date:
        params["execution_date_lte"] = _iso(parse_date(a.end_date))
    runs = _runs_of(c, a.dag_id, **params)
    if a.no_backfill:
        runs = [r for r in runs if r.get("run_type") != "backfill"]
    return [{"dag_id": r.get("dag_id"), "run_id": r.get("dag_run_id"), "state": r.get("state"),
             "execution_date": r.get("logical_date"), "start_date": r.get("start_date") or "",
             "end_date": r.get("end_date") or ""} for r in runs]


def _run_at(c: Client, dag_id: str, date: datetime.datetime) -> Optional[Dict[str, Any]]:
    at = _iso(date)
    runs = _runs_of(c, dag_id, execution_date_gte=at, execution_date_lte=at)
    return runs[0] if runs else None


def dags_state(c: Client, a: argparse.Namespace) -> str:
    run = _run_at(c, a.dag_id, parse_date(a.execution_date))
    if run is None:
        return "None"
    conf = run.get("conf")
    return str(run.get("state")) + (", " + json.dumps(conf) if conf else "")


def dags_pause(c: Client, a: argparse.Namespace, paused: bool) -> str:
    _dag(c, a.dag_id)
    c.pause_dag(a.dag_id, paused)
    return "Dag: %s, paused: %s" % (a.dag_id, paused)


def dags_import_errors(c: Client, a: argparse.Namespace) -> List[Row]:
    return [{"filepath": e.get("filename"), "error": e.get("stack_trace")}
            for e in c.import_errors()]


def tasks_list(c: Client, a: argparse.Namespace) -> str:
    _dag(c, a.dag_id)
    tasks = c.request("GET", "/dags/%s/tasks" % _quote(a.dag_id)).get("tasks") or []
    return "\n".join(sorted(str(t.get("task_id")) for t in tasks))


def _quote(segment: str) -> str:
    return urllib.parse.quote(segment, safe="")


def _run_of(c: Client, dag_id: str, date_or_run_id: str) -> Dict[str, Any]:
    """A run by its id, else by its logical date, as Airflow's `execution_date_or_run_id`."""
    _dag(c, dag_id)
    try:
        return c.dag_run(dag_id, date_or_run_id)
    except ApiError as e:
        if e.status != 404:
            raise
    try:
        date = parse_date(date_or_run_id)
    except CommandError:
        raise CommandError("DagRun for %s with run_id or execution_date of %r not found"
                           % (dag_id, date_or_run_id)) from None
    run = _run_at(c, dag_id, date)
    if run is None:
        raise CommandError("DagRun for %s with run_id or execution_date of %r not found"
                           % (dag_id, date_or_run_id))
    return run


def tasks_states(c: Client, a: argparse.Namespace) -> List[Row]:
    run = _run_of(c, a.dag_id, a.execution_date_or_run_id)
    tis = c.task_instances(a.dag_id, str(run["dag_run_id"]))
    return [{"dag_id": t.get("dag_id"), "execution_date": t.get("execution_date"),
             "task_id": t.get("task_id"), "state": t.get("state"),
             "start_date": t.get("start_date") or "", "end_date": t.get("end_date") or ""}
            for t in sorted(tis, key=lambda t: str(t.get("task_id")))]


def tasks_state(c: Client, a: argparse.Namespace) -> str:
    run = _run_of(c, a.dag_id, a.execution_date_or_run_id)
    for t in c.task_instances(a.dag_id, str(run["dag_run_id"])):
        if t.get("task_id") == a.task_id and t.get("map_index", -1) in (-1, None):
            return str(t.get("state"))
    raise CommandError("Task %s not found in DAG %s" % (a.task_id, a.dag_id))


# ---- the parser ----------------------------------------------------------------------------

Handler = Callable[[Client, argparse.Namespace], Any]


def _output(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--output", choices=("table", "json", "yaml", "plain"),
                   default="table", help="the output format (default: table)")


def _ignored(p: argparse.ArgumentParser, *names: str) -> None:
    """Flags of Airflow's that mean nothing on weir, taken so that scripts keep working."""
    for n in names:
        p.add_argument(*n.split("|"), dest="_ignored_" + n.split("|")[-1].strip("-"),
                       default=None, help=argparse.SUPPRESS)


def _trigger_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("dag_id")
    p.add_argument("-c", "--conf", help="the run's conf, a JSON object")
    p.add_argument("-r", "--run-id", dest="run_id", help="the run's id")
    p.add_argument("-e", "--exec-date", dest="exec_date", help="its logical date")
    p.add_argument("--replace-microseconds", dest="replace_microseconds", default="true",
                   help=argparse.SUPPRESS)
    _ignored(p, "-S|--subdir")


def _state_and_pause(sub: "argparse._SubParsersAction[argparse.ArgumentParser]", helps: str,
                     subdir: str, state_name: str = "state") -> None:
    """`state`, `pause` and `unpause` (Airflow 2's under `dags`, Airflow 1's at the top)."""
    p = sub.add_parser(state_name, help=helps % "state")
    p.add_argument("dag_id")
    p.add_argument("execution_date")
    _ignored(p, subdir)
    p.set_defaults(run=dags_state)
    for name, paused in (("pause", True), ("unpause", False)):
        p = sub.add_parser(name, help=helps % name)
        p.add_argument("dag_id")
        _ignored(p, subdir)
        p.set_defaults(run=lambda c, a, paused=paused: dags_pause(c, a, paused))


def build_parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="airflow",
        description="Airflow's command line for ops scripts, against a weir server "
                    "(docs/airflow.md).")
    groups = top.add_subparsers(dest="group", metavar="COMMAND")
    groups.required = True

    dags = groups.add_parser("dags", help="DAGs and their runs").add_subparsers(
        dest="cmd", metavar="SUBCOMMAND")
    dags.required = True
    p = dags.add_parser("trigger", help="trigger a run")
    _trigger_args(p)
    _output(p)
    p.set_defaults(run=dags_trigger)
    p = dags.add_parser("list", help="the DAGs")
    _output(p)
    _ignored(p, "-S|--subdir")
    p.set_defaults(run=dags_list)
    p = dags.add_parser("list-runs", help="a DAG's runs, newest first")
    p.add_argument("-d", "--dag-id", dest="dag_id", required=True)
    p.add_argument("--state")
    p.add_argument("-s", "--start-date", dest="start_date")
    p.add_argument("-e", "--end-date", dest="end_date")
    p.add_argument("--no-backfill", dest="no_backfill", action="store_true")
    _output(p)
    p.set_defaults(run=dags_list_runs)
    _state_and_pause(dags, "%s", "-S|--subdir")
    p = dags.add_parser("list-import-errors", help="the DAG files that failed to load")
    _output(p)
    p.set_defaults(run=dags_import_errors)

    tasks = groups.add_parser("tasks", help="a DAG's tasks").add_subparsers(
        dest="cmd", metavar="SUBCOMMAND")
    tasks.required = True
    p = tasks.add_parser("list", help="a DAG's task ids")
    p.add_argument("dag_id")
    _ignored(p, "-S|--subdir")
    p.add_argument("-t", "--tree", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(run=tasks_list)
    p = tasks.add_parser("state", help="a task instance's state")
    p.add_argument("dag_id")
    p.add_argument("task_id")
    p.add_argument("execution_date_or_run_id")
    _ignored(p, "-S|--subdir")
    p.set_defaults(run=tasks_state)
    p = tasks.add_parser("states-for-dag-run", help="the states of a run's task instances")
    p.add_argument("dag_id")
    p.add_argument("execution_date_or_run_id")
    _output(p)
    p.set_defaults(run=tasks_states)

    p = groups.add_parser("version", help="the Airflow version followed, and weir's")
    p.set_defaults(run=lambda c, a: "%s (weir %s)" % (AIRFLOW_VERSION, __version__))

    # Airflow 1's names, as its 1.10 command line had them
    p = groups.add_parser("trigger_dag", help="(Airflow 1) dags trigger")
    _trigger_args(p)
    p.set_defaults(run=lambda c, a: _say_created(dags_trigger(c, a)))
    p = groups.add_parser("list_dags", help="(Airflow 1) the DAG ids")
    _ignored(p, "-sd|--subdir")
    p.set_defaults(run=lambda c, a: "\n".join(str(r["dag_id"]) for r in dags_list(c, a)))
    _state_and_pause(groups, "(Airflow 1) dags %s", "-sd|--subdir", state_name="dag_state")
    p = groups.add_parser("list_tasks", help="(Airflow 1) tasks list")
    p.add_argument("dag_id")
    p.set_defaults(run=tasks_list)
    p = groups.add_parser("task_state", help="(Airflow 1) tasks state")
    p.add_argument("dag_id")
    p.add_argument("task_id")
    p.add_argument("execution_date_or_run_id")
    p.set_defaults(run=tasks_state)
    return top


def _say_created(rows: List[Row]) -> str:
    """Airflow 1's answer to trigger_dag: one line naming the run."""
    r = rows[0]
    return "Created <DagRun %s @ %s: %s, externally triggered: True>" % (
        r["dag_id"], r["logical_date"], r["dag_run_id"])


def main(argv: Optional[Sequence[str]] = None, out: TextIO = sys.stdout,
         err: TextIO = sys.stderr, client: Optional[Client] = None) -> int:
    """Runs one command; its exit status."""
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    handler: Handler = args.run
    try:
        c = client if client is not None else Client()
        result = handler(c, args)
    except CommandError as e:
        print("airflow: %s" % e, file=err)
        return 1
    except WeirError as e:
        print("airflow: %s" % e, file=err)
        return 1
    if isinstance(result, list):
        print(render(result, getattr(args, "output", "table")), file=out)
    elif result is not None:
        print(result, file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
