"""The package's types hold for a user's code: mypy --strict passes the
package and typecheck/ok.py, and catches every mistake in typecheck/bad.py
(an unknown field, a missing required one, a wrong value), each on its line."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


@pytest.fixture(scope="module")
def cache():
    """mypy's cache, kept between runs outside the repository (it checks the
    standard library and httpx once, then only what changed)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "askbridge" / "mypy"


def mypy(cache, *files):
    if importlib.util.find_spec("mypy") is None:
        if os.environ.get("CI"):
            pytest.fail("mypy is required in CI; scripts/clients-deps.sh installs python3-mypy")
        pytest.skip("mypy not installed (apt-get install python3-mypy; scripts/clients-deps.sh does)")
    cmd = [sys.executable, "-m", "mypy", "--config-file", str(HERE / "typecheck" / "mypy.ini"),
           "--cache-dir", str(cache), "--no-error-summary", "--show-error-codes", *files]
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "MYPYPATH": str(ROOT / "src")})
    assert res.stderr == "", res.stderr
    return res.returncode, res.stdout


def test_the_package_and_a_users_correct_code_pass_mypy_strict(cache):
    code, out = mypy(cache, "src/askbridge", "tests/typecheck/ok.py")
    assert (code, out) == (0, "")


def test_mypy_refuses_unknown_fields_missing_ones_and_wrong_values(cache):
    bad = HERE / "typecheck" / "bad.py"
    want = {n: m.group(1) for n, line in enumerate(bad.read_text().splitlines(), 1) if (m := re.search(r"\S.*  # error: (.+)$", line))}
    assert len(want) >= 8
    code, out = mypy(cache, "tests/typecheck/bad.py")
    got: dict[int, list[str]] = {}
    for line in out.splitlines():
        if ": note: " in line:  # mypy's hints ("Did you mean "status"?") go with the error above
            continue
        m = re.match(r"tests/typecheck/bad\.py:(\d+): error: (.*)", line)
        assert m, f"an error outside bad.py or not an error: {line}"
        got.setdefault(int(m.group(1)), []).append(m.group(2))
    assert code == 1
    missed = {n: words for n, words in want.items() if n not in got}
    assert not missed, f"mypy let these through (line: expected words): {missed}\nmypy said:\n{out}"
    assert set(got) == set(want), f"errors on unmarked lines:\n{out}"
    for n, words in want.items():
        assert len(got[n]) == 1 and words in got[n][0], f"line {n}: want one error with {words}, got {got[n]}"
