import type { ScaleCase } from './case.ts';
import { idempotency } from './idempotency.ts';
import { replicaLoss } from './replica-loss.ts';
import { revocation } from './revocation.ts';
import { signupLimits } from './signup.ts';
import { tracking } from './tracking.ts';
import { welcomeRace } from './welcome.ts';

/** In order: the loss of a worker and a gateway last, as it leaves one of each. */
export const CASES: ScaleCase[] = [idempotency, welcomeRace, signupLimits, tracking, revocation, replicaLoss];
