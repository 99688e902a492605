"""The operators weir runs as its own task kinds, and the connections a Python task lists:
spec.task_spec() calls apply() once it has the task's command (docs/internals/airflow.md).

- TriggerDagRunOperator becomes a `trigger_dag:` task: the server starts the run and, with
  wait_for_completion, ends the task when that run ends (no process polls).
- SQLExecuteQueryOperator (PostgresOperator, MySqlOperator) becomes a `sql:` task on its
  connection, run by weir's C drivers: Jinja templates in the SQL and Airflow's DB-API
  placeholders (`%(name)s`, `%s`) become bound parameters (`:name`) whose values the server
  renders, so no value ever becomes SQL text; the rows of the last statement are the XCom, as
  Airflow's fetch_all_handler pushes them (`return_rows`).  What the sql task cannot do as
  Airflow does (a list of statements, whose XCom is a list; another handler; an
  output_processor; `database`) runs in Python through the connection's hook.
- Every other task runs in Python and gets the connections its arguments name: any argument
  whose name ends in `conn_id` (the operator's, or op_kwargs'), `connections=[...]` given
  to the task or in default_args, and the ids its callable's own code names as literals
  (`PostgresHook(postgres_conn_id="pg")`, `BaseHook.get_connection("pg")`).  A task gets
  only the connections it lists.
- The branch operators of this module's list choose their downstream tasks with weir's
  `branch: true` (docs/dags.md).
"""

from __future__ import annotations

import ast
import inspect
import os
import re
import sys
import textwrap
from typing import Any, Dict, List, Optional, Tuple

from _weir_airflow.spec import SpecError

# A Jinja expression weir's templates render the same: a dotted name (docs/dags.md).
_NAME = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*$")
# Airflow's names that are weir's under another name.
_ALIASES = {"dag.dag_id": "dag_id", "task.task_id": "task_id", "dag_run.run_id": "run_id",
            "ti.try_number": "try_number", "task_instance.try_number": "try_number",
            "execution_date": "logical_date", "dag_run.conf": None}
_STANDARD = ("ds", "ds_nodash", "ts", "logical_date", "data_interval_start",
             "data_interval_end", "run_id", "dag_id", "task_id", "try_number")
_PREFIXES = ("params.", "var.value.", "var.json.", "conn.")
_RUN_STATES = ("success", "failed")


def weir_name(expr: str, where: str, line: int) -> str:
    """The weir template name of a Jinja expression that is a plain name, else SpecError."""
    m = _NAME.match(expr)
    name = _ALIASES.get(m.group(1), m.group(1)) if m else None
    if name and (name in _STANDARD or name.startswith(_PREFIXES)):
        return name
    raise SpecError("%s: {{%s}}: weir renders a name here (ds, ts, logical_date, run_id, "
                    "params.NAME, var.value.KEY, conn.ID.FIELD, ...; docs/airflow.md), not "
                    "an expression, a filter or a macro" % (where, expr), line)


def weir_template(text: str, where: str, line: int) -> str:
    """A string whose Jinja templates are all names, as weir's template (SpecError for any
    other Jinja)."""
    if "{%" in text or "{#" in text:
        raise SpecError("%s: weir renders {{ name }} here; {%% %%} and {# #} are Jinja's "
                        "own" % where, line)
    out: List[str] = []
    pos = 0
    for m in re.finditer(r"\{\{(.*?)\}\}", text, re.S):
        out.append(text[pos:m.start()])
        out.append("{{ %s }}" % weir_name(m.group(1), where, line))
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


