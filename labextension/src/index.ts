/**
 * streamsql's JupyterLab 4 extension: the SQL in `%%streamsql` cells is highlighted as SQL.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import {
  EditorExtensionRegistry,
  IEditorExtensionRegistry,
  IEditorLanguageRegistry
} from '@jupyterlab/codemirror';

import { cellMagicExtension } from './cellmagic';
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

export default [languagePlugin, cellMagicPlugin];
