"""GET /metrics scraped by a real Prometheus (Debian's `prometheus`), its text checked by
`promtool check metrics`, and the series moving after a job and a DAG run.

Prometheus runs in a temporary folder on a free loopback port, scraping weir every second
with the server's token (a credentials file, as an operator would configure it); it is
stopped by the pid it was started with.  Every wait has a finite timeout.
"""

import json
import os
import shutil
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

from conftest import REPO, free_port, spec, wait_for
from dagtest import make_dags  # noqa: F401

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"


def need(binary):
    if not os.access(binary, os.X_OK):
        pytest.fail("%s not found: install Debian's prometheus (tests/install-deps.sh)" % binary)


class Prometheus:
    def __init__(self, folder, target_port, token):
        self.dir = folder
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        cred = self.dir / "weir-token"
        cred.write_text(token)
        cred.chmod(0o600)
        (self.dir / "prometheus.yml").write_text(
            "global:\n"
            "  scrape_interval: 1s\n"
            "  scrape_timeout: 1s\n"
            "scrape_configs:\n"
            "  - job_name: weir\n"
            "    metrics_path: /metrics\n"
            "    authorization:\n"
            "      type: Bearer\n"
            "      credentials_file: %s\n"
            "    static_configs:\n"
            "      - targets: ['127.0.0.1:%d']\n" % (cred, target_port))
        self.log = open(self.dir / "prometheus.log", "wb")
        self.proc = subprocess.Popen(
            [PROMETHEUS, "--config.file=%s" % (self.dir / "prometheus.yml"),
             "--storage.tsdb.path=%s" % (self.dir / "data"),
             "--web.listen-address=127.0.0.1:%d" % self.port],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)

    def get(self, path, **params):
        url = self.url + path + ("?" + urllib.parse.urlencode(params) if params else "")
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.loads(r.read())

    def target_up(self):
        """The weir target once Prometheus scraped it successfully."""
        if self.proc.poll() is not None:
            pytest.fail("prometheus exited with %s:\n%s" % (self.proc.returncode, self.log_text()))
        try:
            body = self.get("/api/v1/targets")
        except OSError:
            return None
        for t in body["data"]["activeTargets"]:
            if t["labels"].get("job") == "weir" and t["health"] == "up":
                return t
        return None

    def value(self, query):
        """The query's single value, or None while Prometheus has none."""
        body = self.get("/api/v1/query", query=query)
        assert body["status"] == "success", body
        result = body["data"]["result"]
        if not result:
            return None
        assert len(result) == 1, result
        return float(result[0]["value"][1])

    def wait_value(self, query, pred, what, timeout=30):
        def ok():
            v = self.value(query)
            return v is not None and pred(v) and (v,)
        return wait_for(ok, timeout, what)[0]

    def log_text(self):
        try:
            return (self.dir / "prometheus.log").read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()


@pytest.fixture
def prometheus(tmp_path):
    need(PROMETHEUS)
    started = []

    def start(srv):
        p = Prometheus(tmp_path / ("prometheus-%d" % len(started)), srv.port, srv.token)
        started.append(p)
        return p
    yield start
    for p in started:
        p.stop()


def scrape(srv):
    status, headers, data = srv.request("GET", "/metrics")
    assert status == 200, (status, data[:300])
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4"), headers
    return data.decode()


def promtool_check(text):
    need(PROMTOOL)
    r = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, "promtool check metrics:\n%s%s" % (r.stdout, r.stderr)


