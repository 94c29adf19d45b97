"""Typed errors: every one says what failed and why; ``kind`` lets callers branch on it."""
from __future__ import annotations


class TraceloomError(Exception):
    """Base of every error the SDK raises."""

    kind = "traceloom"


class TraceloomApiError(TraceloomError):
    """The service answered with a 4xx: the request is wrong (bad key, unknown prompt...); retrying will not help."""

    kind = "api"

    def __init__(self, status: int, detail: str, path: str) -> None:
        super().__init__(f"Traceloom answered {status} to {path}: {detail}")
        self.status = status
        self.detail = detail
        self.path = path


class TraceloomUnavailableError(TraceloomError):
    """The service could not be reached (network error, timeout) or answered 5xx after every retry."""

    kind = "unavailable"

    def __init__(self, message: str, attempts: int) -> None:
        super().__init__(message)
        self.attempts = attempts


class TraceloomPromptUnavailableError(TraceloomUnavailableError):
    """A prompt could not be served: not cached, no fallback given, and the service unavailable."""

    def __init__(self, prompt_name: str, reference: str, cause: TraceloomUnavailableError) -> None:
        super().__init__(
            f'prompt "{prompt_name}" ({reference}) could not be served: no cached version, no fallback given, and {cause}',
            cause.attempts,
        )
        self.prompt_name = prompt_name
        self.reference = reference
        self.__cause__ = cause


class TraceloomCompileError(TraceloomError):
    """compile() refused its arguments, with the status and detail the server's render answers."""

    kind = "compile"

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
