"""Every fenced Python example of the README runs.

An HTML comment on the line above each ```python block says how (the README
does not render it):

``<!-- readme-test: server NAME.py -->``
    the block is the whole file NAME.py, a stdio server: it is spawned with
    ``Client.stdio`` and must complete the handshake and list what it offers.
``<!-- readme-test: add-to NAME.py -->``
    the block extends NAME.py as the README has built it so far: it goes in
    before the file's ``if __name__ == "__main__":`` line, and the result is
    checked as a server.
``<!-- readme-test: script [needs=NAME.py ...] [expect=LINE ...] -->``
    the block runs as a script in a folder holding the files it needs (as the
    README has built them up to that point), and must exit 0; each ``expect``
    is a line its output must contain. ``python`` on the PATH is the
    interpreter running the tests.

``<!-- readme-test: wsgi NAME.py app=ATTR [requires=MODULE ...] -->``
    the block is NAME.py, a module defining the WSGI application ATTR that routes
    ``/mcp`` to an MCP endpoint and ``/`` to the rest of a site; beside the files the
    README has built, it is served with ``start_wsgi`` (wsgiref) in a subprocess, and
    ``Client.http`` must list the tools at ``/mcp`` while ``/`` answers 200. Skipped,
    saying which, when a MODULE (a web framework, a test-only dependency) is missing.

A Python block without a directive, or with one this file does not know,
fails: no example is skipped silently.
"""
import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import List, NamedTuple, Optional

import pytest

from mcp_ref import Client

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
KINDS = ("server", "add-to", "script", "wsgi")
TIMEOUT = 60
MAIN_GUARD = 'if __name__ == "__main__":'


class Block(NamedTuple):
    index: int
    line: int                   # of the ```python fence, 1-based
    code: str
    directive: Optional[str]    # the text after "readme-test:", None when missing


def readme_blocks(text: str) -> List[Block]:
    """Every ```python block with the directive on the line above it (blank lines between allowed)."""
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            start = i
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
            assert end is not None, f"README line {i + 1}: a ```python block that never closes"
            above = next((lines[j].strip() for j in range(start - 1, -1, -1) if lines[j].strip()), "")
            match = re.fullmatch(r"<!--\s*readme-test:\s*(.*?)\s*-->", above)
            blocks.append(Block(len(blocks), start + 1, "\n".join(lines[start + 1:end]) + "\n",
                                match.group(1) if match else None))
            i = end
        i += 1
    return blocks


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))


def parse(directive: str) -> tuple:
    """``(kind, name or None, needs, expects)``; ValueError for what this file does not know."""
    words = shlex.split(directive)
    if not words or words[0] not in KINDS:
        raise ValueError(f"unknown readme-test directive {directive!r}: the first word is one of {KINDS}")
    kind, rest = words[0], words[1:]
    if kind in ("server", "add-to"):
        if len(rest) != 1 or not rest[0].endswith(".py"):
            raise ValueError(f"'{kind}' takes one file name, NAME.py: {directive!r}")
        return kind, rest[0], [], []
    if kind == "wsgi":           # (kind, NAME.py, the modules it requires, [the application's name])
        if not rest or not rest[0].endswith(".py"):
            raise ValueError(f"'wsgi' takes a file name, NAME.py, first: {directive!r}")
        options = [word.partition("=") for word in rest[1:]]
        if any(not sep or key not in ("app", "requires") for key, sep, _ in options) or \
                [key for key, _, _ in options].count("app") != 1:
            raise ValueError(f"'wsgi' takes app=ATTR once and requires=MODULE: {directive!r}")
        return (kind, rest[0], [value for key, _, value in options if key == "requires"],
                [value for key, _, value in options if key == "app"])
    needs, expects = [], []
    for word in rest:
        key, sep, value = word.partition("=")
        if not sep or key not in ("needs", "expect"):
            raise ValueError(f"'script' takes needs=NAME.py and expect=LINE: {word!r} in {directive!r}")
        (needs if key == "needs" else expects).append(value)
    return kind, None, needs, expects


