"""The run ends with one line counting the skipped tests by reason (tests/conftest.py's
``pytest_terminal_summary``): without the official schemas a thousand tests skip, and
the reader is told why and what to do instead of finding a bare count."""
import os
import subprocess
import sys
from pathlib import Path

from conftest import OTHER_SKIPS, skip_summary

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SCHEMAS = "need the official schemas (set MCP_SPEC_DIR, see README)"
SDK = "need the official mcp SDK (Python 3.10+)"


def test_reasons_are_grouped_largest_first_with_the_unknown_ones_last():
    reasons = ["2025-11-25 schema.json not found at /x/2025-11-25/schema.json: set MCP_SPEC_DIR"] * 3 + [
        "spec folder not found at /x (schema.json not found): set MCP_SPEC_DIR",
        "interop tests need the official MCP SDK (pip install mcp)",
        "could not import 'mcp': No module named 'mcp'",
        "no IPv6 on this machine",
        "mypy is not installed (it is in the `test` extra, not a dependency)",
        "why not",
    ]
    assert skip_summary(reasons) == (f"skipped: 4 {SCHEMAS}, 2 {SDK}, 1 need what this platform or Python lacks, "
                                     f"1 need the test extra (pip install -e '.[test]'), 1 {OTHER_SKIPS}")
    assert skip_summary([]) == ""


SELECTION = '''
import pytest
from conftest import schema_for


def test_passes():
    pass


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-11-25"])
def test_needs_a_schema(revision):
    schema_for(revision)


def test_needs_the_sdk():
    pytest.importorskip("mcp", reason="interop tests need the official MCP SDK (pip install mcp)")
    pytest.skip("interop tests: the official MCP SDK needs Python 3.10+")
'''


def test_a_run_without_the_schemas_ends_by_saying_why_tests_skipped(tmp_path):
    (tmp_path / "test_selection.py").write_text(SELECTION, encoding="utf-8")
    env = dict(os.environ)
    env["MCP_SPEC_DIR"] = str(tmp_path / "nowhere")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), str(ROOT), env.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest",
                             "-rs", "test_selection.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=120)
    lines = result.stdout.strip().splitlines()
    assert result.returncode == 0, result.stdout + result.stderr
    assert lines[-2] == f"skipped: 2 {SCHEMAS}, 1 {SDK}", result.stdout
    assert lines[-1].startswith("1 passed, 3 skipped"), result.stdout
    assert sum(line.startswith("skipped:") for line in lines) == 1
    assert any(line.startswith("SKIPPED [") for line in lines[:-2])       # -rs lists them above it
