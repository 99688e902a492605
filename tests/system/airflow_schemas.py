"""The shapes of Airflow 2.10's stable REST API v1 objects, written down by hand from the spec
as the fields each object has and the JSON type of each: the conformance checks of
test_airflow_spec.py compare weir's answers with them.

A type is one of "str", "int", "num" (int or float), "bool", "obj", "list", "any"; a trailing
"?" lets the field be null; a trailing "!" lets it be absent but never null (a field the spec
neither requires nor lets be null: the generated clients refuse a null one).  A schema lists the fields a client may rely on; an answer may carry
more (Airflow's clients must ignore fields they do not know; weir adds its own, such as a task
instance's `outputs`).
"""

TYPES = {
    "str": (str,),
    "int": (int,),
    "num": (int, float),
    "bool": (bool,),
    "obj": (dict,),
    "list": (list,),
}

SCHEMAS = {
    "DAG": {
        "dag_id": "str", "dag_display_name": "str", "root_dag_id": "str?",
        "is_paused": "bool?", "is_active": "bool?", "is_subdag": "bool",
        "last_parsed_time": "str?", "last_pickled": "str?", "last_expired": "str?",
        "scheduler_lock": "bool?", "pickle_id": "str?", "default_view": "str?",
        "fileloc": "str", "file_token": "str", "owners": "list", "description": "str?",
        "schedule_interval": "obj?", "timetable_description": "str?", "tags": "list?",
        "max_active_tasks": "int?", "max_active_runs": "int?",
        "has_task_concurrency_limits": "bool?", "has_import_errors": "bool?",
        "next_dagrun": "str?", "next_dagrun_data_interval_start": "str?",
        "next_dagrun_data_interval_end": "str?", "next_dagrun_create_after": "str?",
        "max_consecutive_failed_dag_runs": "int?",
    },
    "DAGRun": {
        "dag_run_id": "str?", "dag_id": "str", "logical_date": "str?",
        "execution_date": "str?", "start_date": "str?", "end_date": "str?",
        "data_interval_start": "str?", "data_interval_end": "str?",
        "last_scheduling_decision": "str?", "run_type": "str", "state": "str",
        "external_trigger": "bool", "conf": "obj", "note": "str?",
    },
    "TaskInstance": {
        "task_id": "str", "task_display_name": "str", "dag_id": "str", "dag_run_id": "str",
        "execution_date": "str", "start_date": "str?", "end_date": "str?",
        "duration": "num?", "state": "str?", "try_number": "int", "map_index": "int",
        "max_tries": "int", "hostname": "str", "unixname": "str", "pool": "str",
        "pool_slots": "int", "queue": "str?", "priority_weight": "int?", "operator": "str?",
        "queued_when": "str?", "pid": "int?", "executor": "str?", "executor_config": "str",
        "sla_miss": "obj?", "rendered_map_index": "str?", "rendered_fields": "obj",
        "trigger": "obj?", "triggerer_job": "obj?", "note": "str?",
    },
    "TaskInstanceReference": {
        "task_id": "str", "dag_id": "str", "execution_date": "str", "dag_run_id": "str",
    },
    "Task": {
        "class_ref": "obj", "task_id": "str", "trigger_rule": "str", "is_mapped": "bool",
        "retries": "num", "pool": "str", "pool_slots": "num", "retry_delay": "obj?",
        "execution_timeout": "obj?", "retry_exponential_backoff": "bool",
        "priority_weight": "num", "ui_color": "str", "ui_fgcolor": "str",
        "downstream_task_ids": "list", "start_date": "str?", "sub_dag": "obj!",
        "doc_md": "str?",
    },
    "Pool": {
        "name": "str", "slots": "int", "occupied_slots": "int", "running_slots": "int",
        "queued_slots": "int", "open_slots": "int", "scheduled_slots": "int",
        "deferred_slots": "int", "description": "str?", "include_deferred": "bool",
    },
    "XComCollectionItem": {
        "key": "str", "timestamp": "str?", "execution_date": "str", "map_index": "int",
        "task_id": "str", "dag_id": "str",
    },
    "XCom": {
        "key": "str", "timestamp": "str?", "execution_date": "str", "map_index": "int",
        "task_id": "str", "dag_id": "str", "value": "any",
    },
    "DagStatsCollectionItem": {"dag_id": "str", "stats": "list?"},
    "DagStatsStateCollectionItem": {"state": "str", "count": "int"},
    "ImportError": {"import_error_id": "int", "timestamp": "str", "filename": "str",
                    "stack_trace": "str"},
    "TaskFailedDependency": {"name": "str", "reason": "str"},
    "ExtraLink": {"class_ref": "obj", "name": "str", "href": "str"},
    "ConfigSection": {"name": "str", "options": "list"},
    "ConfigOption": {"key": "str", "value": "str"},
    "VersionInfo": {"version": "str", "git_version": "str?"},
    "ConnectionCollectionItem": {"connection_id": "str", "conn_type": "str",
                                 "description": "str?", "host": "str?", "login": "str?",
                                 "schema": "str?", "port": "int?"},
    "Connection": {"connection_id": "str", "conn_type": "str", "description": "str?",
                   "host": "str?", "login": "str?", "schema": "str?", "port": "int?",
                   "extra": "str?"},
    "VariableCollectionItem": {"key": "str", "description": "str?"},
    "Variable": {"key": "str", "description": "str?", "value": "str"},
    "ConnectionTest": {"status": "bool", "message": "str"},
    "Error": {"type": "str", "title": "str", "status": "num"},
    "HealthInfo": {"metadatabase": "obj", "scheduler": "obj"},
}

