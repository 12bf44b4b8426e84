// What the extension keeps in step with Annals, apart from SillyTavern itself (so Node can
// test it): each message's stable seq, the message as Annals stores it, the outbox of writes
// that waits out an unreachable server, and which turns the prompt holds anyway.

import { AnnalsError } from "./annals-client.js";

/** Messages per PUT (the API takes up to 1000 and a 2 MB body; a chat message is at most
 * 20,000 characters). */
export const PUT_BATCH = 100;

/** A SillyTavern chat message Annals stores: said by the user or the character, not empty,
 * not one of SillyTavern's own system notes. @param {any} message */
export function counts(message) {
  return Boolean(message) && !message.is_system && String(message.mes ?? "").trim() !== "";
}

/**
 * Give every counted message of `chat` a seq in `message.extra.annals_seq`, kept for good:
 * SillyTavern's index shifts when a message in the middle is deleted, the seq does not.
 * A chat seen for the first time numbers its messages as `annals import` numbers the file
 * (0, 1, 2… over the counted messages), so a chat imported earlier and then continued here
 * lines up; later messages take `meta.next_seq` onwards.
 * @param {any[]} chat @param {{next_seq?: number}} meta the chat's metadata slot
 * @returns {boolean} whether a seq was given (the chat should be saved)
 */
export function assignSeqs(chat, meta) {
  let changed = false;
  const firstTime = meta.next_seq === undefined && !chat.some(hasSeq);
  let next = meta.next_seq ?? 0;
  let place = 0;
  for (const message of chat) {
    if (!counts(message)) continue;
    if (hasSeq(message)) {
      next = Math.max(next, message.extra.annals_seq + 1);
    } else {
      message.extra = message.extra || {};
      message.extra.annals_seq = firstTime ? place : next;
      next = Math.max(next, message.extra.annals_seq + 1);
      changed = true;
    }
    place += 1;
  }
  if (meta.next_seq !== next) {
    meta.next_seq = next;
    changed = true;
  }
  return changed;
}

function hasSeq(message) {
  return Number.isInteger(message?.extra?.annals_seq);
}

/** The message as Annals stores it (PUT …/messages): the shown swipe is the message.
 * @param {any} message a counted message with its seq */
export function toAnnals(message) {
  const out = {
    seq: message.extra.annals_seq,
    role: message.is_user ? "user" : "assistant",
    content: String(message.mes),
  };
  if (message.name) out.speaker = String(message.name).slice(0, 200);
  const at = Date.parse(message.send_date);
  if (!Number.isNaN(at)) out.at = new Date(at).toISOString();
  return out;
}

/**
 * The first seq the prompt still holds: the newest counted messages whose tokens fill half
 * of `contextSize` (SillyTavern trims the oldest to fit, and the rest of the prompt — the
 * card, the world info — takes its share: claiming less than it sends only lets Annals
 * inject a turn twice, claiming more would hide turns the model no longer sees).
 * @param {any[]} chat @param {number} contextSize tokens
 * @param {(text: string) => number} countTokens
 * @returns {number|null} null when no counted message has a seq
 */
export function firstSeqInContext(chat, contextSize, countTokens) {
  const budget = Math.max(0, contextSize) / 2;
  let used = 0;
  let first = null;
  for (let i = chat.length - 1; i >= 0; i -= 1) {
    const message = chat[i];
    if (!counts(message) || !hasSeq(message)) continue;
    used += countTokens(String(message.mes));
    if (used > budget && first !== null) break;
    first = message.extra.annals_seq;
  }
  return first;
}

/**
 * Writes to Annals that must not be lost: a PUT or DELETE per message, the latest kept per
 * message, stored in `storage` (the browser's localStorage) until Annals took it, sent in
 * order by `flush`. A write Annals refuses for good (a 4xx other than 408/429) is dropped
 * and reported; one that could not reach Annals waits for the next flush.
 */
export class Outbox {
  /** @param {{getItem(k: string): string|null, setItem(k: string, v: string): void}} storage
   *  @param {string} [key] */
  constructor(storage, key = "annals.outbox") {
    this.storage = storage;
    this.key = key;
    /** @type {{op: "put"|"delete", space: string, session: string, seq: number,
     *          message?: object}[]} */
    this.items = this.load();
  }

  load() {
    try {
      const items = JSON.parse(this.storage.getItem(this.key) || "[]");
      return Array.isArray(items) ? items : [];
    } catch {
      return [];
    }
  }

  save() {
    this.storage.setItem(this.key, JSON.stringify(this.items));
  }

  get size() { return this.items.length; }

  /** @param {string} space @param {string} session @param {{seq: number}} message */
  put(space, session, message) {
    this.replace({ op: "put", space, session, seq: message.seq, message });
  }

  /** @param {string} space @param {string} session @param {number} seq */
  delete(space, session, seq) {
    this.replace({ op: "delete", space, session, seq });
  }

  replace(item) {
    this.items = this.items.filter((x) => !(x.space === item.space && x.session === item.session
                                            && x.seq === item.seq));
    this.items.push(item);
    this.save();
  }

  /**
   * Send what waits: PUTs of one session together (PUT_BATCH at a time), DELETEs one by one.
   * Stops at the first write that could not reach Annals (it and the rest wait).
   * @param {import("./annals-client.js").AnnalsClient} client
   * @returns {Promise<{sent: number, dropped: {item: object, error: string}[],
   *                    waiting: number, error: unknown}>}
   */
  async flush(client) {
    const dropped = [];
    const alone = new Set();  // the members of a batch Annals refused: sent one by one
    let sent = 0;
    while (this.items.length) {
      const head = this.items[0];
      const group = head.op === "put" && !alone.has(head) ? this.items.filter(
        (x) => x.op === "put" && x.space === head.space && x.session === head.session,
      ).slice(0, PUT_BATCH) : [head];
      try {
        if (head.op === "put") {
          await client.putMessages(head.space, head.session, group.map((x) => x.message));
        } else {
          await client.deleteMessage(head.space, head.session, head.seq);
        }
        sent += group.length;
      } catch (error) {
        if (!refusedForGood(error, head.op)) {
          return { sent, dropped, waiting: this.items.length, error };
        }
        if (group.length > 1) {  // one bad message must not sink the others
          group.forEach((x) => alone.add(x));
          continue;
        }
        if (!(head.op === "delete" && error.status === 404)) {
          dropped.push({ item: head, error: String(error.message || error) });
        }
      }
      this.items = this.items.filter((x) => !group.includes(x));
      this.save();
    }
    return { sent, dropped, waiting: 0, error: null };
  }
}

/** An answer that retrying cannot change: a 4xx other than 408 and 429 (a DELETE's 404 means
 * the message is already gone). */
function refusedForGood(error, op) {
  if (!(error instanceof AnnalsError)) return false;
  if (op === "delete" && error.status === 404) return true;
  return error.status >= 400 && error.status < 500 && ![401, 403, 408, 429].includes(error.status);
}
