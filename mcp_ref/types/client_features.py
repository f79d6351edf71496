"""Types of the features a client offers a server: sampling, roots, elicitation;
and ``select_model``, the pure model-choice helper for sampling.

Sampling: a message's ``content`` is one block, or (2025-11-25) a list of
blocks, which may include ``tool_use`` / ``tool_result``. Encoding for an
older revision drops blocks it does not know and turns a one-block list back
into a single block; a longer list cannot be said in an older revision and is
sent as is (the sampling module refuses such messages before that).
``tools``/``toolChoice`` and ``SamplingMessage._meta`` are 2025-11-25 fields.

Roots: ``Root._meta`` since 2025-06-18.

Elicitation (since 2025-06-18): one params class for both modes. Form mode:
``message`` + ``requested_schema``. URL mode (2025-11-25): ``mode="url"``,
``message``, ``url`` and ``elicitation_id`` (2025-11-25 only: 2026-07-28 dropped
it, so client/elicitation.py rule 5 requires it by revision); ``from_dict`` insists
on the members the mode needs in every revision.

Spec: client/sampling (#model-preferences, #tools-in-sampling), client/roots,
client/elicitation; schema: CreateMessageRequestParams, CreateMessageResult,
SamplingMessage, ModelPreferences, ModelHint, ToolChoice, Root,
ListRootsResult, ElicitRequestParams, ElicitResult.
"""
from dataclasses import dataclass
from typing import Any, Optional, Union

from mcp_ref.errors import InvalidParamsError
from mcp_ref.types.base import Model, spec_field
from mcp_ref.types.content import SamplingContent, TextContent
from mcp_ref.types.tools import Tool

__all__ = ["ModelHint", "ModelPreferences", "SamplingMessage", "ToolChoice", "CreateMessageRequestParams",
           "CreateMessageResult", "Root", "ListRootsResult", "ElicitRequestParams", "ElicitResult",
           "select_model"]

# Lists of blocks in sampling messages, and tools in sampling, arrived together.
SAMPLING_TOOLS_SINCE = "2025-11-25"


# ---------------------------------------------------------------------- sampling
@dataclass(eq=False, repr=False)
class ModelHint(Model):
    """A hint naming a model family for sampling (client/sampling#model-preferences)."""
    name: Optional[str] = None                    # a substring of a model name


@dataclass(eq=False, repr=False)
class ModelPreferences(Model):
    """Hints in order of preference, and priorities from 0 to 1."""
    hints: Optional[list[ModelHint]] = None
    cost_priority: Optional[float] = None
    speed_priority: Optional[float] = None
    intelligence_priority: Optional[float] = None


class _Sampled(Model):
    """What a sampling message and the model's answer share: ``content`` is one block or,
    from 2025-11-25, a list of them."""
    content: Union[SamplingContent, list[SamplingContent]]

    def blocks(self) -> list:
        """The content as a list, whichever form it has."""
        return list(self.content) if isinstance(self.content, list) else [self.content]

    def to_dict(self, revision: Optional[str] = None) -> dict:
        """Before 2025-11-25 content is one block: a one-block list is unwrapped."""
        out = super().to_dict(revision)
        content = out.get("content")
        if revision is not None and revision < SAMPLING_TOOLS_SINCE and isinstance(content, list) \
                and len(content) == 1:
            out["content"] = content[0]
        return out


@dataclass(eq=False, repr=False)
class SamplingMessage(_Sampled):
    """One message of a sampling conversation: a role and its content (client/sampling)."""
    role: str                                     # "user" / "assistant"
    content: Union[SamplingContent, list[SamplingContent]]
    meta: Optional[dict] = spec_field(since="2025-11-25")


@dataclass(eq=False, repr=False)
class ToolChoice(Model):
    """How the model may use the tools a sampling request offers (client/sampling, 2025-11-25)."""
    SINCE = "2025-11-25"
    mode: Optional[str] = None                    # "auto" (default) / "required" / "none"


@dataclass(eq=False, repr=False)
class CreateMessageRequestParams(Model):
    """The params of ``sampling/createMessage`` (client/sampling#creating-messages)."""
    messages: list[SamplingMessage]
    max_tokens: int
    system_prompt: Optional[str] = None
    include_context: Optional[str] = None         # "none" / "thisServer" / "allServers"
    temperature: Optional[float] = None
    stop_sequences: Optional[list[str]] = None
    metadata: Optional[dict] = None               # passed through to the LLM provider
    model_preferences: Optional[ModelPreferences] = None
    tools: Optional[list[Tool]] = spec_field(since=SAMPLING_TOOLS_SINCE)
    tool_choice: Optional[ToolChoice] = spec_field(since=SAMPLING_TOOLS_SINCE)
    meta: Optional[dict] = None


