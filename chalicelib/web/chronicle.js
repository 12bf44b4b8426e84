// The chronicle: the timeline by month, a page of events at a time, key events highlighted,
// filters (time and status ask the server; person, tag, thread and search filter what is
// loaded) and a link to each event's page.

import {spacePath} from './api.js';
import {debounce, field, h, mount, options} from './dom.js';
import {fmtDayParts, fmtMonth, fmtWhen, t} from './i18n.js';

export const KEY_IMPORTANCE = 7;  // ANNALS_HIGHLIGHT_THRESHOLD's default
const PAGE = 100;
const DEFAULTS = {q: '', from: '', to: '', person: '', tag: '', thread: '', status: 'active', keyOnly: false};

export function isKey(event) {
  return event.importance >= KEY_IMPORTANCE;
}

/** "2026-06-01" in the browser's zone → "2026-06-01T00:00:00+08:00" (plus `days`). */
export function dayStart(date, days = 0) {
  const [y, m, d] = date.split('-').map(Number);
  const local = new Date(y, m - 1, d + days);
  const offset = -local.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const pad = (n) => String(Math.abs(n)).padStart(2, '0');
  return `${local.getFullYear()}-${pad(local.getMonth() + 1)}-${pad(local.getDate())}T00:00:00`
    + `${sign}${pad(Math.trunc(offset / 60))}:${pad(offset % 60)}`;
}

export function matches(event, terms) {
  if (!terms.length) return true;
  const text = [event.title, event.summary, event.location || '', ...event.participants, ...event.tags]
    .join('\n').toLowerCase();
  return terms.every((term) => text.includes(term));
}

/** Threads, when this server has them (GET …/threads): {id: {title, events: Set}}. */
async function loadThreads(app) {
  if (!app.features.threads) return null;
  try {
    const data = await app.api.get(app.path('threads'));
    const list = Array.isArray(data) ? data : (data.threads || data.items || []);
    return Object.fromEntries(list.map((th) => [th.id, {
      title: th.title || th.name || th.id,
      events: new Set(th.event_ids || (th.events || []).map((e) => (typeof e === 'string' ? e : e.id))),
    }]));
  } catch {
    return null;
  }
}

function inThread(event, id, threads) {
  return event.thread === id || (event.threads || []).includes(id) || threads?.[id]?.events.has(event.id);
}

export function eventItem(app, event) {
  const day = fmtDayParts(event.when);
  return h('li', {class: ['event', isKey(event) && 'key', event.status !== 'active' && 'faded']},
    h('div', {class: 'event-date', 'aria-hidden': 'true'}, h('span', {class: 'day'}, day.day), h('span', {}, day.rest)),
    h('div', {class: 'event-body'},
      h('h3', {class: 'event-title'},
        isKey(event) ? h('span', {class: 'star', title: t('event.key')}, '★',
          h('span', {class: 'visually-hidden'}, `${t('event.key')}: `)) : null,
        h('a', {href: app.href('event', event.id)}, event.title)),
      h('p', {class: 'when muted'}, fmtWhen(event.when)),
      event.summary !== event.title ? h('p', {class: 'summary'}, event.summary) : null,
      h('ul', {class: 'chips', 'aria-label': t('event.about')},
        event.participants.map((p) => h('li', {class: 'chip person'}, p)),
        event.tags.map((tag) => h('li', {class: 'chip tag'}, `#${tag}`)),
        event.status !== 'active' ? h('li', {class: `chip status-${event.status}`}, t(`status.${event.status}`)) : null)),
    h('div', {class: 'importance', title: t('event.importance')},
      h('span', {class: 'visually-hidden'}, `${t('event.importance')}: `), String(event.importance)));
}

