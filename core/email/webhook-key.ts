import { createPublicKey, type KeyObject } from 'node:crypto';

/**
 * The Event Webhook's verification key as SendGrid shows it
 * (SENDGRID_WEBHOOK_PUBLIC_KEY: base64 of a DER SubjectPublicKeyInfo of an
 * EC P-256 key), for Node's native ECDSA verify; throws for anything else.
 */
export function sendgridVerificationKey(base64: string): KeyObject {
  const key = createPublicKey({ key: Buffer.from(base64, 'base64'), format: 'der', type: 'spki' });
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
    throw new Error('not an EC P-256 public key');
  return key;
}
