"""The warm DAG processor (_weir_airflow.warm_processor) as the server drives it, without a
server: requests on its standard input, one answer line per file on its standard output,
each file imported in a child of its own whose limits (time, output) it keeps."""

import json
import textwrap

GOOD = """\
import os
from airflow import DAG
from airflow.operators.bash import BashOperator

with DAG("good_%s", schedule=None, description="ppid=%%d" %% os.getppid()):
    BashOperator(task_id="t", bash_command="true")
"""


def ask(p, *requests):
    """Sends the requests at once; the answers by id."""
    for r in requests:
        p.stdin.write((json.dumps(r) + "\n").encode())
    p.stdin.flush()
    answers = {}
    for _ in requests:
        a = json.loads(p.stdout.readline())
        answers[a["id"]] = a
    return answers


def doc(answer):
    """The processor's answer: the last line of the child's output."""
    return json.loads(answer["out"].strip().splitlines()[-1])


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_files_are_imported_in_children_of_the_warm_processor(warm, tmp_path):
    a = write(tmp_path, "a.py", GOOD % "a")
    b = write(tmp_path, "b.py", GOOD % "b")
    got = ask(warm, {"id": 1, "file": a}, {"id": 2, "file": b})
    for i, name in ((1, "good_a"), (2, "good_b")):
        assert got[i]["status"] == 0 and not got[i]["timed_out"], got[i]
        dags = doc(got[i])["dags"]
        assert [d["dag_id"] for d in dags] == [name]
        assert dags[0]["description"] == "ppid=%d" % warm.pid  # forked by it
    # the same file again is imported anew (a child does not keep what another imported)
    assert [d["dag_id"] for d in doc(ask(warm, {"id": 3, "file": a})[3])["dags"]] == ["good_a"]


def test_a_childs_limits_and_errors(warm, tmp_path):
    raises = write(tmp_path, "raises.py", """\
        from airflow import DAG
        raise RuntimeError("no dag today")
        """)
    loops = write(tmp_path, "loops.py", "# airflow dag\nwhile True:\n    pass\n")
    # what the file writes on fd 1 goes to /dev/null while it is imported
    prints = write(tmp_path, "prints.py", "import os\n# airflow dag\nos.write(1, b'x' * 100000)\n")
    exits = write(tmp_path, "exits.py", "import os\n# airflow dag\nos._exit(7)\n")
    # the processor's own answer past max_bytes: a DAG with a long description
    long = write(tmp_path, "long.py", """\
        from airflow import DAG
        from airflow.operators.empty import EmptyOperator
        with DAG("long", schedule=None, description="y" * 5000):
            EmptyOperator(task_id="t")
        """)
    got = ask(warm, {"id": 1, "file": raises}, {"id": 2, "file": loops, "timeout_ms": 500},
              {"id": 3, "file": prints, "max_bytes": 1000}, {"id": 4, "file": exits},
              {"id": 5, "file": long, "max_bytes": 1000})
    assert "RuntimeError: no dag today" in doc(got[1])["error"]["message"]
    assert got[2]["timed_out"] and got[2]["signal"] == 9, got[2]
    assert got[3]["status"] == 0 and doc(got[3])["dags"] == [], got[3]
    assert got[4]["status"] == 7 and got[4]["out"] == "", got[4]
    assert got[5]["too_much"] and got[5]["out"] == "", got[5]


def test_a_bad_request_is_skipped(warm, tmp_path):
    a = write(tmp_path, "a.py", GOOD % "a")
    warm.stdin.write(b"not json\n" + b'{"no": "id"}\n')
    got = ask(warm, {"id": 9, "file": a})
    assert [d["dag_id"] for d in doc(got[9])["dags"]] == ["good_a"]
