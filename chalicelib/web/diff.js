// A readable diff of two texts: Chinese by character, other scripts by word, so an edit
// shows as the few characters or words it changed (<del> and <ins>).

import {h} from './dom.js';

const TOKEN = /[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]|[\p{L}\p{N}_'’-]+|\s+|./gsu;
const MAX_CELLS = 2_000_000;  // beyond this, show the texts as replaced whole

export function tokens(text) {
  return String(text ?? '').match(TOKEN) || [];
}

/** [['same'|'del'|'ins', text], …] turning `before` into `after`. */
export function diffTexts(before, after) {
  const a = tokens(before);
  const b = tokens(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head
    && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail += 1;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  const parts = [];
  if (head) parts.push(['same', a.slice(0, head).join('')]);
  parts.push(...middle(midA, midB));
  if (tail) parts.push(['same', a.slice(a.length - tail).join('')]);
  return merge(parts);
}

function middle(a, b) {
  if (!a.length && !b.length) return [];
  if ((a.length + 1) * (b.length + 1) > MAX_CELLS) return [['del', a.join('')], ['ins', b.join('')]];
  // Longest common subsequence, then walk it.
  const width = b.length + 1;
  const table = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      table[i * width + j] = a[i] === b[j] ? table[(i + 1) * width + j + 1] + 1
        : Math.max(table[(i + 1) * width + j], table[i * width + j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push(['same', a[i]]);
      i += 1;
      j += 1;
    } else if (table[(i + 1) * width + j] >= table[i * width + j + 1]) {
      out.push(['del', a[i]]);
      i += 1;
    } else {
      out.push(['ins', b[j]]);
      j += 1;
    }
  }
  while (i < a.length) out.push(['del', a[i++]]);
  while (j < b.length) out.push(['ins', b[j++]]);
  return out;
}

function merge(parts) {
  const out = [];
  for (const [kind, text] of parts) {
    if (!text) continue;
    const last = out[out.length - 1];
    if (last && last[0] === kind) last[1] += text;
    else out.push([kind, text]);
  }
  return out;
}

/** The diff as elements: unchanged text, <del> and <ins> (with words for screen readers). */
export function diffView(before, after, labels) {
  return h('span', {class: 'diff'}, diffTexts(before, after).map(([kind, text]) => {
    if (kind === 'same') return text;
    return h(kind, {}, h('span', {class: 'visually-hidden'}, `[${labels[kind]}: `), text,
      h('span', {class: 'visually-hidden'}, ']'));
  }));
}

/** Lists: what was added and what was removed. */
export function listChange(before = [], after = []) {
  const was = new Set(before);
  const now = new Set(after);
  return {added: after.filter((x) => !was.has(x)), removed: before.filter((x) => !now.has(x))};
}