def files_after(block: Block, blocks: Optional[List[Block]] = None, start: Optional[dict] = None) -> dict:
    """The files the server and add-to blocks have built, up to and including ``block``
    (of ``blocks``, the README's by default, on top of the files ``start``)."""
    files: dict = dict(start or {})
    for earlier in (BLOCKS if blocks is None else blocks)[:block.index + 1]:
        kind, name, _, _ = parse(earlier.directive or "")
        if kind == "server":
            files[name] = earlier.code
        elif kind == "add-to":
            assert name in files, f"README line {earlier.line}: add-to {name} before any 'server {name}' block"
            before, guard, after = files[name].partition(MAIN_GUARD)
            files[name] = before.rstrip("\n") + "\n\n\n" + earlier.code + ("\n\n" + guard + after if guard else "")
    return files


def environment(folder: Path) -> dict:
    """``python`` on the PATH runs this interpreter (whose site-packages hold mcp_ref)."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    if os.name == "nt":
        (bin_dir / "python.bat").write_text(f'@"{sys.executable}" %*\n', encoding="utf-8")
    else:
        shim = bin_dir / "python"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
        shim.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = str(bin_dir) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def check_server(folder: Path, name: str, env: dict) -> None:
    """Spawn ``name`` as a stdio server and list everything it declares."""
    stderr: list = []
    with Client.stdio([sys.executable, name], cwd=str(folder), env=env, on_stderr=stderr.append,
                      timeout=TIMEOUT) as client:
        capabilities = client.server_capabilities
        assert capabilities, f"{name} declares nothing"
        if "tools" in capabilities:
            assert client.list_tools()
        if "resources" in capabilities:
            client.list_resources()
            client.list_resource_templates()
        if "prompts" in capabilities:
            client.list_prompts()
    assert not any("Traceback" in line for line in stderr), "\n".join(stderr)


# Serves a README module's WSGI application on wsgiref and visits it (argv: module, application name).
WSGI_CHECK = """
import importlib, sys
import requests
from mcp_ref import Client
from mcp_ref.transports.http.server.wsgi import start_wsgi

app = getattr(importlib.import_module(sys.argv[1]), sys.argv[2])
with start_wsgi(app, ("127.0.0.1", 0)) as handle:
    with Client.http(handle.base_url + "/mcp", timeout=30) as client:
        print("tools:", len(client.list_tools()))
    print("site:", requests.get(handle.base_url + "/", timeout=30).status_code)
"""


def check_wsgi(folder: Path, block: Block, name: str, app: str, env: dict) -> None:
    """A ``wsgi`` block (see the module docstring)."""
    (folder / name).write_text(block.code, encoding="utf-8")
    (folder / "wsgi_check.py").write_text(WSGI_CHECK, encoding="utf-8")
    done = subprocess.run([sys.executable, "wsgi_check.py", name[:-3], app], cwd=str(folder), env=env,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, f"README line {block.line} failed:\n{done.stdout}\n{done.stderr}"
    printed = done.stdout.splitlines()
    assert "site: 200" in printed and not any(line == "tools: 0" for line in printed), \
        f"README line {block.line}: {printed!r}"


def test_the_readme_has_python_examples_and_each_says_how_it_runs():
    assert len(BLOCKS) >= 5
    missing = [block.line for block in BLOCKS if block.directive is None]
    assert not missing, f"```python blocks without a <!-- readme-test: ... --> line above, at README lines {missing}"
    for block in BLOCKS:
        parse(block.directive)           # raises for a directive this file does not know


README_MAX_LINES = 500


def test_the_readme_is_a_front_door():
    """At most 500 lines, each heading once: the long sections live in spec_notes/, one
    guide per topic, which the README links."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES, \
        f"README.md has {len(text.splitlines())} lines; move a section to spec_notes/ (at most {README_MAX_LINES})"
    outside_code = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    headings = [line.strip() for line in outside_code.splitlines() if re.match(r"#{1,6} ", line)]
    twice = sorted({heading for heading in headings if headings.count(heading) > 1})
    assert not twice, f"headings that appear more than once in README.md: {twice}"
    for link in re.findall(r"\]\((spec_notes/[\w.-]+\.md)", text):
        assert (ROOT / link).is_file(), f"README.md links {link}, which does not exist"


