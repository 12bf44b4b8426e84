// Annals' JavaScript client: the routes a chat host in a browser (the SillyTavern extension)
// or in Node uses, over `fetch`. ESM, no dependencies; types in JSDoc (checked by editors and
// `tsc --checkJs`). Each method is one operation of GET /v1/openapi.json, named by its
// operationId in OPERATIONS; tests/unit/test_js_client.py fails when the document changes
// under one of them (method, path, parameters), and drives this file against a real
// `annals serve` (tests/e2e/test_js_client.py).

/**
 * @typedef {{seq: number, role: "user"|"assistant"|"system", content: string,
 *            speaker?: string, at?: string}} MessageIn
 * @typedef {{role: "user"|"assistant", content: string}} RecentTurn
 * @typedef {{session: string, from_seq: number}} InContext
 * @typedef {{query: string, window?: string, recent?: RecentTurn[], max_cards?: number,
 *            now?: string, in_context?: InContext, trace_lang?: "en"|"zh"}} HookRequest
 * @typedef {{additional_context: string, core_context: string|null, recalled_ids: string[],
 *            injected: boolean, verdict: string, trace: string[]}} HookAnswer
 * @typedef {{lease: string, expires_at: string, session: string, seq_from: number,
 *            seq_to: number, request: {messages: {role: string, content: string}[],
 *            response_format: object, temperature: number, max_tokens: number}}} ReadingTask
 * @typedef {{lease: string, read_by: string, events: number, facts: number,
 *            reasons: string[]}} ReadingResult
 */

/** operationId → [method, path], as GET /v1/openapi.json names them. */
export const OPERATIONS = Object.freeze({
  health: ["GET", "/v1/health"],
  put_messages: ["PUT", "/v1/spaces/{space}/sessions/{session}/messages"],
  delete_message: ["DELETE", "/v1/spaces/{space}/sessions/{session}/messages/{seq}"],
  hook_recall: ["POST", "/v1/spaces/{space}/hook/recall"],
  deliveries: ["POST", "/v1/spaces/{space}/deliveries"],
  list_events: ["GET", "/v1/spaces/{space}/events"],
  list_profiles: ["GET", "/v1/spaces/{space}/profiles"],
  reading_tasks: ["GET", "/v1/spaces/{space}/reading"],
  reading_answer: ["POST", "/v1/spaces/{space}/reading/{lease}"],
  extract: ["POST", "/v1/spaces/{space}/extract"],
});

// A chat file's name as a session id: the rule of `annals import`
// (chalicelib.domain.models.session_id_from_file_name) and of the web importer
// (chalicelib/web/importer.js `sessionName`), run over the same table by the tests
// (tests/data/session_names.json). It is written again here because the extension is
// installed into SillyTavern, apart from Annals' web app, and cannot import from it.
const SESSION_CHARS = 128;
const SESSION_BYTES = 256;

/** "Mika - 2026-11-24@20h05m00s.jsonl" → "Mika-2026-11-24@20h05m00s".
 * @param {string} fileName @returns {string} */
export function sessionName(fileName) {
  const stem = String(fileName).replace(/\.[^.]+$/, "").normalize("NFC");
  const dashed = stem.replace(/[^\p{L}\p{M}\p{N}_.:@-]+/gu, "-").replace(/-{2,}/g, "-")
    .replace(/^-+|-+$/g, "");
  const encoder = new TextEncoder();
  let id = "";
  let count = 0;
  let bytes = 0;
  for (const ch of dashed) {  // code points, as Python counts them
    bytes += encoder.encode(ch).length;
    if (count === SESSION_CHARS || bytes > SESSION_BYTES) break;
    id += ch;
    count += 1;
  }
  id = id.replace(/-+$/, "");
  return id.replace(/\./g, "") ? id : "imported";
}

/** A character's name as a space id (ASCII letters, digits and _ . : @ -): other ASCII
 * characters become "-"; a name in another script is written as IDNA punycode, by the
 * browser's own URL parser (阿澈 → "xn--ehxv93f"), so it stays one space per name.
 * "chat" when nothing is left.
 * @param {string} name @returns {string} */
export function spaceName(name) {
  let plain = String(name).normalize("NFC").replace(/[^A-Za-z0-9_.:@\u0080-\u{10ffff}-]+/gu, "-")
    .replace(/^[-.]+|[-.]+$/g, "");
  if (/[^\x00-\x7f]/.test(plain)) {
    const label = plain.replace(/[.:@_]+/g, "-").replace(/^-+|-+$/g, "");
    try {
      plain = new URL(`http://${label}.invalid`).hostname.slice(0, -".invalid".length);
    } catch {
      plain = "";
    }
  }
  plain = plain.slice(0, 128).replace(/[-.]+$/, "");
  return /^[A-Za-z0-9_.:@-]+$/.test(plain) && plain.replace(/\./g, "") ? plain : "chat";
}

