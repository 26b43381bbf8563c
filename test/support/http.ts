/** A thin fetch wrapper for tests: JSON in, status + parsed JSON + headers out. */
export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export function apiClient(baseUrl: string, key?: string) {
  return async function call<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      redirect: 'manual',
      headers: {
        ...(key === undefined ? {} : { Authorization: `Bearer ${key}` }),
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      // Non-JSON bodies (event streams, HTML) are returned as text.
    }
    return { status: response.status, body: parsed as T, headers: response.headers };
  };
}

export type ApiCall = ReturnType<typeof apiClient>;
