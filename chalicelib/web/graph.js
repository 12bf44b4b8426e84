// A force-directed layout in plain JS (no library, nothing fetched): nodes repel, links pull,
// everything drifts to the centre; a fixed number of steps from a deterministic start, so the
// same data always draws the same picture.

import {s} from './dom.js';

function hash(text) {
  let x = 2166136261;
  for (const ch of text) x = Math.imul(x ^ ch.codePointAt(0), 16777619);
  return (x >>> 0) / 4294967296;
}

/** nodes: [{id, kind, …}], links: [[sourceId, targetId]] → nodes with x, y. */
export function layout(nodes, links, {width = 800, height = 560, steps = 300} = {}) {
  const index = new Map(nodes.map((n, i) => [n.id, i]));
  const edges = links.map(([a, b]) => [index.get(a), index.get(b)]).filter(([a, b]) => a !== undefined && b !== undefined);
  const n = nodes.length;
  const area = width * height;
  const k = Math.sqrt(area / Math.max(n, 1)) * 0.75;
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  nodes.forEach((node, i) => {
    const angle = hash(node.id) * Math.PI * 2;
    const spread = (node.kind === 'event' ? 0.4 : 0.25) * Math.min(width, height) * (0.5 + hash(`${node.id}r`));
    x[i] = width / 2 + Math.cos(angle) * spread;
    y[i] = height / 2 + Math.sin(angle) * spread;
  });
  const dx = new Float64Array(n);
  const dy = new Float64Array(n);
  let temperature = width / 8;
  for (let step = 0; step < steps; step += 1) {
    dx.fill(0);
    dy.fill(0);
    for (let i = 0; i < n; i += 1) {
      for (let j = i + 1; j < n; j += 1) {
        let ex = x[i] - x[j];
        let ey = y[i] - y[j];
        let d2 = ex * ex + ey * ey;
        if (d2 < 0.01) {
          ex = 0.1;
          ey = 0.1;
          d2 = 0.02;
        }
        const force = (k * k) / d2;
        dx[i] += ex * force;
        dy[i] += ey * force;
        dx[j] -= ex * force;
        dy[j] -= ey * force;
      }
    }
    for (const [a, b] of edges) {
      const ex = x[a] - x[b];
      const ey = y[a] - y[b];
      const d = Math.sqrt(ex * ex + ey * ey) || 0.1;
      const force = d / k;
      dx[a] -= ex * force;
      dy[a] -= ey * force;
      dx[b] += ex * force;
      dy[b] += ey * force;
    }
    for (let i = 0; i < n; i += 1) {
      dx[i] += (width / 2 - x[i]) * 0.05;
      dy[i] += (height / 2 - y[i]) * 0.05;
      const d = Math.sqrt(dx[i] * dx[i] + dy[i] * dy[i]) || 1;
      const move = Math.min(d, temperature);
      x[i] += (dx[i] / d) * move;
      y[i] += (dy[i] / d) * move;
    }
    temperature = Math.max(1, temperature * 0.985);
  }
  // Fit into the box with a margin for labels.
  const margin = 40;
  const minX = Math.min(...x);
  const maxX = Math.max(...x);
  const minY = Math.min(...y);
  const maxY = Math.max(...y);
  const scale = Math.min((width - 2 * margin) / (maxX - minX || 1), (height - 2 * margin) / (maxY - minY || 1));
  return nodes.map((node, i) => ({...node,
    x: margin + (x[i] - minX) * scale + ((width - 2 * margin) - (maxX - minX) * scale) / 2,
    y: margin + (y[i] - minY) * scale + ((height - 2 * margin) - (maxY - minY) * scale) / 2}));
}

function radius(node) {
  if (node.kind === 'event') return 5;
  if (node.kind === 'thread') return 11;
  if (node.kind === 'entity') return Math.min(16, 6 + 1.5 * Math.sqrt(node.weight || 1));
  return Math.min(22, 8 + 2 * Math.sqrt(node.weight || 1));
}

function hexagon(x, y, r) {
  const points = [0, 1, 2, 3, 4, 5].map((i) => {
    const a = Math.PI / 3 * i + Math.PI / 6;
    return `${(x + r * Math.cos(a)).toFixed(1)},${(y + r * Math.sin(a)).toFixed(1)}`;
  });
  return `M${points.join('L')}Z`;
}

