/**
 * streamsql's SQL as a CodeMirror 6 language: CodeMirror's SQL grammar (@codemirror/lang-sql)
 * with the dialect's own words (src/dialect.ts), and the highlighting that JupyterLab's theme
 * lacks for SQL (types and functions get the colour of Python's builtins).
 */
import { SQLDialect } from '@codemirror/lang-sql';
import {
  HighlightStyle,
  LanguageSupport,
  syntaxHighlighting
} from '@codemirror/language';
import { tags as t } from '@lezer/highlight';

import { FUNCTIONS, KEYWORDS, TYPES } from './dialect';

/** The MIME type under which the language is registered in JupyterLab. */
export const STREAMSQL_MIME = 'text/x-streamsql';

/**
 * The dialect: standard SQL's lexical rules ('...' strings with '' inside, "..." quoted
 * identifiers, -- and /* *\/ comments), with streamsql's keywords, types and functions.
 */
export const streamsqlDialect = SQLDialect.define({
  keywords: KEYWORDS,
  types: TYPES,
  builtin: FUNCTIONS
});

/**
 * Colours for the SQL tokens that JupyterLab's highlight style leaves plain: type names and
 * built-in functions, like Python's builtins (the theme's variables, so every theme works).
 */
const sqlExtras = HighlightStyle.define([
  { tag: t.typeName, color: 'var(--jp-mirror-editor-builtin-color)' },
  { tag: t.standard(t.name), color: 'var(--jp-mirror-editor-builtin-color)' },
  { tag: t.null, color: 'var(--jp-mirror-editor-keyword-color)', fontWeight: 'bold' }
]);

/**
 * The language support: the dialect's language only, none of lang-sql's keyword completion
 * (the kernel completes %%streamsql cells: streams, columns and keywords).
 */
export const streamsqlLanguage = new LanguageSupport(streamsqlDialect.language, [
  syntaxHighlighting(sqlExtras)
]);
