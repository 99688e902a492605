"""DAG files that are symbolic links (issue 25): read only when the link's target is inside the
DAG folder (`dag_folder_symlinks: inside`, the default) or never (`never`); a refused link is an
import error that names the link and never shows the target's content, nor does /dagSources.
The files a DAG names that the server reads (a `job:` spec file, a tony.xml) stay inside the
folder too.
"""

import os

from conftest import wait_for
from dagtest import Dags, dag_config

# what the file outside the folder starts with: it must never come back through the API
OUTSIDE_FIRST = "root:$6$NEVER-SHOWN-8812$x:19000:0:99999:7:::"
OUTSIDE_DAG = "dag_id: outside_dag\ntasks:\n  - task_id: t\n    command: 'true'\n"
INSIDE_DAG = "dag_id: inside_dag\ntasks:\n  - task_id: t\n    command: 'true'\n"


def setup_links(d, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "shadow.yaml").write_text(OUTSIDE_FIRST + "\nsecond line\n")
    (outside / "valid.yaml").write_text(OUTSIDE_DAG)
    sub = d.dir / "sub"
    sub.mkdir()
    (sub / "inner.yaml").write_text(INSIDE_DAG)
    # subfolders are read too: this one is not, so that only the link names inside_dag
    (d.dir / ".airflowignore").write_text("^sub/\n")
    os.symlink(outside / "shadow.yaml", d.dir / "shadow.yaml")
    os.symlink(outside / "valid.yaml", d.dir / "valid.yaml")
    # relative, through the folder: still inside
    os.symlink("sub/inner.yaml", d.dir / "inside.yaml")
    return outside


def import_errors(d):
    return {os.path.basename(e["filename"]): e["stack_trace"]
            for e in d.get("/importErrors")["import_errors"]}


def wait_errors(d, names):
    return wait_for(lambda: (lambda errs: errs if names <= set(errs) else None)(import_errors(d)),
                    30, "import errors of %s" % sorted(names))


def test_links_outside_the_folder_are_refused(make_server, tmp_path):
    srv = make_server(config=dag_config(), start=False)
    d = Dags(srv, tmp_path)
    outside = setup_links(d, tmp_path)
    srv.start()
    d.wait_dag("inside_dag")
    errs = wait_errors(d, {"shadow.yaml", "valid.yaml"})
    for name in ("shadow.yaml", "valid.yaml"):
        assert "symbolic link to a file outside the DAG folder" in errs[name], errs
        assert str(d.dir / name) in errs[name], errs
    everything = repr(d.get("/importErrors")) + repr(d.get("/dags"))
    assert "NEVER-SHOWN" not in everything and str(outside) not in everything, everything
    status, _ = srv.api("GET", "/api/v1/dags/outside_dag")
    assert status == 404

    # the source of a loaded link, then of the same link turned to a file outside
    dag = d.get("/dags/inside_dag")
    assert "dag_id: inside_dag" in d.get("/dagSources/" + dag["file_token"])["content"]
    tmp = d.dir / ".inside.tmp"
    os.symlink(outside / "shadow.yaml", tmp)
    os.replace(tmp, d.dir / "inside.yaml")
    errs = wait_errors(d, {"inside.yaml"})
    assert "outside the DAG folder" in errs["inside.yaml"], errs
    status, body = srv.api("GET", "/api/v1/dagSources/" + dag["file_token"])
    assert status == 404 and "NEVER-SHOWN" not in repr(body), body
    assert "outside the DAG folder" in body["detail"], body

    # a refused link removed: its import error goes with it
    os.unlink(d.dir / "shadow.yaml")
    wait_for(lambda: "shadow.yaml" not in import_errors(d), 30, "shadow.yaml's error gone")


def test_never_refuses_every_link(make_server, tmp_path):
    srv = make_server(config=dag_config() + "dag_folder_symlinks: never\n", start=False)
    d = Dags(srv, tmp_path)
    setup_links(d, tmp_path)
    d.write("plain.yaml", INSIDE_DAG.replace("inside_dag", "plain_dag"))
    srv.start()
    d.wait_dag("plain_dag")
    errs = wait_errors(d, {"shadow.yaml", "valid.yaml", "inside.yaml"})
    for name in ("shadow.yaml", "valid.yaml", "inside.yaml"):
        assert "dag_folder_symlinks: never" in errs[name], errs
    assert "NEVER-SHOWN" not in repr(errs)
    for dag_id in ("inside_dag", "outside_dag"):
        status, _ = srv.api("GET", "/api/v1/dags/" + dag_id)
        assert status == 404, dag_id


def test_a_bad_setting_is_named(make_server, tmp_path):
    srv = make_server(config=dag_config() + "dag_folder_symlinks: sometimes\n", start=False)
    srv.start(wait=False)
    assert srv.proc.wait(60) != 0
    assert "dag_folder_symlinks: expected inside or never" in srv.log_text()


JOB_DAG = """\
dag_id: %s
tasks:
  - task_id: t
    job: %s
"""
JOB_SPEC = "name: j\nroles:\n  task: {command: 'echo job-ran', memory: 256m}\n"


def test_job_files_stay_inside_the_folder(make_server, tmp_path):
    srv = make_server(config=dag_config(), start=False)
    d = Dags(srv, tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "job.yaml").write_text(OUTSIDE_FIRST + "\n")
    (d.dir / "specs").mkdir()
    (d.dir / "specs" / "job.yaml").write_text(JOB_SPEC)
    os.symlink(outside / "job.yaml", d.dir / "specs" / "linked.yaml")
    d.write("inside_job.yaml", JOB_DAG % ("inside_job", "specs/job.yaml"))
    d.write("abs_job.yaml", JOB_DAG % ("abs_job", outside / "job.yaml"))
    d.write("up_job.yaml", JOB_DAG % ("up_job", "../../outside/job.yaml"))
    d.write("link_job.yaml", JOB_DAG % ("link_job", "specs/linked.yaml"))
    srv.start()
    d.wait_dag("inside_job")
    errs = wait_errors(d, {"abs_job.yaml", "up_job.yaml", "link_job.yaml"})
    for name in ("abs_job.yaml", "up_job.yaml", "link_job.yaml"):
        assert "is not inside the DAG folder" in errs[name], errs
    assert "NEVER-SHOWN" not in repr(errs)
    run = d.wait_run("inside_job", d.trigger("inside_job")["dag_run_id"])
    assert run["state"] == "success", run

    # a job file turned into a link to a file outside after its DAG loaded: the try fails,
    # saying why, and shows nothing of the file
    os.unlink(d.dir / "specs" / "job.yaml")
    os.symlink(outside / "job.yaml", d.dir / "specs" / "job.yaml")
    run = d.wait_run("inside_job", d.trigger("inside_job")["dag_run_id"])
    assert run["state"] == "failed", run
    log = d.log("inside_job", run["dag_run_id"], "t")
    assert "is not inside the DAG folder" in log and "NEVER-SHOWN" not in log, log
