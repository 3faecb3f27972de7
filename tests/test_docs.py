"""The documentation site (docs/, Sphinx + MyST-NB): it builds in strict mode (warnings are errors:
broken links and references, undocumented public API members, engine-made step tables that
disagree with their scenarios), the SQL reference names every function and statement the dialect
accepts (walked from the dialect's own tables, tests/dialect_walk.py), and no link in the README
or the docs leaves the project."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from dialect_walk import dialect_functions, dialect_statements, missing

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SQL_REFERENCE = DOCS / "sql-reference.md"
TUTORIALS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built once for this module exactly as scripts/docs.sh builds it."""
    out = tmp_path_factory.mktemp("html")
    doctrees = tmp_path_factory.mktemp("doctrees")
    r = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html",
                        "-d", str(doctrees), str(DOCS), str(out)],
                       cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"strict build failed:\n{r.stderr[-6000:]}"
    return out


# --------------------------------------------------------------------------- the build

def test_strict_build_has_every_page(site):
    pages = ["index", "getting-started", "concepts", "semantics", "sql-reference", "magics", "api", "cli", "glossary",
             "howto/record", "howto/files", "howto/sinks", "howto/cluster", "howto/workspaces", "engine", "native",
             "design", "benchmarks", "benchmarks-history", "reliability", "about", "tutorials/index"]
    pages += [f"tutorials/{t}" for t in TUTORIALS]
    absent = [p for p in pages if not (site / f"{p}.html").exists()]
    assert not absent, absent
    assert len(TUTORIALS) == 11


def test_tutorials_show_their_stored_outputs(site):
    """Not executed at build time: the outputs on the page are the ones saved in the notebook."""
    for name in TUTORIALS:
        nb = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())
        page = (site / "tutorials" / f"{name}.html").read_text()
        texts = ["".join(o["text"]) for c in nb["cells"] for o in c.get("outputs", [])
                 if o.get("output_type") == "stream" and "".join(o["text"]).strip()]
        assert texts, name
        first = texts[0].strip().splitlines()[0]
        assert _html_text(first) in page, (name, first)
        charts = sum(1 for c in nb["cells"] for o in c.get("outputs", [])
                     if "application/vnd.vegalite.v5+json" in o.get("data", {}))
        assert page.count("<svg") >= charts, (name, charts)


def test_the_site_has_a_how_to_section_a_glossary_and_every_operators_output_bound(site):
    index = (site / "index.html").read_text()
    assert "How-to" in index and all(f"howto/{p}.html" in index for p in ("record", "files", "sinks", "cluster",
                                                                          "workspaces"))
    glossary = (site / "glossary.html").read_text()
    for term in ("present", "stamp", "tie", "frontier", "output bound"):
        assert f'id="term-{term.replace(" ", "-")}"' in glossary, term
    semantics = (site / "semantics.html").read_text()
    table = semantics.split('id="output-bounds-operator-by-operator"', 1)[1].split("</table>", 1)[0]
    for op in ("UNION ALL", "GROUP BY", "OVER windows", "Window join", "Stream-table join", "ORDER BY", "T-sort",
               "DISTINCT", "Projection"):
        assert op in table, op


def test_semantics_page_shows_engine_made_step_tables(site):
    page = (site / "semantics.html").read_text()
    assert page.count('class="streamsql-steps') >= 10
    # seed 000's merge, as the engine computes it: P's 01:06 row is released at step 5
    assert re.search(r"<td>\s*<p>5</p>\s*</td>.*?01:10 bound.*?01:06 p2", page, re.S)


def test_sql_reference_errors_are_the_engines(site):
    page = (site / "sql-reference.html").read_text()
    for message in ["Cannot convert stream 'SHIPMENTS' to a table", "Cannot stream VALUES",
                    "Streaming aggregation requires at least one monotonic expression in GROUP BY clause",
                    "Streaming ORDER BY must start with monotonic expression"]:
        assert message in page, message


