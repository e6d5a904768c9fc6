import createClient from 'openapi-fetch';
import type { paths } from './schema';

/** A problem+json answer as the API words it. */
export interface Problem {
  status: number;
  title: string;
  code: string;
  detail?: string;
}

export class ProblemError extends Error {
  constructor(readonly problem: Problem) {
    super(`${problem.title} (${problem.code})`);
  }
}

/** The platform's API, typed from its own OpenAPI document; the token is kept in this tab's session storage. */
export const TOKEN_KEY = 'opsflow.token';
export const api = createClient<paths>({ baseUrl: '' });
api.use({
  onRequest({ request }) {
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
});

/** The data of an answer, or a ProblemError with the API's title and code. */
export function dataOr<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.error !== undefined || answer.data === undefined) {
    const problem = (answer.error ?? {}) as Partial<Problem>;
    throw new ProblemError({ status: answer.response.status, title: problem.title ?? answer.response.statusText, code: problem.code ?? 'UNKNOWN', detail: problem.detail });
  }
  return answer.data;
}
