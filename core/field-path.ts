/**
 * A JSON pointer from ajv (`/attachments/0/filename`) as a client would name
 * the field (`attachments[0].filename`), optionally with a child appended
 * (ajv reports a missing property on its parent's path). Shared by the email
 * core's and the workflow trigger's validation messages.
 */
export function fieldPath(instancePath: string, extra?: string): string {
  const parts = instancePath.split('/').filter(Boolean);
  if (extra !== undefined) parts.push(extra);
  return parts.reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '');
}
