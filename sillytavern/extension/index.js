// Annals inside SillyTavern (issue 38): every message of a chat is stored in Annals with a
// stable seq, edits / deletes / swipes follow; before each generation the hook's memories are
// injected with setExtensionPrompt and, once the reply came, reported as delivered; with
// "read with the chat's model" on, Annals' reading tasks run through SillyTavern's own model.
// Annals unreachable or the key wrong: the chat goes on as without the extension, one quiet
// notice, the writes wait in the browser (localStorage) and go out when Annals is back.

import { AnnalsClient, sessionName, spaceName } from "./annals-client.js";
import { buildPanel, renderChronicle, renderPeople, renderRecall } from "./panel.js";
import { Outbox, assignSeqs, counts, firstSeqInContext, toAnnals } from "./sync.js";

const MODULE = "annals";
const PROMPT_KEY = "annals_memory";
const DEFAULTS = Object.freeze({
  url: "http://127.0.0.1:8765", key: "", enabled: true, inject: true, depth: 4, role: 0,
  reading: false, spaces: {},
});
const HOOK_TIMEOUT_MS = 5000;  // a generation waits for the hook at most this long
const RETRY_MS = 30000;  // Annals unreachable: try the waiting writes again after this
const QUIET_MS = 45000;  // reading with the chat's model waits for this long a pause
const READ_TASKS = 2;  // reading tasks leased per quiet moment
const IN_CHAT = 1;  // extension_prompt_types.IN_CHAT: at `depth` messages from the end

const ctx = () => globalThis.SillyTavern.getContext();
const tr = (text) => ctx().translate(text);
const state = {
  outbox: new Outbox(globalThis.localStorage),
  known: new Set(),  // the seqs of the open chat Annals was sent (a delete is the difference)
  offline: false,
  lastRecall: null,
  pending: null,  // {space, window, ids}: injected, reported once the reply came
  retry: null,
  quiet: null,
  reading: false,
  panel: null,
};

function settings() {
  const all = ctx().extensionSettings;
  all[MODULE] = all[MODULE] || {};
  for (const [name, value] of Object.entries(DEFAULTS)) {
    if (all[MODULE][name] === undefined) all[MODULE][name] = structuredClone(value);
  }
  return all[MODULE];
}

function client(timeoutMs) {
  const s = settings();
  if (!s.url || !s.key) return null;
  return new AnnalsClient({ url: s.url, key: s.key, timeoutMs });
}

/** The character (or group) of the open chat, by name. */
function characterName() {
  const c = ctx();
  if (c.groupId) return (c.groups || []).find((g) => g.id === c.groupId)?.name || "group";
  return c.characters?.[c.characterId]?.name || c.name2 || "";
}

function currentSpace() {
  const name = characterName();
  return settings().spaces[name] || spaceName(name);
}

/** The open chat as a session: its file name by the importers' rule. */
function currentSession() {
  const id = ctx().getCurrentChatId?.() || ctx().chatId;
  return id ? sessionName(`${id}.jsonl`) : null;
}

// ------------------------------------------------------------------ capture

function chatMeta() {
  const meta = ctx().chatMetadata;
  meta[MODULE] = meta[MODULE] || {};
  return meta[MODULE];
}

/** Seqs for new messages, kept with the chat (its file holds `extra` and the metadata). */
function numberMessages() {
  if (assignSeqs(ctx().chat, chatMeta())) ctx().saveMetadataDebounced?.();
}

function queueMessage(index) {
  const s = settings();
  const session = currentSession();
  const message = ctx().chat[index];
  if (!s.enabled || !session || !counts(message)) return;
  numberMessages();
  state.outbox.put(currentSpace(), session, toAnnals(message));
  state.known.add(message.extra.annals_seq);
  flushSoon();
}

/** A chat opened: number its messages, send them all (Annals keeps what it has: a PUT of an
 * unchanged message changes nothing) and remember which seqs it holds. */