class _Binder:
    """Airflow's SQL turned into weir's: Jinja templates and DB-API placeholders out of the
    text, into bound parameters."""

    def __init__(self, parameters: Any, where: str, line: int) -> None:
        self.where = where
        self.line = line
        self.params: Dict[str, Any] = {}
        self.named = parameters if isinstance(parameters, dict) else None
        self.positional = list(parameters) if isinstance(parameters, (list, tuple)) else None
        self.next_positional = 0
        self.n_templates = 0

    def fail(self, what: str) -> SpecError:
        return SpecError("%s: %s" % (self.where, what), self.line)

    def template(self, text: str) -> str:
        """A new parameter whose value is `text` rendered by weir; its placeholder."""
        name = "weir_t%d" % self.n_templates
        self.n_templates += 1
        self.params[name] = weir_template(text, self.where, self.line)
        return ":" + name

    def value(self, name: str, value: Any) -> str:
        if isinstance(value, (dict, list, tuple, set)):
            raise self.fail("parameter %s: weir binds a string, a number, a boolean or None, "
                            "got %r" % (name, value))
        self.params[name] = weir_template(value, self.where, self.line) \
            if isinstance(value, str) else value
        return ":" + name

    def placeholder(self, sql: str, i: int) -> Tuple[str, int]:
        """A '%' at sql[i] with DB-API parameters: its replacement and where to go on."""
        if sql.startswith("%%", i):
            return "%", i + 2
        m = re.match(r"%\(([A-Za-z_][A-Za-z0-9_]*)\)s", sql[i:])
        if m and self.named is not None:
            if m.group(1) not in self.named:
                raise self.fail("%%(%s)s: not in parameters" % m.group(1))
            return self.value(m.group(1), self.named[m.group(1)]), i + m.end()
        if sql.startswith("%s", i) and self.positional is not None:
            k = self.next_positional
            if k >= len(self.positional):
                raise self.fail("more %s placeholders than parameters")
            self.next_positional += 1
            return self.value("weir_p%d" % k, self.positional[k]), i + 2
        return "%", i + 1

    def bind(self, sql: str) -> str:
        """The SQL with templates and placeholders as `:name`."""
        out: List[str] = []
        i, n = 0, len(sql)
        dbapi = self.named is not None or self.positional is not None
        while i < n:
            c = sql[i]
            if c == "'":
                j, body = _quoted(sql, i)
                if j < 0:
                    raise self.fail("a quoted string that does not end")
                if dbapi:  # the DB-API drivers read '%%' as '%' inside quotes too
                    body = body.replace("%%", "%")
                if "{{" in body or "{%" in body:
                    out.append(self.template(body.replace("''", "'")))
                else:
                    out.append("'" + body + "'")
                i = j
            elif c == '"' or (c == "$" and re.match(r"\$[A-Za-z_]*\$", sql[i:])):
                end = '"' if c == '"' else re.match(r"\$[A-Za-z_]*\$", sql[i:]).group(0)  # type: ignore[union-attr]
                j = sql.find(end, i + len(end))
                j = n if j < 0 else j + len(end)
                if "{{" in sql[i:j] or "{%" in sql[i:j]:
                    raise self.fail("a template inside %s: weir binds a template's value as "
                                    "a parameter, so it may stand where a value does (a "
                                    "whole 'string' or a bare value), not in a name or a "
                                    "dollar-quoted body" % ("a \"name\"" if c == '"'
                                                            else "a $$ body"))
                out.append(sql[i:j])
                i = j
            elif sql.startswith("--", i) or sql.startswith("/*", i):
                j = sql.find("\n", i) if c == "-" else sql.find("*/", i + 2)
                j = n if j < 0 else (j if c == "-" else j + 2)
                out.append(sql[i:j])
                i = j
            elif sql.startswith("{{", i):
                j = sql.find("}}", i)
                if j < 0:
                    raise self.fail("a {{ that does not end")
                out.append(self.template(sql[i:j + 2]))
                i = j + 2
            elif sql.startswith("{%", i) or sql.startswith("{#", i):
                raise self.fail("{% %} and {# #}: weir's sql task takes {{ name }} templates "
                                "only (each bound as a value)")
            elif c == "%" and dbapi:
                text, i = self.placeholder(sql, i)
                out.append(text)
            else:
                out.append(c)
                i += 1
        if self.positional is not None and self.next_positional != len(self.positional):
            raise self.fail("%d parameters for %d %%s placeholders"
                            % (len(self.positional), self.next_positional))
        return "".join(out)


def _quoted(sql: str, i: int) -> Tuple[int, str]:
    """The end (past the closing quote) and the body of the '...' string at sql[i]; -1 when
    it does not end."""
    j = i + 1
    while j < len(sql):
        if sql[j] == "'":
            if sql.startswith("''", j):
                j += 2
                continue
            return j + 1, sql[i + 1:j]
        j += 1
    return -1, ""


def bind_sql(sql: str, parameters: Any, where: str, line: int) -> Tuple[str, Dict[str, Any]]:
    """Airflow's SQL (Jinja templates, DB-API parameters) as weir's sql task's statement and
    parameters: each template and each parameter bound as a value (`:name`).  A template
    stands for a value: a bare one, or a whole '...' string (whose text is then the
    template); one inside a "name" or a $$ body is a SpecError."""
    b = _Binder(parameters, where, line)
    text = b.bind(sql)
    return text, b.params


def template_file(task: Any, path: str) -> Optional[str]:
    """A template file's text: the DAG file's folder, then template_searchpath (None when it
    is not there)."""
    dag = task.dag
    folders = [os.path.dirname(os.path.abspath(dag.fileloc))] if dag.fileloc else []
    sp = dag.template_searchpath
    folders += [sp] if isinstance(sp, str) else list(sp or [])
    if os.path.isabs(path) or ".." in path.split("/"):
        return None
    for folder in folders:
        full = os.path.join(folder, path)
        if os.path.isfile(full):
            with open(full) as f:
                return f.read()
    return None


