"""The prompt-to-span link through OpenTelemetry, when ``opentelemetry`` is importable (a no-op
otherwise). ``with with_prompt(prompt, variables):`` puts a prompt version in the active context;
PromptSpanProcessor (added to the TracerProvider before the exporting processor) stamps it on
every GenAI span started inside (traceloom.prompt.id / .version / .inputs, read by Traceloom's OTLP
mapping). Without OpenTelemetry, set ``prompt.span_attributes(variables)`` on spans yourself."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, Mapping, Optional

from .prompt import Prompt

GENAI_PREFIXES = ("gen_ai.", "llm.", "ai.", "openinference.", "traceloop.")
_KEY = "traceloom.prompt"

try:  # pragma: no cover - depends on the environment
    from opentelemetry import context as _otel_context
    from opentelemetry.sdk.trace import SpanProcessor as _SpanProcessor

    OTEL_AVAILABLE = True
except ImportError:  # OpenTelemetry not installed: the link is a no-op
    _otel_context = None  # type: ignore[assignment]
    _SpanProcessor = object  # type: ignore[assignment,misc]
    OTEL_AVAILABLE = False


@contextlib.contextmanager
def with_prompt(prompt: Prompt, variables: Optional[Mapping[str, Any]] = None) -> Iterator[None]:
    """Runs the block with the prompt linked: GenAI spans started inside carry it (a no-op without OpenTelemetry)."""
    if _otel_context is None:
        yield
        return
    token = _otel_context.attach(_otel_context.set_value(_KEY, prompt.span_attributes(variables)))
    try:
        yield
    finally:
        _otel_context.detach(token)


class PromptSpanProcessor(_SpanProcessor):  # type: ignore[misc,valid-type]
    """Stamps the linked prompt on GenAI spans (``spans="all"``: on every span in the block)."""

    def __init__(self, spans: str = "genai") -> None:
        self._all = spans == "all"

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        if _otel_context is None:
            return
        attributes = _otel_context.get_value(_KEY, parent_context)
        if not attributes:
            return
        own = dict(getattr(span, "attributes", None) or {})
        if not self._all and not any(k.startswith(GENAI_PREFIXES) for k in own):
            return
        span.set_attributes({k: v for k, v in attributes.items() if k not in own})

    def on_end(self, span: Any) -> None:
        pass

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
