// The chronicle: the timeline by month, a page of events at a time, key events highlighted,
// session summaries apart (asked for with kind=summary, folded away, never mixed into the
// timeline), filters (time and
// status ask the server; a thread or an entity loads its events whole; person, tag and search
// filter what is loaded) and a link to each event's page.

import {ApiError, allEvents, entityList, spacePath, threadList} from './api.js';
import {debounce, field, foldToggle, h, mount, options} from './dom.js';
import {fmtDayParts, fmtMonth, fmtWhen, t} from './i18n.js';

export const KEY_IMPORTANCE = 7;  // ANNALS_HIGHLIGHT_THRESHOLD's default
const PAGE = 100;
const DEFAULTS = {q: '', from: '', to: '', person: '', tag: '', thread: '', entity: '', status: 'active', keyOnly: false};

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

/** How many filters other than the search differ from their defaults. */
function activeFilters(f) {
  return Object.keys(DEFAULTS).filter((name) => name !== 'q' && f[name] !== DEFAULTS[name]).length;
}

export function matches(event, terms) {
  if (!terms.length) return true;
  const text = [event.title, event.summary, event.location || '', ...event.participants, ...event.tags]
    .join('\n').toLowerCase();
  return terms.every((term) => text.includes(term));
}

/** A summary's level (tag `level:N`), 1 when it has none. */
export function summaryLevel(event) {
  const tag = (event.tags || []).find((x) => /^level:\d+$/.test(x));
  return tag ? Number(tag.slice(6)) : 1;
}

export function isSummary(event) {
  return event.kind === 'summary';
}

/** {eventId: {id, title}} from a list of threads (GET …/threads). */
export function threadIndex(threads) {
  const out = {};
  for (const th of threads || []) for (const id of th.events || []) out[id] = {id: th.id, title: th.title};
  return out;
}

function overlaps(event, from, to) {
  const start = new Date(event.when.start).getTime();
  const end = new Date(event.when.end).getTime();
  return (!from || end > new Date(dayStart(from)).getTime()) && (!to || start < new Date(dayStart(to, 1)).getTime());
}

export function eventItem(app, event, {thread} = {}) {
  const day = fmtDayParts(event.when);
  const summary = isSummary(event);
  return h('li', {class: ['event', isKey(event) && !summary && 'key', summary && 'summary-event', event.status !== 'active' && 'faded']},
    h('div', {class: 'event-date', 'aria-hidden': 'true'}, h('span', {class: 'day'}, day.day), h('span', {}, day.rest)),
    h('div', {class: 'event-body'},
      h('h3', {class: 'event-title'},
        isKey(event) && !summary ? h('span', {class: 'star', title: t('event.key')}, '★',
          h('span', {class: 'visually-hidden'}, `${t('event.key')}: `)) : null,
        summary ? [h('span', {class: 'badge summary'}, t('summary.badge', {n: summaryLevel(event)})), ' '] : null,
        h('a', {href: app.href('event', event.id)}, event.title)),
      h('p', {class: 'when muted'}, fmtWhen(event.when)),
      event.summary !== event.title ? h('p', {class: 'summary'}, event.summary) : null,
      h('ul', {class: 'chips', 'aria-label': t('event.about')},
        thread ? h('li', {}, h('a', {class: 'chip thread', href: app.href('thread', thread.id)},
          h('span', {class: 'visually-hidden'}, `${t('thread.label')}: `), `⟲ ${thread.title}`)) : null,
        event.participants.map((p) => h('li', {class: 'chip person'}, p)),
        (summary ? event.tags.filter((x) => x !== 'summary' && !x.startsWith('level:')) : event.tags)
          .map((tag) => h('li', {class: 'chip tag'}, `#${tag}`)),
        event.status !== 'active' ? h('li', {class: `chip status-${event.status}`}, t(`status.${event.status}`)) : null)),
    h('div', {class: 'importance', title: t('event.importance')},
      h('span', {class: 'visually-hidden'}, `${t('event.importance')}: `), String(event.importance)));
}

