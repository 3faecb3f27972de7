"""Parser rules for the streaming DDL: CREATE [OR REPLACE] STREAM / FOREIGN STREAM / TABLE /
VIEW / PUMP, DROP and ALTER PUMP.

sqlglot's CREATE grammar knows none of these objects in this form (foreign streams with
SERVER/OPTIONS, pumps with STARTED/STOPPED), so they are written here with its parser primitives
(``_match``, ``_parse_id_var``, ``_parse_csv``, ``_parse_select``) and plugged in as statement
parsers of :class:`streamsql.engine.sql.dialect.StreamParser`.
"""
from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import TokenType

from . import nodes as N


class DdlRules:
    """Mixin of :class:`StreamParser` (uses its ``fail``/``raise_error`` and sqlglot's primitives)."""

    def _parse_name(self, what: str):
        tok = self._curr
        name = self._parse_id_var(any_token=False)
        if name is None:
            self.fail(f"Syntax error: expected a {what} name", tok)
        if self._curr.token_type == TokenType.DOT:
            self.fail(f"Schema-qualified names are not supported ({what} names are single identifiers)", tok)
        return name

    def _parse_description(self):
        if self._match_text_seq("DESCRIPTION"):
            s = self._parse_string()
            if s is None:
                self.fail("Syntax error: expected a string after DESCRIPTION")
            return s
        return None

    def _parse_stream_create(self):
        create = self._prev
        replace = self._match_text_seq("OR", "REPLACE")
        if self._match_text_seq("FOREIGN"):
            if not self._match_text_seq("STREAM"):
                self.fail("Unsupported statement: only CREATE FOREIGN STREAM is supported", create)
            return self._parse_create_stream("FOREIGN STREAM", replace)
        if self._match_text_seq("STREAM"):
            return self._parse_create_stream("STREAM", replace)
        if self._match(TokenType.TABLE):
            return self._parse_create_stream("TABLE", replace)
        if self._match(TokenType.VIEW):
            return self._parse_create_view(replace)
        if self._match_text_seq("PUMP"):
            return self._parse_create_pump(replace)
        what = self._curr.text.upper() if self._curr else ""
        self.fail(f"Unsupported statement: CREATE {what}".rstrip()
                  + " (supported: CREATE [OR REPLACE] STREAM, FOREIGN STREAM, TABLE, VIEW, PUMP)",
                  create)

    def _parse_create_stream(self, kind: str, replace: bool):
        name = self._parse_name("table" if kind == "TABLE" else "stream")
        if self._curr is not None and self._curr.token_type == TokenType.ALIAS:
            self.fail(f"CREATE {kind} ... AS query is not supported: " + (
                "declare the table's columns and fill it with INSERT" if kind == "TABLE" else
                "declare the stream's columns and fill it with a pump (CREATE PUMP ... AS INSERT INTO ...)"))
        if not self._match(TokenType.L_PAREN):
            self.fail("Syntax error: expected '(' and a column list")
        columns = self._parse_csv(self._parse_column_definition)
        if not self._match(TokenType.R_PAREN):
            self.raise_error("Expecting )")
        server = options = description = None
        while True:
            if kind == "FOREIGN STREAM" and server is None and self._match_text_seq("SERVER"):
                server = self._parse_name("server")
            elif kind == "FOREIGN STREAM" and options is None and self._match_text_seq("OPTIONS"):
                options = self._parse_options()
            elif description is None and self._curr.text.upper() == "DESCRIPTION":
                description = self._parse_description()
            else:
                break
        if kind == "FOREIGN STREAM" and server is None:
            self.fail("Syntax error: a FOREIGN STREAM needs SERVER <name> [OPTIONS (...)]")
        return self.expression(N.CreateStreamStatement(
            this=name, kind=kind, columns=columns, replace=replace, server=server,
            options=options, description=description))

    def _parse_column_definition(self):
        name = self._parse_id_var(any_token=True)
        if name is None:
            self.fail("Syntax error: expected a column name")
        type_tok = self._curr
        if not type_tok or type_tok.token_type in (TokenType.COMMA, TokenType.R_PAREN, TokenType.L_PAREN):
            self.fail(f"Syntax error: expected a type for column '{name.name}'")
        self._advance()
        params = []
        if self._match(TokenType.L_PAREN):
            params = self._parse_csv(self._parse_number)
            if not self._match(TokenType.R_PAREN):
                self.raise_error("Expecting )")
        not_null = False
        if self._match_text_seq("NOT", "NULL"):
            not_null = True
        else:
            self._match(TokenType.NULL)
        node = N.ColumnDefinition(this=name, type=type_tok.text, params=params, not_null=not_null)
        node.meta["type_pos"] = type_tok.start
        return self.expression(node)

    def _parse_options(self):
        if not self._match(TokenType.L_PAREN):
            self.fail("Syntax error: expected '(' after OPTIONS")

        def option():
            key = self._parse_id_var(any_token=True)
            if key is None:
                self.fail("Syntax error: expected an option name")
            value = self._parse_string() or self._parse_number()
            if value is None:
                self.fail(f"Syntax error: expected a value for option {key.name}")
            return self.expression(N.Option(this=key, value=value))

        options = self._parse_csv(option)
        if not self._match(TokenType.R_PAREN):
            self.raise_error("Expecting )")
        return options

    def _parse_query_text(self):
        """A query (SELECT, WITH, VALUES, set operations) and its offsets in the text."""
        first = self._curr
        if not first:
            self.fail("Syntax error: expected a query")
        query = self._parse_select(nested=True, parse_subquery_alias=False)
        if query is None:
            self.fail("Syntax error: expected a query (SELECT ...)", first)
        return query, first.start, self._prev.end

    def _parse_create_view(self, replace: bool):
        name = self._parse_name("view")
        columns = None
        if self._curr.token_type == TokenType.L_PAREN:
            columns = self._parse_wrapped_csv(lambda: self._parse_id_var(any_token=True))
        description = self._parse_description()
        if not self._match(TokenType.ALIAS):
            self.fail("Syntax error: expected AS and the view's query")
        query, start, end = self._parse_query_text()
        node = N.CreateViewStatement(this=name, columns=columns, query=query, replace=replace,
                                     description=description)
        node.meta.update(body_start=start, body_end=end)
        return self.expression(node)

    def _parse_create_pump(self, replace: bool):
        name = self._parse_name("pump")
        started = True
        if self._match_text_seq("STARTED"):
            started = True
        elif self._match_text_seq("STOPPED"):
            started = False
        description = self._parse_description()
        if not (self._match(TokenType.ALIAS) and self._match(TokenType.INSERT)
                and self._match(TokenType.INTO)):
            self.fail("Syntax error: expected AS INSERT INTO <stream> SELECT STREAM ...")
        target = self._parse_name("stream")
        columns = None
        if self._curr.token_type == TokenType.L_PAREN and self._next.token_type not in (
                TokenType.SELECT, TokenType.WITH, TokenType.L_PAREN):
            columns = self._parse_wrapped_csv(lambda: self._parse_id_var(any_token=True))
        query, start, end = self._parse_query_text()
        node = N.CreatePumpStatement(this=name, target=target, columns=columns, query=query,
                                     replace=replace, started=started, description=description)
        node.meta.update(body_start=start, body_end=end)
        return self.expression(node)

    def _parse_stream_drop(self):
        drop = self._prev
        foreign = self._match_text_seq("FOREIGN")
        kind = self._curr.text.upper() if self._curr else ""
        if kind not in ("STREAM", "TABLE", "VIEW", "PUMP") or (foreign and kind != "STREAM"):
            self.fail("Unsupported statement: DROP " + ("FOREIGN " if foreign else "") + kind
                      + " (supported: DROP STREAM, TABLE, VIEW, PUMP [IF EXISTS] name)", drop)
        self._advance()
        exists = self._match_text_seq("IF", "EXISTS")
        name = self._parse_name(kind.lower())
        return self.expression(N.DropStatement(this=name, kind=kind, exists=exists))

    def _parse_alter_pump(self):
        alter = self._prev
        if not self._match_text_seq("PUMP"):
            self.fail("Unsupported statement: only ALTER PUMP ... START|STOP is supported", alter)
        names = []
        while True:
            tok = self._curr
            name = self._parse_id_var(any_token=False)
            if name is None:
                self.fail("Syntax error: expected a pump name", tok)
            if self._match(TokenType.DOT):
                if not self._match(TokenType.STAR):
                    self.fail("Syntax error: expected <schema>.* or a pump name", tok)
                name = self.expression(exp.Column(this=exp.Star(), table=name))
            names.append(name)
            if not self._match(TokenType.COMMA):
                break
        if not self._match_texts(("START", "STOP")):
            self.fail("Syntax error: expected START or STOP")
        return self.expression(N.AlterPumpStatement(expressions=names, action=self._prev.text.upper()))