/** Each kind its own shape as well as its colour: person ●, entity ■, thread ⬢, event ◆. */
function shape(node) {
  const x = node.x;
  const y = node.y;
  const r = radius(node);
  if (node.kind === 'event') {
    return s('rect', {x: (x - r).toFixed(1), y: (y - r).toFixed(1), width: 2 * r, height: 2 * r, rx: 2,
      transform: `rotate(45 ${x.toFixed(1)} ${y.toFixed(1)})`});
  }
  if (node.kind === 'entity') {
    return s('rect', {x: (x - r).toFixed(1), y: (y - r).toFixed(1), width: (2 * r).toFixed(1), height: (2 * r).toFixed(1), rx: 3});
  }
  if (node.kind === 'thread') return s('path', {d: hexagon(x, y, r)});
  return s('circle', {cx: x.toFixed(1), cy: y.toFixed(1), r: r.toFixed(1)});
}

// Han, kana and Hangul: about twice as wide as a Latin letter, and cut anywhere.
const WIDE = /[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/u;

/** A title cut to fit beside a node: `room` Latin letters wide (a Chinese character counts
 * two), whole words where the text has spaces, "…" where something was cut. */
export function brief(text, room = 14) {
  const chars = [...text.trim().replace(/\s+/g, ' ')];
  let used = 0;
  const cut = chars.findIndex((ch) => (used += WIDE.test(ch) ? 2 : 1) > room);
  if (cut < 0) return chars.join('');
  let head = chars.slice(0, cut).join('');
  const inWord = /\S/.test(chars[cut]) && !WIDE.test(chars[cut]) && /\S/.test(chars[cut - 1]) && !WIDE.test(chars[cut - 1]);
  if (inWord && head.lastIndexOf(' ') > 0) head = head.slice(0, head.lastIndexOf(' '));
  return `${head.trimEnd()}…`;
}

/** The graph as SVG: every node a link (keyboard reachable) named by its full label; beside
 * it a short label (an event's title cut by `brief`), shown whole while the node has the
 * pointer or the focus. links: [[sourceId, targetId, class?]]. */
export function graphView(nodes, links, {width = 800, height = 560, label, selected} = {}) {
  const placed = layout(nodes, links, {width, height});
  const at = new Map(placed.map((n) => [n.id, n]));
  // Labels apart from the nodes, drawn over every link and shape; hidden from assistive
  // technology, which reads each node's own full label.
  const texts = new Map(placed.map((node) => {
    const short = node.short || brief(node.name || node.label);
    const text = s('text', {class: node.kind, x: node.x.toFixed(1), y: (node.y + radius(node) + (node.kind === 'event' ? 12 : 14)).toFixed(1),
      'text-anchor': 'middle'}, short);
    return [node.id, {text, short, full: node.name || node.label}];
  }));
  const show = (id, whole) => {
    const {text, short, full} = texts.get(id);
    text.textContent = whole ? full : short;
    text.classList.toggle('whole', whole);
  };
  return s('svg', {class: 'graph', viewBox: `0 0 ${width} ${height}`, role: 'group', 'aria-label': label,
    preserveAspectRatio: 'xMidYMid meet'},
  s('g', {class: 'links', 'aria-hidden': 'true'}, links.map(([a, b, cls]) => {
    const p = at.get(a);
    const q = at.get(b);
    if (!p || !q) return null;
    return s('line', {x1: p.x.toFixed(1), y1: p.y.toFixed(1), x2: q.x.toFixed(1), y2: q.y.toFixed(1),
      class: [cls, selected && (a === selected || b === selected) && 'on']});
  })),
  s('g', {class: 'nodes'}, placed.map((node) => s('a', {href: node.href,
    class: ['node', node.kind, node.sub && `k-${node.sub}`, node.key && 'key', node.id === selected && 'selected'],
    'aria-label': node.label,
    onfocus: () => show(node.id, true), onblur: () => show(node.id, false),
    onmouseenter: () => show(node.id, true), onmouseleave: () => show(node.id, false)},
  s('title', {}, node.label),
  shape(node)))),
  s('g', {class: 'labels', 'aria-hidden': 'true'}, [...texts.values()].map(({text}) => text)));
}
