"""Traceloom SDK: cached prompts with fallback, local compile, prompt-to-span linking, budget
checks, scores and experiments over datasets. Standard library only."""
from .client import Traceloom
from .compile import Compiled, compile_template, placeholder_problem
from .datasets import (
    DATASET_ITEM_ID_ATTRIBUTE,
    DATASET_RUN_ID_ATTRIBUTE,
    Dataset,
    ExperimentContext,
    ExperimentItemResult,
    ExperimentSummary,
)
from .errors import (
    TraceloomApiError,
    TraceloomCompileError,
    TraceloomError,
    TraceloomPromptUnavailableError,
    TraceloomUnavailableError,
)
from .otel import OTEL_AVAILABLE, PromptSpanProcessor, with_prompt
from .prompt import PROMPT_ID_ATTRIBUTE, PROMPT_INPUTS_ATTRIBUTE, PROMPT_VERSION_ATTRIBUTE, Prompt

__all__ = [
    "Traceloom",
    "Prompt",
    "Compiled",
    "compile_template",
    "placeholder_problem",
    "with_prompt",
    "PromptSpanProcessor",
    "OTEL_AVAILABLE",
    "PROMPT_ID_ATTRIBUTE",
    "PROMPT_VERSION_ATTRIBUTE",
    "PROMPT_INPUTS_ATTRIBUTE",
    "Dataset",
    "ExperimentContext",
    "ExperimentItemResult",
    "ExperimentSummary",
    "DATASET_RUN_ID_ATTRIBUTE",
    "DATASET_ITEM_ID_ATTRIBUTE",
    "TraceloomError",
    "TraceloomApiError",
    "TraceloomUnavailableError",
    "TraceloomPromptUnavailableError",
    "TraceloomCompileError",
]
__version__ = "0.1.0"
