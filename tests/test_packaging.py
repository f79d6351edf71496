"""Packaging: the top-level files, the README's promises, and a stdlib-only install.

The stdlib-only tests run real subprocesses with ``jsonschema``, ``requests``
and ``sseclient`` blocked from import, so a stdio client and server that work
here work in a bare Python too.
"""
import configparser
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OPTIONAL = ("jsonschema", "requests", "sseclient")

BLOCKER = '''
import sys

class _BlockOptional:
    """Refuse to import the optional dependencies."""
    blocked = {"jsonschema", "requests", "sseclient"}

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.blocked:
            raise ImportError(f"{name} is blocked for this test")
        return None

sys.meta_path.insert(0, _BlockOptional())
'''

SERVER = BLOCKER + '''
from mcp_ref import Server

server = Server("stdlib-only", version="1.0")


@server.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool
def loaded() -> str:
    """Which optional packages this server process has imported."""
    return ",".join(m for m in ("jsonschema", "requests", "sseclient") if m in sys.modules) or "none"


server.run()
'''

CLIENT = BLOCKER + '''
import os

import mcp_ref
from mcp_ref import Client

with Client.stdio([sys.executable, "-c", sys.argv[1]], env={"PYTHONPATH": os.environ["PYTHONPATH"]},
                  timeout=30) as client:
    print("server", client.server_info.name, client.protocol_version)
    print("add", client.call_tool("add", {"a": 2, "b": 3}).content[0].text)
    print("missing", client.call_tool("add", {"a": 2}).is_error)
    print("loaded", client.call_tool("loaded").content[0].text)
print("client-loaded", ",".join(m for m in ("jsonschema", "requests", "sseclient") if m in sys.modules) or "none")
'''


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _run(argv, timeout=60, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=_env(), **kwargs)


def _setup_cfg() -> configparser.ConfigParser:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg", encoding="utf-8")
    return config


def _lines(value: str) -> list:
    return [line.strip() for line in value.strip().splitlines() if line.strip() and not line.strip().startswith("#")]


