/**
 * The memo key under which the gateway stores who triggered a run. Its own
 * dependency-free module because both sides import it: the gateway (outside
 * the sandbox) and the workflows (inside it).
 */
export const CALLER_MEMO_KEY = 'caller';
