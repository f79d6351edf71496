"""The requirement matrices (spec_notes/traceability.md for 2025-11-25,
spec_notes/traceability-2026-07-28.md for the current revision) are current and complete.

scripts/traceability.py extracts every RFC 2119 requirement of a revision's spec
pages (``--revision``; the 2026-07-28 matrix adds the tasks extension's published
requirement sentences), joins spec_notes/traceability_map.json (code, status) and the tests'
``@pytest.mark.req`` markers, and renders the matrix. This test fails when the
committed matrix differs from what the script renders now (a marker or the map
changed without rerunning it), when a MUST row of an implemented area has no test,
when a known gap in a MUST is not pinned by a test, when the map or a marker names
an id the spec does not have, or when a named function does not exist.
Fix: edit the map or the markers, then run ``python scripts/traceability.py``.
"""
import importlib.util
from pathlib import Path

import pytest

from conftest import REPO_ROOT, spec_path


def _script(revision="2025-11-25"):
    spec = importlib.util.spec_from_file_location("traceability", REPO_ROOT / "scripts" / "traceability.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.configure(revision)
    return module


@pytest.fixture(scope="module", params=["2025-11-25", "2026-07-28"])
def matrix(request):
    if not (spec_path() / request.param / "index.mdx").is_file():     # a folder of schemas alone has no pages
        pytest.skip(f"the specification's pages are not in {spec_path() / request.param}: set MCP_SPEC_DIR")
    script = _script(request.param)
    requirements = script.extract(Path(spec_path()))
    return script, requirements, script.load_map(), script.collect_markers()


def test_the_committed_matrix_is_current(matrix):
    script, requirements, mapping, cited = matrix
    expected = script.render(requirements, mapping, cited)
    assert script.MATRIX.read_text(encoding="utf-8") == expected, \
        f"{script.MATRIX.name} is stale: run python scripts/traceability.py --revision {script.REVISION}"


def test_every_must_of_an_implemented_area_has_a_test_and_every_reference_resolves(matrix):
    script, requirements, mapping, cited = matrix
    problems = script.problems(requirements, mapping, cited)
    assert problems == [], "\n".join(problems)


def test_ids_are_reproducible(matrix):
    script, requirements, _, _ = matrix
    again = script.extract(Path(spec_path()))
    assert [(r.id, r.digest) for r in again] == [(r.id, r.digest) for r in requirements]
    assert len({r.id for r in requirements}) == len(requirements)


def test_the_checker_sees_what_it_must_refuse(matrix):
    script, requirements, mapping, cited = matrix
    must = next(r for r in requirements if r.level == "MUST" and mapping[r.id]["status"] == "implemented")
    uncited = {k: v for k, v in cited.items() if k not in (must.id, must.base)}
    assert any(must.id in p and "no test" in p for p in script.problems(requirements, mapping, uncited))
    broken = dict(mapping, **{must.id: dict(mapping[must.id], code=["mcp_ref.session:Session.no_such_method"])})
    assert any("does not resolve" in p for p in script.problems(requirements, broken, cited))
    unknown = "LIFE" + script.ID_SUFFIX + "-999"
    assert any("unknown requirement id" in p
               for p in script.problems(requirements, mapping, dict(cited, **{unknown: ["tests/x.py::t"]})))
    edited = dict(mapping, **{must.id: dict(mapping[must.id], digest="00000000")})
    assert any("spec text changed" in p for p in script.problems(requirements, edited, cited))


def test_a_shared_row_names_its_2025_11_25_id_and_is_proven_by_its_tests(matrix):
    script, requirements, mapping, cited = matrix
    if not script.BASE_REVISION:
        pytest.skip("2025-11-25 has no base revision")
    base_ids = {r.id for r in _script().extract(Path(spec_path()))}
    shared = [r for r in requirements if r.base]
    assert shared and all(r.base in base_ids for r in shared)
    row = next(r for r in shared if r.level == "MUST" and cited.get(r.base) and not cited.get(r.id))
    assert script.tests_of(row, cited) == cited[row.base]
    assert not any(row.id in p for p in script.problems(requirements, mapping, cited))
    without = {k: v for k, v in cited.items() if k != row.base}
    if mapping[row.id]["status"] == "implemented":
        assert any(row.id in p and "no test" in p for p in script.problems(requirements, mapping, without))