# ---------------------------------------------------------------------- stdlib only
def test_import_works_with_optional_packages_blocked():
    result = _run([sys.executable, "-c", BLOCKER + "import mcp_ref; print(mcp_ref.__version__)"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == _version()


def test_stdio_round_trip_with_optional_packages_blocked():
    result = _run([sys.executable, "-c", CLIENT, SERVER])
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    lines = result.stdout.splitlines()
    assert lines[0].startswith("server stdlib-only ")
    assert lines[1:] == ["add 5", "missing True", "loaded none", "client-loaded none"]


def test_the_http_client_without_its_packages_says_what_to_install():
    """``requests`` is a dependency (setup.cfg), not optional: a copy
    that lacks it is told which feature needs it and the pip command."""
    script = BLOCKER + """
from mcp_ref import Client, MissingDependency
try:
    Client.http("http://127.0.0.1:9/mcp")
except MissingDependency as exc:
    print(exc.package, "|", exc)
"""
    result = _run([sys.executable, "-c", script])
    assert result.returncode == 0, result.stderr
    package, message = result.stdout.strip().split(" | ", 1)
    assert package == "requests"
    assert "the HTTP client needs the package 'requests'" in message
    assert "pip install requests" in message and "optional" not in message


def _oldest_python():
    """An interpreter of the oldest supported version, when one runs on this machine: this
    one, else ``$PYTHON39`` (for 3.9), ``python3.9`` on PATH, or a pyenv ``3.9.*`` (as
    ``.ci/run`` looks for it)."""
    low = re.search(r">=\s*(\d+)\.(\d+)", _setup_cfg()["options"]["python_requires"])
    major, minor = int(low.group(1)), int(low.group(2))
    if sys.version_info[:2] == (major, minor):
        return sys.executable
    candidates = [os.environ.get(f"PYTHON{major}{minor}"), shutil.which(f"python{major}.{minor}")]
    candidates += sorted(str(p) for p in Path.home().glob(f".pyenv/versions/{major}.{minor}*/bin/python"))
    for exe in filter(None, candidates):
        try:
            probe = subprocess.run([exe, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True,
                                   text=True, timeout=30)
        except OSError:
            continue
        if probe.returncode == 0 and probe.stdout.strip() == f"({major}, {minor})":
            return exe
    return None


def test_oldest_supported_python_runs_the_round_trip():
    exe = _oldest_python()
    if exe is None:
        pytest.skip("no interpreter of the oldest supported version ($PYTHON39, python3.9 on PATH, pyenv)")
    result = _run([exe, "-c", CLIENT, SERVER])
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.stdout.splitlines()[1] == "add 5"


# ---------------------------------------------------------------------- top-level files
def _version() -> str:
    text = (ROOT / "mcp_ref" / "__init__.py").read_text(encoding="utf-8")
    return re.search(r'^__version__ = "([^"]+)"', text, re.M).group(1)


def test_setup_cfg_declares_the_package():
    config = _setup_cfg()
    assert config["metadata"]["name"] == "mcp_ref"
    assert config["metadata"]["version"].strip() == "attr: mcp_ref.__version__"
    assert config["metadata"]["long_description"].strip() == "file: README.md"
    assert re.fullmatch(r"\d+\.\d+\.\d+([ab]\d+)?", _version())
    requires = [re.split(r"[<>=;! ]", line)[0] for line in _lines(config["options"]["install_requires"])]
    assert sorted(requires) == ["jsonschema", "requests"]
    assert not any("<" in line for line in _lines(config["options"]["install_requires"])), "no upper pins"
    extras = [re.split(r"[<>=;! ]", line)[0] for line in _lines(config["options.extras_require"]["test"])]
    assert "pytest" in extras and "mcp" in extras
    assert config["options"]["python_requires"].strip().startswith(">=3.")
    assert "mcp_ref.__main__:main" in config["options.entry_points"]["console_scripts"]
    assert "tests" in config["options.packages.find"]["exclude"]
    assert config["tool:pytest"]["testpaths"].strip() == "tests"
    assert config["flake8"]["max-line-length"].strip() == "120"


def test_pyproject_has_only_the_build_system():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "[build-system]" in text
    assert 'build-backend = "setuptools.build_meta"' in text
    assert re.search(r'"setuptools>=\d+', text)
    assert "[project]" not in text, "metadata lives in setup.cfg"


def test_license_is_mit():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    assert "mcp_ref authors" in text


def _ci_readme_commands() -> list:
    """The command lines of ``.ci/run``'s ``readme_commands`` function after it makes the
    virtualenv (comments, ``python --version`` and a trailing ``|| exit 1`` left out)."""
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    body = re.search(r"^readme_commands\(\) \{.*?\n(.*?)^\}", text, re.S | re.M).group(1)
    lines = [line.strip() for line in body.splitlines()]
    venv = lines.index('"$python" -m venv "$venv"')
    assert lines[venv - 1] == 'rm -rf "$venv"', "the virtualenv must be fresh"
    assert '. "$venv/bin/activate"' in lines[venv:]
    commands = []
    for line in lines[lines.index('. "$venv/bin/activate"') + 1:]:
        if not line or line.startswith("#") or line in ("(", ")", "python --version"):
            continue
        commands.append(re.sub(r"\s*\|\|\s*exit 1$", "", line))
    return commands


def test_ci_script_runs_the_readme_commands():
    script = ROOT / ".ci" / "run"
    assert os.access(script, os.X_OK), ".ci/run must be executable"
    text = script.read_text(encoding="utf-8")
    assert "set -euo pipefail" in text
    assert _ci_readme_commands() == list(_readme_commands())


# ---------------------------------------------------------------------- the README
def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def _readme_commands() -> tuple:
    """The two commands of the README's first code block."""
    block = re.search(r"```(?:sh|bash|console)?\n(.*?)```", _readme(), re.S).group(1)
    commands = [line.strip() for line in block.splitlines() if line.strip() and not line.startswith("#")]
    assert len(commands) == 2, commands
    return commands[0], commands[1]


def _section_code(title: str) -> str:
    match = re.search(r"^## " + re.escape(title) + r".*?```python\n(.*?)```", _readme(), re.S | re.M)
    assert match, f"README has no python block under '## {title}'"
    return match.group(1)


def test_readme_starts_with_the_two_commands():
    head = _readme().split("\n## ", 1)[0]
    install, test = _readme_commands()
    assert install == "pip install -e . && python -m mcp_ref demo"       # no test tools to see the demo
    assert test == "pip install -e '.[test]' && python -m pytest"
    assert install in head and test in head


def test_readme_example_server_and_client_work(tmp_path):
    server = _section_code("A server in 15 lines")
    client = _section_code("A client in 10 lines")
    assert len(server.strip().splitlines()) <= 15 and len(client.strip().splitlines()) <= 10
    (tmp_path / "demo.py").write_text(server, encoding="utf-8")
    client = client.replace('"python"', "sys.executable")
    result = _run([sys.executable, "-c", "import sys\n" + client], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "3"


def test_readme_module_map_names_every_module():
    text = _readme()
    section = text.split("## Module map", 1)[1].split("\n## ", 1)[0]
    package = ROOT / "mcp_ref"
    names = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    names |= {p.name + "/" for p in package.iterdir() if (p / "__init__.py").is_file()}
    missing = sorted(n for n in names if f"`{n}`" not in section)
    assert not missing, f"add these to the README's module map: {missing}"


def test_readme_demo_command_runs():
    result = _run([sys.executable, "-m", "mcp_ref", "demo"], timeout=120)
    assert result.returncode == 0, result.stderr
    assert "# closed cleanly" in result.stdout
    assert '"method":"server/discover"' in result.stdout.replace(" ", "")      # the default era's probe


# ---------------------------------------------------------------------- repository hygiene
def test_tracked_files_name_no_machine_paths():
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout")
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    pattern = re.compile("|".join(re.escape(p) for p in ("/" + "work/", "/" + "root/", "/" + "tmp/venv")))
    offenders = []
    for name in files:
        path = ROOT / name
        if not path.is_file() or path.suffix in (".png", ".jpg", ".gz", ".whl"):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        offenders += [f"{name}:{i}" for i, line in enumerate(text.splitlines(), 1) if pattern.search(line)]
    assert not offenders, f"machine paths in tracked files: {offenders}"
