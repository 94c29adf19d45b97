"""The SDK's build backend (PEP 517, PEP 660), standard library only.

`pip install ./sdk/python` builds in an isolated environment and installs the backend's
requirements into it first. A backend from a package index (setuptools, hatchling, flit) makes
that install need the index; this one needs nothing, so installing from a checkout works offline
and on any Python the SDK supports. It packs the `traceloom` package as it is (pure Python, no
build step) and writes the metadata from pyproject.toml's [project] table.
"""
from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "traceloom"
# What an sdist holds besides the package: enough to build the wheel again.
SDIST_FILES = ("pyproject.toml", "README.md", "LICENSE", "_build/traceloom_build.py")
# Fixed timestamps: the same source gives the same archives (SOURCE_DATE_EPOCH, as elsewhere).
EPOCH = max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800)


def _toml_subset(text: str) -> Dict[str, Any]:
    """The part of TOML pyproject.toml uses (tables, strings, arrays of strings), for Pythons
    without tomllib (< 3.11). tests/test_build_backend.py checks it against tomllib."""
    doc: Dict[str, Any] = {}
    table = doc
    pending: Optional[Tuple[str, str]] = None  # a key whose array spans lines, and the text so far
    string = r'"(?:[^"\\]|\\.)*"'
    for raw in text.splitlines():
        line = re.sub(rf"({string})|#.*", lambda m: m.group(1) or "", raw).strip()
        if pending:
            pending = (pending[0], pending[1] + " " + line)
            if not pending[1].rstrip().endswith("]"):
                continue
            key, line = pending[0], pending[1]
            pending = None
            table[key] = _toml_value(line)
            continue
        if not line:
            continue
        header = re.fullmatch(r"\[([A-Za-z0-9_.\-]+)\]", line)
        if header:
            table = doc
            for part in header.group(1).split("."):
                table = table.setdefault(part, {})
            continue
        m = re.fullmatch(rf"([A-Za-z0-9_\-]+|{string})\s*=\s*(.*)", line)
        if not m:
            raise ValueError(f"pyproject.toml: cannot read {raw!r} without tomllib (Python >= 3.11)")
        key = m.group(1).strip('"')
        if m.group(2).startswith("[") and not m.group(2).endswith("]"):
            pending = (key, m.group(2))
        else:
            table[key] = _toml_value(m.group(2))
    return doc


def _toml_value(text: str) -> Any:
    import json

    text = text.strip()
    if text.startswith("["):
        items = re.findall(r'"(?:[^"\\]|\\.)*"', text)
        return [json.loads(s) for s in items]
    if text.startswith('"'):
        return json.loads(text)
    raise ValueError(f"pyproject.toml: cannot read the value {text!r} without tomllib (Python >= 3.11)")


def _project() -> Dict[str, Any]:
    text = (ROOT / "pyproject.toml").read_text("utf8")
    try:
        import tomllib

        doc = tomllib.loads(text)
    except ImportError:
        doc = _toml_subset(text)
    return doc["project"]


def _dist_name(project: Dict[str, Any]) -> str:
    return re.sub(r"[-_.]+", "_", project["name"]).lower()


def _metadata(project: Dict[str, Any]) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project['description']}",
        f"License: {project['license']}",
        f"Requires-Python: {project['requires-python']}",
    ]
    lines += [f"Classifier: {c}" for c in project.get("classifiers", [])]
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    for extra, deps in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {d}; extra == "{extra}"' for d in deps]
    readme = project.get("readme")
    if readme:
        lines.append("Description-Content-Type: text/markdown")
        return "\n".join(lines) + "\n\n" + (ROOT / readme).read_text("utf8")
    return "\n".join(lines) + "\n"


def _package_files() -> List[Path]:
    return sorted(
        p
        for p in (ROOT / PACKAGE).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo")
    )


def _write_wheel(wheel_directory: str, entries: List[Tuple[str, bytes]]) -> str:
    project = _project()
    name, version = _dist_name(project), project["version"]
    dist_info = f"{name}-{version}.dist-info"
    entries = entries + [
        (f"{dist_info}/METADATA", _metadata(project).encode()),
        (f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: traceloom_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
        (f"{dist_info}/LICENSE", (ROOT / "LICENSE").read_bytes()),
    ]
    record = io.StringIO()
    for path, data in entries:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.write(f"{path},sha256={digest},{len(data)}\n")
    record.write(f"{dist_info}/RECORD,,\n")
    entries.append((f"{dist_info}/RECORD", record.getvalue().encode()))
    filename = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / filename, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in entries:
            info = zipfile.ZipInfo(path, date_time=_zip_time())
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return filename


def _zip_time() -> Tuple[int, int, int, int, int, int]:
    import time

    return time.gmtime(EPOCH)[:6]


# PEP 517 hooks


def get_requires_for_build_wheel(config_settings: Any = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Any = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Any = None) -> List[str]:
    return []


def build_wheel(wheel_directory: str, config_settings: Any = None, metadata_directory: Any = None) -> str:
    return _write_wheel(wheel_directory, [(p.relative_to(ROOT).as_posix(), p.read_bytes()) for p in _package_files()])


def build_editable(wheel_directory: str, config_settings: Any = None, metadata_directory: Any = None) -> str:
    # PEP 660: the installed package is the checkout itself, put on sys.path by a .pth file.
    return _write_wheel(wheel_directory, [(f"_{PACKAGE}_editable.pth", (str(ROOT) + "\n").encode())])


def build_sdist(sdist_directory: str, config_settings: Any = None) -> str:
    project = _project()
    base = f"{_dist_name(project)}-{project['version']}"
    files = [(p, p.relative_to(ROOT).as_posix()) for p in _package_files()]
    files += [(ROOT / f, f) for f in SDIST_FILES]
    filename = f"{base}.tar.gz"
    with tarfile.open(Path(sdist_directory) / filename, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for data, arcname in [(_metadata(project).encode(), "PKG-INFO")] + [(p.read_bytes(), a) for p, a in sorted(files, key=lambda f: f[1])]:
            info = tarfile.TarInfo(f"{base}/{arcname}")
            info.size, info.mtime, info.mode = len(data), EPOCH, 0o644
            tar.addfile(info, io.BytesIO(data))
    return filename
