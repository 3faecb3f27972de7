"""Names as the user wrote them. The engine keeps unquoted identifiers upper-cased; a statement
written back (a saved scenario's SQL, an events file's keys, a completion) spells each name as
it was first written, and quotes the names that need it."""
from __future__ import annotations

from sqlglot.errors import TokenError

from .dialect import tokenize


def written_names(sql: str) -> dict[str, str]:
    """The unquoted identifiers of ``sql``, by canonical (upper-case) form, as first written."""
    out: dict[str, str] = {}
    try:
        tokens = tokenize(sql)
    except TokenError:   # an odd statement text: names stay canonical
        return out
    for t in tokens:
        if t.text.isidentifier() and t.token_type.name not in ("STRING", "IDENTIFIER"):
            out.setdefault(t.text.upper(), t.text)
    return out


def names_in(sql: str) -> set[str]:
    """The names ``sql`` mentions, canonical (quoted ones exact, unquoted ones upper-cased)."""
    try:
        tokens = tokenize(sql)
    except TokenError:
        return set()
    return {t.text if t.token_type.name == "IDENTIFIER" else t.text.upper() for t in tokens}


def sql_name(name: str, spelled: dict[str, str] | None = None) -> str:
    """``name`` (canonical) as SQL text: as first written when unquoted, else in double quotes."""
    if name.isidentifier() and name == name.upper():
        return (spelled or {}).get(name, name)
    return '"' + name.replace('"', '""') + '"'


def json_name(name: str, spelled: dict[str, str]) -> str:
    """``name`` as a JSON key or stream name of an events file (resolved like an identifier)."""
    return spelled.get(name, name) if name == name.upper() else name
