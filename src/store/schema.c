/* schema.c: the store's schema as its migrations, one per version
 * (schema.h; docs/internals/store.md). */
#include "store/schema.h"

#include <stddef.h>

/* A job's cause from what a row of version 3 says of its end (its state
 * and reason, the words the code of that version wrote): an SQL expression
 * over the two columns named. */
#define JOB_CAUSE_OF(state, reason)                                                                \
	"CASE"                                                                                     \
	" WHEN " state " NOT IN ('succeeded','failed','killed') THEN 'none'"                       \
	" WHEN " state " = 'succeeded' THEN 'exited'"                                              \
	" WHEN " state " = 'killed' THEN 'killed'"                                                 \
	" WHEN " reason " LIKE '%execution timeout%' THEN 'execution_timeout'"                     \
	" WHEN " reason " LIKE 'allocation timeout%' THEN 'allocation_timeout'"                    \
	" WHEN " reason " LIKE '%registration timeout%' THEN 'gang_timeout'"                       \
	" WHEN " reason " LIKE '%OOMKilled%' THEN 'oom'"                                           \
	" WHEN " reason " LIKE '%timeout: Slurm%' THEN 'cluster_time_limit'"                       \
	" WHEN " reason " LIKE '%cancelled outside weir%' THEN 'cluster_cancelled'"                \
	" WHEN " reason " LIKE '%lost (its launcher vanished)%' THEN 'launcher_lost'"              \
	" WHEN " reason " LIKE '%launch failed%' OR " reason " LIKE '%cannot start%'"              \
	" THEN 'launch_failed'"                                                                    \
	" WHEN " reason " LIKE '%killed by%' THEN 'signalled'"                                     \
	" ELSE 'exited' END"

/* "(c = 'a' OR c = 'b' ...)" with the quotes doubled, as it stands inside
 * an SQL string literal (migration 10 -> 11) */
#define EQ_(c, v) c " = ''" v "''"
#define EQ_ANY3(c, a, b, d) "(" EQ_(c, a) " OR " EQ_(c, b) " OR " EQ_(c, d) ")"
#define EQ_ANY4(c, a, b, d, e) "(" EQ_(c, a) " OR " EQ_(c, b) " OR " EQ_(c, d) " OR " EQ_(c, e) ")"
#define EQ_ANY5(c, a, b, d, e, f)                                                                  \
	"(" EQ_(c, a) " OR " EQ_(c, b) " OR " EQ_(c, d) " OR " EQ_(c, e) " OR " EQ_(c, f) ")"
#define EQ_ANY6(c, a, b, d, e, f, g)                                                               \
	"(" EQ_(c, a) " OR " EQ_(c, b) " OR " EQ_(c, d) " OR " EQ_(c, e) " OR " EQ_(               \
	    c, f) " OR " EQ_(c, g) ")"
#define EQ_ANY7(c, a, b, d, e, f, g, h)                                                            \
	"(" EQ_(c, a) " OR " EQ_(c, b) " OR " EQ_(c, d) " OR " EQ_(c, e) " OR " EQ_(               \
	    c, f) " OR " EQ_(c, g) " OR " EQ_(c, h) ")"

/* The tries table's columns before its state and after it, as 2 -> 3, 6 -> 7
 * and 11 -> 12 write them (the SQL each wrote is fixed; only the text is
 * shared) */
#define TRIES_HEAD                                                                                 \
	"CREATE TABLE task_instance_tries ("                                                       \
	" dag_id TEXT NOT NULL,"                                                                   \
	" run_id TEXT NOT NULL,"                                                                   \
	" task_id TEXT NOT NULL,"                                                                  \
	" map_index INTEGER NOT NULL,"                                                             \
	" try_number INTEGER NOT NULL,"                                                            \
	" job_id INTEGER REFERENCES jobs(id) ON DELETE SET NULL,"
#define TRIES_TAIL                                                                                 \
	" start_date INTEGER, end_date INTEGER,"                                                   \
	" reason TEXT NOT NULL DEFAULT '',"                                                        \
	" PRIMARY KEY (dag_id, run_id, task_id, map_index, try_number),"                           \
	" FOREIGN KEY (dag_id, run_id, task_id, map_index)"                                        \
	"  REFERENCES task_instances (dag_id, run_id, task_id, map_index) ON DELETE CASCADE)"

/* Migration i takes a file from version i to i + 1 (index 0: the empty
 * file).  Append only: a released migration never changes. */