def samples(text):
    """{'name{labels}': value} of a page."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            out[key] = float(value)
    return out


def test_metrics_needs_the_token(server):
    status, headers, _ = server.request("GET", "/metrics", token=False)
    assert status == 401 and "Bearer" in headers.get("WWW-Authenticate", ""), (status, headers)
    status, _, _ = server.request("GET", "/metrics", token="wrong")
    assert status == 401
    status, _, _ = server.request("POST", "/metrics", raw_body="{}")
    assert status == 405


def test_exposition_passes_promtool_and_names_every_documented_series(server):
    text = scrape(server)
    promtool_check(text)
    types = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            types[name] = kind
    for name in types:
        assert name.startswith("weir_"), name
        if types[name] == "counter":
            assert name.endswith("_total"), name
    # every series docs/metrics.md lists is on the page, with the type it says
    listed = {}
    for line in (REPO / "docs" / "metrics.md").read_text().splitlines():
        if line.startswith("| `weir_"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            listed[cells[0].strip("`")] = cells[1]
    assert listed, "docs/metrics.md lists no series"
    assert set(listed) == set(types), (sorted(set(listed) ^ set(types)))
    for name, kind in listed.items():
        assert types[name] == kind, (name, kind, types[name])


def test_prometheus_scrapes_and_the_series_move(make_dags, prometheus):
    d = make_dags(files=["observed.yaml"])
    srv = d.srv
    d.wait_dag("observed")
    prom = prometheus(srv)
    wait_for(prom.target_up, 60, "Prometheus scraping weir:\n" + prom.log_text())

    # before any work: the series exist and read zero
    assert prom.value("weir_job_run_seconds_count") == 0
    assert prom.value('weir_jobs{state="succeeded"}') == 0
    assert prom.value("weir_build_info") == 1

    # a job: queue wait, run time, jobs by state, the submission's request
    job = srv.submit(spec({"worker": {"command": "sleep 0.2"}}, name="observed-job"))
    assert srv.wait_job(job["id"])["state"] == "succeeded"
    prom.wait_value("weir_job_run_seconds_count", lambda v: v >= 1, "a job's run time")
    prom.wait_value("weir_job_queue_wait_seconds_count", lambda v: v >= 1, "a job's queue wait")
    prom.wait_value('weir_jobs{state="succeeded"}', lambda v: v >= 1, "a succeeded job")
    prom.wait_value('weir_http_requests_total{method="POST",route="/api/v1/jobs",code="201"}',
                    lambda v: v == 1, "the submission counted by its route")

    # a DAG run: its duration and outcome per DAG, its task instances' run times
    d.trigger("observed", run_id="observed_1")
    assert d.wait_run("observed", "observed_1")["state"] == "success"
    prom.wait_value('weir_dag_runs_total{dag_id="observed",state="success"}', lambda v: v == 1,
                    "the run's outcome")
    prom.wait_value('weir_dag_runs_total{dag_id="observed",state="failed"}', lambda v: v == 0,
                    "no failed run")
    prom.wait_value('weir_dag_run_duration_seconds_count{dag_id="observed"}', lambda v: v == 1,
                    "the run's duration")
    prom.wait_value('weir_dag_run_duration_seconds_bucket{dag_id="observed",le="+Inf"}',
                    lambda v: v == 1, "the duration's buckets")
    prom.wait_value("weir_task_instance_run_seconds_count", lambda v: v >= 2,
                    "the two task instances' run times")
    prom.wait_value('weir_task_instances{state="success"}', lambda v: v >= 2,
                    "task instances by state")
    prom.wait_value('weir_dag_runs{state="success"}', lambda v: v >= 1, "runs by state")
    # the trigger's route is a template: the run id does not become a label
    prom.wait_value(
        'weir_http_requests_total{method="POST",route="/api/v1/dags/{dag_id}/dagRuns",'
        'code="200"}', lambda v: v == 1, "the trigger counted by its template")
    assert prom.value('count(weir_http_requests_total{route=~".*observed.*"})') is None
    # the store committed, the loop turned and its heartbeat fired
    prom.wait_value("weir_store_commit_seconds_count", lambda v: v >= 1, "store commits")
    prom.wait_value("weir_loop_turn_seconds_count", lambda v: v >= 1, "loop turns")
    prom.wait_value("weir_loop_timer_lag_seconds_count", lambda v: v >= 1, "heartbeats")
    # Prometheus's own scrapes are counted too
    prom.wait_value('weir_http_requests_total{method="GET",route="/metrics",code="200"}',
                    lambda v: v >= 2, "the scrapes")

    # what Prometheus stored is what the page says, and the page still lints clean
    text = scrape(srv)
    promtool_check(text)
    page = samples(text)
    assert page['weir_dag_runs_total{dag_id="observed",state="success"}'] == 1
    assert page["weir_job_run_seconds_count"] >= 1
    # a histogram's buckets never decrease, and +Inf is the count
    buckets = [(k, v) for k, v in page.items()
               if k.startswith("weir_job_run_seconds_bucket")]
    values = [v for _, v in buckets]
    assert values == sorted(values), buckets
    assert values[-1] == page["weir_job_run_seconds_count"]


def test_an_unknown_path_is_one_label(server):
    for i in range(5):
        server.request("GET", "/api/v1/no-such-thing-%d" % i)
    page = samples(scrape(server))
    other = [k for k in page if k.startswith("weir_http_requests_total") and "no-such" in k]
    assert other == [], other
    assert page['weir_http_requests_total{method="GET",route="other",code="404"}'] == 5
