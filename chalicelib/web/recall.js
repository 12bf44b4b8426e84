// Recall lab: ask as a chat host would, and see why: the verdict, the time layers and their
// windows, every card with its score parts, what the admission gate let through and what
// cooldown removed (from the trace), the context exactly as it would be injected with its
// token estimate — and report it as delivered, so the next recall in the window cools it.

import {ID_PATTERN, busy, field, foldToggle, h, mount, options} from './dom.js';
import {fmtDateTime, fmtNumber, fmtWhen, lang, t} from './i18n.js';

const PART_ORDER = ['fused', 'keyword', 'keyword_rank', 'vector', 'vector_rank', 'coverage', 'relevance'];

/** What a trace line is about: cooldown, gate, time layers, index freshness or the rest. */
export function classify(line) {
  if (/^\[(冷却|cooldown)\]/.test(line)) return 'cooldown';
  if (/准入门槛|\bgate\b/.test(line)) return 'gate';
  if (/^\[(时间回忆|time recall)\]/.test(line)) return 'time';
  if (/未建索引|尚未向量化|not yet indexed|not yet embedded/.test(line)) return 'fresh';
  return 'recall';
}

/** The refs a cooldown line says it skipped ("…：event:a, event:b" / "…: event:a"). */
export function cooledRefs(line) {
  const m = /(?:：|: )((?:event|message):[^\s,]+(?:, (?:event|message):[^\s,]+)*)\s*$/.exec(line);
  return m ? m[1].split(', ') : [];
}

/** datetime-local "2026-06-15T20:00" → the same wall time with the browser's offset. */
export function localIso(value) {
  if (!value) return null;
  const date = new Date(value);
  const offset = -date.getTimezoneOffset();
  const pad = (n) => String(Math.abs(n)).padStart(2, '0');
  return `${value.length === 16 ? `${value}:00` : value}${offset >= 0 ? '+' : '-'}${pad(Math.trunc(offset / 60))}:${pad(offset % 60)}`;
}

function refLink(app, ref, label) {
  const [kind, ...rest] = ref.split(':');
  if (kind === 'event') return h('a', {href: app.href('event', rest.join(':'))}, label || ref);
  return label ? h('span', {}, label) : h('code', {}, ref);
}

function partsTable(card, maxima) {
  const names = [...PART_ORDER.filter((p) => p in card.score_parts),
    ...Object.keys(card.score_parts).filter((p) => !PART_ORDER.includes(p))];
  if (!names.length) return null;
  return h('table', {class: 'parts'},
    h('caption', {class: 'visually-hidden'}, t('recall.parts')),
    h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, t('recall.part')), h('th', {scope: 'col'}, t('recall.value')),
      h('th', {scope: 'col'}, h('span', {class: 'visually-hidden'}, t('recall.bar'))))),
    h('tbody', {}, names.map((name) => {
      const value = card.score_parts[name];
      const rank = name.endsWith('_rank');
      const share = rank ? 0 : Math.max(0, Math.min(1, value / (maxima[name] || 1)));
      return h('tr', {},
        h('th', {scope: 'row', title: t(`part.${name}`) === `part.${name}` ? name : t(`part.${name}`)}, name),
        h('td', {class: 'num'}, rank ? `#${value}` : fmtNumber(value, 3)),
        h('td', {class: 'bar-cell'}, rank ? null : h('span', {class: 'bar', style: {width: `${Math.round(share * 100)}%`}})));
    })));
}

function cardView(app, card, index, maxima) {
  return h('li', {class: ['card recall-card', card.importance >= 7 && 'key']},
    h('div', {class: 'card-head'},
      h('span', {class: 'rank'}, `#${index + 1}`),
      h('h3', {}, card.kind === 'event' ? h('a', {href: app.href('event', card.ref.slice(6))}, card.title) : card.title),
      h('span', {class: 'score', title: t('recall.score')}, h('span', {class: 'visually-hidden'}, `${t('recall.score')}: `),
        fmtNumber(card.score, 3))),
    h('p', {class: 'muted small'}, [
      t(`recall.kind.${card.kind}`), card.when ? fmtWhen(card.when) : null, card.speaker,
      card.importance ? `${t('field.importance')} ${card.importance}` : null,
    ].filter(Boolean).join(' · '), ' · ', h('code', {}, card.ref)),
    h('p', {class: 'card-text'}, card.text),
    threadView(app, card.thread, index),
    partsTable(card, maxima));
}

/** The card's thread (an arc it belongs to) and the thread's other materials. */
function threadView(app, thread, index) {
  if (!thread) return null;
  const id = `card-thread-${index}`;
  const materials = thread.materials || [];
  return h('div', {class: 'card-thread', role: 'group', 'aria-labelledby': id},
    h('p', {class: 'small', id}, h('span', {class: 'muted'}, `${t('thread.label')}: `),
      thread.id ? h('a', {class: 'chip thread', href: app.href('thread', thread.id)}, `⟲ ${thread.title}`)
        : h('span', {class: 'chip thread'}, `⟲ ${thread.title}`),
      materials.length ? h('span', {class: 'muted'}, ` · ${t('recall.materials', {n: materials.length})}`) : null),
    materials.length ? h('ul', {class: 'thread-materials'}, materials.map((m) => h('li', {},
      m.date ? h('span', {class: 'muted small mono'}, `${m.date} `) : null,
      refLink(app, m.ref, m.title)))) : null);
}

