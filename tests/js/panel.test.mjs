// The SillyTavern panel's People view: which facts it shows (sillytavern/extension/panel.js),
// under `node --test` (run by tests/unit/test_js_extension.py).
import assert from "node:assert/strict";
import { test } from "node:test";

import { peopleFacts } from "../../sillytavern/extension/panel.js";

const fact = (attribute, value, status, validTo = null) => ({
  attribute, value, status, current: status === "current", valid_to: validTo });

test("a role whose job ended is shown marked unconfirmed, an ended fact not at all", () => {
  // 阿凯's only fact is unconfirmed: he is still listed, with it marked
  const profiles = [
    { name: "小满", facts: [fact("lives_in", "成都", "current"), fact("works_as", "前台", "unconfirmed"),
                            fact("works_at", "皓齿口腔", "ended", "2026-10-10T00:00:00+08:00")] },
    { name: "阿凯", facts: [fact("works_as", "教练", "unconfirmed")] },
  ];
  assert.deepEqual(peopleFacts(profiles), [{ name: "小满", facts: [
    { attribute: "lives_in", value: "成都", kind: "", unconfirmed: false },
    { attribute: "works_as", value: "前台", kind: "", unconfirmed: true }] },
  { name: "阿凯", facts: [{ attribute: "works_as", value: "教练", kind: "", unconfirmed: true }] }]);
});

test("a profile from an older server (no status) shows its current facts as before", () => {
  const profiles = [{ name: "Nora", facts: [{ attribute: "pet", value: "Biscuit", valid_to: null },
                                            { attribute: "lives_in", value: "Leeds",
                                              valid_to: "2026-12-05T00:00:00Z" }] }];
  assert.deepEqual(peopleFacts(profiles), [{ name: "Nora", facts: [
    { attribute: "pet", value: "Biscuit", kind: "", unconfirmed: false }] }]);
});

test("a person with only ended facts is left out", () => {
  assert.deepEqual(peopleFacts([{ name: "Dax", facts: [
    fact("partner", "Jess", "ended", "2026-11-22T00:00:00Z")] }]), []);
});
