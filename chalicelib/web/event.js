// One event: what it says, the messages it cites (its evidence), every version as a readable
// diff, and edit / archive / restore with optimistic versions (a 409 is shown, not lost).

import {ApiError, threadList} from './api.js';
import {isKey, isSummary, summaryLevel} from './chronicle.js';
import {diffView, listChange} from './diff.js';
import {busy, field, h, mount} from './dom.js';
import {fmtDateTime, fmtWhen, t} from './i18n.js';

const TEXT_FIELDS = ['title', 'summary', 'location'];
const RELATED_CAP = 30;
// What a relation says, read from either end: [as its src, as its dst] (docs/graph.md:
// `updates` src = the later event, `causes` src = the earlier, `follows` src = the later).
const RELATION_WORDS = {
  updates: ['relation.replaces', 'relation.replacedby'],
  same_thread: ['relation.samethread', 'relation.samethread'],
  causes: ['relation.ledto', 'relation.causedby'],
  follows: ['relation.follows', 'relation.followedby'],
};

/** An event's relations as [{key, other, note, kind}] from its own side, each pair once. */
export function relationsFrom(id, relations) {
  const seen = new Set();
  const out = [];
  for (const r of relations || []) {
    const mine = r.src === id;
    const other = mine ? r.dst : r.src;
    const words = RELATION_WORDS[r.kind] || [`relation.${r.kind}`, `relation.${r.kind}`];
    const key = words[mine ? 0 : 1];
    if (other === id || seen.has(`${key}|${other}`)) continue;
    seen.add(`${key}|${other}`);
    out.push({key, other, note: r.note || '', kind: r.kind});
  }
  const order = ['relation.replacedby', 'relation.replaces', 'relation.causedby', 'relation.ledto',
    'relation.follows', 'relation.followedby', 'relation.samethread'];
  return out.sort((a, b) => order.indexOf(a.key) - order.indexOf(b.key));
}
const LIST_FIELDS = ['participants', 'tags'];

export function splitList(text) {
  return [...new Set(String(text).split(/[,，、;；\n]/).map((x) => x.trim()).filter(Boolean))];
}

/** The fields of `form` that differ from `event`, as a PATCH body (without version). */
export function changes(event, values) {
  const out = {};
  for (const name of TEXT_FIELDS) {
    const value = values[name].trim();
    const before = event[name] || '';
    if (value !== before) out[name] = name === 'location' && !value ? null : value;
  }
  if (values.importance !== event.importance) out.importance = values.importance;
  for (const name of LIST_FIELDS) {
    if (JSON.stringify(values[name]) !== JSON.stringify(event[name])) out[name] = values[name];
  }
  return out;
}

function versionChanges(before, after) {
  const rows = [];
  const labels = {del: t('diff.removed'), ins: t('diff.added')};
  for (const name of TEXT_FIELDS) {
    if ((before[name] || '') !== (after[name] || '')) {
      rows.push([t(`field.${name}`), diffView(before[name] || '', after[name] || '', labels)]);
    }
  }
  const whenBefore = fmtWhen(before.when);
  const whenAfter = fmtWhen(after.when);
  if (whenBefore !== whenAfter) rows.push([t('field.when'), diffView(whenBefore, whenAfter, labels)]);
  for (const name of ['importance', 'status', 'kind', 'plan']) {
    if (before[name] !== after[name]) {
      const show = (v) => (name === 'status' ? t(`status.${v}`) : String(v));
      rows.push([t(`field.${name}`), h('span', {}, h('del', {}, show(before[name])), ' → ', h('ins', {}, show(after[name])))]);
    }
  }
  for (const name of LIST_FIELDS) {
    const {added, removed} = listChange(before[name], after[name]);
    if (added.length || removed.length) {
      rows.push([t(`field.${name}`), h('span', {},
        removed.map((x) => h('del', {class: 'chip'}, h('span', {class: 'visually-hidden'}, `${t('diff.removed')}: `), x)),
        added.map((x) => h('ins', {class: 'chip'}, h('span', {class: 'visually-hidden'}, `${t('diff.added')}: `), x)))]);
    }
  }
  if (JSON.stringify(before.sources) !== JSON.stringify(after.sources)) {
    rows.push([t('field.sources'), t('history.sources', {n: after.sources.length})]);
  }
  return rows;
}

