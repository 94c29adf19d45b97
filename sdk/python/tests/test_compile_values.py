"""compile writes values as the server does (JavaScript's String() and JSON.stringify), without a
service: every shared fixture's expected output, and numbers only Python can hold."""
from __future__ import annotations

import math
import unittest

from traceloom import TraceloomCompileError, compile_template

from .support import FIXTURES


def text(value) -> str:
    return compile_template("{{v}}", {"v": value}).text


class CompileValueTests(unittest.TestCase):
    def test_every_fixture_compiles_to_its_expected_output(self) -> None:
        for case in FIXTURES["cases"]:
            with self.subTest(case["name"]):
                expected = case["expect"]
                try:
                    c = compile_template(case["template"], case["inputs"], case.get("placeholders"))
                    local = {
                        ("text" if case["type"] == "text" else "messages"): c.text if case["type"] == "text" else c.messages,
                        "unused_inputs": c.unused_inputs,
                        "unused_placeholders": c.unused_placeholders,
                    }
                except TraceloomCompileError as e:
                    local = {"status": e.status, "detail": e.detail}
                self.assertEqual(local, expected)

    def test_floats_as_javascript_writes_them(self) -> None:
        cases = {
            0.00005: "0.00005",
            1e-7: "1e-7",
            1e-6: "0.000001",
            -1.5e-7: "-1.5e-7",
            1 / 3: "0.3333333333333333",
            2.5: "2.5",
            100.0: "100",
            -0.0: "0",
            1e20: "100000000000000000000",
            1e21: "1e+21",
            1.7976931348623157e308: "1.7976931348623157e+308",
            5e-324: "5e-324",
            123456.789e3: "123456789",
            float("inf"): "Infinity",
            float("-inf"): "-Infinity",
        }
        for value, expected in cases.items():
            with self.subTest(value=value):
                self.assertEqual(text(value), expected)
        self.assertEqual(text(float("nan")), "NaN")

    def test_integers_beyond_a_double_are_rounded_as_the_server_reads_them(self) -> None:
        self.assertEqual(text(2**53), "9007199254740992")
        self.assertEqual(text(2**60), "1152921504606847000")
        self.assertEqual(text(-(10**21)), "-1e+21")
        self.assertEqual(text(10**400), "Infinity")  # JSON.parse reads it as Infinity

    def test_inside_json_numbers_keys_and_values_as_json_stringify(self) -> None:
        self.assertEqual(text({"eps": 1e-7}), '{"eps":1e-7}')
        self.assertEqual(text([0.00005, 2.0, -0.0, math.nan, math.inf, 2**60]), "[0.00005,2,0,null,null,1152921504606847000]")
        self.assertEqual(text({"b": 1, "10": 2, "2": 3}), '{"2":3,"10":2,"b":1}')
        self.assertEqual(text({1: "one", None: "n"}), '{"1":"one","null":"n"}')
        self.assertEqual(text({"s": 'quote " back \\ nl \n tab \t nul \x00 é ☃'}), '{"s":"quote \\" back \\\\ nl \\n tab \\t nul \\u0000 é ☃"}')
        self.assertEqual(text((True, False, None)), "[true,false,null]")


if __name__ == "__main__":
    unittest.main()
