import createClient from 'openapi-fetch';
import { useInfiniteQuery } from '@tanstack/react-query';
import type { paths } from './schema';

/** A problem+json answer as the API words it. */
export interface Problem {
  status: number;
  title: string;
  code: string;
  detail?: string;
  errors?: { path: string; message: string }[];
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

/** The API's answer to a call the typed client cannot make (a multipart upload, a download), as a ProblemError when it failed. */
export async function problemOf(response: Response): Promise<ProblemError> {
  const body = (await response.json().catch(() => ({}))) as Partial<Problem>;
  return new ProblemError({
    status: response.status,
    title: body.title ?? response.statusText,
    code: body.code ?? 'UNKNOWN',
    detail: body.detail,
    errors: body.errors,
  });
}

/** The data of an answer, or a ProblemError with the API's title and code. */
export function dataOr<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.error !== undefined || (answer.data === undefined && answer.response.status !== 204)) {
    const problem = (answer.error ?? {}) as Partial<Problem>;
    throw new ProblemError({
      status: answer.response.status,
      title: problem.title ?? answer.response.statusText,
      code: problem.code ?? 'UNKNOWN',
      detail: problem.detail,
      errors: problem.errors,
    });
  }
  return answer.data as T;
}

/** A fetch with the signed-in user's token, for what the typed client does not cover (uploads, downloads, streams). */
export function authorizedFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.set('authorization', `Bearer ${token}`);
  return fetch(url, { ...init, headers });
}

/** A list paged with the API's cursors: the items so far, and a way to load the next page while there is one. */
export function usePagedList<T>(key: unknown[], fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>, enabled = true) {
  const query = useInfiniteQuery({
    queryKey: key,
    enabled,
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => fetchPage(pageParam),
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  return {
    items: query.data?.pages.flatMap((page) => page.items) ?? [],
    error: query.error,
    isLoading: query.isLoading,
    hasMore: query.hasNextPage,
    loadingMore: query.isFetchingNextPage,
    loadMore: () => void query.fetchNextPage(),
    refetch: query.refetch,
  };
}

/** Saves a downloaded answer as a file: the browser's own download, from the bytes the API sent. */
export async function download(url: string, fallbackName: string): Promise<void> {
  const response = await authorizedFetch(url);
  if (!response.ok) throw await problemOf(response);
  const name = /filename="?([^";]+)"?/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? fallbackName;
  const link = document.createElement('a');
  link.href = URL.createObjectURL(await response.blob());
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10000);
}