def test_api_reference_documents_every_public_name(site):
    """Everything ``streamsql`` and ``streamsql.widgets`` export (``__all__``) has an entry."""
    import streamsql
    import streamsql.widgets
    page = (site / "api.html").read_text()
    absent = [f"{m.__name__}.{n}" for m in (streamsql, streamsql.widgets) for n in m.__all__
              if f'id="{m.__name__}.{n}"' not in page]
    assert not absent, absent


def test_built_pages_load_and_link_nothing_outside_the_site(site):
    outside, broken = [], []
    for html in site.rglob("*.html"):
        for attr, url in _urls(html.read_text()):
            parts = urlsplit(url)
            if parts.scheme in ("data", "javascript") or url.startswith("#"):
                continue
            if parts.scheme or parts.netloc:
                outside.append(f"{html.relative_to(site)}: {attr}={url}")
                continue
            target = (html.parent / unquote(parts.path)).resolve() if parts.path else html
            if not target.exists():
                broken.append(f"{html.relative_to(site)}: {attr}={url}")
    assert not outside, outside[:20]
    assert not broken, broken[:20]


# --------------------------------------------------------------------------- links in the sources

_MD_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_URL = re.compile(r"\b(?:https?|ftp)://[^\s)>\]\"'`]+|\bmailto:[^\s)>\]]+")
_UP_PATH = re.compile(r"(?<![\w.])\.\./[\w./-]+")


def _sources() -> list[tuple[Path, str]]:
    out = [(ROOT / "README.md", (ROOT / "README.md").read_text())]
    out += [(p, p.read_text()) for p in sorted(DOCS.rglob("*.md")) if "_build" not in p.parts]
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        out.append((nb, "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")))
    return out


def _outside_links(path: Path, text: str) -> list[str]:
    bad = []
    for m in _URL.finditer(text):
        bad.append(f"{path.relative_to(ROOT)}: {m.group(0)}")
    for m in _MD_LINK.finditer(text):
        target = m.group(1)
        parts = urlsplit(target)
        if parts.scheme or parts.netloc:
            continue        # reported by _URL
        if not parts.path:
            continue        # an anchor on the same page
        resolved = (path.parent / unquote(parts.path)).resolve()
        if not resolved.is_relative_to(ROOT) or not resolved.exists():
            bad.append(f"{path.relative_to(ROOT)}: link to {target}")
    for m in _UP_PATH.finditer(text):
        if not (path.parent / m.group(0)).resolve().is_relative_to(ROOT):
            bad.append(f"{path.relative_to(ROOT)}: points outside the project: {m.group(0)}")
    return bad


def test_readme_docs_and_tutorials_link_only_inside_the_project():
    bad = [b for path, text in _sources() for b in _outside_links(path, text)]
    assert not bad, bad


@pytest.mark.parametrize("text", ["see [the rules](../outside/RULES.md)", "see `../outside/RULES.md`",
                                  "at https://spark.apache.org/docs", "[gone](no-such-page.md)"])
def test_the_link_check_catches_links_that_leave_the_project(text):
    assert _outside_links(ROOT / "README.md", text)


# --------------------------------------------------------------------------- the design page against the code

def _module_map_problems(design: str) -> list[str]:
    """What section 5 of the design page ("where each rule lives") says that the code does not
    hold: a module it names that does not exist, or a name it gives with a module that the module
    does not define."""
    import importlib
    section = design.split("## 5. Where each rule of the semantics lives", 1)[1]
    rows = [ln for ln in section.splitlines() if ln.startswith("| ") and not ln.startswith("| rule")]
    problems = [] if len(rows) >= 12 else [f"only {len(rows)} rows in the module map"]
    for row in rows:
        cell = row.rstrip().rstrip("|").rsplit("|", 1)[-1]
        for m in re.finditer(r"`(engine/[\w/]+\.py)`(?:\s*\(([^)]*)\))?", cell):
            rel = m.group(1)
            if not (ROOT / "streamsql" / rel).exists():
                problems.append(f"{rel} does not exist")
                continue
            module = importlib.import_module("streamsql." + rel[:-3].replace("/", ".").removesuffix(".__init__"))
            for name in re.findall(r"`([A-Za-z_][\w.]*)`", m.group(2) or ""):
                obj = module
                for part in name.split("."):
                    obj = getattr(obj, part, None)
                if obj is None:
                    problems.append(f"{rel} defines no {name}")
    return problems


