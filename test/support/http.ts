/** What a test reads from an HTTP answer: status, headers and the JSON body (or `{ raw }`). */
export interface HttpAnswer<Body = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: Body;
}

export interface HttpClient {
  request(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<HttpAnswer>;
  get(path: string, headers?: Record<string, string>): Promise<HttpAnswer>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<HttpAnswer>;
  delete(path: string, headers?: Record<string, string>): Promise<HttpAnswer>;
}

/**
 * A small client for a gateway under test, speaking real HTTP. Bodies that are
 * strings are sent as given (malformed JSON tests); anything else as JSON with
 * `content-type: application/json` unless the test sets its own.
 * `defaultHeaders` go with every request unless a request passes its own.
 */
export function httpClient(baseUrl: string, defaultHeaders: Record<string, string> = {}): HttpClient {
  async function request(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = defaultHeaders,
  ): Promise<HttpAnswer> {
    const init: RequestInit & { headers: Record<string, string> } = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      const hasType = Object.keys(init.headers).some((h) => h.toLowerCase() === 'content-type');
      if (!hasType) init.headers['content-type'] = 'application/json';
    }
    const res = await fetch(`${baseUrl}${path}`, init);
    const parsed = await answerBody(res);
    return { status: res.status, headers: res.headers, body: parsed };
  }
  return {
    request,
    get: (path, headers) => request('GET', path, undefined, headers),
    post: (path, body, headers) => request('POST', path, body, headers),
    delete: (path, headers) => request('DELETE', path, undefined, headers),
  };
}

/** A response's body as JSON, or `{ raw }` with the text when it is not JSON. */
export async function answerBody(res: Response): Promise<Record<string, unknown>> {
  const text = await res.text();
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { raw: text };
  }
}
