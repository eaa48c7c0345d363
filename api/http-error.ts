/** An error the gateway itself raises with a given HTTP status; answered `{ success: false, error: message }`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** 415: a body that is not JSON (the body parser's answer and the error handler's, one message). */
export const UNSUPPORTED_MEDIA_TYPE = 'unsupported content type. use application/json.';
