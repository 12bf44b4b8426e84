// One thread (an arc: a trip planned, booked, taken and remembered): its title and aliases,
// editable with the version read (a 409 is shown, not lost), its materials — the events,
// oldest first, and the summaries about them — and merge into another thread. docs/graph.md.

import {ApiError, threadList} from './api.js';
import {eventItem} from './chronicle.js';
import {splitList} from './event.js';
import {busy, field, h, mount, options} from './dom.js';
import {fmtDateTime, t} from './i18n.js';

const SUMMARY_CAP = 20;

export async function renderThread(main, [id], app) {
  if (!id) {
    location.hash = app.href('people');
    return;
  }
  let thread = null;
  let others = [];
  let summaries = [];
  let editing = null;
  const notice = h('div', {class: 'notice-area'});
  const back = () => h('p', {class: 'back'}, h('a', {href: app.href('people')}, `← ${t('nav.people')}`));

  async function fetchAll() {
    const [detail, all] = await Promise.all([app.api.get(app.path('threads', id)), threadList(app)]);
    thread = detail;
    others = all.filter((th) => th.id !== id);
    summaries = await Promise.all((thread.summaries || []).slice(0, SUMMARY_CAP).map(
      (sid) => app.api.get(app.path('events', sid)).catch(() => null)));
    summaries = summaries.filter(Boolean);
  }

  function conflict(err, mine) {
    mount(notice, h('div', {class: 'notice warn', role: 'alert'},
      h('h2', {}, t('thread.conflict')),
      h('p', {}, t('thread.conflicttext', {mine, message: err.message})),
      h('div', {class: 'actions'},
        h('button', {type: 'button', class: 'secondary', onclick: async (e) => busy(e.currentTarget, async () => {
          const keep = editing;
          await fetchAll();
          editing = keep;  // what they typed stays in the form, now on the latest version
          mount(notice);
          draw();
          app.say(t('thread.reloaded', {n: thread.version}));
        }, app.fail)}, t('thread.latest')))));
    notice.querySelector('button').focus();
  }

  async function patch(body, done) {
    const version = thread.version;
    try {
      const saved = await app.api.patch(app.path('threads', id), {version, ...body});
      mount(notice);
      done(saved);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && err.code === 'version_conflict') conflict(err, version);
      else app.fail(err);
    }
  }

  function editForm() {
    const title = h('input', {type: 'text', value: editing.title, required: true, maxlength: 200});
    const aliases = h('input', {type: 'text', value: editing.aliases, maxlength: 2000});
    const read = () => Object.assign(editing, {title: title.value, aliases: aliases.value});
    const submit = h('button', {type: 'submit', class: 'primary'}, t('edit.save'));
    return h('form', {class: 'card edit', 'aria-labelledby': 'thread-edit-h', oninput: read, onsubmit: (e) => {
      e.preventDefault();
      read();
      const body = {};
      if (editing.title.trim() && editing.title.trim() !== thread.title) body.title = editing.title.trim();
      const list = splitList(editing.aliases);
      if (JSON.stringify(list) !== JSON.stringify(thread.aliases)) body.aliases = list;
      if (!Object.keys(body).length) {
        editing = null;
        draw();
        app.say(t('edit.nothing'));
        return;
      }
      busy(submit, () => patch(body, async (saved) => {
        editing = null;
        await fetchAll();
        draw();
        app.say(t('thread.saved', {n: saved.version}));
      }), app.fail);
    }},
    h('h2', {id: 'thread-edit-h'}, t('thread.edittitle', {n: thread.version})),
    field(t('field.title'), title),
    field(t('thread.aliases'), aliases, {hint: t('edit.listhint')}),
    h('div', {class: 'actions'}, submit,
      h('button', {type: 'button', class: 'ghost', onclick: () => { editing = null; mount(notice); draw(); }}, t('common.cancel'))));
  }

  function mergeForm() {
    if (!app.canWrite() || !others.length) return null;
    const target = h('select', {required: true}, options([['', t('thread.pick')],
      ...others.map((th) => [th.id, `${th.title} (${th.events.length})`])], ''));
    const submit = h('button', {type: 'submit', class: 'secondary'}, t('thread.merge'));
    return h('form', {class: 'card', 'aria-labelledby': 'merge-h', onsubmit: (e) => {
      e.preventDefault();
      if (!target.value) return;
      const into = others.find((th) => th.id === target.value);
      busy(submit, () => patch({merge_into: target.value}, () => {
        app.flash = t('thread.merged', {from: thread.title, into: into.title});
        location.hash = app.href('thread', target.value);
      }), app.fail);
    }},
    h('h2', {id: 'merge-h'}, t('thread.mergetitle')),
    h('p', {class: 'muted small'}, t('thread.mergehint')),
    h('div', {class: 'row'}, field(t('thread.into'), target), h('div', {class: 'field'}, submit)));
  }

  function draw() {
    const materials = thread.materials || [];
    const actions = app.canWrite() && !editing ? h('div', {class: 'actions'},
      h('button', {type: 'button', class: 'secondary', onclick: () => {
        editing = {title: thread.title, aliases: thread.aliases.join(', ')};
        draw();
        main.querySelector('form.edit input').focus();
      }}, t('thread.edit'))) : null;
    mount(main, back(),
      h('div', {class: 'page-head'},
        h('h1', {}, h('span', {class: 'thread-mark', 'aria-hidden': 'true'}, '⟲ '), thread.title),
        h('p', {class: 'muted'}, t('thread.count', {n: thread.events.length}), ' · ',
          t('event.versionline', {n: thread.version, at: fmtDateTime(thread.updated_at)}),
          thread.manual ? [' · ', h('span', {class: 'badge'}, t('thread.manual'))] : null),
        thread.aliases.length ? h('p', {}, h('span', {class: 'muted'}, `${t('thread.aliases')}: `),
          h('span', {class: 'chips inline'}, thread.aliases.map((a) => h('span', {class: 'chip'}, a)))) : null,
        actions),
      notice,
      editing ? editForm() : null,
      h('div', {class: 'columns'},
        h('section', {'aria-labelledby': 'materials-h'},
          h('h2', {id: 'materials-h'}, t('thread.materials'), ' ', h('span', {class: 'muted small'}, String(materials.length))),
          h('p', {class: 'muted small'}, t('thread.materialshint'), ' ',
            h('a', {href: app.href('chronicle'), onclick: () => {
              const mem = app.remember('chronicle');
              mem.filters = {...mem.filters, thread: id, entity: ''};
            }}, t('thread.inchronicle'))),
          materials.length ? h('ol', {class: 'events compact materials'}, materials.map((e) => eventItem(app, e)))
            : h('p', {class: 'muted card'}, t('thread.empty'))),
        h('div', {},
          summaries.length ? h('section', {class: 'card', 'aria-labelledby': 'thread-sum-h'},
            h('h2', {id: 'thread-sum-h'}, t('thread.summaries')),
            h('ol', {class: 'events compact'}, summaries.map((e) => eventItem(app, e)))) : null,
          mergeForm())));
    document.title = `${thread.title} · ${t('app.name')}`;
  }

  try {
    await fetchAll();
  } catch (err) {
    mount(main, back(), h('h1', {}, t('thread.missing')), h('p', {class: 'error'}, app.errorText(err)));
    return;
  }
  draw();
}
