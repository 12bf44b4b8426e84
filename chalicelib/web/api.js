// The HTTP API, seen from the page: a bearer key, JSON in and out, errors as ApiError.
// URLs are relative to where the app is served (…/web/<version>/api.js → …/), so the same
// files work at http://127.0.0.1:8000/ and under an API Gateway stage (https://…/api/).

export const BASE = new URL('../../', import.meta.url);
const RETRIES = 2;  // a 503 means nothing was written: the same request may be sent again

export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

export class Api {
  constructor(key) {
    this.key = key;
    this.onUnauthorized = null;
    this.queue = Promise.resolve();
  }

  /** One request at a time: the local server (waitress threads around one Chalice app) can
   * hand a view another request's query or body when two arrive together. */
  request(method, path, options = {}) {
    const run = this.queue.then(() => this.send(method, path, options));
    this.queue = run.catch(() => undefined);
    return run;
  }

  async send(method, path, {body, query, as = 'json'} = {}) {
    const url = new URL(path.replace(/^\//, ''), BASE);
    for (const [name, value] of Object.entries(query || {})) {
      if (value !== null && value !== undefined && value !== '') url.searchParams.set(name, value);
    }
    const init = {method, headers: {Authorization: `Bearer ${this.key}`}, cache: 'no-store'};
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
    }
    for (let attempt = 0; ; attempt += 1) {
      let resp;
      try {
        resp = await fetch(url, init);
      } catch (err) {
        throw new ApiError(0, 'network', err.message);
      }
      if (resp.status === 503 && attempt < RETRIES) {
        const wait = Math.min(5, Number(resp.headers.get('Retry-After')) || 1);
        await new Promise((done) => setTimeout(done, wait * 1000));
        continue;
      }
      if (!resp.ok) {
        let error = {};
        try {
          error = (await resp.json()).error || {};
        } catch {
          // not JSON: keep the status text
        }
        const failure = new ApiError(resp.status, error.code || `http_${resp.status}`,
          error.message || resp.statusText, error.details);
        if (resp.status === 401 && this.onUnauthorized) this.onUnauthorized(failure);
        throw failure;
      }
      return as === 'text' ? resp.text() : resp.json();
    }
  }

  get(path, query) { return this.request('GET', path, {query}); }
  post(path, body = {}) { return this.request('POST', path, {body}); }
  put(path, body) { return this.request('PUT', path, {body}); }
  patch(path, body) { return this.request('PATCH', path, {body}); }
  delete(path) { return this.request('DELETE', path); }
}

/** /v1/spaces/{space}/… with every segment escaped. */
export function spacePath(space, ...rest) {
  return ['/v1/spaces', space, ...rest].map((part, i) => (i === 0 ? part : encodeURIComponent(part))).join('/');
}

/** The OpenAPI document (public): which optional routes this server has. */
export async function features() {
  try {
    const resp = await fetch(new URL('v1/openapi.json', BASE), {cache: 'no-store'});
    const doc = await resp.json();
    const paths = Object.keys(doc.paths || {});
    const has = (tail) => paths.some((p) => p.startsWith('/v1/spaces/{space}/') && p.endsWith(tail));
    return {threads: has('/threads'), entities: has('/entities'), graph: has('/graph'), forget: has('/forget'),
      profiles: has('/profiles')};
  } catch {
    return {threads: false, entities: false, graph: false, forget: false, profiles: false};
  }
}

/** The threads of a space (GET …/threads), [] where the server has none. */
export async function threadList(app) {
  if (!app.features.threads) return [];
  const data = await app.api.get(spacePath(app.space, 'threads'));
  return data.threads || [];
}

/** The entities of a space (GET …/entities), [] where the server has none. */
export async function entityList(app) {
  if (!app.features.entities) return [];
  const data = await app.api.get(spacePath(app.space, 'entities'));
  return data.entities || [];
}

/** Every event of a space (pages of 500), at most `cap`: the timeline's kinds (events and
 * notes) unless `kind` says otherwise ('summary', 'all'); `from` / `to` bound the time. */
export async function allEvents(api, space, {status = 'active', cap = 5000, kind = null, from = null, to = null} = {}) {
  const out = [];
  let cursor = null;
  do {
    const page = await api.get(spacePath(space, 'events'), {limit: 500, cursor, status, kind, from, to});
    out.push(...page.events);
    cursor = page.next_cursor;
  } while (cursor && out.length < cap);
  return {events: out, complete: !cursor};
}
