// DOM helpers: every element is built from data, never from an HTML string (no innerHTML in
// the app), so text from the chronicle can never become markup.

const SVG_NS = 'http://www.w3.org/2000/svg';
const SVG_TAGS = new Set(['svg', 'g', 'circle', 'line', 'rect', 'text', 'title', 'path', 'a']);
const PROPS = new Set(['value', 'checked', 'indeterminate', 'selected']);
let counter = 0;

/** h('button', {class: 'x', onclick: fn}, 'text', child, [more]) → an element. */
export function h(tag, props, ...children) {
  return build(document.createElement(tag), props, children);
}

/** The same for SVG elements. */
export function s(tag, props, ...children) {
  if (!SVG_TAGS.has(tag)) throw new Error(`not an SVG tag we use: ${tag}`);
  return build(document.createElementNS(SVG_NS, tag), props, children);
}

function build(el, props, children) {
  const late = [];
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') el.setAttribute('class', Array.isArray(value) ? value.filter(Boolean).join(' ') : value);
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2).toLowerCase(), value);
    else if (PROPS.has(key)) late.push([key, value]);
    else if (key === 'style') Object.assign(el.style, value);  // CSSOM: allowed by the page's CSP
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  for (const [key, value] of late) el[key] = value;  // after the options of a <select>
  return el;
}

export function append(el, children) {
  for (const child of [children].flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** Replace the children of `el`. */
export function mount(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** A fresh id for pairing a <label> with its control. */
export function uid(prefix = 'f') {
  counter += 1;
  return `${prefix}-${counter}`;
}

/** A labelled form field: [<label>, control] in a wrapper. */
export function field(label, control, {hint, className} = {}) {
  if (!control.id) control.id = uid();
  const hintEl = hint ? h('small', {class: 'hint', id: `${control.id}-hint`}, hint) : null;
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id);
  return h('div', {class: ['field', className]}, h('label', {for: control.id}, label), control, hintEl);
}

/** A button that folds `body` away on a narrow screen and opens it again (app.css:
 * .fold-body, .fold-toggle); a wide screen shows the body and no button. `open`: the state to
 * start in; `onToggle(open)` hears each change. */
export function foldToggle(body, label, {open = false, onToggle} = {}) {
  if (!body.id) body.id = uid('fold');
  body.classList.add('fold-body');
  body.classList.toggle('open', open);
  const button = h('button', {type: 'button', class: 'ghost fold-toggle', 'aria-controls': body.id,
    'aria-expanded': String(open)}, label);
  button.addEventListener('click', () => {
    const now = !body.classList.contains('open');
    body.classList.toggle('open', now);
    button.setAttribute('aria-expanded', String(now));
    if (onToggle) onToggle(now);
  });
  return button;
}

export function options(pairs, selected) {
  return pairs.map(([value, label]) => h('option', {value, selected: value === selected}, label));
}

/** Run `fn` at most once per `ms` of quiet. */
export function debounce(fn, ms) {
  let timer;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

/** Mark a button busy while `work` runs; its errors go to `onError`. */
export async function busy(button, work, onError) {
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  try {
    return await work();
  } catch (err) {
    if (onError) onError(err); else throw err;
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
  }
  return undefined;
}

/** Save text as a file the browser downloads. */
export function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], {type}));
  const link = h('a', {href: url, download: name, class: 'visually-hidden'}, name);
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A space or window id, as the API checks it (for <input pattern>, which compiles
 * with the `v` flag: the "-" must be escaped there). */
export const ID_PATTERN = '[A-Za-z0-9_.:@\\-]{1,128}';
/** A session id: letters, marks and digits of any script too (chalicelib/domain/models.py
 * SESSION_RULE; the API also bounds it to 256 bytes of UTF-8). */
export const SESSION_PATTERN = '[\\p{L}\\p{M}\\p{N}_.:@\\-]{1,128}';
