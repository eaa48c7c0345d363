/**
 * Entry point of a render thread (html-render-pool.ts). The gateway registers
 * tsx in its main thread only (bin/run-ts.mjs), so the thread registers it
 * itself before loading the TypeScript task.
 */
import { register } from 'tsx/esm/api';

register();
const task = await import('./html-render-task.ts');

export default task.default;
