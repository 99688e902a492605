"""Roles (docs/security.md, "Roles"): every served method of every row of the route table
(read from the C table through the hidden `weir routes --json`) asked by a user of each
role, configured in `users:`, and by the token; each is let through or refused (403, in its
group's voice, naming the role needed) as the table's role column says.  The UI's session
carries its user's role."""

import base64
import json
import re
import subprocess

import pytest

from conftest import DEFAULT_CONFIG, WEIR_BIN
from dagtest import password_hash

ROLES = ["Viewer", "User", "Op", "Admin"]
RANK = {"none": 0, "Viewer": 1, "User": 2, "Op": 3, "Admin": 4}
PASSWORD = "roles-secret"

# a value for each {name} of a template: ids that name nothing, numbers where the
# template takes digits only
VALUES = {"map_index": "0", "task_try_number": "1", "job_id": "999999", "event_log_id": "999999",
          "index": "0", "import_error_id": "999999", "role": "worker"}


def users_config(with_default=True):
    text = "users:\n"
    for role in ROLES:
        text += ('  - name: %s\n    password_hash: "%s"\n    role: %s\n'
                 % (role.lower(), password_hash(PASSWORD), role))
    if with_default:  # no role: Admin, as before roles
        text += '  - name: plain\n    password_hash: "%s"\n' % password_hash(PASSWORD)
    return text


def basic(user):
    return "Basic " + base64.b64encode(("%s:%s" % (user, PASSWORD)).encode()).decode()


def routes():
    """The rows that ask for a role: (template, method, least role, problems)."""
    out = subprocess.run([WEIR_BIN, "routes", "--json"], capture_output=True, text=True,
                         check=True).stdout
    rows = []
    for row in json.loads(out):
        for method, role in sorted(row["methods"].items()):
            if row["open"]:
                assert role == "none", row
                continue
            assert role in RANK and role != "none", row
            rows.append((row["template"], method, role, row["problems"]))
    return rows


def concrete(template):
    def one(m):
        name = m.group(1).rstrip("*")
        return VALUES.get(name, "no-such-" + name.replace("_", "-"))
    return re.sub(r"\{([^}]+)\}", one, template)


@pytest.fixture(scope="module")
def roles_server(tmp_path_factory):
    from conftest import Server, free_port
    home = tmp_path_factory.mktemp("roles") / "home"
    srv = Server(home, free_port(), DEFAULT_CONFIG + users_config())
    srv.start()
    yield srv
    srv.cleanup()


def ask(srv, method, path, auth):
    body = "{}" if method in ("POST", "PATCH", "PUT") else None
    status, headers, data = srv.request(method, path, token=False, raw_body=body,
                                        headers={"Authorization": auth})
    return status, headers, data


def refused_for_role(status, data):
    if status != 403:
        return None
    try:
        doc = json.loads(data.decode())
    except ValueError:
        return None
    text = doc.get("detail") or doc.get("error") or ""
    return doc if "needs the role" in text else None


ROWS = routes()


def test_the_table_gives_every_served_method_a_role():
    assert len(ROWS) > 60
    least = {(t, m): r for t, m, r, _ in ROWS}
    # a few that say what the roles mean (Airflow's)
    assert least[("/api/v1/dags", "GET")] == "Viewer"
    assert least[("/api/v1/dags/{dag_id}/dagRuns", "POST")] == "User"
    assert least[("/api/v1/dags/{dag_id}/dagRuns/{dag_run_id}", "DELETE")] == "User"
    assert least[("/api/v1/connections", "GET")] == "Op"
    assert least[("/api/v1/variables/{variable_key}", "GET")] == "Op"
    assert least[("/api/v1/pools", "POST")] == "Op"
    assert least[("/api/v1/jobs", "POST")] == "User"
    assert least[("/metrics", "GET")] == "Viewer"