static const char *const migrations[] = {
    /* 0 -> 1: the first schema */
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE jobs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " name TEXT NOT NULL,"
    " spec_json TEXT NOT NULL,"
    " framework TEXT NOT NULL DEFAULT 'none',"
    " state TEXT NOT NULL CHECK (state IN"
    "  ('queued','starting','running','succeeded','failed','killed')),"
    " reason TEXT NOT NULL DEFAULT '',"
    " priority INTEGER NOT NULL DEFAULT 0,"
    " attempt INTEGER NOT NULL DEFAULT 1,"
    " max_restarts INTEGER NOT NULL DEFAULT 0,"
    " exit_code INTEGER,"
    " restart_pending INTEGER NOT NULL DEFAULT 0,"
    " submitted_at INTEGER NOT NULL,"
    " queued_at INTEGER, allocated_at INTEGER, running_at INTEGER,"
    " started_at INTEGER, ended_at INTEGER);"
    "CREATE TABLE tasks ("
    " job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
    " attempt INTEGER NOT NULL,"
    " role TEXT NOT NULL,"
    " idx INTEGER NOT NULL,"
    " state TEXT NOT NULL CHECK (state IN"
    "  ('pending','starting','running','succeeded','failed','killed','lost')),"
    " reason TEXT NOT NULL DEFAULT '',"
    " host TEXT, port INTEGER, launcher_pid INTEGER, pid INTEGER, gpus TEXT,"
    " exit_code INTEGER, signal INTEGER, oom_killed INTEGER NOT NULL DEFAULT 0,"
    " peak_memory_bytes INTEGER, cpu_time_ms INTEGER,"
    " registered_at INTEGER, started_at INTEGER, ended_at INTEGER,"
    " PRIMARY KEY (job_id, attempt, role, idx));"
    "CREATE TABLE events ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
    " time INTEGER NOT NULL,"
    " kind TEXT NOT NULL,"
    " message TEXT NOT NULL);",
    /* 1 -> 2: indexes for the queue, the listings and the journal */
    "CREATE INDEX jobs_by_state ON jobs (state, priority DESC, id);"
    "CREATE INDEX events_by_job ON events (job_id, id);",
    /* 2 -> 3: workflows: DAGs, their runs, task instances and every try
     * (store/dag_store.h; docs/internals/dags.md).  IF NOT EXISTS: a file
     * whose version was set back by hand may have them already */
    "CREATE TABLE IF NOT EXISTS dags ("
    " dag_id TEXT PRIMARY KEY,"
    " file TEXT NOT NULL DEFAULT '',"
    " paused INTEGER NOT NULL DEFAULT 0,"
    " active INTEGER NOT NULL DEFAULT 1,"
    " last_parsed_at INTEGER,"
    " import_error TEXT NOT NULL DEFAULT '',"
    " spec_json TEXT NOT NULL DEFAULT '{}');"
    "CREATE TABLE IF NOT EXISTS dag_import_errors ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " file TEXT NOT NULL UNIQUE,"
    " time INTEGER NOT NULL,"
    " message TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS dag_runs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " dag_id TEXT NOT NULL REFERENCES dags(dag_id) ON DELETE CASCADE,"
    " run_id TEXT NOT NULL,"
    " state TEXT NOT NULL CHECK (state IN ('queued','running','success','failed')),"
    " run_type TEXT NOT NULL CHECK (run_type IN ('manual','scheduled','backfill')),"
    " logical_date INTEGER NOT NULL,"
    " data_interval_start INTEGER, data_interval_end INTEGER,"
    " conf TEXT NOT NULL DEFAULT '{}',"
    " reason TEXT NOT NULL DEFAULT '',"
    " queued_at INTEGER, start_date INTEGER, end_date INTEGER,"
    " UNIQUE (dag_id, run_id),"
    " UNIQUE (dag_id, logical_date));"
    "CREATE INDEX IF NOT EXISTS dag_runs_by_state ON dag_runs (state, dag_id, logical_date);"
    "CREATE TABLE IF NOT EXISTS task_instances ("
    " dag_id TEXT NOT NULL,"
    " run_id TEXT NOT NULL,"
    " task_id TEXT NOT NULL,"
    " map_index INTEGER NOT NULL DEFAULT -1,"
    " state TEXT NOT NULL CHECK (state IN ('none','scheduled','queued','running','success',"
    "  'failed','up_for_retry','upstream_failed','skipped','removed')),"
    " try_number INTEGER NOT NULL DEFAULT 0,"
    " max_tries INTEGER NOT NULL DEFAULT 1,"
    " job_id INTEGER REFERENCES jobs(id) ON DELETE SET NULL,"
    " pool TEXT NOT NULL DEFAULT 'default_pool',"
    " pool_slots INTEGER NOT NULL DEFAULT 1,"
    " priority INTEGER NOT NULL DEFAULT 0,"
    " queued_at INTEGER, start_date INTEGER, end_date INTEGER, next_retry_at INTEGER,"
    " rendered_command TEXT NOT NULL DEFAULT '',"
    " outputs TEXT,"
    " reason TEXT NOT NULL DEFAULT '',"
    " PRIMARY KEY (dag_id, run_id, task_id, map_index),"
    " FOREIGN KEY (dag_id, run_id) REFERENCES dag_runs (dag_id, run_id) ON DELETE CASCADE);"
    "CREATE INDEX IF NOT EXISTS task_instances_by_job ON task_instances (job_id)"
    " WHERE job_id IS NOT NULL;"
    "CREATE INDEX IF NOT EXISTS task_instances_by_state ON task_instances (state);"
    "CREATE TABLE IF NOT EXISTS task_instance_tries ("
    " dag_id TEXT NOT NULL,"
    " run_id TEXT NOT NULL,"
    " task_id TEXT NOT NULL,"
    " map_index INTEGER NOT NULL,"
    " try_number INTEGER NOT NULL,"
    " job_id INTEGER REFERENCES jobs(id) ON DELETE SET NULL,"
    " state TEXT NOT NULL CHECK (state IN ('none','scheduled','queued','running','success',"
    "  'failed','up_for_retry','upstream_failed','skipped','removed'))," TRIES_TAIL ";"
    "CREATE INDEX IF NOT EXISTS task_instance_tries_by_job ON task_instance_tries (job_id)"
    " WHERE job_id IS NOT NULL;",
    /* 3 -> 4: causes and per-job facts as columns (docs/internals/store.md,
     * "Version 4"): a cause on tasks and jobs, filled from what the old rows
     * say; the pending outcome, the route and the backend's id move from the
     * meta table into columns of the job, and their meta rows go */
    /* (its new columns first: migration_columns below) */
    "UPDATE tasks SET cause = CASE"
    " WHEN state IN ('pending','starting','running') THEN 'none'"
    " WHEN oom_killed OR reason LIKE 'OOMKilled%' THEN 'oom'"
    " WHEN reason LIKE 'execution timeout%' THEN 'execution_timeout'"
    " WHEN reason LIKE 'gang registration timeout%' THEN 'gang_timeout'"
    " WHEN reason LIKE 'launch failed%' OR reason LIKE 'cannot start%' THEN 'launch_failed'"
    " WHEN reason LIKE 'timeout: Slurm%' THEN 'cluster_time_limit'"
    " WHEN reason LIKE 'cancelled outside weir%' THEN 'cluster_cancelled'"
    " WHEN state = 'lost' THEN 'launcher_lost'"
    " WHEN state = 'killed' THEN 'stopped'"
    " WHEN signal > 0 THEN 'signalled'"
    " ELSE 'exited' END;"
    "CREATE TEMP TABLE v4_meta AS SELECT"
    " CAST(substr(key, instr(key, '.') + 1) AS INTEGER) AS id,"
    " substr(key, 1, instr(key, '.') - 1) AS what,"
    " CASE WHEN instr(value, ' ') > 0 THEN substr(value, 1, instr(value, ' ') - 1)"
    "  ELSE value END AS head,"
    " CASE WHEN instr(value, ' ') > 0 THEN substr(value, instr(value, ' ') + 1) END AS tail"
    " FROM meta WHERE (key LIKE 'outcome.%' OR key LIKE 'route.%' OR key LIKE 'backend_id.%')"
    " AND value <> '';"
    /* outcome.ID = "STATE EXIT_CODE REASON" */
    "UPDATE jobs SET"
    " outcome_state = (SELECT head FROM v4_meta m WHERE m.what = 'outcome' AND m.id = jobs.id),"
    " outcome_exit_code = (SELECT CAST(substr(tail, 1, instr(tail || ' ', ' ') - 1)"
    "  AS INTEGER) FROM v4_meta m WHERE m.what = 'outcome' AND m.id = jobs.id),"
    " outcome_reason = (SELECT substr(tail, instr(tail || ' ', ' ') + 1)"
    "  FROM v4_meta m WHERE m.what = 'outcome' AND m.id = jobs.id)"
    " WHERE id IN (SELECT id FROM v4_meta WHERE what = 'outcome' AND tail IS NOT NULL);"
    "UPDATE jobs SET outcome_exit_code = NULL WHERE outcome_exit_code < 0;"
    /* route.ID = "local" | "slurm" [QUEUE]; "gang" was the backend's other name */
    "UPDATE jobs SET"
    " route = (SELECT CASE WHEN head = 'gang' THEN 'slurm' ELSE head END"
    "  FROM v4_meta m WHERE m.what = 'route' AND m.id = jobs.id),"
    " route_queue = (SELECT tail FROM v4_meta m WHERE m.what = 'route' AND m.id = jobs.id)"
    " WHERE id IN (SELECT id FROM v4_meta WHERE what = 'route');"
    /* backend_id.ID = "ATTEMPT ID" */
    "UPDATE jobs SET"
    " backend_attempt = (SELECT CAST(head AS INTEGER)"
    "  FROM v4_meta m WHERE m.what = 'backend_id' AND m.id = jobs.id),"
    " backend_id = (SELECT tail FROM v4_meta m WHERE m.what = 'backend_id' AND m.id = jobs.id)"
    " WHERE id IN (SELECT id FROM v4_meta WHERE what = 'backend_id' AND tail IS NOT NULL);"
    "DROP TABLE v4_meta;"
    "DELETE FROM meta WHERE key LIKE 'outcome.%' OR key LIKE 'route.%'"
    " OR key LIKE 'backend_id.%';"
    "UPDATE jobs SET cause = " JOB_CAUSE_OF(
        "state", "reason") ";"
                           "UPDATE jobs SET outcome_cause = " JOB_CAUSE_OF(
                               "outcome_state",
                               "outcome_reason") " WHERE outcome_state IS NOT NULL;",
    /* 4 -> 5: connections and variables (store/secrets_store.h); the
     * secret columns hold sealed bytes (store/seal.h), never clear text */
    "CREATE TABLE IF NOT EXISTS connections ("
    " conn_id TEXT PRIMARY KEY,"
    " conn_type TEXT NOT NULL,"
    " description TEXT,"
    " host TEXT,"
    " port INTEGER,"
    " login TEXT,"
    " password BLOB,"
    " schema TEXT,"
    " extra BLOB,"
    " created_at INTEGER NOT NULL,"
    " updated_at INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS variables ("
    " key TEXT PRIMARY KEY,"
    " value BLOB NOT NULL,"
    " description TEXT,"
    " created_at INTEGER NOT NULL,"
    " updated_at INTEGER NOT NULL);",
    /* 5 -> 6: pools as Airflow's /pools routes change them (store/admin_store.h):
     * seeded by the configuration, then the API's; a deleted one is kept,
     * marked, so that the configuration does not bring it back */
    "CREATE TABLE IF NOT EXISTS pools ("
    " name TEXT PRIMARY KEY,"
    " slots INTEGER NOT NULL,"
    " description TEXT,"
    " queue TEXT,"
    " deleted INTEGER NOT NULL DEFAULT 0,"
    " updated_at INTEGER NOT NULL);",
    /* 6 -> 7: a sensor's state between pokes (up_for_reschedule) and its pokes'
     * record (store/sensor_store.h).  SQLite cannot change a CHECK, so the
     * two tables that name TI states are rebuilt: the tries first (they
     * refer to the TIs, and dropping a table deletes its rows first, which
     * would cascade), then the TIs, then the tries again.  The copies are
     * SELECT *: a column another migration added makes this step fail
     * rather than lose it. */
    "CREATE TEMP TABLE tries_copy AS SELECT * FROM task_instance_tries;"
    "DROP TABLE task_instance_tries;"
    "CREATE TABLE task_instances_new ("
    " dag_id TEXT NOT NULL,"
    " run_id TEXT NOT NULL,"
    " task_id TEXT NOT NULL,"
    " map_index INTEGER NOT NULL DEFAULT -1,"
    " state TEXT NOT NULL CHECK (state IN ('none','scheduled','queued','running','success',"
    "  'failed','up_for_retry','upstream_failed','skipped','removed','up_for_reschedule')),"
    " try_number INTEGER NOT NULL DEFAULT 0,"
    " max_tries INTEGER NOT NULL DEFAULT 1,"
    " job_id INTEGER REFERENCES jobs(id) ON DELETE SET NULL,"
    " pool TEXT NOT NULL DEFAULT 'default_pool',"
    " pool_slots INTEGER NOT NULL DEFAULT 1,"
    " priority INTEGER NOT NULL DEFAULT 0,"
    " queued_at INTEGER, start_date INTEGER, end_date INTEGER, next_retry_at INTEGER,"
    " rendered_command TEXT NOT NULL DEFAULT '',"
    " outputs TEXT,"
    " reason TEXT NOT NULL DEFAULT '',"
    " PRIMARY KEY (dag_id, run_id, task_id, map_index),"
    " FOREIGN KEY (dag_id, run_id) REFERENCES dag_runs (dag_id, run_id) ON DELETE CASCADE);"
    "INSERT INTO task_instances_new SELECT * FROM task_instances;"
    "DROP TABLE task_instances;"
    "ALTER TABLE task_instances_new RENAME TO task_instances;"
    "CREATE INDEX IF NOT EXISTS task_instances_by_job ON task_instances (job_id)"
    " WHERE job_id IS NOT NULL;"
    "CREATE INDEX IF NOT EXISTS task_instances_by_state ON task_instances (state);" TRIES_HEAD
    " state TEXT NOT NULL CHECK (state IN ('none','scheduled','queued','running','success',"
    "  "
    "'failed','up_for_retry','upstream_failed','skipped','removed','up_for_reschedule'))"
    "," TRIES_TAIL ";"
    "INSERT INTO task_instance_tries SELECT * FROM tries_copy;"
    "DROP TABLE tries_copy;"
    "CREATE INDEX IF NOT EXISTS task_instance_tries_by_job ON task_instance_tries (job_id)"
    " WHERE job_id IS NOT NULL;"
    "CREATE TABLE IF NOT EXISTS sensor_pokes ("
    " dag_id TEXT NOT NULL,"
    " run_id TEXT NOT NULL,"
    " task_id TEXT NOT NULL,"
    " map_index INTEGER NOT NULL,"
    " try_number INTEGER NOT NULL,"
    " first_poke_at INTEGER NOT NULL,"
    " last_poke_at INTEGER NOT NULL,"
    " next_poke_at INTEGER,"
    " pokes INTEGER NOT NULL DEFAULT 0,"
    " last_result TEXT NOT NULL DEFAULT '',"
    " PRIMARY KEY (dag_id, run_id, task_id, map_index),"
    " FOREIGN KEY (dag_id, run_id, task_id, map_index)"
    "  REFERENCES task_instances (dag_id, run_id, task_id, map_index) ON DELETE CASCADE);",
    /* 7 -> 8: the event log: who changed what, when (store/event_log_store.h);
     * Airflow's EventLog fields, `extra` a JSON object's text without
     * secrets.  No foreign keys: a record outlives what it names */
    "CREATE TABLE IF NOT EXISTS event_log ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " dttm INTEGER NOT NULL,"
    " dag_id TEXT, task_id TEXT, run_id TEXT,"
    " map_index INTEGER, try_number INTEGER,"
    " event TEXT NOT NULL,"
    " execution_date INTEGER,"
    " owner TEXT,"
    " extra TEXT);"
    "CREATE INDEX IF NOT EXISTS event_log_by_dttm ON event_log (dttm);"
    "CREATE INDEX IF NOT EXISTS event_log_by_dag ON event_log (dag_id, dttm)"
    " WHERE dag_id IS NOT NULL;",
    /* 8 -> 9: notifications and SLA misses (store/notify_store.h): every delivery
     * of a DAG's on_failure, on_retry, on_success, on_sla_miss, its target
     * as records show it (no secret), and each SLA miss once */
    "CREATE TABLE IF NOT EXISTS notifications ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " dag_id TEXT NOT NULL,"
    " run_id TEXT NOT NULL,"
    " task_id TEXT NOT NULL DEFAULT '',"
    " map_index INTEGER NOT NULL DEFAULT -1,"
    " try_number INTEGER NOT NULL DEFAULT 0,"
    " event TEXT NOT NULL,"
    " target_kind TEXT NOT NULL CHECK (target_kind IN ('webhook','email','command')),"
    " target TEXT NOT NULL,"
    " state TEXT NOT NULL CHECK (state IN ('pending','sent','failed')),"
    " attempts INTEGER NOT NULL DEFAULT 0,"
    " max_attempts INTEGER NOT NULL DEFAULT 1,"
    " last_error TEXT NOT NULL DEFAULT '',"
    " created_at INTEGER NOT NULL,"
    " updated_at INTEGER NOT NULL,"
    " next_attempt_at INTEGER);"
    "CREATE INDEX IF NOT EXISTS notifications_run ON notifications (dag_id, run_id);"
    "CREATE INDEX IF NOT EXISTS notifications_state ON notifications (state);"
    "CREATE TABLE IF NOT EXISTS sla_misses ("
    " dag_id TEXT NOT NULL,"
    " run_id TEXT NOT NULL,"
    " task_id TEXT NOT NULL,"
    " map_index INTEGER NOT NULL DEFAULT -1,"
    " due_at INTEGER NOT NULL,"
    " recorded_at INTEGER NOT NULL,"
    " state TEXT NOT NULL,"
    " logical_date INTEGER,"
    " description TEXT NOT NULL DEFAULT '',"
    " notified INTEGER NOT NULL DEFAULT 0,"
    " email_sent INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY (dag_id, run_id, task_id, map_index));",
    /* 9 -> 10: datasets (store/dataset_store.h): the URIs, their events, the
     * events queued for each DAG scheduled on them, the events a run
     * consumed, and the trigger_dag tasks that wait for the run they
     * started.  The waits name their TI without a foreign key: a rebuild of
     * task_instances (as 6 -> 7's) would cascade into them, and a wait whose
     * TI is gone ends harmlessly when its run does */
    "CREATE TABLE IF NOT EXISTS datasets ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " uri TEXT NOT NULL UNIQUE,"
    " extra TEXT NOT NULL DEFAULT '{}',"
    " created_at INTEGER NOT NULL,"
    " updated_at INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS dataset_events ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " dataset_id INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,"
    " extra TEXT NOT NULL DEFAULT '{}',"
    " source_dag_id TEXT, source_task_id TEXT, source_run_id TEXT, source_map_index INTEGER,"
    " timestamp INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS dataset_events_by_dataset ON dataset_events (dataset_id, id);"
    "CREATE TABLE IF NOT EXISTS dataset_queue ("
    " dataset_id INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,"
    " target_dag_id TEXT NOT NULL,"
    " created_at INTEGER NOT NULL,"
    " PRIMARY KEY (dataset_id, target_dag_id));"
    "CREATE TABLE IF NOT EXISTS dag_run_dataset_events ("
    " run_row_id INTEGER NOT NULL REFERENCES dag_runs(id) ON DELETE CASCADE,"
    " event_id INTEGER NOT NULL REFERENCES dataset_events(id) ON DELETE CASCADE,"
    " PRIMARY KEY (run_row_id, event_id));"
    "CREATE INDEX IF NOT EXISTS dag_run_dataset_events_by_event"
    " ON dag_run_dataset_events (event_id);"
    "CREATE TABLE IF NOT EXISTS dag_run_triggers ("
    " dag_id TEXT NOT NULL, run_id TEXT NOT NULL, task_id TEXT NOT NULL,"
    " map_index INTEGER NOT NULL, try_number INTEGER NOT NULL,"
    " target_dag_id TEXT NOT NULL, target_run_id TEXT NOT NULL,"
    " created_at INTEGER NOT NULL,"
    " PRIMARY KEY (dag_id, run_id, task_id, map_index));"
    "CREATE INDEX IF NOT EXISTS dag_run_triggers_by_target"
    " ON dag_run_triggers (target_dag_id, target_run_id);",
    /* 10 -> 11: the state CHECKs as comparisons: SQLite builds an index of
     * an IN list's values (a temporary b-tree) at every write that sets the
     * column, which was a fifth of the server's work per task; each
     * comparison chain accepts the same values.  The tables' SQL is
     * edited in place (SQLite's procedure for changing a CHECK: writable
     * schema, then the schema cookie bumped: store.c); a CHECK that does
     * not read as the version that made it is left as it is. */
    "PRAGMA writable_schema = ON;"
    "UPDATE sqlite_master SET sql = replace(sql,"
    " 'CHECK (state IN  (''queued'',''starting'',''running'',''succeeded'',''failed'',"
    "''killed''))',"
    " 'CHECK (" EQ_ANY6(
        "state", "queued", "starting", "running", "succeeded", "failed",
        "killed") ")')"
                  " WHERE type = 'table' AND name = 'jobs';"
                  "UPDATE sqlite_master SET sql = replace(sql,"
                  " 'CHECK (state IN  "
                  "(''pending'',''starting'',''running'',''succeeded'',''failed'',"
                  "''killed'',''lost''))',"
                  " 'CHECK (" EQ_ANY7(
                      "state", "pending", "starting", "running", "succeeded", "failed", "killed",
                      "lost") ")')"
                              " WHERE type = 'table' AND name = 'tasks';"
                              "UPDATE sqlite_master SET sql = replace(replace(sql,"
                              " 'CHECK (state IN (''queued'',''running'',''success'',''failed''))',"
                              " 'CHECK (" EQ_ANY4(
                                  "state", "queued", "running", "success",
                                  "failed") ")'),"
                                            " 'CHECK (run_type IN "
                                            "(''manual'',''scheduled'',''backfill''))',"
                                            " 'CHECK (" EQ_ANY3(
                                                "run_type", "manual", "scheduled",
                                                "backfill") ")')"
                                                            " WHERE type = 'table' AND name = "
                                                            "'dag_runs';"
                                                            "UPDATE sqlite_master SET sql = "
                                                            "replace(replace(sql,"
                                                            " 'CHECK (state IN "
                                                            "(''none'',''scheduled'',''queued'',''"
                                                            "running'',''success'',"
                                                            "  "
                                                            "''failed'',''up_for_retry'',''"
                                                            "upstream_failed'',''skipped'',''"
                                                            "removed''))',"
                                                            " 'CHECK (" EQ_ANY5("state", "none", "scheduled", "queued", "running", "success") " OR " EQ_ANY5(
                                                                "state", "failed",
                                                                "up_for_retry", "upstream_failed",
                                                                "skipped",
                                                                "removed") ")'),"
                                                                           /* the same
                                                                            * list with a
                                                                            * sensor's
                                                                            * state
                                                                            * between
                                                                            * pokes, as a
                                                                            * rebuild of
                                                                            * the two
                                                                            * tables may
                                                                            * have
                                                                            * written it
                                                                            */
                                                                           " 'CHECK "
                                                                           "(state IN "
                                                                           "(''none'',''"
                                                                           "scheduled'',"
                                                                           "''queued'','"
                                                                           "'running'','"
                                                                           "'success'',"
                                                                           "  "
                                                                           "''failed'','"
                                                                           "'up_for_"
                                                                           "retry'',''"
                                                                           "upstream_"
                                                                           "failed'',''"
                                                                           "skipped'',''"
                                                                           "removed'',"
                                                                           "''up_for_"
                                                                           "reschedule''"
                                                                           "))',"
                                                                           " 'CHECK "
                                                                           "(" EQ_ANY5("state", "none", "scheduled", "queued", "running", "success") " OR " EQ_ANY6(
                                                                               "state", "failed",
                                                                               "up_for_"
                                                                               "retry",
                                                                               "upstream"
                                                                               "_failed",
                                                                               "skipped", "removed",
                                                                               "up_for_"
                                                                               "reschedu"
                                                                               "le") ")'"
                                                                                     ")"
                                                                                     " W"
                                                                                     "HE"
                                                                                     "RE"
                                                                                     " t"
                                                                                     "yp"
                                                                                     "e "
                                                                                     "= "
                                                                                     "'t"
                                                                                     "ab"
                                                                                     "le"
                                                                                     "' "
                                                                                     "AN"
                                                                                     "D "
                                                                                     "na"
                                                                                     "me"
                                                                                     " I"
                                                                                     "N "
                                                                                     "('"
                                                                                     "ta"
                                                                                     "sk"
                                                                                     "_i"
                                                                                     "ns"
                                                                                     "ta"
                                                                                     "nc"
                                                                                     "es"
                                                                                     "',"
                                                                                     " '"
                                                                                     "ta"
                                                                                     "sk"
                                                                                     "_i"
                                                                                     "ns"
                                                                                     "ta"
                                                                                     "nc"
                                                                                     "e_"
                                                                                     "tr"
                                                                                     "ie"
                                                                                     "s'"
                                                                                     ");"
                                                                                     /* a
                                                                                      * notification's
                                                                                      * state and
                                                                                      * target kind
                                                                                      * (8 -> 9),
                                                                                      * set at every
                                                                                      * delivery
                                                                                      * attempt */
                                                                                     "UP"
                                                                                     "DA"
                                                                                     "TE"
                                                                                     " s"
                                                                                     "ql"
                                                                                     "it"
                                                                                     "e_"
                                                                                     "ma"
                                                                                     "st"
                                                                                     "er"
                                                                                     " S"
                                                                                     "ET"
                                                                                     " s"
                                                                                     "ql"
                                                                                     " ="
                                                                                     " r"
                                                                                     "ep"
                                                                                     "la"
                                                                                     "ce"
                                                                                     "(r"
                                                                                     "ep"
                                                                                     "la"
                                                                                     "ce"
                                                                                     "(s"
                                                                                     "ql"
                                                                                     ","
                                                                                     " '"
                                                                                     "CH"
                                                                                     "EC"
                                                                                     "K "
                                                                                     "(t"
                                                                                     "ar"
                                                                                     "ge"
                                                                                     "t_"
                                                                                     "ki"
                                                                                     "nd"
                                                                                     " I"
                                                                                     "N "
                                                                                     "('"
                                                                                     "'w"
                                                                                     "eb"
                                                                                     "ho"
                                                                                     "ok"
                                                                                     "''"
                                                                                     ",'"
                                                                                     "'e"
                                                                                     "ma"
                                                                                     "il"
                                                                                     "''"
                                                                                     ",'"
                                                                                     "'c"
                                                                                     "om"
                                                                                     "ma"
                                                                                     "nd"
                                                                                     "''"
                                                                                     "))"
                                                                                     "',"
                                                                                     " '"
                                                                                     "CH"
                                                                                     "EC"
                                                                                     "K "
                                                                                     "(" EQ_ANY3(
                                                                                         "target_"
                                                                                         "kind",
                                                                                         "webhook",
                                                                                         "email",
                                                                                         "command") ")'),"
                                                                                                    " 'CHECK (state IN (''pending'',''sent'',''failed''))',"
                                                                                                    " 'CHECK (" EQ_ANY3(
                                                                                                        "state",
                                                                                                        "pending",
                                                                                                        "sent",
                                                                                                        "failed") ")')"
                                                                                                                  " WHERE type = 'table' AND name = 'notifications';"
                                                                                                                  "PRAGMA writable_schema = OFF;",
    /* 11 -> 12: a TI's tries keyed by their primary key alone (WITHOUT
     * ROWID): a try was stored twice, in the table and in the key's index,
     * and every new try wrote both; and no index by job: no query reads
     * tries by job, and the job_id reference only matters when a job is
     * deleted, which weir never does (a row deleted by hand is still set
     * NULL, by a scan).  Copied as 6 -> 7 does (SELECT *: a column another
     * migration added makes this step fail rather than lose it); the CHECK
     * is 10 -> 11's */
    "CREATE TEMP TABLE tries_copy AS SELECT * FROM task_instance_tries;"
    "DROP TABLE task_instance_tries;" TRIES_HEAD
    " state TEXT NOT NULL CHECK ((state = 'none' OR state = 'scheduled' OR state = 'queued'"
    " OR state = 'running' OR state = 'success') OR (state = 'failed'"
    " OR state = 'up_for_retry' OR state = 'upstream_failed' OR state = 'skipped'"
    " OR state = 'removed' OR state = 'up_for_reschedule'))," TRIES_TAIL " WITHOUT ROWID;"
    "INSERT INTO task_instance_tries SELECT * FROM tries_copy;"
    "DROP TABLE tries_copy;",
    /* 12 -> 13: the specs of jobs that carry secrets (a DAG task's secret
     * variables, model/job_spec.h's mask), sealed (store/secrets_store.h);
     * the jobs table holds them masked */
    "CREATE TABLE IF NOT EXISTS job_sealed_specs ("
    " job_id INTEGER PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,"
    " spec BLOB NOT NULL);",
    /* 13 -> 14: how many runs each DAG has in each state, kept by triggers
     * on dag_runs (a foreign key's cascade fires them too): the API's
     * total_entries and the UI's counts are a lookup, not a walk of the
     * DAG's runs (bench/soak.py).  Counted again from the rows, so a file
     * set back by hand comes out right; a migration that rebuilds dag_runs
     * (DROP TABLE drops its triggers) must make them again */
    "CREATE TABLE IF NOT EXISTS dag_run_counts ("
    " dag_id TEXT NOT NULL,"
    " state TEXT NOT NULL,"
    " n INTEGER NOT NULL,"
    " PRIMARY KEY (dag_id, state)) WITHOUT ROWID;"
    "DELETE FROM dag_run_counts;"
    "INSERT INTO dag_run_counts SELECT dag_id, state, count(*) FROM dag_runs"
    " GROUP BY dag_id, state;"
    "CREATE TRIGGER IF NOT EXISTS dag_run_counts_insert AFTER INSERT ON dag_runs BEGIN"
    " INSERT INTO dag_run_counts VALUES (new.dag_id, new.state, 1)"
    "  ON CONFLICT (dag_id, state) DO UPDATE SET n = n + 1;"
    " END;"
    "CREATE TRIGGER IF NOT EXISTS dag_run_counts_delete AFTER DELETE ON dag_runs BEGIN"
    " UPDATE dag_run_counts SET n = n - 1 WHERE dag_id = old.dag_id AND state = old.state;"
    " END;"
    "CREATE TRIGGER IF NOT EXISTS dag_run_counts_update AFTER UPDATE OF dag_id, state"
    " ON dag_runs WHEN old.dag_id IS NOT new.dag_id OR old.state IS NOT new.state BEGIN"
    " UPDATE dag_run_counts SET n = n - 1 WHERE dag_id = old.dag_id AND state = old.state;"
    " INSERT INTO dag_run_counts VALUES (new.dag_id, new.state, 1)"
    "  ON CONFLICT (dag_id, state) DO UPDATE SET n = n + 1;"
    " END;",
    /* 14 -> 15: tries by job again, now that weir deletes jobs (`weir db
     * clean`, store/clean_store.h): each deleted job set its tries' job_id
     * NULL by a scan of every try (1.5 s a batch of 200 jobs at 100,000
     * tries); partial, as task_instances_by_job */
    "CREATE INDEX IF NOT EXISTS task_instance_tries_by_job ON task_instance_tries (job_id)"
    " WHERE job_id IS NOT NULL;",
    /* 15 -> 16: users kept in the store (`weir users`) and the API tokens
     * that act as a user (`weir tokens`), store/user_store.h: a password
     * only as its PBKDF2 hash, a token only as its SHA-256.  A token names
     * its user by name, with no foreign key: a user of the configuration
     * (`users:`) may hold tokens too, and a deleted user's tokens stay
     * listed, revoked */
    "CREATE TABLE IF NOT EXISTS users ("
    " name TEXT PRIMARY KEY,"
    " email TEXT,"
    " role TEXT NOT NULL,"
    " password_hash TEXT NOT NULL,"
    " created_at INTEGER NOT NULL,"
    " changed_at INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS tokens ("
    " name TEXT PRIMARY KEY,"
    " user_name TEXT NOT NULL,"
    " hash TEXT NOT NULL UNIQUE,"
    " created_at INTEGER NOT NULL,"
    " expires_at INTEGER,"
    " revoked_at INTEGER,"
    " last_used_at INTEGER);"
    "CREATE INDEX IF NOT EXISTS tokens_by_user ON tokens (user_name);",
    /* 16 -> 17: notes on runs and task instances (Airflow's setNote): the
     * text, who set it and when, a row while there is one.  Tables of their
     * own, as Airflow's dag_run_note and task_instance_note: a column on
     * task_instances would make 6 -> 7's copy (SELECT *) fail on a file set
     * back by hand, and no write of a run or TI may touch a note.  Both
     * refer to the run (deleted with it); the TI's note not to its TI, so
     * that a rebuild of task_instances never cascades into the notes */
    "CREATE TABLE IF NOT EXISTS dag_run_notes ("
    " dag_id TEXT NOT NULL,"
    " run_id TEXT NOT NULL,"
    " content TEXT NOT NULL,"
    " set_by TEXT NOT NULL DEFAULT '',"
    " set_at INTEGER,"
    " PRIMARY KEY (dag_id, run_id),"
    " FOREIGN KEY (dag_id, run_id) REFERENCES dag_runs (dag_id, run_id) ON DELETE CASCADE)"
    " WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS task_instance_notes ("
    " dag_id TEXT NOT NULL,"
    " run_id TEXT NOT NULL,"
    " task_id TEXT NOT NULL,"
    " map_index INTEGER NOT NULL,"
    " content TEXT NOT NULL,"
    " set_by TEXT NOT NULL DEFAULT '',"
    " set_at INTEGER,"
    " PRIMARY KEY (dag_id, run_id, task_id, map_index),"
    " FOREIGN KEY (dag_id, run_id) REFERENCES dag_runs (dag_id, run_id) ON DELETE CASCADE)"
    " WITHOUT ROWID;",
    /* 17 -> 18: the calls of Ray programs on warm workers
     * (store/call_store.h), under the worker's job: keyed by the job and
     * the program's number for the call, the job's deletion deletes them;
     * the CHECK as comparisons, as 10 -> 11 writes them */
    "CREATE TABLE IF NOT EXISTS calls ("
    " job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
    " call_id INTEGER NOT NULL,"
    " name TEXT NOT NULL,"
    " state TEXT NOT NULL CHECK (state = 'running' OR state = 'succeeded'"
    " OR state = 'failed' OR state = 'cancelled' OR state = 'crashed'),"
    " tries INTEGER NOT NULL,"
    " started_at INTEGER,"
    " ended_at INTEGER,"
    " error TEXT,"
    " PRIMARY KEY (job_id, call_id)) WITHOUT ROWID;",
    /* 18 -> 19: a job's nonce (columns_19: jobs.nonce, 0 for the jobs
     * stored before it): random per job, so that a job given the id of
     * one a power cut lost is told from it by the node's agent
     * (docs/internals/recovery.md, "A power cut") */
    "",
    /* 19 -> 20: the dataset events a task added through a DatasetAlias
     * (Airflow 2.10), by alias: they link the alias to their datasets
     * (a DAG scheduled on the alias runs on those datasets' events from
     * the first such event on) and are the alias's inlet events */
    "CREATE TABLE IF NOT EXISTS dataset_alias_events ("
    " alias TEXT NOT NULL,"
    " event_id INTEGER NOT NULL REFERENCES dataset_events(id) ON DELETE CASCADE,"
    " PRIMARY KEY (alias, event_id)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS dataset_alias_events_by_event"
    " ON dataset_alias_events (event_id);",
};