# Collections: the key of the list, the schema of its items, and whether total_entries is there.
COLLECTIONS = {
    "DAGCollection": ("dags", "DAG", True),
    "DAGRunCollection": ("dag_runs", "DAGRun", True),
    "TaskInstanceCollection": ("task_instances", "TaskInstance", True),
    "TaskInstanceReferenceCollection": ("task_instances", "TaskInstanceReference", False),
    "TaskCollection": ("tasks", "Task", False),
    "PoolCollection": ("pools", "Pool", True),
    "XComCollection": ("xcom_entries", "XComCollectionItem", True),
    "DagStatsCollectionSchema": ("dags", "DagStatsCollectionItem", True),
    "ImportErrorCollection": ("import_errors", "ImportError", True),
    "TaskInstanceDependencyCollection": ("dependencies", "TaskFailedDependency", False),
    "ExtraLinkCollection": ("extra_links", "ExtraLink", False),
    "Config": ("sections", "ConfigSection", False),
    "ConnectionCollection": ("connections", "ConnectionCollectionItem", True),
    "VariableCollection": ("variables", "VariableCollectionItem", True),
    # the spec names the list of DagWarningCollection `import_errors`, a slip that Airflow's
    # server does not follow: it answers `dag_warnings`, as weir does
    "DagWarningCollection": ("dag_warnings", "DagWarning", True),
    "PluginCollection": ("plugins", "Plugin", True),
    "ProviderCollection": ("providers", "Provider", False),
}

SCHEMAS["DagWarning"] = {"dag_id": "str", "warning_type": "str", "message": "str",
                         "timestamp": "str"}
SCHEMAS["Plugin"] = {"name": "str"}
# datasets (test_datasets.py)
SCHEMAS["Dataset"] = {"id": "int", "uri": "str", "extra": "obj?", "created_at": "str",
                      "updated_at": "str", "consuming_dags": "list", "producing_tasks": "list"}
SCHEMAS["DagScheduleDatasetReference"] = {"dag_id": "str?", "created_at": "str",
                                          "updated_at": "str"}
SCHEMAS["TaskOutletDatasetReference"] = {"dag_id": "str?", "task_id": "str?",
                                         "created_at": "str", "updated_at": "str"}
SCHEMAS["DatasetEvent"] = {"dataset_id": "int", "dataset_uri": "str", "extra": "obj?",
                           "source_dag_id": "str?", "source_task_id": "str?",
                           "source_run_id": "str?", "source_map_index": "int?",
                           "created_dagruns": "list", "timestamp": "str"}
SCHEMAS["BasicDAGRun"] = {"run_id": "str", "dag_id": "str", "logical_date": "str",
                          "start_date": "str?", "end_date": "str?",
                          "data_interval_start": "str?", "data_interval_end": "str?",
                          "state": "str"}
SCHEMAS["QueuedEvent"] = {"uri": "str", "dag_id": "str", "created_at": "str"}
COLLECTIONS["DatasetCollection"] = ("datasets", "Dataset", True)
COLLECTIONS["DatasetEventCollection"] = ("dataset_events", "DatasetEvent", True)
# the spec's QueuedEventCollection lists its items under `datasets`
COLLECTIONS["QueuedEventCollection"] = ("datasets", "QueuedEvent", True)
SCHEMAS["Provider"] = {"package_name": "str", "description": "str", "version": "str"}
SCHEMAS["EventLog"] = {"event_log_id": "int", "when": "str", "dag_id": "str?",
                       "task_id": "str?", "run_id": "str?", "map_index": "int?",
                       "try_number": "int?", "event": "str", "execution_date": "str?",
                       "owner": "str?", "extra": "str?"}
COLLECTIONS["EventLogCollection"] = ("event_logs", "EventLog", True)


# DAGDetail: a DAG's fields and these
SCHEMAS["DAGDetail"] = dict(SCHEMAS["DAG"], **{
    "timezone": "str?", "catchup": "bool?", "orientation": "str?", "concurrency": "num?",
    "start_date": "str?", "dag_run_timeout": "obj?", "doc_md": "str?", "default_view": "str?",
    "params": "obj?", "end_date": "str?", "is_paused_upon_creation": "bool?",
    "last_parsed": "str?", "template_search_path": "list?",
    "render_template_as_native_obj": "bool?",
})


def problems(name, value, where="$"):
    """What in `value` does not fit schema or collection `name`: a list of sentences."""
    out = []
    if name in COLLECTIONS:
        key, item, total = COLLECTIONS[name]
        if not isinstance(value, dict):
            return ["%s: expected an object (%s)" % (where, name)]
        if not isinstance(value.get(key), list):
            out.append("%s.%s: expected a list" % (where, key))
        else:
            for i, v in enumerate(value[key]):
                out += problems(item, v, "%s.%s[%d]" % (where, key, i))
        if total and not (isinstance(value.get("total_entries"), int)
                          and not isinstance(value.get("total_entries"), bool)):
            out.append("%s.total_entries: expected an integer" % where)
        return out
    fields = SCHEMAS[name]
    if not isinstance(value, dict):
        return ["%s: expected an object (%s)" % (where, name)]
    for field, t in fields.items():
        nullable = t.endswith("?")
        optional = t.endswith("!")
        t = t.rstrip("?!")
        if field not in value:
            if not optional:
                out.append("%s.%s: missing (%s)" % (where, field, name))
            continue
        v = value[field]
        if v is None:
            if not nullable:
                out.append("%s.%s: null, expected %s" % (where, field, t))
            continue
        if t == "any":
            continue
        ok = isinstance(v, TYPES[t]) and not (t in ("int", "num") and isinstance(v, bool))
        if not ok:
            out.append("%s.%s: %r, expected %s" % (where, field, v, t))
    return out


def check(name, value):
    p = problems(name, value)
    assert not p, "%s does not fit Airflow's spec:\n  %s\n%r" % (name, "\n  ".join(p), value)