@pytest.mark.parametrize("who", ROLES + ["plain", "token"])
def test_each_route_lets_through_or_refuses_each_role(roles_server, who):
    srv = roles_server
    if who == "token":
        auth, rank, name = "Bearer " + srv.token, RANK["Admin"], "Admin"
    elif who == "plain":
        auth, rank, name = basic("plain"), RANK["Admin"], "Admin"
    else:
        auth, rank, name = basic(who.lower()), RANK[who], who
    wrong = []
    for template, method, least, problems in ROWS:
        path = concrete(template)
        status, headers, data = ask(srv, method, path, auth)
        refusal = refused_for_role(status, data)
        if rank >= RANK[least]:
            if refusal is not None:
                wrong.append("%s %s: refused %s: %s" % (method, template, name, refusal))
            continue
        if refusal is None:
            wrong.append("%s %s: %s let through (%d)" % (method, template, name, status))
            continue
        text = refusal.get("detail") if problems else refusal.get("error")
        voice_ok = (headers.get("Content-Type", "").startswith("application/problem+json")
                    and refusal.get("status") == 403 and "title" in refusal) if problems \
            else ("error" in refusal and "detail" not in refusal)
        if not voice_ok or not text or "role %s or above" % least not in text \
                or "role is %s" % name not in text:
            wrong.append("%s %s: %s refused in the wrong voice: %s" % (method, template, name,
                                                                         refusal))
    assert not wrong, "\n".join(wrong)


def test_open_routes_ask_for_no_role(roles_server):
    status, _, _ = roles_server.request("GET", "/api/v1/health", token=False)
    assert status == 200
    status, _, _ = roles_server.request("GET", "/", token=False)
    assert status == 200


def test_the_ui_session_carries_the_users_role(roles_server):
    srv = roles_server
    status, headers, data = srv.request("POST", "/ui/login", token=False,
                                        body={"username": "viewer", "password": PASSWORD})
    assert status == 200, data
    cookie = headers["Set-Cookie"].split(";")[0]
    csrf = json.loads(data)["csrf_token"]
    hdrs = {"Cookie": cookie, "X-CSRF-Token": csrf}
    status, _, data = srv.request("GET", "/api/v1/dags", token=False, headers=hdrs)
    assert status == 200, data
    status, _, data = srv.request("POST", "/api/v1/dags/no-such-dag/dagRuns", token=False,
                                  headers=hdrs, body={})
    doc = refused_for_role(status, data)
    assert doc and "role User or above" in doc["detail"] and "role is Viewer" in doc["detail"]
    status, _, data = srv.request("GET", "/api/v1/variables", token=False, headers=hdrs)
    assert refused_for_role(status, data)



# the UI's actions and the route each calls (src/api/routes.c's list, which the UI reads)
UI_ACTIONS = {
    "trigger": ("/api/v1/dags/{dag_id}/dagRuns", "POST"),
    "pause": ("/api/v1/dags/{dag_id}", "PATCH"),
    "clear": ("/api/v1/dags/{dag_id}/clearTaskInstances", "POST"),
    "mark": ("/api/v1/dags/{dag_id}/dagRuns/{dag_run_id}", "PATCH"),
    "note": ("/api/v1/dags/{dag_id}/dagRuns/{dag_run_id}/setNote", "PATCH"),
    "kill_job": ("/api/v1/jobs/{job_id}", "DELETE"),
    "dataset_event": ("/api/v1/datasets/events", "POST"),
    "connections": ("/api/v1/connections", "GET"),
    "db_clean": ("/api/v1/weir/dbClean", "POST"),
}


@pytest.mark.parametrize("who", ROLES + ["token"])
def test_ui_me_says_what_the_role_may_do(roles_server, who):
    """GET /api/v1/ui/me: the UI shows a control only where this says its role may; each
    answer is the route table's least role of the action's route, as the server checks it."""
    least = {(t, m): r for t, m, r, _ in ROWS}
    if who == "token":
        auth, name = "Bearer " + roles_server.token, "Admin"
    else:
        auth, name = basic(who.lower()), who
    status, _, data = roles_server.request("GET", "/api/v1/ui/me", token=False,
                                           headers={"Authorization": auth})
    assert status == 200, data
    me = json.loads(data)
    assert me["role"] == name and me["user"] == (who.lower() if who != "token" else "token"), me
    for action, (template, method) in UI_ACTIONS.items():
        want = RANK[name] >= RANK[least[(template, method)]]
        assert me["may"][action] is want, (action, me)
    # what the names mean, for a reader
    assert me["may"]["trigger"] is (name != "Viewer")
    assert me["may"]["connections"] is (name in ("Op", "Admin"))
    assert me["may"]["db_clean"] is (name == "Admin")
