"""The SDK's own build backend (_build/traceloom_build.py): the wheel and sdist it writes hold the
package, valid metadata and a RECORD whose hashes match, and it reads pyproject.toml without
tomllib as tomllib does. test/sdk/install.test.ts installs what it builds with pip and runs it."""
from __future__ import annotations

import base64
import csv
import hashlib
import io
import shutil
import sys
import tarfile
import tempfile
import unittest
import zipfile
from email.parser import Parser
from pathlib import Path

SDK = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SDK / "_build"))
import traceloom_build  # noqa: E402

PACKAGE_FILES = sorted(
    p.relative_to(SDK).as_posix() for p in (SDK / "traceloom").rglob("*") if p.is_file() and "__pycache__" not in p.parts
)


class BuildBackendTests(unittest.TestCase):
    def setUp(self) -> None:
        self.out = self.temp_dir()

    def temp_dir(self) -> str:
        path = tempfile.mkdtemp(prefix="traceloom-build-")
        self.addCleanup(shutil.rmtree, path, ignore_errors=True)
        return path

    def test_the_wheel_holds_the_package_metadata_and_a_true_record(self) -> None:
        name = traceloom_build.build_wheel(self.out)
        self.assertEqual(name, "traceloom-0.1.0-py3-none-any.whl")
        with zipfile.ZipFile(Path(self.out) / name) as zf:
            names = zf.namelist()
            self.assertEqual(sorted(n for n in names if n.startswith("traceloom/")), PACKAGE_FILES)
            self.assertIn("traceloom/py.typed", names)
            meta = Parser().parsestr(zf.read("traceloom-0.1.0.dist-info/METADATA").decode())
            self.assertEqual((meta["Name"], meta["Version"], meta["License"]), ("traceloom", "0.1.0", "Apache-2.0"))
            self.assertEqual(meta["Requires-Python"], ">=3.9")
            self.assertIn('opentelemetry-api>=1.20; extra == "otel"', meta.get_all("Requires-Dist"))
            self.assertIn("pip install ./sdk/python", meta.get_payload())  # the README as description
            self.assertIn("Apache License", zf.read("traceloom-0.1.0.dist-info/LICENSE").decode())
            rows = list(csv.reader(io.StringIO(zf.read("traceloom-0.1.0.dist-info/RECORD").decode())))
            self.assertEqual(sorted(r[0] for r in rows), sorted(names))
            for path, digest, size in rows:
                if path.endswith("RECORD"):
                    self.assertEqual((digest, size), ("", ""))
                    continue
                data = zf.read(path)
                expected = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                self.assertEqual((digest, int(size)), (expected, len(data)), path)

    def test_the_same_source_gives_the_same_wheel(self) -> None:
        first = Path(self.out) / traceloom_build.build_wheel(self.out)
        data = first.read_bytes()
        again = self.temp_dir()
        self.assertEqual((Path(again) / traceloom_build.build_wheel(again)).read_bytes(), data)

    def test_the_sdist_holds_what_builds_the_wheel_again(self) -> None:
        name = traceloom_build.build_sdist(self.out)
        self.assertEqual(name, "traceloom-0.1.0.tar.gz")
        with tarfile.open(Path(self.out) / name) as tar:
            names = sorted(m.name.split("/", 1)[1] for m in tar.getmembers())
        expected = ["LICENSE", "PKG-INFO", "README.md", "_build/traceloom_build.py", "pyproject.toml"] + PACKAGE_FILES
        self.assertEqual(names, sorted(expected))

    def test_pyproject_is_read_alike_without_tomllib(self) -> None:
        text = (SDK / "pyproject.toml").read_text("utf8")
        doc = traceloom_build._toml_subset(text)
        self.assertEqual(doc["build-system"]["build-backend"], "traceloom_build")
        self.assertEqual(doc["project"]["license"], "Apache-2.0")
        self.assertEqual(doc["project"]["classifiers"], ["Programming Language :: Python :: 3", "Typing :: Typed"])
        self.assertEqual(doc["project"]["optional-dependencies"]["otel"], ["opentelemetry-api>=1.20", "opentelemetry-sdk>=1.20"])
        try:
            import tomllib
        except ImportError:  # Python < 3.11: the fields above are what the backend reads
            return
        self.assertEqual(doc, tomllib.loads(text))


if __name__ == "__main__":
    unittest.main()