@dataclass(eq=False, repr=False)
class CreateMessageResult(_Sampled):
    """The client's answer to ``sampling/createMessage``: the model's message (client/sampling)."""
    role: str
    content: Union[SamplingContent, list[SamplingContent]]
    model: str
    stop_reason: Optional[str] = None             # "endTurn", "stopSequence", "maxTokens", "toolUse", ...
    meta: Optional[dict] = None

    @property
    def text(self) -> str:
        """The text of the message's text blocks, joined by newlines ("" when it has none)."""
        return "\n".join(block.text for block in self.blocks() if isinstance(block, TextContent))


def _priority(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def select_model(available: list, preferences: Any = None, table: Optional[dict] = None) -> str:
    """Pick one of ``available`` model names for ``preferences``
    (a ``ModelPreferences``, its wire dict, or None).

    1. Hints in order: the first hint whose name is a substring
       (case-insensitive) of some available model wins; among the models it
       matches, the priorities decide (ties: the first listed).
    2. No hint matches: the priorities decide among all models.

    Priorities use ``table``: ``{model: {"cost": c, "speed": s,
    "intelligence": i}}``, each from 0 to 1, where ``cost`` is how expensive
    the model is (high = costly), ``speed`` how fast and ``intelligence`` how
    capable; a missing number counts as 0.5. The score is
    ``costPriority*(1-cost) + speedPriority*speed +
    intelligencePriority*intelligence``. Without a table (or priorities) the
    first candidate is chosen. Raises ValueError when nothing is available.
    """
    models = list(available)
    if not models:
        raise ValueError("select_model: no models available")
    if isinstance(preferences, dict):
        preferences = ModelPreferences.from_dict(preferences)
    if preferences is None:
        return models[0]
    candidates = models
    for hint in preferences.hints or []:
        wanted = (hint.name or "").lower()
        matched = [m for m in models if wanted and wanted in m.lower()]
        if matched:
            candidates = matched
            break
    if not table:
        return candidates[0]
    weights = (_priority(preferences.cost_priority), _priority(preferences.speed_priority),
               _priority(preferences.intelligence_priority))

    def score(model: str) -> float:
        row = table.get(model) or {}
        cost, speed, smart = (float(row.get(k, 0.5)) for k in ("cost", "speed", "intelligence"))
        return weights[0] * (1 - cost) + weights[1] * speed + weights[2] * smart

    # max() keeps the first of equal scores, so ties go to the listed order.
    return max(candidates, key=score)


# ---------------------------------------------------------------------- roots
@dataclass(eq=False, repr=False)
class Root(Model):
    """A root the client exposes: a ``file://`` URI and an optional name (client/roots)."""
    uri: str                                      # a file:// URI
    name: Optional[str] = None
    meta: Optional[dict] = spec_field(since="2025-06-18")


@dataclass(eq=False, repr=False)
class ListRootsResult(Model):
    """The result of ``roots/list`` (client/roots#listing-roots)."""
    roots: list[Root]
    meta: Optional[dict] = None


# ---------------------------------------------------------------------- elicitation
@dataclass(eq=False, repr=False)
class ElicitRequestParams(Model):
    """Form mode (``requested_schema``) or URL mode (``mode="url"``, ``url``,
    ``elicitation_id``). ``mode`` may be left out for form mode."""
    SINCE = "2025-06-18"
    message: str
    requested_schema: Optional[dict] = None
    mode: Optional[str] = spec_field(since="2025-11-25")
    elicitation_id: Optional[str] = spec_field(since="2025-11-25")
    url: Optional[str] = spec_field(since="2025-11-25")
    meta: Optional[dict] = None

    @property
    def is_url(self) -> bool:
        return self.mode == "url"

    @classmethod
    def _check_wire(cls, data: dict, path: str) -> None:
        mode = data.get("mode", "form")
        if mode not in ("form", "url"):
            raise InvalidParamsError(f"{path}.mode: expected 'form' or 'url', got {mode!r}")
        # elicitationId: 2025-11-25 only, required by client/elicitation.py rule 5
        if mode == "url" and "elicitationId" in data and not isinstance(data["elicitationId"], str):
            raise InvalidParamsError(f"{path}.elicitationId: expected string")
        key, kind, label = ("url", str, "string") if mode == "url" else ("requestedSchema", dict, "object")
        if key not in data:
            raise InvalidParamsError(f"{path}.{key}: required field missing ({mode} mode)")
        if not isinstance(data[key], kind):
            raise InvalidParamsError(f"{path}.{key}: expected {label}")


@dataclass(eq=False, repr=False)
class ElicitResult(Model):
    """The user's answer to ``elicitation/create``: accept (with content), decline or cancel (client/elicitation)."""
    SINCE = "2025-06-18"
    action: str                                   # "accept" / "decline" / "cancel"
    content: Optional[dict] = None                # form answers, with action "accept" only
    meta: Optional[dict] = None
