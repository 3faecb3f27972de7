/**
 * The position of a `%%streamsql` cell's SQL error, marked in the cell's editor.
 *
 * The magic prints a SQL error as `SQL error: line L:C: message`, then the statement's line and a
 * caret under column C (streamsql.magics.magic.error_text; a traceback-free error output with
 * the same lines when StreamSql.stop_on_error is set). L and C count in the cell's SQL, the
 * lines after the `%%streamsql` line. The kernel's output is that text and nothing else, so this
 * reads it: when a code cell's outputs change (it ran, or a saved notebook was opened), its
 * editor gets the position as a wavy underline under the token at the caret and a tinted line,
 * the message as their tooltip; none when the outputs hold no SQL error. The mark is drawn only
 * where the cell's line is still the printed one (not after `{{name}}` interpolation changed it,
 * nor after an edit); it goes when that line is edited or the cell runs again.
 */
import { StateEffect, StateField, Text } from '@codemirror/state';
import { Decoration, DecorationSet, EditorView, WidgetType } from '@codemirror/view';
import { Cell, CodeCell } from '@jupyterlab/cells';
import { CodeMirrorEditor } from '@jupyterlab/codemirror';
import { ICellModel } from '@jupyterlab/cells';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import { magicLine } from './magicline';

/** What the magic prints: `SQL error: line L:C: message`, then `  <the line>` and the caret. */
const ERROR_LINE = /^SQL error: line (\d+):(\d+): (.*)$/m;
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

/** A SQL error's position in the cell's SQL, as printed. */
export interface ISqlError {
  line: number;
  col: number;
  message: string;
  /** The statement's line as printed above the caret, when it was. */
  source: string | null;
}

/** The first SQL error in an output's text, or null. */
export function parseSqlError(text: string): ISqlError | null {
  const clean = text.replace(ANSI, '');
  const m = ERROR_LINE.exec(clean);
  if (!m) {
    return null;
  }
  const after = clean.slice(m.index + m[0].length).split('\n');
  const source = after.length > 2 && after[1].startsWith('  ') && after[2].trim() === '^'
    ? after[1].slice(2)
    : null;
  return { line: Number(m[1]), col: Number(m[2]), message: m[3], source };
}

/** The SQL error among a code cell's outputs (stderr text or an error's traceback), or null. */
export function outputsSqlError(cell: ICellModel): ISqlError | null {
  if (cell.type !== 'code') {
    return null;
  }
  const outputs = (cell as CodeCell['model']).outputs;
  for (let i = 0; i < outputs.length; i++) {
    const o = outputs.get(i).toJSON() as { [key: string]: any };
    let text = '';
    if (o.output_type === 'stream' && o.name === 'stderr') {
      text = Array.isArray(o.text) ? o.text.join('') : String(o.text ?? '');
    } else if (o.output_type === 'error') {
      text = (o.traceback ?? []).join('\n');
    }
    const e = text ? parseSqlError(text) : null;
    if (e) {
      return e;
    }
  }
  return null;
}

/** The marked range: the token at the caret (empty at the end of a line), and the message. */
interface IMark {
  line: number;     // 1-based line of the document
  from: number;
  to: number;
  message: string;
}

/** Where an error lands in a `%%streamsql` cell's text; null if it does not fit that text. */
export function locate(doc: Text, e: ISqlError): IMark | null {
  const magic = magicLine(doc);
  const n = magic + e.line;
  if (!magic || e.line < 1 || n > doc.lines) {
    return null;
  }
  const line = doc.line(n);
  if (e.source !== null && line.text.trimEnd() !== e.source.trimEnd()) {
    return null;     // the text the kernel ran is not this one (interpolation, or an edit since)
  }
  const from = line.from + Math.min(Math.max(e.col - 1, 0), line.length);
  let to = from;
  const word = /[A-Za-z0-9_$]/;
  if (to < line.to && word.test(doc.sliceString(to, to + 1))) {
    while (to < line.to && word.test(doc.sliceString(to, to + 1))) {
      to++;
    }
  } else if (to < line.to) {
    to++;             // a bracket, an operator, a quote: that one character
  }
  return { line: n, from, to, message: e.message };
}

