/**
 * JSON bodies up to 45 MB for send and bulk: one message may carry 30 MB of
 * attachments after base64 decoding, which is 40 MB encoded. Larger → 413.
 */
export const SEND_BODY_LIMIT = '45mb';