/* The columns each migration adds before its SQL runs, each only when the
 * table lacks it (SQLite has no ADD COLUMN IF NOT EXISTS; a file whose
 * version was set back by hand may have them already). */
static const struct store_column columns_4[] = {
    {"tasks", "cause", "TEXT NOT NULL DEFAULT 'none'"},
    {"jobs", "cause", "TEXT NOT NULL DEFAULT 'none'"},
    {"jobs", "outcome_state", "TEXT"},
    {"jobs", "outcome_exit_code", "INTEGER"},
    {"jobs", "outcome_cause", "TEXT"},
    {"jobs", "outcome_reason", "TEXT"},
    {"jobs", "route", "TEXT"},
    {"jobs", "route_queue", "TEXT"},
    {"jobs", "backend_attempt", "INTEGER"},
    {"jobs", "backend_id", "TEXT"},
};

static const struct store_column columns_19[] = {
    {"jobs", "nonce", "INTEGER NOT NULL DEFAULT 0"},
};

#define N_MIGRATIONS (sizeof(migrations) / sizeof(migrations[0]))

_Static_assert(N_MIGRATIONS == STORE_SCHEMA_VERSION, "one migration per schema version");

const char *store_migration(int version)
{
	if (version < 0 || (size_t)version >= N_MIGRATIONS)
		return NULL;
	return migrations[version];
}

const struct store_column *store_migration_columns(int version, size_t *n)
{
	if (version == 3) {
		*n = sizeof(columns_4) / sizeof(columns_4[0]);
		return columns_4;
	}
	if (version == 18) {
		*n = sizeof(columns_19) / sizeof(columns_19[0]);
		return columns_19;
	}
	*n = 0;
	return NULL;
}

int store_migration_edits_schema(int version)
{
	return version == 10;
}
