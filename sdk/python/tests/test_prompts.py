"""prompts.get against the real service: cache hits make no request, a stale prompt is served while
one refresh runs for 100 concurrent gets, compile agrees with the server's render on the shared
fixtures, and with the service gone a get serves the cached version, then the fallback, then a
clear error."""
from __future__ import annotations

import os
import unittest
from concurrent.futures import ThreadPoolExecutor

from traceloom import (
    Traceloom,
    TraceloomApiError,
    TraceloomCompileError,
    TraceloomError,
    TraceloomPromptUnavailableError,
)

from .support import API_KEY, BASE_URL, FIXTURES, Answering, Clock, Proxy, api


def create(prompt_id: str, type_: str, template, **extra) -> None:
    status, body = api("POST", "/prompts", {"prompt_id": prompt_id, "type": type_, "template": template, **extra})
    assert status == 201, body


class PromptTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        if not BASE_URL or not API_KEY:
            raise RuntimeError("TRACELOOM_BASE_URL and TRACELOOM_API_KEY must name the service under test")
        create("py-greet", "text", "Hello {{name}}", labels=["production"])

    def setUp(self) -> None:
        self.proxy = Proxy()
        self.clock = Clock()
        self.addCleanup(self.proxy.stop)

    def client(self, **options) -> Traceloom:
        return Traceloom(base_url=self.proxy.url, api_key=API_KEY, now=self.clock, **options)

    def test_configured_from_the_environment(self) -> None:
        p = Traceloom().prompts.get("py-greet")  # TRACELOOM_BASE_URL and TRACELOOM_API_KEY
        self.assertEqual((p.name, p.version, p.is_fallback), ("py-greet", 1, False))
        saved = os.environ.pop("TRACELOOM_BASE_URL")
        try:
            with self.assertRaisesRegex(TraceloomError, "^base_url: pass it to Traceloom"):
                Traceloom()
        finally:
            os.environ["TRACELOOM_BASE_URL"] = saved
        with self.assertRaises(TraceloomApiError) as bad:
            Traceloom(base_url=BASE_URL, api_key="tl_wrong").prompts.get("py-greet")
        self.assertEqual(bad.exception.status, 401)

    def test_a_cache_hit_makes_no_request(self) -> None:
        c = self.client()
        first = c.prompts.get("py-greet")
        asked = len(self.proxy.requests)  # the project lookup, then the prompt
        self.assertEqual(self.proxy.requests[-1], "/api/projects/default/prompts/py-greet/versions/latest")
        self.assertIs(c.prompts.get("py-greet"), first)
        self.assertEqual(len(self.proxy.requests), asked)
        self.assertEqual(c.prompts.get("py-greet", label="production").version, 1)
        self.assertEqual(c.prompts.get("py-greet", version=1).version, 1)
        self.assertEqual(len(self.proxy.requests), asked + 2)
        c.prompts.get("py-greet", label="production")
        self.assertEqual(len(self.proxy.requests), asked + 2)
        self.assertEqual(first.compile({"name": "Ann"}), "Hello Ann")
        with self.assertRaises(TraceloomApiError) as missing:
            c.prompts.get("py-nope")
        self.assertEqual(missing.exception.status, 404)

    def test_stale_served_while_one_request_refreshes_under_100_concurrent_gets(self) -> None:
        create("py-stale", "text", "v1")
        c = self.client(project_id="default")
        with ThreadPoolExecutor(max_workers=100) as pool:
            cold = list(pool.map(lambda _: c.prompts.get("py-stale", cache_ttl_seconds=30), range(100)))
        self.assertEqual(len({id(p) for p in cold}), 1)
        self.assertEqual(len(self.proxy.requests), 1)  # one request for the 100 cold gets too
        self.assertEqual(api("POST", "/prompts/py-stale/versions", {"template": "v2"})[0], 201)
        self.clock.advance(31)
        self.proxy.hold()  # the refresh waits at the proxy: every get below returns without it
        with ThreadPoolExecutor(max_workers=100) as pool:
            stale = list(pool.map(lambda _: c.prompts.get("py-stale", cache_ttl_seconds=30), range(100)))
        self.assertTrue(all(p.version == 1 for p in stale))
        self.proxy.release()
        c.prompts.settled()
        self.assertEqual(len(self.proxy.requests), 2)
        fresh = c.prompts.get("py-stale", cache_ttl_seconds=30)
        self.assertEqual((fresh.version, fresh.template), (2, "v2"))
        self.assertEqual(len(self.proxy.requests), 2)

    def test_compile_equals_the_servers_render_on_the_shared_fixtures(self) -> None:
        c = self.client(project_id="default")
        for i, case in enumerate(FIXTURES["cases"]):
            with self.subTest(case["name"]):
                pid = f"py-fixture-{i}"
                create(pid, case["type"], case["template"])
                body = {"inputs": case["inputs"]}
                if "placeholders" in case:
                    body["placeholders"] = case["placeholders"]
                status, server = api("POST", f"/prompts/{pid}/render", body)
                prompt = c.prompts.get(pid)
                try:
                    local = (200, prompt.compile(case["inputs"], case.get("placeholders")))
                except TraceloomCompileError as e:
                    local = (e.status, {"detail": e.detail})
                expected = (200, server.get("text", server.get("messages"))) if status == 200 else (status, server)
                self.assertEqual(local, expected)

    def test_a_chat_prompt_with_placeholders_and_config(self) -> None:
        create(
            "py-support",
            "chat",
            [{"role": "system", "content": "Help with {{product}}."}, {"type": "placeholder", "name": "history"}],
            config={"model": "gpt-4o", "temperature": 0},
        )
        p = self.client().prompts.get("py-support")
        self.assertEqual((p.type, p.placeholders, p.variables), ("chat", ["history"], ["product"]))
        self.assertEqual(p.config, {"model": "gpt-4o", "temperature": 0})
        self.assertEqual(
            p.compile({"product": "Loom"}, {"history": [{"role": "user", "content": "hi"}]}),
            [{"role": "system", "content": "Help with Loom."}, {"role": "user", "content": "hi"}],
        )
        with self.assertRaises(TraceloomCompileError) as e:
            p.compile({"product": "Loom"})
        self.assertEqual((e.exception.status, e.exception.detail), (422, "Missing placeholders: history"))

    def test_service_gone_cached_then_fallback_then_a_clear_error(self) -> None:
        c = self.client(retries=1, backoff_seconds=0.001)
        cached = c.prompts.get("py-greet")
        self.proxy.stop()  # the service, as the SDK sees it, is gone
        self.clock.advance(120)  # past the TTL: a refresh is tried and fails, the cached copy is served
        self.assertIs(c.prompts.get("py-greet"), cached)
        c.prompts.settled()
        self.assertIs(c.prompts.get("py-greet"), cached)
        fb = c.prompts.get("py-never", fallback=[{"role": "system", "content": "Be brief."}])
        self.assertEqual((fb.is_fallback, fb.type, fb.version), (True, "chat", None))
        self.assertEqual(fb.span_attributes({"a": 1}), {})
        with self.assertRaises(TraceloomPromptUnavailableError) as err:
            c.prompts.get("py-never")
        self.assertRegex(
            str(err.exception),
            r'^prompt "py-never" \(latest\) could not be served: no cached version, no fallback given, and GET .* failed after 2 attempt\(s\): unreachable \(',
        )

    def test_5xx_retried_then_fallback_and_a_silent_service_bounded_by_the_timeout(self) -> None:
        failing = Answering(503)
        self.addCleanup(failing.stop)
        c = Traceloom(base_url=failing.url, project_id="default", retries=2, backoff_seconds=0.001, timeout_seconds=5)
        fb = c.prompts.get("py-greet", fallback="Hi {{name}}")
        self.assertEqual((fb.is_fallback, fb.compile({"name": "Bo"})), (True, "Hi Bo"))
        self.assertEqual(len(failing.requests), 3)
        with self.assertRaises(TraceloomPromptUnavailableError) as err:
            c.prompts.get("py-greet")
        self.assertEqual(
            str(err.exception),
            'prompt "py-greet" (latest) could not be served: no cached version, no fallback given, and '
            "GET /api/projects/default/prompts/py-greet/versions/latest failed after 3 attempt(s): HTTP 503: down for maintenance",
        )
        silent = Answering(None)
        self.addCleanup(silent.stop)
        slow = Traceloom(base_url=silent.url, project_id="default", retries=5, timeout_seconds=0.3)
        # One deadline for the whole get: the first attempt uses it up, no retry is started after it.
        with self.assertRaisesRegex(TraceloomPromptUnavailableError, r"failed after 1 attempt\(s\) within 0.3 s: no answer by the deadline$"):
            slow.prompts.get("py-greet")


if __name__ == "__main__":
    unittest.main()
