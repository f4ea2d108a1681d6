"""The package's own build backend (PEP 517 and PEP 660), standard library only.

`pip install ./clients/python` then needs no download to build: setuptools,
the usual backend, is fetched into pip's isolated build environment, which
fails on a machine without a package index. This backend reads [project] of
pyproject.toml and packs src/askbridge into a pure-Python wheel.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import time
import zipfile
from pathlib import Path

try:
    import tomllib
except ImportError as err:  # Python < 3.11: requires-python says why
    raise ImportError("askbridge needs Python 3.11 or newer (python3 --version); make the venv with a newer python3") from err

ROOT = Path(__file__).resolve().parent
PACKAGE = "askbridge"
# Zip entries carry this time unless SOURCE_DATE_EPOCH says otherwise, so a
# wheel built twice from the same tree is the same file.
EPOCH = max(int(os.environ.get("SOURCE_DATE_EPOCH") or 0), 315532800)  # 1980-01-01, the earliest a zip holds


def _project() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def _metadata() -> str:
    p = _project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {p['name']}",
        f"Version: {p['version']}",
        f"Summary: {p['description']}",
        f"Requires-Python: {p['requires-python']}",
    ]
    if "license" in p:
        lines.append(f"License: {p['license']['text']}")
    lines += [f"Requires-Dist: {d}" for d in p.get("dependencies", [])]
    for extra, deps in p.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {d}; extra == "{extra}"' for d in deps]
    return "\n".join(lines) + "\n"


def _name_version() -> str:
    p = _project()
    return f"{p['name'].replace('-', '_')}-{p['version']}"


def _package_files() -> list[Path]:
    src = ROOT / "src" / PACKAGE
    return sorted(f for f in src.rglob("*") if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc")


def _wheel(wheel_directory: str, files: dict[str, bytes]) -> str:
    nv = _name_version()
    info = f"{nv}.dist-info"
    files = dict(files)
    files[f"{info}/METADATA"] = _metadata().encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: askbridge build_backend.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    name = f"{nv}-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / name, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files.items():
            zi = zipfile.ZipInfo(path, time.gmtime(EPOCH)[:6])
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    return name


# PEP 517 hooks.

def get_requires_for_build_wheel(config_settings=None) -> list[str]:
    return []


def get_requires_for_build_sdist(config_settings=None) -> list[str]:
    return []


def get_requires_for_build_editable(config_settings=None) -> list[str]:
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    src = ROOT / "src"
    return _wheel(wheel_directory, {f.relative_to(src).as_posix(): f.read_bytes() for f in _package_files()})


def build_editable(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    """PEP 660: a wheel whose .pth puts src/ on sys.path, so edits take effect at once."""
    return _wheel(wheel_directory, {f"_{PACKAGE}_editable.pth": (str(ROOT / "src") + "\n").encode()})


def build_sdist(sdist_directory, config_settings=None) -> str:
    nv = _name_version()
    members = {"pyproject.toml": ROOT / "pyproject.toml", "build_backend.py": ROOT / "build_backend.py"}
    members.update({f.relative_to(ROOT).as_posix(): f for f in _package_files()})
    name = f"{nv}.tar.gz"
    with tarfile.open(Path(sdist_directory) / name, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        entries = {path: f.read_bytes() for path, f in members.items()}
        entries["PKG-INFO"] = _metadata().encode()
        for path, data in sorted(entries.items()):
            ti = tarfile.TarInfo(f"{nv}/{path}")
            ti.size, ti.mtime, ti.mode = len(data), EPOCH, 0o644
            tar.addfile(ti, io.BytesIO(data))
    return name