export async function renderChronicle(main, _args, app) {
  const mem = app.remember('chronicle');
  const f = (mem.filters ??= {...DEFAULTS});
  let events = [];
  let cursor = null;
  let threads = null;

  const count = h('p', {class: 'muted count', 'aria-live': 'polite'});
  const list = h('div', {class: 'timeline'});
  const more = h('button', {type: 'button', class: 'secondary', hidden: true,
    onclick: () => load(false)}, t('chronicle.more'));

  const search = h('input', {type: 'search', value: f.q, placeholder: t('chronicle.searchph'),
    oninput: debounce(() => { f.q = search.value; draw(); }, 120)});
  const from = h('input', {type: 'date', value: f.from, onchange: () => { f.from = from.value; load(true); }});
  const to = h('input', {type: 'date', value: f.to, onchange: () => { f.to = to.value; load(true); }});
  const person = h('select', {onchange: () => { f.person = person.value; draw(); }});
  const tag = h('select', {onchange: () => { f.tag = tag.value; draw(); }});
  const thread = h('select', {onchange: () => { f.thread = thread.value; draw(); }});
  const status = h('select', {onchange: () => { f.status = status.value; load(true); }},
    options(['active', 'archived', 'superseded', 'all'].map((s) => [s, t(`status.${s}`)]), f.status));
  const keyOnly = h('input', {type: 'checkbox', checked: f.keyOnly, onchange: () => { f.keyOnly = keyOnly.checked; draw(); }});
  keyOnly.id = 'key-only';
  const reset = h('button', {type: 'button', class: 'ghost', onclick: () => {
    Object.assign(f, DEFAULTS);
    renderChronicle(main, _args, app);
  }}, t('chronicle.reset'));
  const threadField = field(t('chronicle.thread'), thread);
  threadField.hidden = !app.features.threads;

  mount(main,
    h('div', {class: 'page-head'}, h('h1', {}, t('chronicle.title')), count),
    h('form', {class: 'filters card', role: 'search', 'aria-label': t('chronicle.filters'),
      onsubmit: (event) => event.preventDefault()},
    field(t('chronicle.search'), search, {className: 'wide'}),
    field(t('chronicle.from'), from), field(t('chronicle.to'), to),
    field(t('chronicle.person'), person), field(t('chronicle.tag'), tag), threadField,
    field(t('chronicle.status'), status),
    h('div', {class: 'field check'}, keyOnly, h('label', {for: keyOnly.id}, t('chronicle.keyonly'))),
    h('div', {class: 'field end'}, reset)),
    list, h('div', {class: 'actions center'}, more));

  function fillSelect(select, values, selected, allLabel) {
    mount(select, options([['', allLabel], ...values.map((v) => [v, v])], selected));
    select.value = values.includes(selected) ? selected : '';
  }

  function refreshChoices() {
    const people = [...new Set(events.flatMap((e) => e.participants))].sort((a, b) => a.localeCompare(b));
    const tags = [...new Set(events.flatMap((e) => e.tags))].sort((a, b) => a.localeCompare(b));
    fillSelect(person, people, f.person, t('chronicle.anyone'));
    fillSelect(tag, tags, f.tag, t('chronicle.anytag'));
    if (threads) {
      mount(thread, options([['', t('chronicle.anythread')],
        ...Object.entries(threads).map(([id, th]) => [id, th.title])], f.thread));
    }
  }

  function draw() {
    const terms = f.q.toLowerCase().split(/\s+/).filter(Boolean);
    const shown = events.filter((e) => (!f.person || e.participants.includes(f.person))
      && (!f.tag || e.tags.includes(f.tag))
      && (!f.thread || inThread(e, f.thread, threads))
      && (!f.keyOnly || isKey(e))
      && matches(e, terms));
    count.textContent = shown.length === events.length
      ? t('chronicle.count', {n: events.length, more: cursor ? '+' : ''})
      : t('chronicle.filtered', {n: shown.length, total: events.length, more: cursor ? '+' : ''});
    more.hidden = !cursor;
    if (!events.length) {
      mount(list, h('div', {class: 'empty card'}, h('p', {}, t('chronicle.empty')),
        app.canWrite() ? h('p', {}, h('a', {href: app.href('ops')}, t('chronicle.emptyaction'))) : null));
      return;
    }
    if (!shown.length) {
      mount(list, h('p', {class: 'empty card'}, t('chronicle.nomatch')));
      return;
    }
    const months = new Map();
    for (const event of shown) {
      const month = event.when.start.slice(0, 7);
      if (!months.has(month)) months.set(month, []);
      months.get(month).push(event);
    }
    mount(list, [...months].map(([month, items]) => {
      const id = `m-${month}`;
      const keys = items.filter(isKey).length;
      return h('section', {class: 'month', 'aria-labelledby': id},
        h('h2', {id}, fmtMonth(month), ' ',
          h('span', {class: 'muted small'}, t('chronicle.monthcount', {n: items.length, k: keys}))),
        h('ol', {class: 'events'}, items.map((event) => eventItem(app, event))));
    }));
  }

  async function load(fresh) {
    more.disabled = true;
    try {
      const page = await app.api.get(spacePath(app.space, 'events'), {
        limit: PAGE, status: f.status, cursor: fresh ? null : cursor,
        from: f.from ? dayStart(f.from) : null, to: f.to ? dayStart(f.to, 1) : null,
      });
      events = fresh ? page.events : [...events, ...page.events];
      cursor = page.next_cursor;
      refreshChoices();
      draw();
    } catch (err) {
      app.fail(err);
    } finally {
      more.disabled = false;
    }
  }

  threads = await loadThreads(app);
  await load(true);
}
