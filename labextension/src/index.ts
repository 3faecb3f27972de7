/**
 * streamsql's JupyterLab 4 extension: the SQL in `%%streamsql` cells is highlighted as SQL, and
 * the position of a SQL error that such a cell printed is marked in its editor.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import {
  EditorExtensionRegistry,
  IEditorExtensionRegistry,
  IEditorLanguageRegistry
} from '@jupyterlab/codemirror';

import { INotebookTracker } from '@jupyterlab/notebook';

import { cellMagicExtension } from './cellmagic';
import { followNotebooks } from './errors';
import { STREAMSQL_MIME, streamsqlLanguage } from './language';

/**
 * The language, registered with JupyterLab: `streamsql` code blocks in Markdown cells and any
 * editor whose MIME type is text/x-streamsql use it.
 */
const languagePlugin: JupyterFrontEndPlugin<void> = {
  id: 'streamsql-labextension:language',
  description: "streamsql's SQL dialect as an editor language.",
  autoStart: true,
  requires: [IEditorLanguageRegistry],
  activate: (app: JupyterFrontEnd, languages: IEditorLanguageRegistry) => {
    languages.addLanguage({
      name: 'streamsql',
      displayName: 'StreamSQL',
      alias: ['StreamSQL'],
      mime: STREAMSQL_MIME,
      load: async () => streamsqlLanguage
    });
  }
};

/** `%%streamsql` cells highlighted as SQL (src/cellmagic.ts). */
const cellMagicPlugin: JupyterFrontEndPlugin<void> = {
  id: 'streamsql-labextension:cell-magic',
  description: 'The SQL of %%streamsql cells highlighted as SQL.',
  autoStart: true,
  requires: [IEditorExtensionRegistry],
  activate: (app: JupyterFrontEnd, extensions: IEditorExtensionRegistry) => {
    extensions.addExtension({
      name: 'streamsql-labextension:cell-magic',
      factory: options =>
        EditorExtensionRegistry.createImmutableExtension(cellMagicExtension(options.model))
    });
  }
};

/** The position of a `%%streamsql` cell's SQL error marked in its editor (src/errors.ts). */
const sqlErrorPlugin: JupyterFrontEndPlugin<void> = {
  id: 'streamsql-labextension:sql-errors',
  description: "The position of a %%streamsql cell's SQL error marked in its editor.",
  autoStart: true,
  requires: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker) => {
    followNotebooks(tracker);
  }
};

export default [languagePlugin, cellMagicPlugin, sqlErrorPlugin];