export async function renderRecall(main, _args, app) {
  const mem = app.remember('recall');
  const last = (mem.form ??= {query: '', time_hint: '', window: 'web-lab', max_cards: '', now: '', format: 'blocks', min_relevance: ''});

  const query = h('textarea', {rows: 2, required: true, maxlength: 4000, placeholder: t('recall.queryph')}, last.query);
  const timeHint = h('input', {type: 'text', value: last.time_hint, placeholder: t('recall.timehintph'), maxlength: 200});
  const windowInput = h('input', {type: 'text', value: last.window, pattern: ID_PATTERN, maxlength: 128});
  const maxCards = h('input', {type: 'number', min: 1, max: 50, value: last.max_cards, placeholder: '2'});
  const now = h('input', {type: 'datetime-local', value: last.now});
  const format = h('select', {}, options([['blocks', 'blocks'], ['timeline', 'timeline'], ['compact', 'compact']], last.format));
  const minRelevance = h('input', {type: 'number', min: 0, max: 1, step: 0.01, value: last.min_relevance, placeholder: '0.06'});
  const submit = h('button', {type: 'submit', class: 'primary'}, t('recall.submit'));
  const result = h('div', {class: 'recall-result', 'aria-live': 'polite'});
  // Enter recalls, as in a chat box (Ctrl/⌘+Enter too); Shift+Enter adds a line. The Enter
  // that picks an input method's candidate (a Chinese IME) is left to the IME.
  query.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter' || e.shiftKey || e.altKey || e.isComposing || e.keyCode === 229) return;
    e.preventDefault();
    if (!submit.disabled) query.form.requestSubmit();
  });

  function request() {
    Object.assign(last, {query: query.value, time_hint: timeHint.value, window: windowInput.value.trim(),
      max_cards: maxCards.value, now: now.value, format: format.value, min_relevance: minRelevance.value});
    const body = {query: last.query.trim(), format: last.format};
    if (last.time_hint.trim()) body.time_hint = last.time_hint.trim();
    if (last.window) body.window = last.window;
    if (last.max_cards) body.max_cards = Number(last.max_cards);
    if (last.now) body.now = localIso(last.now);
    if (last.min_relevance !== '') body.min_relevance = Number(last.min_relevance);
    body.trace_lang = lang();  // the trace in the reader's language; the context stays the query's
    return body;
  }

  async function run() {
    const body = request();
    const response = await app.api.post(app.path('recall'), body);
    mem.result = {body, response};
    draw(body, response);
  }

  function draw(body, r) {
    const maxima = {};
    for (const card of r.cards) {
      for (const [name, value] of Object.entries(card.score_parts)) maxima[name] = Math.max(maxima[name] || 0, value);
    }
    const kinds = r.trace.map(classify);
    const gate = r.trace.filter((_, i) => kinds[i] === 'gate');
    const cooldown = r.trace.filter((_, i) => kinds[i] === 'cooldown');
    const cooled = cooldown.flatMap(cooledRefs);
    const report = app.canWrite() && body.window && r.recalled_ids.length
      ? h('button', {type: 'button', class: 'primary', onclick: (e) => busy(e.currentTarget, async () => {
        const out = await app.api.post(app.path('deliveries'), {window: body.window, ids: r.recalled_ids});
        mount(delivered, h('p', {class: 'notice ok'}, t('recall.delivered', {n: out.recorded.length, window: body.window}), ' ',
          h('button', {type: 'button', class: 'secondary', onclick: (ev) => busy(ev.currentTarget, run, app.fail)}, t('recall.again'))));
        delivered.querySelector('button').focus();
      }, app.fail)}, t('recall.report', {n: r.recalled_ids.length}))
      : null;
    const delivered = h('div', {});
    mount(result,
      h('section', {class: 'card verdict', 'aria-labelledby': 'verdict-h'},
        h('h2', {id: 'verdict-h'}, t('recall.verdict'), ' ',
          h('span', {class: `badge verdict-${r.verdict}`}, r.verdict)),
        h('p', {}, t(`verdict.${r.verdict}`)),
        h('p', {class: 'muted small'}, t('recall.summary', {cards: r.cards.length, tokens: r.context_tokens}))),
      r.layers.length ? h('section', {class: 'card', 'aria-labelledby': 'layers-h'},
        h('h2', {id: 'layers-h'}, t('recall.layers')),
        h('div', {class: 'scroll-x', tabindex: '0', role: 'region', 'aria-labelledby': 'layers-h'}, h('table', {class: 'data'},
          h('thead', {}, h('tr', {}, ['layer', 'window', 'candidates', 'hits'].map((c) => h('th', {scope: 'col'}, t(`recall.col.${c}`))))),
          h('tbody', {}, r.layers.map((layer) => h('tr', {class: layer.hits ? 'hit' : null},
            h('td', {class: 'num'}, String(layer.layer)),
            h('td', {}, `${fmtDateTime(layer.start)} – ${fmtDateTime(layer.end)}`),
            h('td', {class: 'num'}, String(layer.candidates)),
            h('td', {class: 'num'}, String(layer.hits)))))))) : null,
      h('div', {class: 'columns'},
        h('section', {'aria-labelledby': 'cards-h'},
          h('h2', {id: 'cards-h'}, t('recall.cards'), ' ', h('span', {class: 'muted small'}, String(r.cards.length))),
          r.cards.length ? h('ol', {class: 'cards'}, r.cards.map((card, i) => cardView(app, card, i, maxima)))
            : h('p', {class: 'muted card'}, t('recall.nocards'))),
        h('div', {},
          h('section', {class: 'card', 'aria-labelledby': 'gate-h'},
            h('h2', {id: 'gate-h'}, t('recall.gate')),
            gate.length ? h('ul', {class: 'plain'}, gate.map((line) => h('li', {class: 'trace-gate'}, line)))
              : h('p', {class: 'muted'}, t('recall.nogate')),
            r.cards.length && gate.length ? h('p', {class: 'small'}, t('recall.admitted'), ' ',
              h('span', {class: 'chips inline'}, r.cards.map((c) => h('span', {class: 'chip'}, refLink(app, c.ref))))) : null),
          h('section', {class: 'card', 'aria-labelledby': 'cool-h'},
            h('h2', {id: 'cool-h'}, t('recall.cooldown')),
            cooldown.length ? [h('ul', {class: 'plain'}, cooldown.map((line) => h('li', {class: 'trace-cooldown'}, line))),
              cooled.length ? h('p', {class: 'small'}, t('recall.removed'), ' ',
                h('span', {class: 'chips inline'}, cooled.map((ref) => h('span', {class: 'chip'}, refLink(app, ref))))) : null]
              : h('p', {class: 'muted'}, body.window ? t('recall.nocooldown', {window: body.window}) : t('recall.nowindow'))),
          h('section', {class: 'card', 'aria-labelledby': 'trace-h'},
            h('h2', {id: 'trace-h'}, t('recall.trace')),
            h('ol', {class: 'trace'}, r.trace.map((line, i) => h('li', {class: `trace-${kinds[i]}`},
              h('span', {class: 'visually-hidden'}, `${t(`trace.${kinds[i]}`)}: `), line)))))),
      h('section', {class: 'card', 'aria-labelledby': 'context-h'},
        h('h2', {id: 'context-h'}, t('recall.context'), ' ',
          h('span', {class: 'muted small'}, t('recall.tokens', {n: r.context_tokens}))),
        r.context ? h('pre', {class: 'context', tabindex: '0', 'aria-labelledby': 'context-h'}, r.context)
          : h('p', {class: 'muted'}, t('recall.nocontext')),
        h('div', {class: 'actions'}, report,
          r.context ? h('button', {type: 'button', class: 'ghost', onclick: async () => {
            try {
              await navigator.clipboard.writeText(r.context);
              app.say(t('common.copied'));
            } catch (err) {
              app.fail(err);
            }
          }}, t('recall.copy')) : null),
        delivered));
  }

  // On a phone the options would push the verdict off the first screen: they fold behind a
  // toggle that says how many are set (app.css: .fold-body).
  const optionsBody = h('div', {},
    h('div', {class: 'grid-3'},
      field(t('recall.timehint'), timeHint, {hint: t('recall.timehinthint')}),
      field(t('recall.window'), windowInput, {hint: t('recall.windowhint')}),
      field(t('recall.maxcards'), maxCards)),
    h('details', {class: 'more'}, h('summary', {}, t('recall.advanced')),
      h('div', {class: 'grid-3'},
        field(t('recall.now'), now, {hint: t('recall.nowhint')}),
        field(t('recall.format'), format),
        field(t('recall.minrel'), minRelevance, {hint: t('recall.minrelhint')}))));
  const setOptions = () => [timeHint, maxCards, now, minRelevance].filter((x) => x.value.trim()).length
    + Number(format.value !== 'blocks');
  const optionsToggle = foldToggle(optionsBody, '', {open: Boolean(mem.optionsOpen),
    onToggle: (open) => { mem.optionsOpen = open; }});
  const labelOptions = () => { optionsToggle.textContent = t('recall.options', {n: setOptions()}); };
  optionsBody.addEventListener('input', labelOptions);
  optionsBody.addEventListener('change', labelOptions);
  labelOptions();

  mount(main,
    h('div', {class: 'page-head'}, h('h1', {}, t('recall.title')), h('p', {class: 'muted'}, t('recall.intro'))),
    h('form', {class: 'card recall-form', onsubmit: (e) => {
      e.preventDefault();
      if (!query.value.trim()) return;
      busy(submit, run, app.fail);
    }},
    field(t('recall.query'), query, {className: 'wide', hint: t('recall.queryhint')}),
    optionsToggle, optionsBody,
    h('div', {class: 'actions'}, submit)),
    result);
  if (mem.result) draw(mem.result.body, mem.result.response);
}
