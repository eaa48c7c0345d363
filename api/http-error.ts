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
