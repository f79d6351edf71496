"""Every command of the README's command-line tour runs and prints what the README shows.

The Python blocks are tests/test_readme.py's; this file runs the other two kinds,
each marked by an HTML comment on the line above it:

``<!-- readme-test: file NAME -->``
    the block (any language) is the file NAME, written in the folder the
    commands run in (a configuration file, say).
``<!-- readme-test: cli -->``
    a ```console block, run in a folder holding the files above and the servers
    the README's Python blocks build (``demo.py``). Each ``$ `` line is run by the shell in that folder
    (``mcp-ref`` and ``python`` on the PATH run this interpreter); the lines
    after it, up to the next ``$ ``, are its whole standard output. A last line
    ``[exit N]`` is the exit status expected instead of 0. A command ending in
    `` &`` runs in the background until the end of the test: the lines after it
    are the first lines of its output, awaited.

A ```console block without a directive fails: no example is skipped silently.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
TIMEOUT = 60


def blocks() -> list:
    """``(line, language, directive, text)`` for every fenced block but ```python."""
    lines = README.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        fence = re.fullmatch(r"```(\w+)", lines[i].strip())
        if fence:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
            above = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
            match = re.fullmatch(r"<!--\s*readme-test:\s*(.*?)\s*-->", above)
            if fence.group(1) != "python":
                found.append((i + 1, fence.group(1), match.group(1) if match else None,
                              "\n".join(lines[i + 1:end]) + "\n"))
            i = end
        i += 1
    return found


def commands(text: str) -> list:
    """``(command, expected lines, exit status)`` of one console block."""
    runs = []
    for line in text.splitlines():
        if line.startswith("$ "):
            runs.append([line[2:], [], 0])
        elif runs:
            status = re.fullmatch(r"\[exit (\d+)\]", line)
            if status:
                runs[-1][2] = int(status.group(1))
            else:
                runs[-1][1].append(line)
    return runs


def environment(folder: Path) -> dict:
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    for name, target in (("python", f'"{sys.executable}"'), ("mcp-ref", f'"{sys.executable}" -m mcp_ref')):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {target} "$@"\n', encoding="utf-8")
        shim.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = str(bin_dir) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def test_every_console_block_says_how_it_runs():
    consoles = [(line, directive) for line, language, directive, _ in blocks() if language == "console"]
    assert consoles, "the README has no command-line tour"
    assert all(directive == "cli" for _, directive in consoles), consoles
    text = README.read_text(encoding="utf-8")
    ours = len(re.findall(r"^<!--\s*readme-test:\s*(?:cli|file)\b.*-->\s*$", text, re.M))
    assert ours == sum(1 for _, _, directive, _ in blocks() if directive and directive.split()[0] in ("cli", "file"))


@pytest.mark.skipif(os.name != "posix", reason="the tour's commands are POSIX shell lines")
def test_the_command_line_tour(tmp_path):
    from test_readme import BLOCKS, files_after          # the servers the Python blocks build (demo.py)
    for name, code in files_after(BLOCKS[-1]).items():
        (tmp_path / name).write_text(code, encoding="utf-8")
    env = environment(tmp_path)
    background = []
    try:
        for line, language, directive, text in blocks():
            if directive and directive.startswith("file "):
                (tmp_path / directive.split(None, 1)[1]).write_text(text, encoding="utf-8")
            if directive != "cli":
                continue
            for command, expected, status in commands(text):
                where = f"README line {line}: $ {command}"
                if command.endswith(" &"):
                    process = subprocess.Popen(command[:-2], shell=True, cwd=tmp_path, env=env, text=True,
                                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                               start_new_session=True)
                    background.append(process)
                    for want in expected:
                        assert process.stdout.readline().rstrip("\n") == want, where
                    continue
                result = subprocess.run(command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True,
                                        timeout=TIMEOUT)
                assert (result.returncode, result.stdout.splitlines()) == (status, expected), \
                    f"{where}\nstderr: {result.stderr}"
    finally:
        import signal
        for process in background:
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            process.stdout.close()