export async function renderChronicle(main, _args, app) {
  const mem = app.remember('chronicle');
  const f = (mem.filters = {...DEFAULTS, ...mem.filters});
  let events = [];
  let cursor = null;
  let threads = [];
  let entities = [];
  let inThread = {};

  const count = h('p', {class: 'muted count', 'aria-live': 'polite'});
  const list = h('div', {class: 'timeline'});
  const summaries = h('div', {class: 'summaries-area'});
  const scopeNote = h('div', {class: 'scope-note'});
  const more = h('button', {type: 'button', class: 'secondary', hidden: true,
    onclick: () => load(false)}, t('chronicle.more'));

  const search = h('input', {type: 'search', value: f.q, placeholder: t('chronicle.searchph'),
    oninput: debounce(() => { f.q = search.value; draw(); }, 120)});
  const from = h('input', {type: 'date', value: f.from, onchange: () => { f.from = from.value; load(true); }});
  const to = h('input', {type: 'date', value: f.to, onchange: () => { f.to = to.value; load(true); }});
  const person = h('select', {onchange: () => { f.person = person.value; draw(); }});
  const tag = h('select', {onchange: () => { f.tag = tag.value; draw(); }});
  const thread = h('select', {onchange: () => { f.thread = thread.value; load(true); }});
  const entity = h('select', {onchange: () => { f.entity = entity.value; load(true); }});
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
  const entityField = field(t('chronicle.entity'), entity);
  entity.title = t('chronicle.entityhint');
  entityField.hidden = !app.features.entities;
  // On a phone the filters would fill the first screen: all but the search fold behind a
  // toggle that says how many are on (app.css: .fold-body), open again if left open.
  const folded = h('div', {},
    field(t('chronicle.from'), from), field(t('chronicle.to'), to),
    field(t('chronicle.person'), person), entityField, field(t('chronicle.tag'), tag), threadField,
    field(t('chronicle.status'), status),
    h('div', {class: 'field check'}, keyOnly, h('label', {for: keyOnly.id}, t('chronicle.keyonly'))),
    h('div', {class: 'field end'}, reset));
  const toggle = foldToggle(folded, t('chronicle.morefilters', {n: 0}), {open: Boolean(mem.filtersOpen),
    onToggle: (open) => { mem.filtersOpen = open; }});

  mount(main,
    h('div', {class: 'page-head'}, h('h1', {}, t('chronicle.title')), count),
    h('form', {class: 'filters card', role: 'search', 'aria-label': t('chronicle.filters'),
      onsubmit: (event) => event.preventDefault()},
    field(t('chronicle.search'), search, {className: 'wide'}), toggle, folded),
    scopeNote, summaries, list, h('div', {class: 'actions center'}, more));

  function fillSelect(select, values, selected, allLabel) {
    mount(select, options([['', allLabel], ...values.map((v) => [v, v])], selected));
    select.value = values.includes(selected) ? selected : '';
  }

  function refreshChoices() {
    const people = [...new Set(events.flatMap((e) => e.participants))].sort((a, b) => a.localeCompare(b));
    const tags = [...new Set(events.filter((e) => !isSummary(e)).flatMap((e) => e.tags))].sort((a, b) => a.localeCompare(b));
    fillSelect(person, people, f.person, t('chronicle.anyone'));
    fillSelect(tag, tags, f.tag, t('chronicle.anytag'));
    mount(thread, options([['', t('chronicle.anythread')],
      ...threads.map((th) => [th.id, `${th.title} (${th.events.length})`])], f.thread));
    thread.value = threads.some((th) => th.id === f.thread) ? f.thread : '';
    const kinds = [...new Set(entities.map((e) => e.kind))];
    mount(entity, h('option', {value: '', selected: !f.entity}, t('chronicle.anything')),
      kinds.map((kind) => h('optgroup', {label: t(`kind.${kind}`)},
        options(entities.filter((e) => e.kind === kind).map((e) => [e.id, `${e.name} (${e.event_count})`]), f.entity))));
    entity.value = entities.some((e) => e.id === f.entity) ? f.entity : '';
  }

  function drawScope() {
    const th = threads.find((x) => x.id === f.thread);
    const en = entities.find((x) => x.id === f.entity);
    mount(scopeNote, th || en ? h('p', {class: 'notice info'},
      th ? [t('chronicle.inthread'), ' ', h('a', {href: app.href('thread', th.id)}, th.title)] : null,
      th && en ? ' · ' : null,
      en ? [t('chronicle.naming'), ' ', h('a', {href: app.href('people', en.id)}, en.name)] : null) : null);
  }

  function draw() {
    const terms = f.q.toLowerCase().split(/\s+/).filter(Boolean);
    const shown = events.filter((e) => (!f.person || e.participants.includes(f.person))
      && (!f.tag || e.tags.includes(f.tag))
      && (!f.keyOnly || isKey(e))
      && matches(e, terms));
    const plain = shown.filter((e) => !isSummary(e));
    const told = shown.filter(isSummary);
    const total = events.filter((e) => !isSummary(e)).length;
    count.textContent = plain.length === total
      ? t('chronicle.count', {n: total, more: cursor ? '+' : ''})
      : t('chronicle.filtered', {n: plain.length, total, more: cursor ? '+' : ''});
    more.hidden = !cursor;
    toggle.textContent = t('chronicle.morefilters', {n: activeFilters(f)});
    drawScope();
    mount(summaries, told.length ? h('details', {class: 'card summaries', open: mem.summariesOpen || null,
      ontoggle: (e) => { mem.summariesOpen = e.currentTarget.open; }},
    h('summary', {}, t('chronicle.summaries', {n: told.length}), ' ',
      h('span', {class: 'muted small'}, t('chronicle.summarieshint'))),
    h('ol', {class: 'events compact'}, [...told].sort((a, b) => summaryLevel(b) - summaryLevel(a)
      || b.when.start.localeCompare(a.when.start)).map((event) => eventItem(app, event)))) : null);
    if (!events.length) {
      mount(list, h('div', {class: 'empty card'}, h('p', {}, t('chronicle.empty')),
        app.canWrite() ? h('p', {}, h('a', {href: app.href('ops')}, t('chronicle.emptyaction'))) : null));
      return;
    }
    if (!plain.length) {
      mount(list, h('p', {class: 'empty card'}, t('chronicle.nomatch')));
      return;
    }
    const months = new Map();
    for (const event of plain) {
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
        h('ol', {class: 'events'}, items.map((event) => eventItem(app, event, {thread: inThread[event.id]}))));
    }));
  }

  /** A thread's or an entity's events (both: those in both), complete; null without either. */
  async function scoped() {
    const lists = [];
    if (f.thread) lists.push((await app.api.get(app.path('threads', f.thread))).materials);
    if (f.entity) lists.push((await app.api.get(app.path('entities', f.entity))).events);
    if (!lists.length) return null;
    const [first, ...rest] = lists;
    return first.filter((e) => rest.every((other) => other.some((x) => x.id === e.id)))
      .filter((e) => (f.status === 'all' || e.status === f.status) && overlaps(e, f.from, f.to))
      .sort((a, b) => b.when.start.localeCompare(a.when.start));
  }

  async function load(fresh) {
    if (app.isNew()) {  // nothing written yet: an empty timeline, not a 404
      refreshChoices();
      draw();
      return;
    }
    more.disabled = true;
    try {
      const chosen = fresh ? await scoped() : null;
      if (chosen) {
        events = chosen;
        cursor = null;
      } else {
        // The timeline (events and notes) a page at a time; the summaries apart, all at once
        // (kind=summary): they are few, and sit in their own folded section.
        const from = f.from ? dayStart(f.from) : null;
        const to = f.to ? dayStart(f.to, 1) : null;
        const page = await app.api.get(spacePath(app.space, 'events'), {
          limit: PAGE, status: f.status, cursor: fresh ? null : cursor, from, to,
        });
        const told = fresh ? (await allEvents(app.api, app.space, {status: f.status, kind: 'summary', from, to, cap: 1000})).events : [];
        events = fresh ? [...page.events, ...told] : [...events, ...page.events];
        cursor = page.next_cursor;
      }
      refreshChoices();
      draw();
    } catch (err) {
      if (err instanceof ApiError && err.status === 404 && (f.thread || f.entity)) {
        f.thread = '';  // merged away or gone: show everything again
        f.entity = '';
        app.say(t('chronicle.scopegone'));
        await load(true);
        return;
      }
      app.fail(err);
    } finally {
      more.disabled = false;
    }
  }

  try {
    if (!app.isNew()) [threads, entities] = await Promise.all([threadList(app), entityList(app)]);
  } catch (err) {
    app.fail(err);
  }
  inThread = threadIndex(threads);
  await load(true);
}
