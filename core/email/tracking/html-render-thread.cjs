/**
 * Entry point of a render thread (html-render-pool.ts). The gateway registers
 * tsx in its main thread only (bin/run-ts.mjs), so the thread registers it
 * itself, then imports the TypeScript task.
 *
 * CommonJS on purpose: Piscina loads a thread's entry with `require()` first,
 * and Node 20.19+ would load an ES module entry there synchronously; a thread
 * stopped during that load (the pool closed at shutdown while its threads
 * were still starting) aborted the whole process ("v8::Module::IsGraphAsync
 * must be used on an instantiated module"). This entry requires nothing: tsx
 * and the task are imported asynchronously, which a stop interrupts cleanly.
 */
const task = import('tsx/esm/api').then(({ register }) => {
  register();
  return import('./html-render-task.ts');
});
// Awaited by every render: a failed import fails the render, never the thread.
task.catch(() => undefined);

module.exports = async function renderInThread(request) {
  return (await task).default(request);
};
