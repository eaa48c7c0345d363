import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { getTemplate } from '../../templates/index.ts';
import { WORKFLOWS } from './registry.ts';
import { SEARCH_ATTRIBUTES } from './search-attributes.ts';

/**
 * A registered workflow is complete (docs/workflows.md#adding-a-workflow):
 * its definition, its workflow exported under its type, its templates, its
 * test and its row in the docs. This walks the registry, so a workflow added
 * without one of them fails here.
 */
const root = new URL('../../', import.meta.url);
const exists = (path: string) => existsSync(new URL(path, root));
const workflowIndex = await readFile(new URL('workflows/index.ts', root), 'utf8');
const docs = await readFile(new URL('docs/workflows.md', root), 'utf8');
/** The docs table's row of a workflow, cell by cell. */
const docsRow = (name: string) =>
  docs
    .split('\n')
    .find((line) => line.startsWith(`| \`${name}\``))
    ?.split('|')
    .map((cell) => cell.trim());

describe('the workflow registry', () => {
  for (const def of Object.values(WORKFLOWS)) {
    describe(def.name, () => {
      it('has a definition with an input schema, a result schema and its search attributes', () => {
        assert.ok(exists(`core/workflows/${def.name}.input.ts`));
        assert.equal(def.input.type, 'object');
        assert.equal(def.result.type, 'object');
        for (const [field, key] of Object.entries(def.searchAttributes)) {
          assert.ok(Object.hasOwn(def.input.properties, field), `${field} is not an input field`);
          assert.ok(SEARCH_ATTRIBUTES.includes(key), `${key.name} is not registered on the namespace`);
        }
      });

      it('has its workflow, exported under its workflow type, and its test', () => {
        assert.ok(exists(`workflows/${def.name}.ts`));
        assert.ok(
          workflowIndex.includes(`export { ${def.workflowType} } from './${def.name}.ts';`),
          `workflows/index.ts does not export ${def.workflowType}`,
        );
        assert.ok(exists(`workflows/${def.name}.test.ts`));
      });

      it('names templates that exist', () => {
        for (const id of def.templates) {
          assert.ok(getTemplate(id), `no template ${id} in templates/index.ts`);
          assert.ok(exists(`templates/${id}/definition.ts`));
        }
      });

      it('is listed in docs/workflows.md with files that exist', () => {
        const row = docsRow(def.name);
        assert.ok(row, `no row for ${def.name} in docs/workflows.md`);
        const files =
          row
            .slice(2)
            .join(' ')
            .match(/`[\w./-]+\.ts`/g) ?? ([] as string[]);
        assert.ok(files.includes(`\`workflows/${def.name}.ts\``));
        for (const file of files) assert.ok(exists(file.slice(1, -1)), `${file} does not exist`);
        for (const id of def.templates) assert.ok(row[5]?.includes(`\`${id}\``), `${id} not in the docs`);
      });
    });
  }
});
