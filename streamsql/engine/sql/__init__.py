"""The streamsql dialect: split a script into statements, parse them (sqlglot) and analyze
them into :mod:`streamsql.engine.plan` statements, with positions in every error."""