/** Sets (or, with null, clears) the marked SQL error of an editor. */
export const setSqlError = StateEffect.define<IMark | null>();

class CaretWidget extends WidgetType {
  constructor(readonly message: string) {
    super();
  }
  eq(other: CaretWidget): boolean {
    return other.message === this.message;
  }
  toDOM(): HTMLElement {
    const span = document.createElement('span');
    span.className = 'cm-streamsql-error-caret';
    span.title = this.message;
    return span;
  }
}

function decorations(doc: Text, mark: IMark): DecorationSet {
  const title = { title: `SQL error: ${mark.message}` };
  const line = doc.line(mark.line);
  const ranges = [Decoration.line({ class: 'cm-streamsql-error-line', attributes: title }).range(line.from)];
  ranges.push(mark.to > mark.from
    ? Decoration.mark({ class: 'cm-streamsql-error', attributes: title }).range(mark.from, mark.to)
    : Decoration.widget({ widget: new CaretWidget(title.title), side: 1 }).range(mark.from));
  return Decoration.set(ranges, true);
}

/** The editor's marked SQL error: mapped through edits, dropped when its line is edited. */
export const sqlErrorField = StateField.define<{ mark: IMark; deco: DecorationSet } | null>({
  create: () => null,
  update(value, tr) {
    for (const effect of tr.effects) {
      if (effect.is(setSqlError)) {
        value = effect.value ? { mark: effect.value, deco: decorations(tr.state.doc, effect.value) } : null;
      }
    }
    if (value && tr.docChanged) {
      const line = tr.startState.doc.line(value.mark.line);
      if (tr.changes.touchesRange(line.from, line.to)) {
        return null;
      }
      const from = tr.changes.mapPos(value.mark.from, 1);
      const mark = {
        line: tr.state.doc.lineAt(from).number,
        from,
        to: tr.changes.mapPos(value.mark.to, -1),
        message: value.mark.message
      };
      return { mark, deco: value.deco.map(tr.changes) };
    }
    return value;
  },
  provide: f => EditorView.decorations.from(f, v => (v ? v.deco : Decoration.none))
});

/** Marks (or clears) the SQL error of one code cell's editor from its outputs. */
async function markCell(cell: Cell): Promise<void> {
  await cell.ready;
  const editor = cell.editor;
  if (!(editor instanceof CodeMirrorEditor) || cell.isDisposed) {
    return;
  }
  const view = editor.editor;
  if (view.state.field(sqlErrorField, false) === undefined) {
    return;           // an editor without streamsql's extension
  }
  const e = outputsSqlError(cell.model);
  const mark = e ? locate(view.state.doc, e) : null;
  const current = view.state.field(sqlErrorField);
  if (!mark && !current) {
    return;
  }
  if (mark && current && mark.from === current.mark.from && mark.to === current.mark.to &&
      mark.message === current.mark.message) {
    return;
  }
  view.dispatch({ effects: setSqlError.of(mark) });
}

/** Follows a notebook's code cells: each one's SQL error marked when its outputs change. */
export function followNotebook(panel: NotebookPanel): void {
  const notebook = panel.content;
  const watched = new WeakSet<ICellModel>();
  const widgetOf = (model: ICellModel) => notebook.widgets.find(w => w.model === model);
  const update = (model: ICellModel) => {
    const widget = widgetOf(model);
    if (widget) {
      void markCell(widget);
    }
  };
  const watch = (model: ICellModel) => {
    if (model.type !== 'code' || watched.has(model)) {
      return;
    }
    watched.add(model);
    (model as CodeCell['model']).outputs.changed.connect(() => update(model));
    // the widget of a new cell exists once the notebook has handled the same change
    requestAnimationFrame(() => update(model));
  };
  void panel.context.ready.then(() => {
    const cells = notebook.model?.cells;
    if (!cells) {
      return;
    }
    for (const model of cells) {
      watch(model);
    }
    cells.changed.connect((_, change) => {
      if (change.type === 'add' || change.type === 'set') {
        change.newValues.forEach(watch);
      }
    });
  });
}

/** Follows every notebook the tracker sees. */
export function followNotebooks(tracker: INotebookTracker): void {
  tracker.forEach(followNotebook);
  tracker.widgetAdded.connect((_, panel) => followNotebook(panel));
}