/** An answer other than 2xx: `status`, Annals' error `code` and `message`. */
export class AnnalsError extends Error {
  /** @param {number} status @param {string} code @param {string} message
   *  @param {number|null} retryAfter seconds (429, 503) */
  constructor(status, code, message, retryAfter = null) {
    super(`${status} ${code}: ${message}`);
    this.name = "AnnalsError";
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

export class AnnalsClient {
  /**
   * @param {{url: string, key: string, fetch?: typeof globalThis.fetch, timeoutMs?: number}} options
   *   `url`: the server (http://127.0.0.1:8765); `key`: an API key (a write key to store
   *   messages and report deliveries).
   */
  constructor({ url, key, fetch = globalThis.fetch, timeoutMs = 10000 }) {
    if (!url || !key) throw new TypeError("AnnalsClient needs a url and a key");
    this.url = url.replace(/\/+$/, "");
    this.key = key;
    this.fetch = fetch;
    this.timeoutMs = timeoutMs;
  }

  /**
   * One operation: path parameters filled (each URL-encoded), the query and the JSON body
   * sent, the JSON answer returned; AnnalsError for any other status, a TypeError or an
   * AbortError ("TimeoutError") when the server cannot be reached in time.
   * @param {keyof typeof OPERATIONS} operation
   * @param {Record<string, string|number>} [params]
   * @param {{query?: Record<string, string|number|undefined>, body?: unknown}} [options]
   */
  async call(operation, params = {}, { query, body } = {}) {
    const [method, template] = OPERATIONS[operation];
    let path = template.replace(/\{(\w+)\}/g, (_, name) => {
      if (params[name] === undefined) throw new TypeError(`${operation} needs ${name}`);
      return encodeURIComponent(String(params[name]));
    });
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query || {})) {
      if (value !== undefined) search.set(name, String(value));
    }
    if ([...search].length) path += `?${search}`;
    const headers = { Authorization: `Bearer ${this.key}` };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const send = this.fetch;  // called unbound: a browser's fetch refuses `this` = the client
    const response = await send(this.url + path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await response.text();
    const data = text ? JSON.parse(text) : null;
    if (!response.ok) {
      const error = (data && data.error) || {};
      const retry = response.headers.get("Retry-After");
      throw new AnnalsError(response.status, error.code || "error",
                            error.message || response.statusText,
                            retry === null ? null : Number(retry));
    }
    return data;
  }

  /** @returns {Promise<{status: string, version: string}>} */
  health() { return this.call("health"); }

  /** Store (or replace, by seq) messages of a session.
   * @param {string} space @param {string} session @param {MessageIn[]} messages */
  putMessages(space, session, messages) {
    return this.call("put_messages", { space, session }, { body: { messages } });
  }

  /** @param {string} space @param {string} session @param {number} seq */
  deleteMessage(space, session, seq) {
    return this.call("delete_message", { space, session, seq });
  }

  /** What to remember before the next model call.
   * @param {string} space @param {HookRequest} request @returns {Promise<HookAnswer>} */
  hookRecall(space, request) {
    return this.call("hook_recall", { space }, { body: request });
  }

  /** After a reply went out: the ids it injected (they rest in that window for a while).
   * @param {string} space @param {string} window @param {string[]} ids */
  deliveries(space, window, ids) {
    return this.call("deliveries", { space }, { body: { window, ids } });
  }

  /** The chronicle, a page at a time in time order (`next_cursor` for the next page).
   * @param {string} space
   * @param {{start?: string, end?: string, limit?: number, cursor?: string, status?: string,
   *          kind?: string}} [query] */
  listEvents(space, query = {}) {
    return this.call("list_events", { space }, { query });
  }

  /** The people of a space with their current facts. @param {string} space */
  listProfiles(space) {
    return this.call("list_profiles", { space });
  }

  /** Lease pending reading work as ready chat-completions requests (a write key).
   * @param {string} space @param {number} [limit] @returns {Promise<{tasks: ReadingTask[]}>} */
  readingTasks(space, limit = 1) {
    return this.call("reading_tasks", { space }, { query: { limit } });
  }

  /** A model's reply to a reading task, as it came.
   * @param {string} space @param {string} lease @param {string} answer
   * @returns {Promise<ReadingResult>} */
  readingAnswer(space, lease, answer) {
    return this.call("reading_answer", { space, lease }, { body: { answer } });
  }

  /** Read a space's pending sessions now (Annals' own reader): the events, or a job (202).
   * @param {string} space @param {string} [session] */
  extract(space, session) {
    return this.call("extract", { space }, { body: session ? { session } : {} });
  }
}
