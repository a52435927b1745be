// The API client: every request carries the bearer token; the base is where
// the app mounted the API (the page's `chalie-api` meta tag).

const TOKEN_KEY = "chalie.token";
const base = document.querySelector('meta[name="chalie-api"]').content;

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** An API failure, with the server's message and code. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error ?? `the API answered ${status}`);
    this.status = status;
    this.code = body?.code;
  }
}

/** `method path` with an optional JSON body; the parsed answer, or null on 204. */
export async function request(method, path, body) {
  const headers = { Authorization: `Bearer ${token()}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(base + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 204) return null;
  const parsed = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed;
}

/**
 * Reads the SSE at `path`, calling `onEvent(name, data, id)` per event until
 * the stream ends. fetch, not EventSource: EventSource cannot send the token.
 */
export async function stream(path, onEvent, signal) {
  const response = await fetch(base + path, {
    headers: { Authorization: `Bearer ${token()}`, Accept: "text/event-stream" },
    signal,
  });
  if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => null));
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = { name: "", data: "", id: "" };
      for (const line of frame.split("\n")) {
        const colon = line.indexOf(":");
        if (colon <= 0) continue; // a comment (keep-alive) or a blank line
        const field = line.slice(0, colon);
        const text = line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") event.name = text;
        else if (field === "data") event.data += text;
        else if (field === "id") event.id = text;
      }
      if (event.name) onEvent(event.name, JSON.parse(event.data), event.id);
    }
  }
}
