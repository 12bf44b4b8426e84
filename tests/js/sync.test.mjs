// The SillyTavern extension's bookkeeping (sillytavern/extension/sync.js) and the names it
// gives sessions and spaces, under `node --test` (run by tests/unit/test_js_extension.py).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { AnnalsError, sessionName, spaceName } from "../../sillytavern/extension/annals-client.js";
import { Outbox, PUT_BATCH, assignSeqs, firstSeqInContext, toAnnals }
  from "../../sillytavern/extension/sync.js";

const msg = (mes, extra = {}, more = {}) => ({ name: "Mika", is_user: false, mes, extra, ...more });

test("a chat seen first is numbered as annals import numbers its file", () => {
  const chat = [msg("hi"), msg("", {}), msg("note", {}, { is_system: true }), msg("two"),
                msg("three", {}, { is_user: true, name: "小林" })];
  const meta = {};
  assert.equal(assignSeqs(chat, meta), true);
  assert.deepEqual(chat.map((m) => m.extra.annals_seq), [0, undefined, undefined, 1, 2]);
  assert.equal(meta.next_seq, 3);
  assert.equal(assignSeqs(chat, meta), false, "nothing new: nothing to save");
});

test("a seq outlives a delete in the middle: new messages take the next one", () => {
  const chat = [msg("a"), msg("b"), msg("c")];
  const meta = {};
  assignSeqs(chat, meta);
  chat.splice(1, 1);  // SillyTavern deletes "b": indices shift
  chat.push(msg("d"));
  assignSeqs(chat, meta);
  assert.deepEqual(chat.map((m) => m.extra.annals_seq), [0, 2, 3]);
  const after = [msg("x", { annals_seq: 7 }), msg("y")];
  assignSeqs(after, {});
  assert.deepEqual(after.map((m) => m.extra.annals_seq), [7, 8], "numbered already: go on");
});

test("the stored message: role, speaker, the shown text, the time as ISO", () => {
  const m = msg("我搬到杭州了", { annals_seq: 4 }, { is_user: true, name: "小林",
                                              send_date: "2026-11-24T12:05:00.000Z" });
  assert.deepEqual(toAnnals(m), { seq: 4, role: "user", content: "我搬到杭州了", speaker: "小林",
                                  at: "2026-11-24T12:05:00.000Z" });
  const unknownTime = toAnnals(msg("hi", { annals_seq: 0 }, { send_date: "not a date" }));
  assert.equal(unknownTime.at, undefined);
});

test("the prompt's first turn: the newest turns that fill half the context", () => {
  const chat = Array.from({ length: 10 }, (_, i) => msg("x".repeat(40), { annals_seq: i }));
  const tokens = (text) => text.length / 4;  // 10 tokens a message
  assert.equal(firstSeqInContext(chat, 100, tokens), 5, "50 tokens: the last five");
  assert.equal(firstSeqInContext(chat, 10000, tokens), 0, "everything fits");
  assert.equal(firstSeqInContext(chat, 0, tokens), 9, "the user's own last turn at least");
  assert.equal(firstSeqInContext([msg("no seq")], 100, tokens), null);
});

class Storage {
  constructor() { this.data = {}; }
  getItem(k) { return this.data[k] ?? null; }
  setItem(k, v) { this.data[k] = v; }
}

class FakeAnnals {
  constructor() { this.calls = []; this.down = false; this.refuse = new Set(); }
  async putMessages(space, session, messages) {
    if (this.down) throw new TypeError("fetch failed");
    if (messages.some((m) => this.refuse.has(m.seq))) {
      throw new AnnalsError(422, "invalid_request", "too long");
    }
    this.calls.push(["put", space, session, messages.map((m) => m.seq)]);
  }
  async deleteMessage(space, session, seq) {
    if (this.down) throw new TypeError("fetch failed");
    if (seq === 99) throw new AnnalsError(404, "not_found", "no such message");
    this.calls.push(["delete", space, session, seq]);
  }
}

test("writes wait while Annals is down, survive a reload and go out in order", async () => {
  const storage = new Storage();
  const annals = new FakeAnnals();
  annals.down = true;
  const outbox = new Outbox(storage);
  outbox.put("mika", "chat-1", { seq: 0, role: "user", content: "a" });
  outbox.put("mika", "chat-1", { seq: 1, role: "assistant", content: "b" });
  outbox.put("mika", "chat-1", { seq: 1, role: "assistant", content: "b, edited" });
  outbox.delete("mika", "chat-1", 0);
  const first = await outbox.flush(annals);
  assert.equal(first.waiting, 2);
  assert.ok(first.error instanceof TypeError);
  const reloaded = new Outbox(storage);  // the page was reloaded: nothing lost
  assert.equal(reloaded.size, 2);
  annals.down = false;
  const second = await reloaded.flush(annals);
  assert.equal(second.waiting, 0);
  assert.deepEqual(annals.calls, [["put", "mika", "chat-1", [1]], ["delete", "mika", "chat-1", 0]]);
  assert.equal(new Outbox(storage).size, 0);
});

test("a message Annals refuses for good is dropped and reported; the rest of its batch goes", async () => {
  const annals = new FakeAnnals();
  annals.refuse.add(2);
  const outbox = new Outbox(new Storage());
  for (let seq = 0; seq < 4; seq += 1) outbox.put("s", "c", { seq, role: "user", content: "x" });
  outbox.delete("s", "c", 99);  // already gone: not an error
  const result = await outbox.flush(annals);
  assert.equal(result.waiting, 0);
  assert.deepEqual(result.dropped.map((d) => d.item.seq), [2]);
  assert.deepEqual(annals.calls.map((c) => c[3]), [[0], [1], [3]]);
});

test("many messages go PUT_BATCH at a time", async () => {
  const annals = new FakeAnnals();
  const outbox = new Outbox(new Storage());
  for (let seq = 0; seq < PUT_BATCH + 5; seq += 1) outbox.put("s", "c", { seq, role: "user", content: "x" });
  await outbox.flush(annals);
  assert.deepEqual(annals.calls.map((c) => c[3].length), [PUT_BATCH, 5]);
});

test("a chat's file name gives the session id annals import gives it", () => {
  const table = JSON.parse(readFileSync(new URL("../data/session_names.json", import.meta.url)));
  for (const { file, session } of table.cases) assert.equal(sessionName(file), session, file);
});

test("a character's name gives a space id the API takes", () => {
  assert.equal(spaceName("Mika"), "Mika");
  assert.equal(spaceName("Ilse Marrow"), "Ilse-Marrow");
  assert.equal(spaceName("阿澈"), "xn--ehxv93f", "as bench/companion.py writes it");
  assert.equal(spaceName("???"), "chat");
  for (const name of ["沈砚 (古风)", "Mika酱", "a/b", "..", "é".repeat(300), "🐱"]) {
    assert.match(spaceName(name), /^[A-Za-z0-9_.:@-]{1,128}$/, name);
  }
  assert.notEqual(spaceName("阿澈"), spaceName("沈砚"));
});
