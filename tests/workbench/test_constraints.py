"""constraints.txt, the versions CI installs, agrees with pyproject.toml's requirements."""

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]


def _pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = version.strip()
    return pins


def _requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    texts = list(project["dependencies"]) + list(project["optional-dependencies"]["test"])
    return [Requirement(text) for text in texts]


def test_every_requirement_is_pinned_within_its_bounds() -> None:
    pins = _pins()
    wrong = []
    for requirement in _requirements():
        version = pins.get(canonicalize_name(requirement.name))
        if version is None or not requirement.specifier.contains(version, prereleases=True):
            wrong.append(f"{requirement} pinned at {version}")
    assert not wrong, "run scripts/update_constraints.sh: " + "; ".join(wrong)


def test_fast_moving_dependencies_have_an_upper_bound() -> None:
    fast = {"textual", "openai", "anthropic", "mcp", "pydantic", "agent-client-protocol", "rich"}
    unbounded = [
        str(r)
        for r in _requirements()
        if canonicalize_name(r.name) in fast and not any(s.operator == "<" for s in r.specifier)
    ]
    assert not unbounded
