/**
 * Unauthenticated signup sends: what they may contain and how many each recipient and client
 * address may get.
 * Code outside this folder imports it from here (npm run layers enforces it).
 */
export { narrowSignupSend, withConfiguredVariables } from './signup-guard.ts';
export type { SignupPolicy } from './signup-guard.ts';
export { ensureRateLimitIndexes, createSignupLimits } from './signup-limits.ts';
export { clientNetwork } from './rate-limit-keys.ts';