function openChat() {
  state.known = new Set();
  state.lastRecall = null;
  state.pending = null;
  ctx().setExtensionPrompt(PROMPT_KEY, "", IN_CHAT, 0);
  const session = currentSession();
  if (!session || !settings().enabled) return refreshPanel();
  numberMessages();
  const space = currentSpace();
  for (const message of ctx().chat) {
    if (!counts(message)) continue;
    state.outbox.put(space, session, toAnnals(message));
    state.known.add(message.extra.annals_seq);
  }
  flushSoon();
  refreshPanel();
}

/** SillyTavern says only the chat's new length: the deleted seqs are the ones missing. */
function onDeleted() {
  const session = currentSession();
  if (!session || !settings().enabled) return;
  const present = new Set(ctx().chat.filter(counts).map((m) => m.extra?.annals_seq));
  for (const seq of state.known) {
    if (!present.has(seq)) state.outbox.delete(currentSpace(), session, seq);
  }
  state.known = new Set([...present].filter(Number.isInteger));
  flushSoon();
}

function flushSoon() {
  clearTimeout(state.retry);
  state.retry = setTimeout(flush, 0);
}

async function flush() {
  const annals = client();
  if (!annals || !state.outbox.size) return;
  const result = await state.outbox.flush(annals);
  for (const { item, error } of result.dropped) {
    globalThis.toastr?.warning(`${tr("Annals refused a message")} (${item.session} #${item.seq}): ${error}`);
  }
  if (result.error) {
    wentOffline(result.error);
    state.retry = setTimeout(flush, RETRY_MS);
  } else {
    backOnline();
    setStatus(connectedText());
  }
}

function connectedText() {
  const waiting = state.outbox.size ? ` · ${state.outbox.size} ${tr("waiting")}` : "";
  return `${tr("Connected")} · ${tr("space")} ${currentSpace()}${waiting}`;
}

function wentOffline(error) {
  const refused = error?.status === 401 || error?.status === 403;  // the key, not the server
  if (!state.offline) {
    globalThis.toastr?.info(refused
      ? tr("Annals refused the API key: check it in the Annals panel. The chat goes on without memory, and what you write is sent once the key is right.")
      : tr("Annals is unreachable: the chat goes on without memory, and what you write is sent once it is back."), "Annals");
    console.warn("[Annals] unreachable", error);
  }
  state.offline = true;
  setStatus(`${refused ? tr("Key refused") : tr("Unreachable")}: ${error?.message || error}`);
}

function backOnline() {
  if (state.offline) setStatus(tr("Connected"));
  state.offline = false;
}

// ------------------------------------------------------------------ recall

/** Before every generation (manifest.generate_interceptor): the hook's memories go into the
 * prompt; anything going wrong leaves the prompt as it would be without Annals. */
globalThis.annalsGenerateInterceptor = async function (chat, contextSize, abort, type) {
  const c = ctx();
  c.setExtensionPrompt(PROMPT_KEY, "", IN_CHAT, 0);
  state.pending = null;
  const s = settings();
  const annals = client(HOOK_TIMEOUT_MS);
  const session = currentSession();
  if (!annals || !s.enabled || !s.inject || !session || type === "quiet"
      || type === "impersonate") return;
  const last = [...chat].reverse().find((m) => m.is_user && counts(m));
  if (!last) return;
  numberMessages();
  const space = currentSpace();
  const query = String(last.mes).slice(0, 4000);
  const request = { query, window: session, trace_lang: language(), recent: recentTurns(chat) };
  const fromSeq = firstSeqInContext(chat, Number(contextSize) || 4096, countTokens);
  if (fromSeq !== null) request.in_context = { session, from_seq: fromSeq };
  try {
    const answer = await annals.hookRecall(space, request);
    backOnline();
    const text = [answer.core_context, answer.additional_context].filter(Boolean).join("\n\n");
    state.lastRecall = { query, at: new Date(), answer };
    if (text) {
      c.setExtensionPrompt(PROMPT_KEY, text, IN_CHAT, Number(s.depth) || 0, false,
                           Number(s.role) || 0);
      if (answer.recalled_ids?.length) {
        state.pending = { space, window: session, ids: answer.recalled_ids.slice(0, 50) };
      }
    }
  } catch (error) {
    state.lastRecall = { query, at: new Date(),
                         error: `${tr("Nothing injected: Annals did not answer")} (${error?.message || error})` };
    wentOffline(error);
  }
  renderLastRecall();
};

