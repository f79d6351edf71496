"""The growth benchmark runs and prints its tables (bench/bench_growth.py).

The figures themselves are not checked (no timed assertions): the smallest
subset, the catalog curve at quick sizes without the official SDK, runs as a
subprocess, bounded by a timeout. The benchmark itself checks that every page
of every catalogue lists every tool, and exits 2 otherwise.
"""
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_quick_catalog_curve_prints_its_tables():
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "bench_growth.py"), "--quick", "--only", "catalog",
                           "--no-sdk"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "mcp_ref growth benchmark" in out and "CPUs" in out
    assert "### catalog: spawn → initialize answer (ms)" in out
    assert "### catalog: list every page, first listing (ms)" in out
    assert "| tools | floor | mcp_ref | ratio |" in out
    rows = [line for line in out.splitlines() if line.startswith("| 1,000 ")]
    assert len(rows) == 4                       # start, first listing, listing again, RSS
    assert all(line.count("|") == 5 for line in rows)
    assert all(line.rstrip().endswith("× |") for line in rows[:3])   # RSS may be n/a off Linux
