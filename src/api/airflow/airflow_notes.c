/* airflow_notes.c: Airflow's setNote operations (airflow_notes.h). */
#include "api/airflow/airflow_notes.h"

#include "api/airflow/airflow_request.h"
#include "api/dag_answers.h"
#include "api/reply.h"
#include "api/route_ctx.h"
#include "api/route_match.h"

/* The body's note: a JSON object {"note": text}; NULL when it is not (the
 * 400 answered, naming the field).  *body holds the text (the caller's to
 * release). */
static const char *note_text(struct http_request *req, json_t **body)
{
	static const char *const allowed[] = {"note", NULL};
	json_t *note;

	*body = airflow_read_body(req, allowed);
	if (!*body)
		return NULL;
	note = json_object_get(*body, "note");
	if (!json_is_string(note)) {
		reply_problem(req, 400,
		              note
		                  ? "note: expected a string (\"\" removes the note)"
		                  : "note: missing (expected {\"note\": \"...\"}; \"\" removes the "
		                    "note)");
		json_decref(*body);
		*body = NULL;
		return NULL;
	}
	return json_string_value(note);
}

void airflow_set_dag_run_note(const struct route_ctx *rc, struct http_request *req,
                              const struct route_match *m)
{
	struct weir_error err = {0};
	json_t *body;
	const char *text;

	if (!rc->dag_ops->set_run_note) {
		reply_problem_no_route(req);
		return;
	}
	if (!airflow_path_ids_ok(req, m, false, false) || !(text = note_text(req, &body)))
		return;
	reply_problem_result(req,
	                     dag_answer_set_run_note(rc->dag_ops, rc->dag_ctx,
	                                             route_match_param(m, "dag_id"),
	                                             route_match_param(m, "dag_run_id"), text,
	                                             http_request_user(req), &err),
	                     &err);
	json_decref(body);
}

/* A TI's note; map_index from the path where the template has one, else -1. */
static void set_ti_note(const struct route_ctx *rc, struct http_request *req,
                        const struct route_match *m, bool mapped)
{
	struct weir_error err = {0};
	const char *seg[8], *text;
	int map_index = -1;
	json_t *body;

	if (!rc->dag_ops->set_ti_note) {
		reply_problem_no_route(req);
		return;
	}
	airflow_path_segments(m, seg);
	if (!airflow_path_ids_ok(req, m, false, false) ||
	    (mapped && !airflow_path_number(req, "map_index", seg[6], 0, &map_index)) ||
	    !(text = note_text(req, &body)))
		return;
	reply_problem_result(req,
	                     dag_answer_set_ti_note(rc->dag_ops, rc->dag_ctx, seg[1], seg[3],
	                                            seg[5], map_index, text, http_request_user(req),
	                                            &err),
	                     &err);
	json_decref(body);
}

void airflow_set_task_instance_note(const struct route_ctx *rc, struct http_request *req,
                                    const struct route_match *m)
{
	set_ti_note(rc, req, m, false);
}

void airflow_set_mapped_task_instance_note(const struct route_ctx *rc, struct http_request *req,
                                           const struct route_match *m)
{
	set_ti_note(rc, req, m, true);
}