def _sql_in_core(task: Any) -> bool:
    """Whether weir's sql task does what Airflow does with this operator."""
    from airflow.providers.common.sql.hooks.sql import fetch_all_handler
    from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator

    return (type(task).execute is SQLExecuteQueryOperator.execute and
            isinstance(task.sql, str) and task.output_processor is None and
            (task.handler is fetch_all_handler or not task.do_xcom_push) and
            not task.database and not task.hook_params and
            (task.return_last or not task.split_statements))


def sql_spec(task: Any) -> Dict[str, Any]:
    """The `sql:` mapping of a SQL operator."""
    where = "task %s: sql" % task.task_id
    if not task.conn_id or not isinstance(task.conn_id, str):
        raise SpecError("task %s: conn_id: expected a connection id" % task.task_id,
                        task.lineno)
    if "{{" in task.conn_id:
        raise SpecError("task %s: conn_id: weir needs the connection's id in the file (a "
                        "task gets the connections it lists)" % task.task_id, task.lineno)
    sql = task.sql
    if sql.endswith(tuple(task.template_ext)):
        text = template_file(task, sql)
        if text is None:
            raise SpecError("%s: the template file %s is not in the DAG file's folder or "
                            "template_searchpath" % (where, sql), task.lineno)
        sql = text
    statement, params = bind_sql(sql, task.parameters, where, task.lineno)
    spec: Dict[str, Any] = {"conn": task.conn_id, "statement": statement,
                            "max_rows": 10000}
    if params:
        spec["parameters"] = params
    if task.do_xcom_push:
        spec["return_rows"] = True
    return spec


def python_sql_check(task: Any) -> None:
    """A SQL operator that runs in Python (through its hook) takes no template in its SQL:
    Jinja would write the values into the SQL text, which weir never does (docs/airflow.md)."""
    from _weir_airflow.spec import has_template

    items = task.sql if isinstance(task.sql, (list, tuple)) else [task.sql]
    for item in items:
        if has_template(item) or (isinstance(item, str) and
                                  item.endswith(tuple(task.template_ext))):
            raise SpecError(
                "task %s: sql: a template or a template file in SQL that weir's sql task "
                "cannot run as Airflow does (a list of statements, a handler, an "
                "output_processor, database, hook_params, or split_statements without "
                "return_last): weir binds template values and never writes them into SQL "
                "text; give one statement string, or bind the values as parameters"
                % task.task_id, task.lineno)


def trigger_spec(task: Any) -> Dict[str, Any]:
    """The `trigger_dag:` mapping of a TriggerDagRunOperator."""
    import json

    where = "task %s" % task.task_id
    for name, bad in (("logical_date", task.logical_date is not None),
                      ("reset_dag_run", task.reset_dag_run),
                      ("skip_when_already_exists", task.skip_when_already_exists)):
        if bad:
            raise SpecError("%s: %s: weir's trigger_dag starts a new run with its own "
                            "logical date; it does not take %s yet" % (where, name, name),
                            task.lineno)
    if not isinstance(task.trigger_dag_id, str) or "{" in task.trigger_dag_id:
        raise SpecError("%s: trigger_dag_id: expected the DAG's id in the file" % where,
                        task.lineno)
    spec: Dict[str, Any] = {"dag_id": task.trigger_dag_id}
    conf = task.conf or {}
    try:
        json.dumps(conf)
    except (TypeError, ValueError):
        raise SpecError("%s: conf: expected JSON values, got %r" % (where, conf),
                        task.lineno) from None
    if not isinstance(conf, dict):
        raise SpecError("%s: conf: expected a mapping" % where, task.lineno)
    spec["conf"] = _conf_templates(conf, where + ": conf", task.lineno)
    if task.trigger_run_id:
        spec["run_id"] = weir_template(str(task.trigger_run_id), where + ": trigger_run_id",
                                       task.lineno)
    spec["wait_for_completion"] = bool(task.wait_for_completion)
    spec["poke_interval"] = int(task.poke_interval)
    for key in ("allowed_states", "failed_states"):
        states = getattr(task, key)
        if states is None:
            continue
        for s in states:
            if s not in _RUN_STATES:
                raise SpecError("%s: %s: %r: weir ends a trigger_dag task on a run's end "
                                "(success or failed)" % (where, key, s), task.lineno)
        spec[key] = list(states)
    return spec


