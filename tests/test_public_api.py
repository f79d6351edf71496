"""The public names: importable from ``mcp_ref`` (and ``mcp_ref.types``), and seen as their
real classes by type checkers and editors. ``mcp_ref.auth`` imports its names at the top;
``mcp_ref`` loads each room (server, client, HTTP client) with its first name and
``mcp_ref.types`` each module with its first name (PEP 562), each with a twin block of
imports under ``if TYPE_CHECKING:``; these tests keep the two in step and run mypy on a
user script."""
import ast
import configparser
import importlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import mcp_ref
import mcp_ref.types

ROOT = Path(__file__).resolve().parent.parent


def type_checking_imports(path: Path) -> dict:
    """``{name: ".module"}`` (relative to the package) imported under ``if TYPE_CHECKING:`` at the top of ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: dict = {}
    blocks = [node for node in tree.body if isinstance(node, ast.If) and isinstance(node.test, ast.Name)
              and node.test.id == "TYPE_CHECKING"]
    assert len(blocks) == 1, f"{path.name} needs one `if TYPE_CHECKING:` block of imports"
    for node in blocks[0].body:
        assert isinstance(node, ast.ImportFrom), ast.dump(node)
        for alias in node.names:
            assert alias.asname is None
            module = "." * node.level + (node.module or "")
            package = ".".join(path.relative_to(ROOT).parent.parts)
            if module.startswith(package + "."):       # absolute: relative to the package, as the table
                module = module[len(package):]
            found[alias.name] = module
    return found


def test_every_name_in_all_is_importable_from_mcp_ref():
    for name in mcp_ref.__all__:
        assert getattr(mcp_ref, name) is not None, name
    from mcp_ref import ToolNameWarning           # listed as importable from mcp_ref
    assert issubclass(ToolNameWarning, UserWarning)
    for name in mcp_ref.types.__all__:
        getattr(mcp_ref.types, name)


def test_the_type_checking_imports_of_mcp_ref_match_its_rooms_table():
    """The names of the server's, the client's and the HTTP client's rooms load on first
    use; type checkers read them from the ``if TYPE_CHECKING:`` block, which must name the
    same modules."""
    expected = {name: module[len("mcp_ref"):] for name, module in mcp_ref._ROOMS.items()}
    assert type_checking_imports(ROOT / "mcp_ref" / "__init__.py") == expected
    assert set(mcp_ref._ROOMS) <= set(mcp_ref.__all__)


def test_the_type_checking_imports_of_mcp_ref_types_match_its_table():
    """``mcp_ref.types`` loads a module with the first of its names; the table and the
    ``if TYPE_CHECKING:`` block name the same module for every name, and each name is
    that module's own."""
    expected = {name: "." + module for name, module in mcp_ref.types._WHERE.items()}
    assert type_checking_imports(ROOT / "mcp_ref" / "types" / "__init__.py") == expected
    for name, module in mcp_ref.types._WHERE.items():
        assert getattr(mcp_ref.types, name) is getattr(importlib.import_module(f"mcp_ref.types.{module}"), name)


def test_every_other_public_name_is_a_plain_import():
    """Besides the rooms' names, ``mcp_ref`` imports its names at the top, and
    ``mcp_ref.types`` and ``mcp_ref.auth`` all of theirs: no module ``__getattr__`` there."""
    eager = set(mcp_ref.__all__) - set(mcp_ref._ROOMS)
    assert eager <= set(vars(mcp_ref)), sorted(eager - set(vars(mcp_ref)))
    auth = importlib.import_module("mcp_ref.auth")
    assert set(auth.__all__) <= set(vars(auth))
    assert not hasattr(auth, "__getattr__")


ROOM_CHECK = """
import sys, mcp_ref
assert not any(m in sys.modules for m in ('requests', 'jsonschema', 'mcp_ref.auth', 'mcp_ref.client.client',
                                          'mcp_ref.server.server', 'mcp_ref.transports.http.client.common'))
from mcp_ref import {name}
assert {loaded!r} in sys.modules and {other!r} not in sys.modules, {name!r}
from mcp_ref import HttpError, SessionExpired
assert issubclass(SessionExpired, HttpError) and 'HttpError' in vars(mcp_ref)
assert 'requests' not in sys.modules
"""


@pytest.mark.parametrize("name, loaded, other", [("Server", "mcp_ref.server.server", "mcp_ref.client.client"),
                                                  ("Client", "mcp_ref.client.client", "mcp_ref.server.server")])
def test_importing_mcp_ref_needs_only_the_standard_library_and_each_room_loads_with_its_names(name, loaded, other):
    """``import mcp_ref`` loads neither requests nor jsonschema nor any room; ``Server``
    brings the server's room and not the client's, ``Client`` the other way round, and
    ``HttpError`` the HTTP client's room (still without requests)."""
    code = ROOM_CHECK.format(name=name, loaded=loaded, other=other)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr


