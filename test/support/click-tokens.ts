import { createHmac } from 'node:crypto';

/** A token of the unreleased first format, 0x01 ‖ email id ‖ URL, signed: refused (click-token.ts). */
export function firstFormatToken(secret: string, emailId: string, url: string): string {
  const key = createHmac('sha256', secret).update('mailroom click-token v1').digest();
  const payload = Buffer.concat([
    Buffer.from([0x01]),
    Buffer.from(emailId.replace(/-/g, ''), 'hex'),
    Buffer.from(url, 'utf8'),
  ]);
  const mac = createHmac('sha256', key).update(payload).digest().subarray(0, 16);
  return `${payload.toString('base64url')}.${mac.toString('base64url')}`;
}