def test_no_directive_is_left_without_its_block():
    """(``cli`` and ``file`` directives, for other blocks, are tests/test_readme_cli.py's.)"""
    text = README.read_text(encoding="utf-8")
    directives = len(re.findall(r"^<!--\s*readme-test:(?!\s*(?:cli|file)\b).*-->\s*$", text, re.M))
    assert directives == sum(1 for block in BLOCKS if block.directive is not None)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"line{block.line}" for block in BLOCKS])
def test_readme_python_block_runs(block, tmp_path):
    if block.directive is None:
        pytest.fail(f"README line {block.line}: no <!-- readme-test: ... --> directive above this block")
    kind, name, needs, expects = parse(block.directive)
    files = files_after(block)
    for file_name, code in files.items():
        (tmp_path / file_name).write_text(code, encoding="utf-8")
    env = environment(tmp_path)
    if kind in ("server", "add-to"):
        check_server(tmp_path, name, env)
        return
    if kind == "wsgi":
        for module in needs:
            pytest.importorskip(module, reason=f"README line {block.line}: the example needs {module} "
                                               "(a test-only dependency: pip install -e '.[test]')")
        check_wsgi(tmp_path, block, name, expects[0], env)
        return
    unknown = [need for need in needs if need not in files]
    assert not unknown, f"README line {block.line}: needs {unknown}, which no earlier block defines"
    (tmp_path / "example.py").write_text(block.code, encoding="utf-8")
    done = subprocess.run([sys.executable, "example.py"], cwd=str(tmp_path), env=env, capture_output=True,
                          text=True, timeout=TIMEOUT)
    assert done.returncode == 0, f"README line {block.line} failed:\n{done.stdout}\n{done.stderr}"
    printed = done.stdout.splitlines()
    for line in expects:
        assert line in printed, f"README line {block.line}: {line!r} not printed; got {printed!r}"


# method-assign: Flask's documented way to mount middleware, app.wsgi_app = Middleware(app.wsgi_app),
# assigns to a method as far as Flask's annotations say.
MYPY_CONFIG = """[mypy]
check_untyped_defs = True
follow_imports = silent
disable_error_code = method-assign

[mypy-django.*,flask.*,werkzeug.*,gunicorn.*]
ignore_missing_imports = True
"""


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed (it is in the `test` extra, not a dependency)")
def test_every_python_block_passes_mypy(tmp_path):
    """What a user copies type-checks: one mypy run over every block. Each block is its own
    module, ``readme_L<line>.py`` (a server or an addition as the file stands after it);
    the files the blocks build (``demo.py``, ...) sit beside them as the README leaves
    them, for the scripts that import them."""
    final: dict = {}
    for block in BLOCKS:
        kind, name, _, _ = parse(block.directive or "")
        files = files_after(block)
        final.update(files)
        code = files[name] if kind in ("server", "add-to") else block.code
        (tmp_path / f"readme_L{block.line}.py").write_text(code, encoding="utf-8")
    for file_name, code in final.items():
        (tmp_path / file_name).write_text(code, encoding="utf-8")
    (tmp_path / "mypy.ini").write_text(MYPY_CONFIG, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "MYPYPATH")}
    env["MYPYPATH"] = str(ROOT)                 # the checkout's package, however it is installed
    modules = sorted(p.name for p in tmp_path.glob("*.py"))
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--no-incremental",
                           "--cache-dir", str(tmp_path / ".mypy_cache"), *modules],
                          cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    lines = [re.sub(r"^readme_L(\d+)\.py:(\d+)", r"the README block at line \1, its line \2", line)
             for line in done.stdout.splitlines()]
    assert done.returncode == 0, "\n".join(lines) + done.stderr