def test_the_design_pages_module_map_names_what_the_code_defines():
    assert _module_map_problems((DOCS / "design.md").read_text()) == []


@pytest.mark.parametrize("old,new", [("`engine/operators/union.py`", "`engine/operators/merge.py`"),
                                     ("`union_tie`", "`tie_of_union`"), ("`TimeKey.end_expr`", "`TimeKey.end_sql`")])
def test_the_module_map_check_catches_a_module_or_name_the_code_does_not_have(old, new):
    text = (DOCS / "design.md").read_text()
    assert old in text
    assert _module_map_problems(text.replace(old, new))


# --------------------------------------------------------------------------- figures quoted once

#: facts measured once, by a benchmark, and quoted on the benchmarks page only; elsewhere the
#: text says what they are for and points there (the README, setup.sh and classdata.py each once
#: gave the class-data archive's saving, as 4 s, 3 s and 2 s + 1 s)
_MEASURED = {"class-data archive": r"(class-data|AppCDS|archive)[^.]*?\b\d+(\.\d+)? ?(s|ms|MiB)\b"}


def _texts_outside_the_benchmarks_page() -> list[tuple[Path, str]]:
    out = [(ROOT / "README.md", (ROOT / "README.md").read_text())]
    out += [(p, p.read_text()) for p in sorted(DOCS.rglob("*.md")) if "_build" not in p.parts and p.name != "benchmarks.md"]
    out += [(p, p.read_text()) for p in sorted((ROOT / "scripts").iterdir()) if p.is_file()]
    out += [(p, p.read_text()) for p in sorted((ROOT / "streamsql").rglob("*.py"))]
    return out


def test_measured_figures_are_quoted_once_on_the_benchmarks_page():
    bench = (DOCS / "benchmarks.md").read_text()
    for fact, pattern in _MEASURED.items():
        assert re.search(pattern, bench, re.S | re.I), f"the benchmarks page no longer gives the {fact}'s figures"
        again = [str(p.relative_to(ROOT)) for p, text in _texts_outside_the_benchmarks_page()
                 if re.search(pattern, text, re.I)]
        assert again == [], f"the {fact}'s figures are quoted again in {again}"


def test_the_figures_check_catches_a_second_quote():
    readme = "The set-up also builds a class-data archive, which takes about 4 s off every start."
    assert re.search(_MEASURED["class-data archive"], readme, re.I)


# --------------------------------------------------------------------------- benchmark results kept

#: a benchmark's result file named on a docs page by its path from the project's root; ``DATE``
#: stands for a run's date in the commands that write one
_RESULT = re.compile(r"docs/[\w./-]+?\.json\b")


def _result_citation_problems(pages: dict[str, str], files: set[str]) -> list[str]:
    """Every result file kept under docs/ is cited by a page, every cited one is kept, and none is
    named by a shortened path (``...-isolated.json``) that a reader cannot open."""
    cited = {m for text in pages.values() for m in _RESULT.findall(text) if "DATE" not in m}
    problems = [f"{f} is cited by no docs page" for f in sorted(files - cited)]
    problems += [f"{f} is cited but not in the project" for f in sorted(cited - files)]
    problems += [f"{page} names {m}, a shortened path" for page, text in pages.items()
                 for m in re.findall(r"\.\.\.[\w.-]*\.json", text)]
    return problems


