"""Reading the C side's tables in the tests: the states' names (src/model/states.c) and the
keys the API's views write (src/api/*_views.c), so that a change there fails here."""

import re
from pathlib import Path
from typing import Dict, List, Set

REPO = Path(__file__).resolve().parents[2]


def read(rel: str) -> str:
    return (REPO / rel).read_text()


def function_body(text: str, signature_start: str) -> str:
    """The body of the C function whose definition starts with signature_start."""
    at = text.index(signature_start)
    end = text.index("\n}\n", at)
    return text[at:end]


def name_tables() -> Dict[str, Dict[str, str]]:
    """{table: {C enumerator: name}} of states.c's `static const char *const X_names[]`,
    in the table's order."""
    text = read("src/model/states.c")
    tables = {}
    for m in re.finditer(r"static const char \*const (\w+)_names\[\] = \{(.*?)\};", text, re.S):
        tables[m.group(1)] = dict(re.findall(r'\[(\w+)\]\s*=\s*"([^"]*)"', m.group(2)))
    return tables


def final_states(function: str) -> Set[str]:
    """The C enumerators `bool FUNCTION(...)` of states.c says are final."""
    body = function_body(read("src/model/states.c"), "bool %s(" % function)
    return set(re.findall(r"s == (\w+)", body))


WRITERS = r'(?:json_util_write_(?:int_|bool_)?field|write_int_or_null|write_time|put_time|put_tree|' \
          r'json_util_write_key)\(sb, "(\w+)"'


def written_keys(rel: str, signature_start: str, pattern: str = WRITERS) -> List[str]:
    """The keys a view function writes, in its order."""
    return re.findall(pattern, function_body(read(rel), signature_start))
