"""Local compile of a prompt version with the server's render rules and its errors word for word.

``{{name}}`` variables take the input of that exact name, else a dotted path into nested inputs;
strings are inserted as they are, other values as JSON (as JavaScript writes them), None as
nothing. Chat placeholders are filled with messages inserted as given. Missing variables or
placeholders raise a 422 TraceloomCompileError; a fill that is not a list of {role, content}
messages a 400. test/fixtures/prompt-compile.json pins the behaviour shared with the server.
"""
from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from .errors import TraceloomCompileError

Template = Union[str, List[Dict[str, Any]]]

VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}")


def is_placeholder(entry: Mapping[str, Any]) -> bool:
    return entry.get("type") == "placeholder"


def _has(container: Any, key: str) -> Tuple[bool, Any]:
    if isinstance(container, dict):
        return (True, container[key]) if key in container else (False, None)
    if isinstance(container, list) and key.isdigit() and int(key) < len(container):
        return True, container[int(key)]
    return False, None


def _lookup(inputs: Mapping[str, Any], name: str) -> Tuple[bool, Any]:
    if name in inputs:
        return True, inputs[name]
    cur: Any = inputs
    for part in name.split("."):
        found, cur = _has(cur, part)
        if not found:
            return False, None
    return True, cur


def _js_number(value: float) -> str:
    """A number as JavaScript's String() writes it (ECMA-262 Number::toString): the shortest digits
    that read back as the same double (repr's), in decimal notation from 1e-6 up to 1e21 and in
    exponent form ("1e-7", "1.5e+300") outside it."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"  # -0 too
    sign = "-" if value < 0 else ""
    _, digit_tuple, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    k = len(digits)
    n = exponent + k  # the value is 0.digits × 10^n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{mantissa}e{'+' if n > 0 else '-'}{abs(n - 1)}"


def _js_int(value: int) -> str:
    """An int as the server writes it after reading it from JSON, where every number is a double."""
    if abs(value) <= 2**53:
        return str(value)
    try:
        return _js_number(float(value))
    except OverflowError:
        return "Infinity" if value > 0 else "-Infinity"


def _is_array_index(key: str) -> bool:
    return key.isdigit() and key.isascii() and (key == "0" or key[0] != "0") and int(key) < 2**32 - 1


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool):
        return json.dumps(key)
    if isinstance(key, (int, float)):
        return json.dumps(key)  # as json.dumps would send it to the server
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _js_json(value: Any) -> str:
    """JSON as JavaScript's JSON.stringify writes it: numbers as String() writes them (NaN and
    Infinity as null), no spaces, non-ASCII as is, and an object's array-index keys first in
    ascending order, then the others in insertion order (the order of a parsed JavaScript object)."""
    if value is None or isinstance(value, (bool, str)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int):
        text = _js_int(value)
        return "null" if text.endswith("Infinity") else text
    if isinstance(value, float):
        return _js_number(value) if math.isfinite(value) else "null"
    if isinstance(value, dict):
        entries = {_json_key(k): v for k, v in value.items()}
        indexes = sorted((k for k in entries if _is_array_index(k)), key=int)
        keys = indexes + [k for k in entries if not _is_array_index(k)]
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + _js_json(entries[k]) for k in keys) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_js_json(v) for v in value) + "]"
    return json.dumps(value)  # raises TypeError for what JSON cannot hold, as before


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return _js_int(value)
    if isinstance(value, float):
        return _js_number(value)
    return _js_json(value)


def placeholder_problem(placeholders: Mapping[str, Any]) -> Optional[str]:
    """The first problem of a placeholder fill, as the server's 400 names it."""
    for name, messages in placeholders.items():
        if not isinstance(messages, list):
            return f"placeholders.{name}: must be an array of messages"
        for i, m in enumerate(messages):
            at = f"placeholders.{name}[{i}]"
            if not isinstance(m, dict):
                return f"{at}: must be an object with role and content"
            role = m.get("role")
            if not isinstance(role, str) or role == "":
                return f"{at}.role: must be a non-empty string"
            if not isinstance(m.get("content"), str):
                return f"{at}.content: must be a string"
    return None


class Compiled:
    def __init__(self, text: Optional[str], messages: Optional[List[Dict[str, Any]]], unused_inputs: List[str], unused_placeholders: List[str]):
        self.text = text
        self.messages = messages
        self.unused_inputs = unused_inputs
        self.unused_placeholders = unused_placeholders


def compile_template(
    template: Template,
    variables: Optional[Mapping[str, Any]] = None,
    placeholders: Optional[Mapping[str, Any]] = None,
) -> Compiled:
    """Fills a template; raises TraceloomCompileError (400 or 422, the server's detail) when it cannot."""
    variables = variables or {}
    placeholders = placeholders or {}
    problem = placeholder_problem(placeholders)
    if problem:
        raise TraceloomCompileError(400, problem)
    missing: Dict[str, None] = {}
    missing_slots: Dict[str, None] = {}
    used = set()

    def replace(match: "re.Match[str]") -> str:
        name = match.group(1)
        found, value = _lookup(variables, name)
        if not found:
            missing[name] = None
            return match.group(0)
        used.add(name if name in variables else name.split(".")[0])
        return _as_text(value)

    slots = set()
    text: Optional[str] = None
    messages: Optional[List[Dict[str, Any]]] = None
    if isinstance(template, str):
        text = VARIABLE.sub(replace, template)
    else:
        messages = []
        for entry in template:
            if not is_placeholder(entry):
                messages.append({**entry, "content": VARIABLE.sub(replace, entry["content"])})
                continue
            slots.add(entry["name"])
            if entry["name"] not in placeholders:
                missing_slots[entry["name"]] = None
                continue
            messages.extend(dict(m) for m in placeholders[entry["name"]])
    errors = []
    if missing:
        errors.append("Missing variables: " + ", ".join(missing))
    if missing_slots:
        errors.append("Missing placeholders: " + ", ".join(missing_slots))
    if errors:
        raise TraceloomCompileError(422, "; ".join(errors))
    return Compiled(
        text,
        messages,
        [k for k in variables if k not in used],
        [k for k in placeholders if k not in slots],
    )