/** The turns before the user's last one, for the hook's window (at most four). */
function recentTurns(chat) {
  const turns = chat.filter(counts).slice(-5, -1);
  return turns.map((m) => ({ role: m.is_user ? "user" : "assistant",
                             content: String(m.mes).slice(0, 4000) }));
}

function countTokens(text) {
  // SillyTavern's tokenizer is async; a prompt's share is only an estimate here: a CJK
  // character is about one token, other text about four characters one.
  const cjk = (text.match(/[\u3000-\u9fff\uac00-\ud7af]/g) || []).length;
  return cjk + Math.ceil((text.length - cjk) / 4);
}

function language() {
  return String(ctx().getCurrentLocale?.() || "en").startsWith("zh") ? "zh" : "en";
}

/** The reply came: what was injected for it is reported (it rests in this window a while). */
async function onReplied(index, type) {
  queueMessage(index);
  const pending = state.pending;
  state.pending = null;
  if (pending && type !== "first_message") {
    try {
      await client()?.deliveries(pending.space, pending.window, pending.ids);
    } catch (error) {
      console.warn("[Annals] deliveries not reported", error);
    }
  }
  readWhenQuiet();
}

// ------------------------------------------------------------------ reading

/** With reading on, a pause in the chat lets the chat's own model read for Annals. */
function readWhenQuiet() {
  clearTimeout(state.quiet);
  if (settings().reading) state.quiet = setTimeout(() => readNow(false), QUIET_MS);
}

/** Lease reading tasks and answer them with SillyTavern's current model and settings. */
async function readNow(byHand = true) {
  const annals = client(60000);
  const space = currentSpace();
  if (!annals || state.reading) return;
  state.reading = true;
  try {
    await notGenerating();
    await flush();
    if (!settings().reading) {
      if (byHand) await annals.extract(space, currentSession() || undefined);
      return;
    }
    const { tasks } = await annals.readingTasks(space, READ_TASKS);
    let events = 0;
    for (const task of tasks) {
      const answer = await ask(task.request);
      const result = await annals.readingAnswer(space, task.lease, answer).catch((error) => {
        console.warn("[Annals] reading answer refused", error);
        return null;
      });
      events += result?.events || 0;
    }
    if (byHand) globalThis.toastr?.success(`${tr("Read")}: ${tasks.length}, ${tr("events")}: ${events}`);
  } catch (error) {
    wentOffline(error);
  } finally {
    state.reading = false;
    refreshPanel();
  }
}

/** SillyTavern is not writing a reply (its own flag, set while the send button is a stop
 * button): reading waits for it, at most two minutes. */
