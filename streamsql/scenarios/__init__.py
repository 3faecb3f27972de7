"""Scenario files shipped with the package (the semantics, section 5: ``NAME.sql``,
``NAME.events.jsonl``, ``NAME.expected.jsonl``): the seeds' examples the demo and the tutorials
play, read from here so that a notebook copied out of the repository still finds them."""
from __future__ import annotations

from importlib import resources
from pathlib import Path


def folder() -> Path:
    """The folder holding the scenario files (inside the installed package)."""
    return Path(str(resources.files(__name__)))


def names() -> list[str]:
    """The names of the scenarios shipped with the package."""
    return sorted(p.name[: -len(".sql")] for p in folder().glob("*.sql"))


def path(name: str) -> Path:
    """The stem of scenario ``name`` (``…/union_merge``), for ``%streamsql load`` and
    ``streamsql.workbench(scenario=...)``; a clear error for an unknown name."""
    p = folder() / name
    if not p.with_name(f"{name}.sql").exists():
        raise FileNotFoundError(f"no scenario {name!r} in the package; scenarios: {', '.join(names())}")
    return p
