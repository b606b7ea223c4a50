// A fetch for a client under test that records what the client asked and what came back.

/** One request: its URL as it was made, then its status and Retry-After once answered (unset until then). */
export interface ObservedCall {
  url: string;
  status?: number;
  retryAfter?: string | null;
}

/** The global fetch, recording each call in `calls` in the order they were made. */
export function observedFetch(): { fetch: typeof fetch; calls: ObservedCall[] } {
  const calls: ObservedCall[] = [];
  return {
    calls,
    fetch: async (input, init) => {
      const call: ObservedCall = { url: String(input instanceof Request ? input.url : input) };
      calls.push(call);
      const res = await fetch(input, init);
      call.status = res.status;
      call.retryAfter = res.headers.get('retry-after');
      return res;
    },
  };
}