async function notGenerating() {
  for (let waited = 0; document.body.dataset.generating && waited < 120; waited += 1) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** A reading task's chat-completions request through generateRaw: its system message as the
 * system prompt, the rest as the prompt, its JSON schema as SillyTavern's. */
async function ask(request) {
  const system = request.messages.filter((m) => m.role === "system").map((m) => m.content);
  const prompt = request.messages.filter((m) => m.role !== "system").map((m) => m.content);
  const format = request.response_format?.json_schema;
  const jsonSchema = format ? { name: format.name || "reading", value: format.schema,
                                strict: false, returnInvalid: true } : null;
  const out = await ctx().generateRaw({
    prompt: prompt.join("\n\n"), systemPrompt: system.join("\n\n"),
    responseLength: request.max_tokens, jsonSchema,
  });
  return typeof out === "string" ? out : JSON.stringify(out);
}

// ------------------------------------------------------------------ panel

function setStatus(text) {
  if (state.panel) state.panel.status.textContent = text;
}

function renderLastRecall() {
  if (state.panel) renderRecall(state.panel.views.recall, state.lastRecall, tr);
}

async function refreshPanel() {
  const panel = state.panel;
  if (!panel) return;
  panel.spaceInput.value = settings().spaces[characterName()] || "";
  panel.spaceInput.placeholder = currentSpace();
  renderLastRecall();
  const annals = client();
  if (!annals) {
    setStatus(tr("Set the Annals URL and an API key."));
    return;
  }
  try {
    const space = currentSpace();
    const [events, people] = await Promise.all([newestEvents(annals, space),
                                                annals.listProfiles(space)]);
    renderChronicle(panel.views.chronicle, events, currentSession(), tr);
    renderPeople(panel.views.people, people.profiles || [], tr);
    setStatus(connectedText());
    state.offline = false;
  } catch (error) {
    if (error?.status === 404) {  // a space never written: nothing remembered yet
      renderChronicle(panel.views.chronicle, [], currentSession(), tr);
      renderPeople(panel.views.people, [], tr);
      setStatus(connectedText());
    } else {
      wentOffline(error);
    }
  }
}

/** The newest events first (the API pages in time order: read every page, up to 2,000). */
async function newestEvents(annals, space) {
  const out = [];
  let cursor;
  for (let page = 0; page < 4; page += 1) {
    const data = await annals.listEvents(space, { limit: 500, cursor });
    out.push(...(data.events || []));
    cursor = data.next_cursor;
    if (!cursor) break;
  }
  return out.reverse().slice(0, 100);
}

function onSetting(name, value) {
  const s = settings();
  if (name === "space") {
    if (value) s.spaces[characterName()] = value;
    else delete s.spaces[characterName()];
  } else {
    s[name] = value;
  }
  ctx().saveSettingsDebounced();
  if (name === "url" || name === "key" || name === "space" || name === "enabled") openChat();
  if (name === "reading") readWhenQuiet();
}

function openAnnals() {
  const url = settings().url.replace(/\/+$/, "");
  globalThis.open(`${url}/#/${encodeURIComponent(currentSpace())}/chronicle`, "_blank", "noopener");
}

/** `annals sillytavern install --url --key` leaves defaults.json beside this file. */
async function installDefaults() {
  const s = settings();
  if (s.key) return;
  try {
    const response = await fetch(new URL("./defaults.json", import.meta.url));
    if (!response.ok) return;
    const defaults = await response.json();
    if (defaults.url) s.url = defaults.url;
    if (defaults.key) s.key = defaults.key;
    ctx().saveSettingsDebounced();
  } catch {
    // no defaults written: the user fills the panel
  }
}

// ------------------------------------------------------------------ start

async function start() {
  await installDefaults();
  const host = document.getElementById("extensions_settings2")
    || document.getElementById("extensions_settings");
  if (host) {
    state.panel = buildPanel(host, tr, {
      settings: settings(), onChange: onSetting, onReadNow: () => readNow(true),
      onOpen: openAnnals, onRefresh: async () => { await flush(); await refreshPanel(); },
    });
  }
  const { eventSource, eventTypes } = ctx();
  const on = (name, handler) => eventSource.on(eventTypes[name], handler);
  // handlers never wait on the network: SillyTavern awaits them before it goes on
  on("CHAT_CHANGED", () => openChat());
  on("MESSAGE_SENT", (index) => { queueMessage(index); clearTimeout(state.quiet); });
  on("MESSAGE_RECEIVED", (index, type) => { onReplied(index, type); });
  on("MESSAGE_EDITED", (index) => queueMessage(index));
  on("MESSAGE_UPDATED", (index) => queueMessage(index));
  on("MESSAGE_SWIPED", (index) => queueMessage(index));
  on("MESSAGE_DELETED", () => onDeleted());
  on("GENERATION_STOPPED", () => { state.pending = null; });
  globalThis.addEventListener?.("online", flushSoon);
  openChat();
}

jQuery(async () => { await start(); });
