"""Scenario files (the semantics, section 5, the replay format: ``NAME.sql``, ``NAME.events.jsonl`` and, when present,
``NAME.expected.jsonl``) played one event at a time, or to any step k, in a workbench of their
own, with the output checked against the expected lines released so far."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from ..engine.catalog import Event
from ..engine.events import EventsFileError, read_events
from ..engine.errors import SqlError, StreamSqlError
from ..engine.steps import comparable, replay_lines, step_table
from .live import snapshot

EVENTS = ".events.jsonl"
EXPECTED = ".expected.jsonl"


@dataclasses.dataclass
class Scenario:
    """A scenario file set (``NAME.sql``, ``NAME.events.jsonl``, optional ``NAME.expected.jsonl``), read once."""
    name: str
    sql: str
    events: list[Event]
    expected: list[dict] | None
    path: Path

    @classmethod
    def load(cls, path: str | Path) -> "Scenario":
        """``path`` is the ``.sql`` file, the ``.events.jsonl`` file, or their common stem."""
        p = Path(path).expanduser()
        if p.name.endswith(EVENTS):
            stem = p.with_name(p.name[: -len(EVENTS)])
        elif p.suffix == ".sql" or p.name.endswith(EXPECTED):
            stem = p.with_name(p.name[: -len(EXPECTED)] if p.name.endswith(EXPECTED) else p.stem)
        else:
            stem = p
        sql_path, ev_path, exp_path = (stem.with_name(stem.name + s) for s in (".sql", EVENTS, EXPECTED))
        if not sql_path.exists() and stem.parent == Path("."):
            from .. import scenarios          # a bare name: a scenario shipped with the package
            if (scenarios.folder() / f"{stem.name}.sql").exists():
                return cls.load(scenarios.path(stem.name))
        for f in (sql_path, ev_path):
            if not f.exists():
                from .. import scenarios
                raise StreamSqlError(f"scenario {stem}: {f} not found; a path to NAME.sql and NAME.events.jsonl, "
                                     f"or one of the scenarios shipped with streamsql: {', '.join(scenarios.names())}")
        expected = None
        if exp_path.exists():
            expected = []
            for n, line in enumerate(exp_path.read_text().splitlines(), 1):
                if line.strip():
                    try:
                        expected.append(json.loads(line))
                    except ValueError as e:
                        raise EventsFileError(f"{exp_path}:{n}: not a JSON object: {e}") from None
        return cls(stem.name, sql_path.read_text(), read_events(ev_path), expected, stem)


class ScenarioPlayer:
    """Runs a scenario's statements in a fresh workbench and injects its events on demand.
    Steps are the scenario's event line numbers (1-based, blank lines not counted); going back
    replays from the start in a new workbench."""

    def __init__(self, scenario: Scenario | str | Path, *, engine: str = "spark", master: str | None = None,
                 buckets: int = 1, on_spark_start=None):
        self.scenario = scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)
        self.engine, self.master, self.buckets = engine, master, buckets
        self.on_spark_start = on_spark_start
        self.wb = None
        self.q = None
        self._listeners: list = []
        self._start()

    def _start(self) -> None:
        from ..engine.workbench import Workbench
        if self.wb is not None:
            self.wb.close()
        wb = Workbench(None, engine=self.engine, master=self.master, buckets=self.buckets,
                       on_spark_start=self.on_spark_start)
        try:
            results = wb.execute(self.scenario.sql)
        except Exception:
            wb.close()
            raise
        qs = [r.query for r in results if r.query is not None]
        if len(qs) != 1:
            wb.close()
            raise SqlError(f"scenario {self.scenario.name} must end with exactly one SELECT STREAM query "
                           f"(found {len(qs)})")
        self.wb, self.q = wb, qs[0]
        self.base = wb.last_step
        self.pos = 0
        self.outcomes = []
        self.names: dict[str, str] = {}
        for ev in self.scenario.events:
            try:
                self.names.setdefault(wb.catalog.stream(ev.stream).name, ev.stream)
            except StreamSqlError:
                pass
        for f in list(self._listeners):
            f(self)

    def on_restart(self, f) -> None:
        """``f(player)`` after a restart (a new workbench and query: views must rebind)."""
        self._listeners.append(f)

    @property
    def total(self) -> int:
        """How many events the scenario has."""
        return len(self.scenario.events)

    def next_event(self) -> Event | None:
        """The event the next :meth:`step` injects, or None at the end."""
        return self.scenario.events[self.pos] if self.pos < self.total else None

    def step(self, wait: bool = True) -> "ScenarioPlayer":
        """Inject the next event."""
        return self.goto(self.pos + 1, wait=wait)

    def goto(self, k: int, wait: bool = True) -> "ScenarioPlayer":
        """Be just after step ``k`` (0: before the first event); ``wait``: until the query has
        processed it (a click does not wait: the views follow)."""
        k = max(0, min(int(k), self.total))
        if k < self.pos:
            self._start()
        if k > self.pos:
            events = [dataclasses.replace(e) for e in self.scenario.events[self.pos:k]]
            self.outcomes += self.wb.inject(events)
            self.pos = k
        if wait:
            self.q.wait()
        return self

    def restart(self) -> "ScenarioPlayer":
        """Start again from an empty workbench, before the first event."""
        self._start()
        return self

    # ------------------------------------------------------------------ results

    def _named_outcomes(self):
        out = []
        for o in self.outcomes:
            ev = dataclasses.replace(o.event, stream=self.names.get(o.event.stream, o.event.stream))
            out.append(dataclasses.replace(o, event=ev))
        return out

    def streams(self) -> list[str]:
        """The step table's stream columns: the query's inputs, then any other stream the events name."""
        names = [self.names.get(s, s) for s in self.q.plan.streams]
        for ev in self.scenario.events:
            if ev.stream not in names and ev.stream.upper() not in (n.upper() for n in names):
                names.append(ev.stream)
        return names

    def step_table(self) -> list[list[str]]:
        """The seed's step table up to the current step, named as the scenario file names streams."""
        return step_table(snapshot(self.q), self._named_outcomes(), self.base, self.streams())

    def lines(self, bounds: bool = False) -> list[dict]:
        """Replay output lines so far (the replay format of the semantics, section 5)."""
        return replay_lines(self.q, self.outcomes, self.base, bounds=bounds, stream_names=self.names)

    def check(self) -> tuple[bool | None, str]:
        """Whether the output so far is what ``NAME.expected.jsonl`` says up to this step."""
        exp = self.scenario.expected
        if exp is None:
            return None, "no expected output file"
        bounds = any("bound" in e for e in exp)
        want = [comparable(e) for e in exp if e.get("step", 0) <= self.pos]
        got = [comparable(x) for x in self.lines(bounds)]
        if got == want:
            return True, f"matches {self.scenario.name}{EXPECTED} up to step {self.pos}"
        for i, (g, w) in enumerate(zip(got, want)):
            if g != w:
                return False, f"differs from {self.scenario.name}{EXPECTED} at line {i + 1}: got {g}, expected {w}"
        return False, (f"differs from {self.scenario.name}{EXPECTED}: {len(got)} lines so far, "
                       f"expected {len(want)}")

    def close(self) -> None:
        """Close the player's workbench (its queries stop)."""
        if self.wb is not None:
            self.wb.close()