function historyView(versions) {
  const ordered = [...versions].sort((a, b) => b.version - a.version);
  return h('ol', {class: 'history', reversed: true}, ordered.map((version) => {
    const previous = versions.find((v) => v.version === version.version - 1);
    const rows = previous ? versionChanges(previous, version) : [];
    return h('li', {},
      h('h3', {}, t('history.version', {n: version.version}), ' ',
        h('span', {class: 'muted small'}, fmtDateTime(version.updated_at))),
      previous
        ? (rows.length ? h('dl', {class: 'changes'}, rows.map(([name, value]) => [h('dt', {}, name), h('dd', {}, value)]))
          : h('p', {class: 'muted'}, t('history.nochange')))
        : h('p', {class: 'muted'}, t('history.created', {title: version.title})));
  }));
}

function evidenceView(messages) {
  if (!messages || !messages.length) return h('p', {class: 'muted'}, t('event.noevidence'));
  return h('ol', {class: 'messages'}, messages.map((m) => h('li', {class: `message role-${m.role}`},
    h('p', {class: 'message-head'}, h('strong', {}, m.speaker), ' ',
      h('span', {class: 'muted small'}, `${fmtDateTime(m.at)} · ${m.session} #${m.seq}`)),
    h('p', {class: 'message-text'}, m.content))));
}

