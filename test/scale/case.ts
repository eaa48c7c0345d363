import type { CaseResult } from '../support/case-runner.ts';
import type { ScaleStack } from './stack.ts';

/** One check of the scale suite, run against the shared two-gateway, two-worker stack. */
export interface ScaleCase {
  name: string;
  run(stack: ScaleStack): Promise<CaseResult>;
}