def test_every_benchmark_result_is_cited_and_every_cited_one_is_kept():
    pages = {str(p.relative_to(ROOT)): p.read_text() for p in sorted(DOCS.rglob("*.md")) if "_build" not in p.parts}
    files = {str(p.relative_to(ROOT)) for p in DOCS.rglob("*.json") if "_build" not in p.parts}
    assert len(files) > 10 and "docs/benchmarks.md" in pages and "docs/benchmarks-history.md" in pages
    assert _result_citation_problems(pages, files) == []


def test_the_results_check_catches_an_uncited_file_a_missing_one_and_a_shortened_path():
    pages = {"docs/a.md": "`docs/benchmarks/x-1.json`, `docs/benchmarks/y-DATE.json` and `...-z.json`"}
    assert _result_citation_problems(pages, {"docs/benchmarks/x-1.json", "docs/benchmarks/w.json"}) == [
        "docs/benchmarks/w.json is cited by no docs page", "docs/a.md names ...-z.json, a shortened path"]
    assert _result_citation_problems(pages, set()) == [
        "docs/benchmarks/x-1.json is cited but not in the project", "docs/a.md names ...-z.json, a shortened path"]


# --------------------------------------------------------------------------- nothing read from outside

_OUTSIDE = re.compile(r"ROOT\.parent\b|\bparent\.parent\.parent\b|\.\./shared\b|['\"]/work/")


def test_no_test_script_or_benchmark_reads_outside_the_project():
    """The scenarios, seeds and checkers the tests and scripts use are the project's own copies."""
    files = [p for d in ("tests", "scripts", "benchmarks") for p in sorted((ROOT / d).iterdir())
             if p.is_file() and p.suffix in (".py", ".sh", "") and p.name != "test_docs.py"]
    bad = [f"{p.relative_to(ROOT)}:{i}" for p in files for i, line in enumerate(p.read_text().splitlines(), 1)
           if _OUTSIDE.search(line)]
    assert len(files) > 40 and bad == []


# --------------------------------------------------------------------------- SQL reference completeness

def test_the_walk_finds_the_dialects_functions_and_statements():
    """The walk itself reads what it should (so an empty walk cannot pass the completeness test)."""
    fns = dialect_functions()
    for name in ["COUNT", "SUM", "AVG", "FIRST_VALUE", "FLOOR", "CEIL", "STEP", "CAST", "SUBSTRING",
                 "TRIM", "POSITION", "COALESCE", "NULLIF", "CHAR_LENGTH"]:
        assert name in fns, name
    assert "GREATEST" not in fns          # sqlglot knows it; the dialect refuses it
    stmts = dialect_statements()
    for form in ["SELECT", "INSERT", "WITH", "CREATE STREAM", "CREATE FOREIGN STREAM", "CREATE TABLE",
                 "CREATE VIEW", "CREATE PUMP", "DROP STREAM", "DROP PUMP", "ALTER PUMP"]:
        assert form in stmts, form


def test_sql_reference_names_every_function_and_statement_of_the_dialect():
    assert missing(SQL_REFERENCE.read_text()) == []


@pytest.mark.parametrize("name", ["COALESCE", "LAST_VALUE", "STEP", "NVL", "CREATE FOREIGN STREAM", "ALTER PUMP",
                                  "DROP VIEW"])
def test_completeness_check_fails_when_the_reference_leaves_one_out(name):
    page = SQL_REFERENCE.read_text()
    cut = re.sub(r"(?<![A-Z0-9_])" + re.escape(name) + r"(?![A-Z0-9_])", "", page)
    assert missing(cut) == [name]


# --------------------------------------------------------------------------- helpers

