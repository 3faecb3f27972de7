"""split_script: statements split on ';' outside strings, quoted identifiers and comments, each
with the position of its first character in the script."""
from streamsql.engine.sql import ScriptStatement, split_script


def parts(text):
    return [(s.sql, s.line, s.col) for s in split_script(text)]


def test_splits_on_semicolons_and_records_positions():
    text = "CREATE STREAM a (x INTEGER);\nSELECT STREAM * FROM a;\n  SELECT STREAM x FROM a"
    assert parts(text) == [
        ("CREATE STREAM a (x INTEGER)", 1, 1),
        ("SELECT STREAM * FROM a", 2, 1),
        ("SELECT STREAM x FROM a", 3, 3),
    ]


def test_semicolons_inside_strings_identifiers_and_comments_do_not_split():
    text = ("INSERT INTO s VALUES ('a;b', 'it''s;');\n"
            'SELECT STREAM "odd;name" FROM s -- trailing; comment\n'
            "WHERE x = 1 /* block; comment */;\n")
    got = parts(text)
    assert [g[0] for g in got] == [
        "INSERT INTO s VALUES ('a;b', 'it''s;')",
        'SELECT STREAM "odd;name" FROM s -- trailing; comment\nWHERE x = 1 /* block; comment */',
    ]
    assert [(g[1], g[2]) for g in got] == [(1, 1), (2, 1)]


def test_leading_comments_are_skipped_so_positions_point_at_the_statement():
    text = "-- scenario header; with a semicolon\n/* and; a block */\n   CREATE STREAM s (x INTEGER);"
    assert parts(text) == [("CREATE STREAM s (x INTEGER)", 3, 4)]


def test_empty_statements_and_comment_only_pieces_are_dropped():
    assert parts(";;  ;\n-- only a comment;\n;") == []
    assert parts("") == []
    assert parts("SELECT 1;;;SELECT 2") == [("SELECT 1", 1, 1), ("SELECT 2", 1, 12)]


def test_doubled_quotes_stay_inside_strings_and_identifiers():
    text = "SELECT 'a'';b' AS \"x\"\";y\" FROM t; SELECT 2"
    assert parts(text) == [("SELECT 'a'';b' AS \"x\"\";y\" FROM t", 1, 1), ("SELECT 2", 1, 35)]


def test_unterminated_string_keeps_the_rest_as_one_statement():
    assert parts("SELECT 'abc; SELECT 2") == [("SELECT 'abc; SELECT 2", 1, 1)]


def test_dash_and_slash_that_are_not_comments_are_kept():
    assert parts("SELECT 4 - 2 / 1; SELECT 3") == [("SELECT 4 - 2 / 1", 1, 1), ("SELECT 3", 1, 19)]


def test_statement_object_fields():
    s = split_script("\n\n  SELECT 1")[0]
    assert s == ScriptStatement("SELECT 1", 3, 3)
