/**
 * Where a cell's `%%streamsql` line is. IPython drops blank lines before a cell magic, whose
 * `%%` must then start its line; the rest of the cell is the magic's SQL.
 */
import { Text } from '@codemirror/state';

const CELL_MAGIC = /^%%streamsql(?:\s|$)/;
/** How many lines the search for the magic's line looks at. */
const MAX_LEADING_BLANK = 50;

/**
 * The 1-based number of the `%%streamsql` line of a document, or 0 when the document is not a
 * `%%streamsql` cell.
 */
export function magicLine(doc: Text): number {
  const last = Math.min(doc.lines, MAX_LEADING_BLANK);
  for (let n = 1; n <= last; n++) {
    const text = doc.line(n).text;
    if (text.trim() === '') {
      continue;
    }
    return CELL_MAGIC.test(text) ? n : 0;
  }
  return 0;
}
