/**
 * `npm run templates:preview`: renders every template with the sample data of
 * templates/samples.ts into preview/<id>.html and preview/<id>.txt (gitignored),
 * plus preview/index.html linking them. Open the index in a browser.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getTemplate, TEMPLATE_IDS } from './index.ts';
import { renderSample } from './samples.ts';

const outDir = resolve(fileURLToPath(new URL('../preview/', import.meta.url)));
mkdirSync(outDir, { recursive: true });

const escape = (value: string): string =>
  value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const rows: string[] = [];
for (const id of TEMPLATE_IDS) {
  const definition = getTemplate(id)!;
  const { subject, html, text } = renderSample(
    id,
    'https://mailroom.example/api/email/track?view_key=preview',
  );
  const htmlPath = join(outDir, `${id}.html`);
  const textPath = join(outDir, `${id}.txt`);
  writeFileSync(htmlPath, html);
  writeFileSync(textPath, text);
  console.log(htmlPath);
  console.log(textPath);
  rows.push(
    `<tr><td><code>${escape(id)}</code></td><td>${escape(subject)}</td>` +
      `<td>${definition.requiresAuth ? 'yes' : 'no'}</td>` +
      `<td><a href="${escape(id)}.html">HTML</a> &middot; <a href="${escape(id)}.txt">text</a></td></tr>`,
  );
}

const index = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Mailroom template preview</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem;color:#333}table{border-collapse:collapse}td,th{padding:.4rem .8rem;border-bottom:1px solid #ddd;text-align:left}</style>
</head>
<body>
<h1>Mailroom template preview</h1>
<p>Rendered with the sample data of <code>templates/samples.ts</code>. Re-run <code>npm run templates:preview</code> after editing a template.</p>
<table><thead><tr><th>Template</th><th>Default subject</th><th>Auth required</th><th>Preview</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody></table>
</body>
</html>
`;
const indexPath = join(outDir, 'index.html');
writeFileSync(indexPath, index);
console.log(indexPath);
