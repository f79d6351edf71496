"""Small checks of 2026-07-28 requirements that the scenario tests do not pin one
by one (rows of spec_notes/traceability-2026-07-28.md)."""
import pytest

from mcp_ref.client.client_mrtr import check_result_type
from mcp_ref.errors import McpError


@pytest.mark.req("BASE26-11", "SCHEMA26-16", "CHG26-4")
def test_an_absent_result_type_is_complete():
    assert check_result_type({"content": []}, "tools/call") == "complete"
    assert check_result_type({"tools": []}, "tools/list") == "complete"


@pytest.mark.req("BASE26-10")
@pytest.mark.parametrize("kind", ["bogus", "", "Complete", None, 3])
def test_an_unrecognized_result_type_is_invalid(kind):
    with pytest.raises(McpError):
        check_result_type({"resultType": kind}, "tools/list")
    assert check_result_type({"resultType": "input_required"}, "tools/list") == "input_required"