def test_the_package_ships_py_typed():
    assert (ROOT / "mcp_ref" / "py.typed").is_file()
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    assert config["options.package_data"]["mcp_ref"].split() == ["py.typed", "cli/sequence.html",
                                                                    "cli/narration.txt"]
    assert (ROOT / "mcp_ref" / "cli" / "sequence.html").is_file()        # the page demo --html fills in
    assert (ROOT / "mcp_ref" / "cli" / "narration.txt").is_file()        # what the demo and scenarios say
    extras = config["options.extras_require"]["test"]
    assert "mypy" in extras.split()


USER_SCRIPT = '''
from mcp_ref import Client, Server, SessionExpired, ToolNameWarning

server = Server("typed")
client = Client.stdio(["python", "server.py"])
result = client.call_tool("add", {"a": 1, "b": 2})
reveal_type(server)
reveal_type(client)
reveal_type(result)
reveal_type(result.content[0])
reveal_type(ToolNameWarning())
reveal_type(SessionExpired)
reveal_type(Client.connect("http://localhost:8000/mcp"))
reveal_type(client.connect())
'''


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed (it is in the `test` extra, not a dependency)")
def test_mypy_sees_the_real_classes_behind_the_lazy_names(tmp_path):
    """A user's script in a fresh folder, checked against the package as installed:
    ``from mcp_ref import Client`` is ``mcp_ref.client.Client``, not ``Any``."""
    (tmp_path / "user.py").write_text(USER_SCRIPT, encoding="utf-8")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    package_home = Path(mcp_ref.__file__).resolve().parent.parent
    if "site-packages" not in package_home.parts:
        # An editable install is found through an import hook, which mypy does not run.
        env["MYPYPATH"] = str(package_home)
    result = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent",
                             "--cache-dir", str(tmp_path / ".mypy_cache"), "user.py"],
                            cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    revealed = [line.split("Revealed type is ", 1)[1].strip('"') for line in result.stdout.splitlines()
                if "Revealed type is" in line]
    assert result.returncode == 0, result.stdout + result.stderr
    assert revealed[:4] == ["mcp_ref.server.server.Server", "mcp_ref.client.client.Client",
                            "mcp_ref.types.tools.CallToolResult", revealed[3]], result.stdout
    assert "mcp_ref.types.content.TextContent" in revealed[3]
    assert revealed[4] == "mcp_ref.server.tools.ToolNameWarning"
    assert "mcp_ref.transports.http.client.common.SessionExpired" in revealed[5]
    assert revealed[6:] == ["mcp_ref.client.client.Client"] * 2, result.stdout


EDITABLE_USER_SCRIPT = '''
from mcp_ref import Client

reveal_type(Client)
count: int = Client.stdio(["python", "server.py"]).server_info
'''


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed (it is in the `test` extra, not a dependency)")
def test_mypy_sees_the_package_after_the_readmes_editable_install(tmp_path):
    """The README installs with ``pip install -e .``; its ``py.typed`` claim holds for that
    install. A fresh virtualenv gets exactly that editable install (of a copy of the
    checkout, so the checkout gets no build files), and mypy, run on a user's script in
    another folder against that virtualenv, finds ``mcp_ref.Client`` as the real class.
    setuptools' default editable install for a flat layout is an import hook that mypy
    cannot follow ("Cannot find implementation or library stub"); ``package_dir = =.`` in
    setup.cfg makes it a plain ``.pth`` path instead."""
    import shutil
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "mcp_ref", checkout / "mcp_ref",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("setup.cfg", "pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, checkout / name)
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "MYPYPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env, timeout=120)
    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--disable-pip-version-check",
                              "-e", str(checkout)], capture_output=True, text=True, env=env, timeout=300)
    if install.returncode != 0 and "setuptools" in install.stdout + install.stderr and \
            ("Could not find a version" in install.stderr or "No matching distribution" in install.stderr):
        pytest.skip("pip cannot fetch setuptools for the isolated build (offline)")
    assert install.returncode == 0, install.stdout + install.stderr
    user = tmp_path / "user"
    user.mkdir()
    (user / "user.py").write_text(EDITABLE_USER_SCRIPT, encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "mypy", "--python-executable", str(python), "--no-incremental",
                             "--follow-imports=silent", "--cache-dir", str(tmp_path / ".mypy_cache"), "user.py"],
                            cwd=user, capture_output=True, text=True, env=env, timeout=300)
    assert "Cannot find implementation" not in result.stdout, result.stdout
    revealed = [line for line in result.stdout.splitlines() if "Revealed type is" in line]
    assert len(revealed) == 1 and "mcp_ref.client.client.Client" in revealed[0], result.stdout
    assert any("Incompatible types in assignment" in line and "Implementation" in line
               for line in result.stdout.splitlines()), result.stdout       # a deliberate error, caught
