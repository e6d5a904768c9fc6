/** A small fetch wrapper for API tests: JSON in, status + parsed body + headers out. */
export interface HttpAnswer<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function call<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string>; raw?: RequestInit['body'] } = {},
): Promise<HttpAnswer<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: RequestInit['body'] | undefined = options.raw;
  if (options.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(options.body);
  }
  const answer = await fetch(`${baseUrl}${path}`, { method, headers, body, redirect: 'manual' });
  const text = await answer.text();
  let parsed: unknown = text;
  const type = answer.headers.get('content-type') ?? '';
  if (type.includes('json') && text) parsed = JSON.parse(text);
  return { status: answer.status, headers: answer.headers, body: parsed as T, text };
}

/** Asserts an answer is problem+json with the given status and code (jest expect). */
export function expectProblem(answer: HttpAnswer, status: number, code: string): void {
  expect({ status: answer.status, code: answer.body?.code }).toEqual({ status, code });
  expect(answer.headers.get('content-type')).toContain('application/problem+json');
  expect(answer.body).toEqual(expect.objectContaining({ type: expect.any(String), title: expect.any(String), detail: expect.any(String) }));
}
