"""A prompt version as the SDK hands it out: its content and config, compile(), and the span
attributes that link a GenAI call to it (read by Traceloom's OTLP mapping: traceloom.prompt.*)."""
from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Union

from .compile import Template, compile_template, is_placeholder

PROMPT_ID_ATTRIBUTE = "traceloom.prompt.id"
PROMPT_VERSION_ATTRIBUTE = "traceloom.prompt.version"
PROMPT_INPUTS_ATTRIBUTE = "traceloom.prompt.inputs"


class Prompt:
    def __init__(self, body: Mapping[str, Any], is_fallback: bool = False) -> None:
        self.name: str = body["prompt_id"]
        #: None for a fallback (it is no stored version).
        self.version: Optional[int] = None if is_fallback else body["version"]
        self.type: str = body["type"]
        self.template: Template = body["template"]
        self.variables: List[str] = list(body.get("variables") or [])
        self.placeholders: List[str] = list(body.get("placeholders") or [])
        self.config: Dict[str, Any] = dict(body.get("config") or {})
        self.labels: List[str] = list(body.get("labels") or [])
        #: True when this is the fallback given to get(), served because the service was unavailable.
        self.is_fallback = is_fallback

    def __repr__(self) -> str:
        return f"Prompt(name={self.name!r}, version={self.version!r}, type={self.type!r}, is_fallback={self.is_fallback})"

    def compile(
        self, variables: Optional[Mapping[str, Any]] = None, placeholders: Optional[Mapping[str, Any]] = None
    ) -> Union[str, List[Dict[str, Any]]]:
        """The text (text prompt) or messages (chat prompt); raises TraceloomCompileError (400/422) as the server's render would."""
        c = compile_template(self.template, variables, placeholders)
        return c.text if c.text is not None else (c.messages or [])

    def span_attributes(self, variables: Optional[Mapping[str, Any]] = None) -> Dict[str, Union[str, int]]:
        """Span attributes linking a call to this version (none for a fallback: it is no version)."""
        if self.version is None:
            return {}
        return {
            PROMPT_ID_ATTRIBUTE: self.name,
            PROMPT_VERSION_ATTRIBUTE: self.version,
            PROMPT_INPUTS_ATTRIBUTE: json.dumps(dict(variables or {}), separators=(",", ":"), ensure_ascii=False),
        }


def fallback_prompt(name: str, fallback: Template, config: Optional[Mapping[str, Any]] = None) -> Prompt:
    """A fallback prompt from what the caller gave: a string (text) or messages (chat)."""
    chat = not isinstance(fallback, str)
    names: List[str] = []
    if chat:
        for e in fallback:  # type: ignore[union-attr]
            if is_placeholder(e) and e["name"] not in names:
                names.append(e["name"])
    return Prompt(
        {
            "prompt_id": name,
            "version": 0,
            "type": "chat" if chat else "text",
            "template": fallback,
            "placeholders": names,
            "config": dict(config or {}),
        },
        is_fallback=True,
    )
