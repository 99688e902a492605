"""weir._config: the server, home, token and object folder, found as the `weir` CLI finds
them (src/cli/cli_common.c): the argument, else the environment, else HOME's files."""

import re

import pytest

import cside
from weir import _config


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A HOME of its own and none of weir's variables set."""
    for var in ("WEIR_SERVER", "WEIR_TOKEN", "WEIR_HOME", "WEIR_OBJECTS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def test_the_default_server_is_the_clis():
    m = re.search(r'#define CLI_DEFAULT_SERVER "([^"]+)"', cside.read("src/cli/cli_common.h"))
    assert m and _config.DEFAULT_SERVER == m.group(1)


def test_defaults_come_from_home(home):
    s = _config.settings()
    assert s.server == _config.DEFAULT_SERVER
    assert s.home == home / ".weir" and s.objects_dir == home / ".weir" / "objects"
    assert s.token is None and s.token_source == str(home / ".weir" / "token")


def test_the_token_file_of_the_home_with_its_newline(home):
    (home / ".weir").mkdir()
    (home / ".weir" / "token").write_text("s3cret\n")
    s = _config.settings()
    assert s.token == "s3cret" and s.token_source == str(home / ".weir" / "token")


def test_the_environment_beats_the_files(home, monkeypatch, tmp_path_factory):
    (home / ".weir").mkdir()
    (home / ".weir" / "token").write_text("from-file")
    other = tmp_path_factory.mktemp("other-home")
    (other / "token").write_text("other-file\n")
    monkeypatch.setenv("WEIR_HOME", str(other))
    s = _config.settings()
    assert s.home == other and s.token == "other-file"
    monkeypatch.setenv("WEIR_TOKEN", "from-env")
    monkeypatch.setenv("WEIR_SERVER", "10.0.0.5:9000")  # a bare HOST:PORT, as the CLI takes
    monkeypatch.setenv("WEIR_OBJECTS", str(other / "objs"))
    s = _config.settings()
    assert s.token == "from-env" and s.token_source == "$WEIR_TOKEN"
    assert s.server == "http://10.0.0.5:9000" and s.objects_dir == other / "objs"


def test_the_arguments_beat_the_environment(home, monkeypatch):
    monkeypatch.setenv("WEIR_TOKEN", "from-env")
    monkeypatch.setenv("WEIR_SERVER", "http://elsewhere:1")
    s = _config.settings(server="http://head:8270/", token="arg", home=str(home / "h"),
                         objects_dir="rel-objs")
    assert s.server == "http://head:8270" and s.token == "arg"
    assert s.token_source == "the token argument" and s.home == home / "h"
    assert s.objects_dir.is_absolute() and s.objects_dir.name == "rel-objs"


def test_an_empty_token_file_is_no_token(home):
    (home / ".weir").mkdir()
    (home / ".weir" / "token").write_text("\n")
    assert _config.settings().token is None


def test_the_client_takes_its_settings_and_https(home, monkeypatch, tmp_path):
    import ssl
    import weir
    c = weir.Client("127.0.0.1:1", token="t")
    assert c.server == "http://127.0.0.1:1" and c.settings.token == "t"
    with pytest.raises(ValueError, match="http:// or https://"):
        weir.Client("ftp://127.0.0.1:1")
    # https: verified, with its name, against the system's CAs and WEIR_CA_FILE
    monkeypatch.delenv("WEIR_CA_FILE", raising=False)
    ctx = _config.tls_context()
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
    assert weir.Client("https://weir.example").server == "https://weir.example"
    monkeypatch.setenv("WEIR_CA_FILE", str(tmp_path / "nope.pem"))
    with pytest.raises(ValueError, match="WEIR_CA_FILE .*nope.pem"):
        weir.Client("https://127.0.0.1:1")
