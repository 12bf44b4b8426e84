// Chat files read in the browser, as chalicelib/usecases/importing.py reads them: an
// OpenAI-style JSON array of messages or {"messages": [...]}, or a SillyTavern .jsonl chat
// (a header line, then {"name", "is_user", "is_system", "send_date", "mes"} per line). The
// messages are PUT in batches to …/sessions/{session}/messages, so an import is idempotent.
//
// Times: a message's own time when the file has one; otherwise the file's modification time
// plus one second per message in file order (as the CLI does), so importing the same file
// again changes nothing.
//
// Speakers (as the CLI): a message's own name when it is a name; else the file's name for its
// role (a SillyTavern header's user_name / character_name); else the name given for the role
// (`names`: {user, assistant}); else the file's placeholder or none (stored as the role, never
// a person: names.js).

import {personName} from './names.js';

export const BATCH_MESSAGES = 500;  // the API takes up to 1000 per request
export const BATCH_BYTES = 1_500_000;  // and a body up to 2 MB
const ROLES = new Set(['user', 'assistant', 'system']);
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

export class ImportFormatError extends Error {}

const pad = (n, width = 2) => String(Math.abs(n)).padStart(width, '0');

/** A Date as ISO-8601 with the browser's offset at that moment. */
export function isoLocal(date) {
  const offset = -date.getTimezoneOffset();
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:`
    + `${pad(date.getMinutes())}:${pad(date.getSeconds())}${offset >= 0 ? '+' : '-'}${pad(Math.trunc(offset / 60))}:${pad(offset % 60)}`;
}

/** ISO-8601, epoch seconds or milliseconds, or SillyTavern's human dates → ISO with an offset. */
export function parseTime(value) {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'number' || /^\d{9,13}(\.\d+)?$/.test(String(value).trim())) {
    const n = Number(value);
    return new Date(n > 1e11 ? n : n * 1000).toISOString().replace('Z', '+00:00');  // UTC, as the CLI
  }
  const text = String(value).trim();
  let m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?$/.exec(text);
  if (m) {
    if (m[3]) {  // keep the file's own offset: relative times are read in it
      const offset = m[3] === 'Z' ? '+00:00' : m[3].replace(/^([+-]\d{2}):?(\d{2})$/, '$1:$2');
      const iso = `${m[1]}T${m[2].length === 5 ? `${m[2]}:00` : m[2]}${offset}`;
      return Number.isNaN(Date.parse(iso)) ? null : iso;
    }
    return localDate(m[1], m[2]);
  }
  m = /^(\d{4}-\d{2}-\d{2})$/.exec(text);
  if (m) return localDate(m[1], '00:00');
  // SillyTavern: "2024-6-1 @20h 30m 15s 123ms", "2024-06-01@20h30m15s"
  m = /^(\d{4})-(\d{1,2})-(\d{1,2})\s*@\s*(\d{1,2})h\s*(\d{1,2})m(?:\s*(\d{1,2})s)?/.exec(text);
  if (m) return isoLocal(new Date(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +(m[6] || 0)));
  // SillyTavern: "June 1, 2024 8:30pm", "Jun 1, 2024 8:30 PM"
  m = /^([A-Za-z]+)\.?\s+(\d{1,2}),?\s+(\d{4})(?:,?\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([ap]\.?m\.?)?)?$/i.exec(text);
  if (m && MONTHS.includes(m[1].slice(0, 3).toLowerCase())) {
    let hour = +(m[4] || 0);
    const half = (m[7] || '').toLowerCase().replace(/\./g, '');
    if (half === 'pm' && hour < 12) hour += 12;
    if (half === 'am' && hour === 12) hour = 0;
    return isoLocal(new Date(+m[3], MONTHS.indexOf(m[1].slice(0, 3).toLowerCase()), +m[2], hour, +(m[5] || 0), +(m[6] || 0)));
  }
  const parsed = Date.parse(text);
  return Number.isNaN(parsed) ? null : isoLocal(new Date(parsed));
}

function localDate(day, time) {
  const [y, mo, d] = day.split('-').map(Number);
  const [hh, mm, ss = '0'] = time.split(':');
  return isoLocal(new Date(y, mo - 1, d, Number(hh), Number(mm), Math.floor(Number(ss))));
}

export function detectFormat(name, text) {
  if (/\.jsonl$/i.test(name)) return 'sillytavern';
  const head = text.trimStart();
  if (head.startsWith('{') && !/^\{\s*"messages"/.test(head) && head.includes('"mes"')) return 'sillytavern';
  return 'openai';
}

/** Who speaks: the message's own name, else the role's name in `names`, else what the file said. */
function speakerOf(role, name, names) {
  return personName(name) || personName((names || {})[role]) || (name ? String(name) : null);
}

function openaiRows(text, names) {
  let data;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new ImportFormatError(`not JSON: ${err.message}`);
  }
  const items = Array.isArray(data) ? data : data && data.messages;
  if (!Array.isArray(items)) throw new ImportFormatError('expected a list of messages or {"messages": [...]}');
  const rows = [];
  for (const item of items) {
    if (!item || typeof item !== 'object' || !('role' in item)) {
      throw new ImportFormatError(`not an OpenAI-style message: ${JSON.stringify(item).slice(0, 80)}`);
    }
    let content = item.content;
    if (Array.isArray(content)) content = content.filter((p) => p && typeof p === 'object').map((p) => p.text || '').join(' ');
    if (!content || !ROLES.has(item.role)) continue;  // tool calls and empty turns carry no evidence
    const when = ['at', 'timestamp', 'created_at'].map((k) => item[k]).find((v) => v);
    rows.push({role: item.role, speaker: speakerOf(item.role, item.name, names), content: String(content), at: parseTime(when)});
  }
  return rows;
}

function sillytavernRows(text, names) {
  const rows = [];
  let own = names || {};
  text.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) return;
    let item;
    try {
      item = JSON.parse(line);
    } catch (err) {
      throw new ImportFormatError(`line ${i + 1}: not JSON (${err.message})`);
    }
    if (!item || typeof item !== 'object') throw new ImportFormatError(`line ${i + 1}: not a SillyTavern message`);
    if (!('mes' in item)) {  // the header line (chat metadata): the file's own names
      own = {user: personName(item.user_name) || personName((names || {}).user),
        assistant: personName(item.character_name) || personName((names || {}).assistant)};
      return;
    }
    if (!String(item.mes).trim() || item.is_system) return;
    const role = item.is_user ? 'user' : 'assistant';
    rows.push({role, speaker: speakerOf(role, item.name, own), content: String(item.mes), at: parseTime(item.send_date)});
  });
  return rows;
}

/** The file's messages: [{seq, role, speaker?, content, at}], seq from 0 in file order.
 * `names`: {user, assistant}, who speaks for a role where the file names no one. */
export function parseChat(text, {name = 'chat.json', format = 'auto', lastModified = Date.now(), names = {}} = {}) {
  const kind = format === 'auto' ? detectFormat(name, text) : format;
  const rows = kind === 'sillytavern' ? sillytavernRows(text, names) : openaiRows(text, names);
  const start = Math.floor(lastModified / 1000) * 1000;
  const messages = rows.map((row, seq) => {
    const message = {seq, role: row.role, content: row.content,
      at: row.at || isoLocal(new Date(start + seq * 1000))};
    if (row.speaker) message.speaker = String(row.speaker).replace(/\s+/g, ' ').trim().slice(0, 100);
    return message;
  });
  return {format: kind, messages};
}

export const SESSION_CHARS = 128;
export const SESSION_BYTES = 256;

/** A session id from a file name ("My chat (2).jsonl" → "My-chat-2", "沈砚 - 2026-11-02@20h05m00s.jsonl"
 * → "沈砚-2026-11-02@20h05m00s"): the one rule of `annals import`, chalicelib/domain/models.py
 * `session_id_from_file_name`. The name without its extension, in NFC; every run of characters
 * other than letters, marks and digits of any script and _ . : @ - becomes one "-", none at either
 * end; cut to 128 characters and 256 bytes of UTF-8; "imported" if nothing is left. The cases in
 * tests/data/session_names.json run through both (tests/unit/test_session_names.py,
 * tests/web/test_modules.py): change the two together. */
export function sessionName(fileName) {
  const stem = String(fileName).replace(/\.[^.]+$/, '').normalize('NFC');
  const dashed = stem.replace(/[^\p{L}\p{M}\p{N}_.:@-]+/gu, '-').replace(/-{2,}/g, '-').replace(/^-+|-+$/g, '');
  const encoder = new TextEncoder();
  let id = '';
  let count = 0;
  let bytes = 0;
  for (const ch of dashed) {  // code points, as Python counts them
    bytes += encoder.encode(ch).length;
    if (count === SESSION_CHARS || bytes > SESSION_BYTES) break;
    id += ch;
    count += 1;
  }
  id = id.replace(/-+$/, '');
  return id.replace(/\./g, '') ? id : 'imported';
}

/** Batches of at most BATCH_MESSAGES messages and about BATCH_BYTES of JSON. */
export function batches(messages, maxCount = BATCH_MESSAGES, maxBytes = BATCH_BYTES) {
  const out = [];
  let current = [];
  let size = 0;
  const encoder = new TextEncoder();
  for (const message of messages) {
    const bytes = encoder.encode(JSON.stringify(message)).length + 1;
    if (current.length && (current.length >= maxCount || size + bytes > maxBytes)) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(message);
    size += bytes;
  }
  if (current.length) out.push(current);
  return out;
}