def _conf_templates(value: Any, where: str, line: int) -> Any:
    if isinstance(value, str):
        return weir_template(value, where, line)
    if isinstance(value, dict):
        return {str(k): _conf_templates(v, where, line) for k, v in value.items()}
    if isinstance(value, list):
        return [_conf_templates(v, where, line) for v in value]
    return value


def connections_of(task: Any) -> List[str]:
    """The connection ids a Python task lists: its `*conn_id` arguments (op_kwargs' too; not
    a FileSensor's `fs_default`, the root) and `connections` (given to the task or in the
    DAG's default_args)."""
    found: List[str] = []

    def add(value: Any) -> None:
        if isinstance(value, str) and value and "{{" not in value and value not in found:
            found.append(value)

    for source in (vars(task), getattr(task, "op_kwargs", None) or {}):
        for key, value in source.items():
            # fs_default is the root (Airflow's default connection): nothing to look up
            if key == "fs_conn_id" and value == "fs_default":
                continue
            if isinstance(key, str) and key.endswith("conn_id"):
                add(value)
    for value in callable_conn_ids(getattr(task, "python_callable", None)):
        add(value)
    listed = task.other.get("connections")
    if listed is None and task.dag is not None:
        listed = task.dag.default_args.get("connections")
    if isinstance(listed, str):
        listed = [listed]
    for value in listed or []:
        add(value)
    return found


# The calls whose first argument is a connection id.
_CONN_CALLS = ("get_connection", "get_connection_from_secrets", "get_hook")


def callable_conn_ids(fn: Any) -> List[str]:
    """The connection ids a Python callable's code names as string literals: a keyword
    argument whose name ends in `conn_id` (`MySqlHook(mysql_conn_id="shop")`), or the first
    argument of `get_connection`, `get_connection_from_secrets` or `get_hook`.  The file says
    which connections its code reads, as its operators' arguments do; a name computed at run
    time is not seen (list it with `connections=[...]`).  No source (a built-in, a lambda
    typed at a prompt): none."""
    fn = getattr(fn, "__wrapped__", fn)
    if fn is None:
        return []
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return []
    found: List[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        values = [k.value for k in node.keywords if k.arg and k.arg.endswith("conn_id")]
        name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
        if name in _CONN_CALLS and node.args:
            values.append(node.args[0])
        for v in values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str) and v.value not in found:
                found.append(v.value)
    return found


def loaded(*paths: str) -> Tuple[type, ...]:
    """The classes named ("module.Class") whose modules are imported already: a task can be
    an instance of no other, and the DAG processor imports nothing it does not use."""
    out = []
    for path in paths:
        module, name = path.rsplit(".", 1)
        m = sys.modules.get(module)
        if m is not None:
            out.append(getattr(m, name))
    return tuple(out)


_SQL = "airflow.providers.common.sql.operators.sql.SQLExecuteQueryOperator"
_TRIGGER = "airflow.operators.trigger_dagrun.TriggerDagRunOperator"
_BRANCHES = ("airflow.operators.datetime.BranchDateTimeOperator",
             "airflow.operators.weekday.BranchDayOfWeekOperator")
_HTTP = "airflow.providers.http.operators.http.HttpOperator"


def not_a_command(t: Dict[str, Any]) -> None:
    """What spec.task_spec gave a Python task's command, taken off a task of another kind."""
    for key in ("command", "env", "cwd", "run_outputs", "variables", "skip_on_exit_code",
                "no_retry_on_exit_code", "connections"):
        t.pop(key, None)


def apply(task: Any, t: Dict[str, Any]) -> None:
    """The task's document `t` (its command set by spec.task_spec) made weir's task kind for
    the operators above; the connections of a Python task."""
    if isinstance(task, loaded(_TRIGGER)):
        not_a_command(t)
        t["trigger_dag"] = trigger_spec(task)
        return
    sql_ops = loaded(_SQL)
    if isinstance(task, sql_ops) and _sql_in_core(task):
        not_a_command(t)
        t["sql"] = sql_spec(task)
        return
    if isinstance(task, sql_ops):
        python_sql_check(task)
    if "_weir_airflow.run_task" not in str(t.get("command", "")):
        return
    conns = connections_of(task)
    if conns:
        t["connections"] = conns
    if isinstance(task, loaded(*_BRANCHES)):
        t["branch"] = True


def pushes_xcom(task: Any) -> bool:
    """Whether the task is one of this module's whose return value a Python task below it
    reads as an upstream XCom (a sql task's rows, an HTTP answer, a branch's choice)."""
    return isinstance(task, loaded(_SQL, _HTTP, *_BRANCHES)) and bool(task.do_xcom_push)

