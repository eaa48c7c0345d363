import { saveMessage } from '../../../dev-inbox/save-message.ts';
import type { Logger } from '../../../logger.ts';
import type { OutgoingMail } from '../provider.ts';

/**
 * Saves a test-mode message into the dev inbox's folder (DEV_INBOX_DIR, set
 * by `npm run dev`) in the format the mail sink writes (the SendGrid v3 body,
 * core/dev-inbox/mailbox.ts), so a developer sees test sends beside live ones;
 * the inbox marks them `test` from their record. Never fails the send: the
 * folder is a convenience.
 */
export function captureToDevInbox(dir: string, logger: Logger) {
  return (mail: OutgoingMail, providerId: string): void => {
    const personalization = {
      to: mail.to,
      ...(mail.cc.length ? { cc: mail.cc } : {}),
      ...(mail.bcc.length ? { bcc: mail.bcc } : {}),
    };
    try {
      saveMessage(dir, {
        messageId: providerId,
        body: {
          personalizations: [personalization],
          from: mail.from,
          ...(mail.replyTo ? { reply_to: mail.replyTo } : {}),
          subject: mail.subject,
          content: [
            { type: 'text/plain', value: mail.text },
            { type: 'text/html', value: mail.html },
          ],
          ...(mail.attachments.length
            ? { attachments: mail.attachments.map((a) => ({ ...a, disposition: 'attachment' })) }
            : {}),
          ...(mail.categories.length ? { categories: mail.categories } : {}),
          custom_args: { email_id: mail.emailId },
        },
      });
    } catch (err) {
      logger.warn({ err, email_id: mail.emailId }, 'test message not saved to the dev inbox');
    }
  };
}
