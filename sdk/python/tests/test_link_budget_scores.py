"""The prompt-to-span link (OpenTelemetry when importable, a no-op otherwise; the attributes become
template usages on the execution), budget checks cached briefly, and scores."""
from __future__ import annotations

import json
import os
import time
import unittest
import urllib.request

from traceloom import OTEL_AVAILABLE, PromptSpanProcessor, Traceloom, with_prompt

from .support import API_KEY, BASE_URL, Clock, Proxy, api


def send_span(attributes: dict, trace_id: str) -> None:
    """One GenAI span as standard OTLP/JSON, sent as any exporter would."""
    def value(v):
        return {"intValue": str(v)} if isinstance(v, int) else {"stringValue": str(v)}

    now = time.time_ns()
    body = {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "py-agent"}}]},
                "scopeSpans": [
                    {
                        "scope": {"name": "py-sdk-test"},
                        "spans": [
                            {
                                "traceId": trace_id,
                                "spanId": os.urandom(8).hex(),
                                "name": "chat gpt-4o",
                                "kind": 3,
                                "startTimeUnixNano": str(now - 1_000_000),
                                "endTimeUnixNano": str(now),
                                "attributes": [{"key": k, "value": value(v)} for k, v in attributes.items()],
                            }
                        ],
                    }
                ],
            }
        ]
    }
    req = urllib.request.Request(
        f"{BASE_URL}/api/v1/traces",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "X-API-Key": API_KEY},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=30) as res:
        answer = json.loads(res.read())
    assert answer["spans_ingested"] == 1, answer


def until(probe, what: str, timeout: float = 20):
    deadline = time.monotonic() + timeout
    while True:
        v = probe()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class LinkTests(unittest.TestCase):
    def test_span_attributes_from_the_helper_become_template_usages(self) -> None:
        status, _ = api(
            "POST",
            "/prompts",
            {"prompt_id": "py-linked", "type": "text", "template": "Summarise {{doc}}", "labels": ["production"]},
        )
        self.assertEqual(status, 201)
        prompt = Traceloom().prompts.get("py-linked", label="production")
        variables = {"doc": "the report"}
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", **prompt.span_attributes(variables)}
        self.assertEqual(attributes["traceloom.prompt.id"], "py-linked")
        trace_id = os.urandom(16).hex()
        send_span(attributes, trace_id)

        def usages():
            code, body = api("GET", f"/executions/{trace_id}")
            return code == 200 and body.get("template_usages") and body["template_usages"]

        found = until(usages, f"execution {trace_id} with its template usage")
        self.assertEqual(len(found), 1)
        self.assertEqual((found[0]["prompt_id"], found[0]["version"], found[0]["inputs"]), ("py-linked", 1, variables))

    def test_with_prompt_stamps_genai_spans_with_opentelemetry_and_is_a_no_op_without(self) -> None:
        prompt = Traceloom().prompts.get("py-linked")

        class Span:
            def __init__(self, attributes):
                self.attributes = attributes

            def set_attributes(self, attributes):
                self.attributes = {**self.attributes, **attributes}

        genai, plain = Span({"gen_ai.operation.name": "chat"}), Span({"http.method": "GET"})
        with with_prompt(prompt, {"doc": "x"}):
            if OTEL_AVAILABLE:  # pragma: no cover - opentelemetry is not installed on the CI machine
                from opentelemetry import context

                PromptSpanProcessor().on_start(genai, context.get_current())
                PromptSpanProcessor().on_start(plain, context.get_current())
            else:
                PromptSpanProcessor().on_start(genai, None)
                PromptSpanProcessor().on_start(plain, None)
        self.assertNotIn("traceloom.prompt.id", plain.attributes)
        if OTEL_AVAILABLE:  # pragma: no cover
            self.assertEqual(genai.attributes["traceloom.prompt.id"], "py-linked")
        else:
            self.assertEqual(genai.attributes, {"gen_ai.operation.name": "chat"})


class BudgetAndScoreTests(unittest.TestCase):
    def test_budget_check_cached_briefly_per_question(self) -> None:
        proxy = Proxy()
        self.addCleanup(proxy.stop)
        clock = Clock()
        c = Traceloom(base_url=proxy.url, api_key=API_KEY, project_id="default", now=clock, budget_cache_ttl_seconds=5)
        a = c.budget.check(agent_id="agent-1", tags=["b", "a"])
        self.assertEqual((a["allowed"], a["status"]), (True, "ok"))
        c.budget.check(agent_id="agent-1", tags=["a", "b"])
        self.assertEqual(proxy.requests, ["/api/projects/default/budget/check?agent_id=agent-1&tag=a&tag=b"])
        c.budget.check(agent_id="agent-2")
        self.assertEqual(len(proxy.requests), 2)
        clock.advance(5.001)
        c.budget.check(agent_id="agent-1", tags=["a", "b"])
        self.assertEqual(len(proxy.requests), 3)
        proxy.stop()
        clock.advance(10)  # expired, service gone: the last answer to the same question
        self.assertEqual(c.budget.check(agent_id="agent-1", tags=["a", "b"])["allowed"], True)

    def test_scores_create_one_and_many(self) -> None:
        c = Traceloom()
        one = c.scores.create("helpfulness", 0.75, trace_id="py-trace", comment="ok")
        self.assertEqual((one["trace_id"], one["name"], one["value"], one["source"]), ("py-trace", "helpfulness", 0.75, "api"))
        many = c.scores.create_many(
            [
                {"id": "py-s1", "trace_id": "py-trace", "name": "correct", "value": True},
                {"id": "py-s2", "trace_id": "py-trace", "name": "tone", "value": "polite"},
            ]
        )
        self.assertEqual([s["id"] for s in many], ["py-s1", "py-s2"])
        self.assertEqual(len(api("GET", "/scores?trace_id=py-trace")[1]["items"]), 3)
        with self.assertRaisesRegex(ValueError, "unknown field"):
            c.scores.create_many([{"name": "x", "value": 1, "traceId": "camel"}])


if __name__ == "__main__":
    unittest.main()
