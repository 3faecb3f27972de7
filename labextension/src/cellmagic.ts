/**
 * The SQL of a `%%streamsql` cell highlighted as SQL.
 *
 * Every CodeMirror editor that JupyterLab creates gets this extension (through the editor
 * extension registry). It does nothing unless the editor holds IPython code (a notebook or
 * console code cell) whose first non-blank line is the `%%streamsql` cell magic, which is
 * exactly when IPython passes the rest of the cell to the magic. Then, in a compartment of its
 * own, it puts streamsql's SQL language first (Prec.highest: the language JupyterLab set for the
 * cell, IPython, stays configured but is not used) and marks the magic's line, whose options
 * (`--name q`, `-o x`) are not SQL. The compartment is reconfigured only when the cell turns
 * into or out of a `%%streamsql` cell (the first line is typed or deleted, or the cell's MIME
 * type changes with the kernel), never on an ordinary keystroke.
 *
 * A `%streamsql` line magic, and every other cell, keep JupyterLab's own language.
 *
 * The extension also holds the cell's marked SQL error (src/errors.ts).
 */
import { Compartment, EditorState, Extension, Prec, Text } from '@codemirror/state';
import { Decoration, EditorView } from '@codemirror/view';
import { syntaxHighlighting } from '@codemirror/language';
import { classHighlighter } from '@lezer/highlight';
import { CodeEditor } from '@jupyterlab/codeeditor';

import { sqlErrorField } from './errors';
import { streamsqlLanguage } from './language';
import { magicLine } from './magicline';

/** The MIME type JupyterLab gives the code cells of an IPython kernel's notebooks and consoles. */
export const IPYTHON_MIME = 'text/x-ipython';

/** The magic's line, marked as a whole: its options are the magic's, not SQL. */
const magicLineMark = Decoration.mark({ class: 'cm-streamsql-magic' });
const magicDecorations = EditorView.decorations.compute(['doc'], state => {
  const n = magicLine(state.doc);
  if (!n) {
    return Decoration.none;
  }
  const line = state.doc.line(n);
  return Decoration.set([magicLineMark.range(line.from, line.to)]);
});

/** What a `%%streamsql` cell's editor gets. One value, so that it can be told apart. */
const SQL_CELL: Extension = [
  Prec.highest(streamsqlLanguage),
  // tok-keyword, tok-string, ...: stable class names beside the theme's generated ones
  syntaxHighlighting(classHighlighter),
  magicDecorations,
  EditorView.editorAttributes.of({ class: 'streamsql-sql-cell' })
];
const NOT_SQL: Extension = [];

/**
 * The extension for one editor. `model` is the editor's model: its MIME type tells whether the
 * editor holds IPython code (it changes when the notebook's kernel is known or changed).
 */
export function cellMagicExtension(model: CodeEditor.IModel): Extension {
  const compartment = new Compartment();
  const isSqlCell = (doc: Text) => model.mimeType === IPYTHON_MIME && magicLine(doc) > 0;
  return [
    compartment.of(isSqlCell(Text.of(model.sharedModel.getSource().split('\n'))) ? SQL_CELL : NOT_SQL),
    EditorState.transactionExtender.of(tr => {
      const wanted = isSqlCell(tr.newDoc) ? SQL_CELL : NOT_SQL;
      return compartment.get(tr.startState) === wanted
        ? null
        : { effects: compartment.reconfigure(wanted) };
    }),
    sqlErrorField
  ];
}
