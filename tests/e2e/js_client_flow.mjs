// Driven by tests/e2e/test_js_client.py: the JavaScript client against a real `annals serve`
// (argv: client module URL, importer module URL, server URL, key). Prints one JSON object.
const [, , clientUrl, importerUrl, url, key] = process.argv;
const { AnnalsClient, AnnalsError } = await import(clientUrl);
// SillyTavern's chat file name made a session id by the importers' one rule
const { sessionName } = await import(importerUrl);
const chat = sessionName("Mika - 2026-11-24@20h05m00s.jsonl");
const annals = new AnnalsClient({ url, key });
const out = {};
out.health = (await annals.health()).status;
const at = (i) => `2026-11-24T20:${String(5 + i).padStart(2, "0")}:00+08:00`;
const turns = [
  ["user", "小林", "我养的橘猫叫团子，今年四岁了"],
  ["assistant", "Mika", "团子好可爱！"],
  ["user", "小林", "下个月我要搬去杭州"],
];
out.put = (await annals.putMessages("tavern", chat, turns.map(
  ([role, speaker, content], seq) => ({ seq, role, speaker, content, at: at(seq) })))).accepted;
const hook = await annals.hookRecall("tavern", {
  query: "团子几岁了", window: "st-chat", max_cards: 3, min_relevance: 0,
  now: "2026-11-24T21:00:00+08:00",
});
out.hook = { verdict: hook.verdict, ids: hook.recalled_ids };
const sent = await annals.hookRecall("tavern", {
  query: "团子几岁了", max_cards: 3, min_relevance: 0, now: "2026-11-24T21:00:00+08:00",
  in_context: { session: chat, from_seq: 0 },
});
out.in_context_ids = sent.recalled_ids;
if (hook.recalled_ids.length) {
  out.delivered = (await annals.deliveries("tavern", "st-chat", hook.recalled_ids)).recorded.length;
}
const { tasks } = await annals.readingTasks("tavern", 1);
out.task = tasks.length ? { seq_from: tasks[0].seq_from, seq_to: tasks[0].seq_to,
                            roles: tasks[0].request.messages.map((m) => m.role) } : null;
if (tasks.length) {
  out.read = (await annals.readingAnswer("tavern", tasks[0].lease, '{"events": []}')).read_by;
}
out.deleted = (await annals.deleteMessage("tavern", chat, 2)).deleted;
out.events = (await annals.listEvents("tavern", { limit: 5 })).events.length;
out.profiles = (await annals.listProfiles("tavern")).profiles.map((p) => p.name);
try {
  await new AnnalsClient({ url, key: "ak_0123456789abcdef_wrong" }).health();
  await new AnnalsClient({ url, key: "ak_0123456789abcdef_wrong" }).listProfiles("tavern");
  out.wrong_key = "no error";
} catch (err) {
  out.wrong_key = err instanceof AnnalsError ? `${err.status} ${err.code}` : String(err);
}
try {
  await new AnnalsClient({ url: "http://127.0.0.1:9", key, timeoutMs: 2000 }).health();
  out.down = "no error";
} catch (err) {
  out.down = err instanceof AnnalsError ? "AnnalsError" : err.name;
}
console.log(JSON.stringify(out));