class _Urls(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k in ("href", "src") and v and tag not in ("use",):
                self.found.append((k, v))


def _urls(html: str) -> list[tuple[str, str]]:
    p = _Urls()
    p.feed(html)
    return p.found


def _html_text(s: str) -> str:
    import html
    return html.escape(s, quote=False)


_DOCS_PAGE = re.compile(r"docs/[A-Za-z0-9_/.-]+?\.md")


def _missing_docs_pages(files: list[tuple[str, str]]) -> dict[str, str]:
    """The ``docs/<page>.md`` paths named in these texts that are not pages, each with the first
    file that names it."""
    named: dict[str, str] = {}
    for where, text in files:
        for m in _DOCS_PAGE.finditer(text):
            named.setdefault(m.group(0), where)
    return {page: where for page, where in named.items() if not (ROOT / page).is_file()}


def test_every_docs_page_the_package_names_exists():
    """An error message or docstring that sends a reader to ``docs/<page>.md`` names a page there
    is (a message once pointed to ``docs/cluster.md``, which had moved to ``docs/howto/``)."""
    files = [(str(p.relative_to(ROOT)), p.read_text()) for p in sorted((ROOT / "streamsql").rglob("*.py"))]
    assert sum(len(_DOCS_PAGE.findall(text)) for _, text in files) > 10
    assert _missing_docs_pages(files) == {}


def test_the_docs_page_check_catches_a_page_that_moved():
    text = 'raise ValueError("see docs/cluster.md")'
    assert _missing_docs_pages([("x.py", text)]) == {"docs/cluster.md": "x.py"}
    assert _missing_docs_pages([("x.py", text.replace("docs/", "docs/howto/"))]) == {}


# --------------------------------------------------------------------------- references a reader can follow

#: what a reader of the project cannot follow: a folder beside the project, the file the rules
#: were first written in (the project's copy is docs/semantics.md), numbered issues and invariants
_UNFOLLOWABLE = re.compile(r"\.\./shared\b|\bSEMANTICS\.md\b|\b(?:[Ii]ssue|ISSUE|[Ii]nvariant|INVARIANT) #?\d")
_TEXT_SUFFIXES = {".py", ".sql", ".js", ".css", ".md", ".txt", ".sh", ".toml", ".cfg", ".ini", ".json", ".jsonl"}


def _unfollowable(path: str, text: str) -> list[str]:
    return [f"{path}:{i}: {m.group(0)}" for i, line in enumerate(text.splitlines(), 1)
            for m in _UNFOLLOWABLE.finditer(line)]


def test_code_tests_and_benchmarks_cite_only_what_a_reader_can_open():
    """No module, docstring, comment or scenario in streamsql/, tests/ or benchmarks/ (nor the
    README and docs pages) sends a reader to the folder beside the project, to the file the rules
    were first written in, or to a numbered issue or invariant: they cite a section of docs/semantics.md, a docs page, or say the rule.
    The seeds (tests/seeds) are source documents, quoted as they are."""
    files = [p for d in ("streamsql", "tests", "benchmarks") for p in sorted((ROOT / d).rglob("*"))
             if p.is_file() and p.suffix in _TEXT_SUFFIXES and "seeds" not in p.relative_to(ROOT).parts
             and "__pycache__" not in p.parts]
    files += [ROOT / "README.md"] + [p for p in sorted(DOCS.rglob("*.md")) if "_build" not in p.parts]
    assert len(files) > 300
    bad = [b for p in files for b in _unfollowable(str(p.relative_to(ROOT)), p.read_text(errors="replace"))]
    assert bad == []


#: joined when the test runs, so that neither this file nor its compiled form holds what it finds
@pytest.mark.parametrize("sep,parts", [("/", ("See ..", "shared", "SPARK_NOTES.md.")), (".", ("(SEMANTICS", "md 3.4)")),
                                       (" ", ("(issue", "13, item 5)")), (" ", ("Issue", "14 item 1:")),
                                       (" ", ("(invariant", "9)"))],
                         ids=["folder-beside", "rules-file", "issue", "Issue", "invariant"])
def test_the_reference_check_catches_what_a_reader_cannot_follow(sep, parts):
    assert _unfollowable("x.py", f'"""{sep.join(parts)}"""')


# --------------------------------------------------------------------------- environment variables

_ENV_READ = re.compile(r"""os\.(?:environ\.get|getenv)\(\s*([^,)]+)|os\.environ\[([^]]+)\](?!\s*=[^=])|([^\s(]+)\s+in\s+os\.environ\b(?!\.)""")


def _environment_reads(path: str, text: str) -> list[str]:
    """The variables this module reads from ``os.environ``, as written (a literal or an expression)."""
    return [next(g for g in m.groups() if g).strip() for m in _ENV_READ.finditer(text)]


def _variables_in_api_table(page: str) -> list[str]:
    section = page.split("## Settings from the environment", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `(STREAMSQL_[A-Z_]+)`", section, re.M)


def test_every_environment_variable_is_read_in_one_module_and_listed_in_one_table():
    """``engine/environment.py`` is the only module that reads a ``STREAMSQL_*`` variable (the
    others read only the standard ones, by name), each by one function, and docs/api.md's table
    lists exactly the ones it reads."""
    env_module = ROOT / "streamsql" / "engine" / "environment.py"
    elsewhere = {}
    for p in sorted((ROOT / "streamsql").rglob("*.py")):
        if p != env_module:
            for read in _environment_reads(str(p), p.read_text()):
                if "STREAMSQL_" in read or not re.fullmatch(r"""(["'])[A-Z_]+\1""", read):
                    elsewhere.setdefault(str(p.relative_to(ROOT)), []).append(read)
    assert elsewhere == {}
    source = env_module.read_text()
    read = re.findall(r"""_get\(\s*"(STREAMSQL_[A-Z_]+)\"""", source)
    named = dict(re.findall(r"""^([A-Z_]+) = "(STREAMSQL_[A-Z_]+)\"""", source, re.M))
    read += [named[n] for n in re.findall(r"_get\(\s*([A-Z_]+)\b", source)]
    assert len(read) == len(set(read)) >= 15, read        # one function each
    table = _variables_in_api_table((DOCS / "api.md").read_text())
    assert len(table) == len(set(table))
    assert set(table) == set(read)


@pytest.mark.parametrize("line", ['mode = os.environ.get("STREAMSQL_ENGINE", "auto")', "x = os.getenv(NAME)",
                                  "if 'STREAMSQL_LOCKDEP' in os.environ:", 'v = os.environ["STREAMSQL_JIT"]'])
def test_the_environment_check_catches_a_read_outside_its_module(line):
    assert _environment_reads("x.py", line)


def test_the_environment_check_lets_a_write_pass():
    assert _environment_reads("x.py", 'os.environ["STREAMSQL_FORK_CONNECT"] = "1"') == []


def test_the_benchmarks_page_fits_a_reading():
    """Today's figures in one page (the history apart): under 300 lines, the summary table first."""
    text = (ROOT / "docs" / "benchmarks.md").read_text()
    assert len(text.splitlines()) < 300
    assert text.index("## Today's figures") < text.index("\n## ", text.index("## Today's figures") + 5)


def _placeholders(text: str) -> list[str]:
    """Lines of a page (outside code blocks) that are one upper-case word the SQL dialect does not
    know: a placeholder a writer meant to fill (``FIGURES`` stood alone in reliability.md)."""
    from sqlglot.tokens import Tokenizer
    known = {k.upper() for k in Tokenizer.KEYWORDS} | {"ROWTIME"}
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and re.fullmatch(r"[A-Z][A-Z_]{3,}", line.strip()) and line.strip() not in known:
            out.append(line.strip())
    return out


def test_no_page_keeps_a_placeholder():
    pages = [ROOT / "README.md", *DOCS.rglob("*.md")]
    found = {str(p.relative_to(ROOT)): w for p in pages if (w := _placeholders(p.read_text()))}
    assert found == {}


@pytest.mark.parametrize("text, caught", [("a\n\nFINDINGS\n\nb", ["FINDINGS"]), ("ROWTIME\n: the time", []),
                                          ("```\nTODO_LIST\n```", []), ("SELECT\n", [])])
def test_the_placeholder_check_catches_a_lone_word_and_not_a_term(text, caught):
    assert _placeholders(text) == caught
