// The layering `npm run check` enforces (dependency-cruiser). Dependencies point one
// way: api/ and activities/ use core/; the worker runs workflows/ with activities/;
// nothing in core/ knows who uses it. Tests and the bench may import anything but
// must not form cycles either.

const TEST = '(^|/)[^/]+\\.test\\.ts$|^test/|^bench/';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle makes load order matter and the layers meaningless.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-points-nowhere-up',
      severity: 'error',
      comment: 'core/ is shared domain code: it imports nothing from the layers that use it.',
      from: { path: '^core/', pathNot: TEST },
      to: { path: '^(api|worker|activities|workflows|bench|test)/' },
    },
    {
      name: 'activities-not-api-or-workflows',
      severity: 'error',
      comment:
        'Activities run the email core for workflows; they never reach into the gateway or workflow code.',
      from: { path: '^activities/', pathNot: TEST },
      to: { path: '^(api|workflows)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'workflows-stay-in-the-sandbox',
      severity: 'error',
      comment:
        "Workflow code runs in Temporal's deterministic sandbox: at run time it imports only workflows/, " +
        "Temporal's workflow API and the dependency-free data eslint.config.js allows; anything else as types only.",
      from: { path: '^workflows/', pathNot: TEST },
      to: {
        dependencyTypesNot: ['type-only'],
        pathNot: [
          '^workflows/',
          '^core/identity\\.ts$',
          '^core/workflows/search-attributes\\.ts$',
          '^core/webhooks/delivery-workflow\\.ts$',
          '^core/workflows/scheduled-send\\.ts$',
          '^core/workflows/fairness\\.ts$',
          '^node_modules/@temporalio/(workflow|common)/',
        ],
      },
    },
    {
      name: 'api-not-worker-side',
      severity: 'error',
      comment: 'The gateway talks to Temporal by name; it never imports the worker, workflows or activities.',
      from: { path: '^api/', pathNot: TEST },
      to: { path: '^(worker|workflows|activities)/' },
    },
    {
      name: 'email-parts-through-their-entry',
      severity: 'error',
      comment:
        'Each part of the email core (core/email/<part>/) is used from outside through its index.ts, ' +
        'which names what the part offers; its other modules are its own business.',
      from: {
        path: '^(?!core/email/(send|records|tracking|suppressions|idempotency|signup)/)',
        pathNot: TEST,
      },
      to: {
        path: '^core/email/(send|records|tracking|suppressions|idempotency|signup)/',
        pathNot: '^core/email/[^/]+/index\\.ts$',
      },
    },
    {
      name: 'production-not-test-or-bench',
      severity: 'error',
      comment: 'Production code never imports test support or the bench.',
      from: { pathNot: TEST },
      to: { path: '^(test|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|preview|\\.data|infra/ferretdb)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