export async function renderEvent(main, [id], app) {
  if (!id) {
    location.hash = app.href('chronicle');
    return;
  }
  let event = null;
  let versions = [];
  let editing = null;  // the values in the form while it is open
  let related = [];  // [{key, other, note, kind, event}] — its relations, with the other event
  let thread = null;  // the thread it belongs to

  const notice = h('div', {class: 'notice-area'});

  async function fetchAll() {
    [event, {versions}] = await Promise.all([
      app.api.get(app.path('events', id), {evidence: 'true'}),
      app.api.get(app.path('events', id, 'history')),
    ]);
    await fetchGraph();
  }

  /** Its thread and the events its relations name (their titles), where the server has them. */
  async function fetchGraph() {
    const links = relationsFrom(id, event.relations).slice(0, RELATED_CAP);
    const others = new Map();
    await Promise.all([...new Set(links.map((l) => l.other))].map(async (other) => {
      try {
        others.set(other, await app.api.get(app.path('events', other)));
      } catch {
        others.set(other, null);  // gone: the link still shows its id
      }
    }));
    related = links.map((l) => ({...l, event: others.get(l.other)}));
    try {
      const found = (await threadList(app)).find((th) => th.events.includes(id) || (th.summaries || []).includes(id));
      thread = found || null;
    } catch {
      thread = null;
    }
  }

  function relatedView() {
    if (!thread && !related.length) return null;
    return h('section', {class: 'card', 'aria-labelledby': 'related-h'},
      h('h2', {id: 'related-h'}, t('event.related')),
      thread ? h('p', {class: 'thread-line'}, h('span', {class: 'muted'}, `${t('thread.label')}: `),
        h('a', {class: 'chip thread', href: app.href('thread', thread.id)}, `⟲ ${thread.title}`), ' ',
        h('span', {class: 'muted small'}, t('thread.count', {n: thread.events.length}))) : null,
      related.length ? h('ul', {class: 'relations'}, related.map((r) => h('li', {class: `rel rel-${r.kind}`},
        h('span', {class: 'rel-kind'}, t(r.key)), ' ',
        h('a', {href: app.href('event', r.other)}, r.event ? r.event.title : r.other),
        r.event ? h('span', {class: 'muted small'}, ` · ${fmtWhen(r.event.when)}`,
          r.event.status !== 'active' ? ` · ${t(`status.${r.event.status}`)}` : '') : null,
        r.note && r.kind !== 'same_thread' ? h('p', {class: 'muted small rel-note'}, r.note) : null)))
        : h('p', {class: 'muted small'}, t('event.norelations')));
  }

  function replacedNotice() {
    const by = related.filter((r) => r.key === 'relation.replacedby');
    if (!by.length) return null;
    return h('p', {class: 'notice info replaced'}, t('relation.replacednote'), ' ',
      by.map((r, i) => [i ? ', ' : '', h('a', {href: app.href('event', r.other)}, r.event ? r.event.title : r.other)]));
  }

  async function refetch() {
    const evidence = event?.evidence;
    const [fresh, history] = await Promise.all([
      app.api.get(app.path('events', id)),
      app.api.get(app.path('events', id, 'history')),
    ]);
    event = {...fresh, evidence};
    versions = history.versions;
  }

  function conflict(err, mine, retry) {
    mount(notice, h('div', {class: 'notice warn', role: 'alert'},
      h('h2', {}, t('conflict.title')),
      h('p', {}, t('conflict.text', {mine, message: err.message})),
      h('div', {class: 'actions'},
        h('button', {type: 'button', class: 'secondary', onclick: async () => {
          editing = null;
          mount(notice);
          await refetch();
          draw();
          app.say(t('conflict.reloaded', {n: event.version}));
        }}, t('conflict.latest')),
        retry ? h('button', {type: 'button', class: 'primary', onclick: (e) => busy(e.currentTarget, retry, app.fail)},
          t('conflict.overwrite')) : null)));
    notice.querySelector('button').focus();
  }

  async function save(values, version) {
    const body = changes(event, values);
    if (!Object.keys(body).length) {
      editing = null;
      draw();
      app.say(t('edit.nothing'));
      return;
    }
    try {
      const saved = await app.api.patch(app.path('events', id), {version, ...body});
      editing = null;
      mount(notice);
      event = {...saved, evidence: event.evidence};
      versions = (await app.api.get(app.path('events', id, 'history'))).versions;
      draw();
      app.say(t('edit.saved', {n: saved.version}));
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        conflict(err, version, async () => {
          const latest = await app.api.get(app.path('events', id));
          await save(values, latest.version);
        });
      } else {
        app.fail(err);
      }
    }
  }

  async function setStatus(status) {
    const version = event.version;
    try {
      const saved = status === 'archived'
        ? await app.api.delete(app.path('events', id))
        : await app.api.patch(app.path('events', id), {version, status});
      event = {...saved, evidence: event.evidence};
      versions = (await app.api.get(app.path('events', id, 'history'))).versions;
      mount(notice);
      draw();
      app.say(t(status === 'archived' ? 'edit.archived' : 'edit.restored', {n: saved.version}));
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        conflict(err, version, async () => {
          await refetch();
          await setStatus(status);
        });
      } else {
        app.fail(err);
      }
    }
  }

  function editForm() {
    const values = editing;
    const title = h('input', {type: 'text', value: values.title, required: true, maxlength: 200});
    const summary = h('textarea', {rows: 5, required: true, maxlength: 4000}, values.summary);
    const importance = h('input', {type: 'number', min: 1, max: 10, step: 1, value: values.importance, required: true});
    const participants = h('input', {type: 'text', value: values.participants.join(', ')});
    const tags = h('input', {type: 'text', value: values.tags.join(', ')});
    const place = h('input', {type: 'text', value: values.location, maxlength: 200});
    const read = () => Object.assign(editing, {
      title: title.value, summary: summary.value, importance: Number(importance.value),
      participants: splitList(participants.value), tags: splitList(tags.value), location: place.value,
    });
    const submit = h('button', {type: 'submit', class: 'primary'}, t('edit.save'));
    return h('form', {class: 'card edit', 'aria-labelledby': 'edit-title', oninput: read,
      onsubmit: (e) => {
        e.preventDefault();
        read();
        busy(submit, () => save({...editing}, event.version), app.fail);
      }},
    h('h2', {id: 'edit-title'}, t('edit.title', {n: event.version})),
    field(t('field.title'), title),
    field(t('field.summary'), summary),
    h('div', {class: 'grid-3'},
      field(t('field.importance'), importance, {hint: t('edit.importancehint')}),
      field(t('field.participants'), participants, {hint: t('edit.listhint')}),
      field(t('field.tags'), tags, {hint: t('edit.listhint')})),
    field(t('field.location'), place),
    h('div', {class: 'actions'}, submit,
      h('button', {type: 'button', class: 'ghost', onclick: () => { editing = null; mount(notice); draw(); }}, t('common.cancel'))));
  }

  function draw() {
    const canEdit = app.canWrite() && event.status !== 'superseded';
    const actions = canEdit ? h('div', {class: 'actions'},
      editing ? null : h('button', {type: 'button', class: 'secondary', onclick: () => {
        editing = {title: event.title, summary: event.summary, importance: event.importance,
          participants: [...event.participants], tags: [...event.tags], location: event.location || ''};
        draw();
        main.querySelector('form.edit input').focus();
      }}, t('edit.edit')),
      event.status === 'active'
        ? h('button', {type: 'button', class: 'ghost danger', onclick: (e) => busy(e.currentTarget, () => setStatus('archived'), app.fail)}, t('edit.archive'))
        : h('button', {type: 'button', class: 'ghost', onclick: (e) => busy(e.currentTarget, () => setStatus('active'), app.fail)}, t('edit.restore'))) : null;
    const details = [
      [t('field.when'), fmtWhen(event.when) + (event.plan ? ` · ${t('event.plan')}` : '')],
      [t('field.participants'), event.participants.length ? h('span', {class: 'chips inline'},
        event.participants.map((p) => h('a', {class: 'chip person', href: app.href('people', p)}, p))) : '—'],
      [t('field.location'), event.location || '—'],
      [t('field.tags'), event.tags.length ? event.tags.map((x) => `#${x}`).join(' ') : '—'],
      [t('field.importance'), `${event.importance} / 10`],
      [t('field.status'), t(`status.${event.status}`)],
      [t('field.version'), String(event.version)],
      [t('field.kind'), event.kind],
      [t('field.sources'), event.sources.map((src) => `${src.session} #${src.seq_start}${src.seq_end !== src.seq_start ? `–${src.seq_end}` : ''}`).join(', ') || '—'],
      [t('field.id'), h('code', {}, event.id)],
    ];
    mount(main,
      h('p', {class: 'back'}, h('a', {href: app.href('chronicle')}, `← ${t('nav.chronicle')}`)),
      h('div', {class: ['page-head', isKey(event) && 'key']},
        h('h1', {}, isKey(event) ? h('span', {class: 'star', title: t('event.key')}, '★',
          h('span', {class: 'visually-hidden'}, `${t('event.key')}: `)) : null, event.title),
        h('p', {class: 'muted'}, fmtWhen(event.when), ' · ',
          isSummary(event) ? [h('span', {class: 'badge summary'}, t('summary.badge', {n: summaryLevel(event)})), ' · '] : null,
          h('span', {class: `badge status-${event.status}`}, t(`status.${event.status}`)), ' · ',
          t('event.versionline', {n: event.version, at: fmtDateTime(event.updated_at)})),
        actions),
      replacedNotice(),
      notice,
      editing ? editForm() : null,
      h('div', {class: 'columns'},
        h('div', {},
          h('section', {class: 'card', 'aria-labelledby': 'summary-h'},
            h('h2', {id: 'summary-h'}, t('event.summary')),
            h('p', {class: 'summary-full'}, event.summary),
            h('dl', {class: 'details'}, details.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]))),
          h('section', {class: 'card', 'aria-labelledby': 'evidence-h'},
            h('h2', {id: 'evidence-h'}, t('event.evidence'), ' ',
              h('span', {class: 'muted small'}, String((event.evidence || []).length))),
            evidenceView(event.evidence))),
        h('div', {},
          relatedView(),
          h('section', {class: 'card', 'aria-labelledby': 'history-h'},
            h('h2', {id: 'history-h'}, t('event.history')),
            historyView(versions)))));
    document.title = `${event.title} · ${t('app.name')}`;
  }

  try {
    await fetchAll();
  } catch (err) {
    mount(main, h('p', {class: 'back'}, h('a', {href: app.href('chronicle')}, `← ${t('nav.chronicle')}`)),
      h('h1', {}, t('event.missing')), h('p', {class: 'error'}, app.errorText(err)));
    return;
  }
  draw();
}
