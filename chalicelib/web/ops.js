// Operations: import a chat file (read here, PUT in batches with progress), run extraction,
// merge and forgetting now, job status and failures, numbers, export, and API keys (admin).
// An extraction too large for one request comes back as a background job (202): it is
// followed (GET …/jobs/{id}) with its progress until it is done.

import {ApiError} from './api.js';
import {SESSION_PATTERN, busy, download, field, h, mount, options} from './dom.js';
import {fmtDateTime, fmtNumber, t} from './i18n.js';
import {batches, parseChat, sessionName} from './importer.js';

const SPACE_ID = /^[A-Za-z0-9_.:@-]{1,128}$/;
const JOB_POLL_MS = 1000;

/** Show a background job's progress on a <progress> and a line of text. */
function showJob(job, progress, line) {
  const p = job.progress;
  if (progress) {
    progress.hidden = false;
    progress.max = Math.max(1, p.total);
    progress.value = p.done;
  }
  if (line) mount(line, t('jobs.progress', {done: p.done, total: p.total, events: p.events, status: t(`jobs.status.${job.status}`)}));
}

/** POST …/extract; when the work became a background job (202), follow it until it is done,
 * showing its progress. The number of events made; an ApiError if the job failed. */
export async function extractNow(app, body, {progress = null, line = null} = {}) {
  const answer = await app.api.post(app.path('extract'), body);
  if (!answer.job) return answer.events.length;
  let job = answer.job;
  for (;;) {
    showJob(job, progress, line);
    if (job.status === 'done') return job.progress.events;
    if (job.status === 'failed') throw new ApiError(500, 'job_failed', t('jobs.failed', {error: job.error || '—'}));
    await new Promise((done) => setTimeout(done, JOB_POLL_MS));
    job = await app.api.get(app.path('jobs', job.id));
  }
}

function importSection(app, refresh) {
  const file = h('input', {type: 'file', accept: '.json,.jsonl,application/json'});
  const session = h('input', {type: 'text', required: true, pattern: SESSION_PATTERN, maxlength: 128});
  const format = h('select', {}, options([['auto', t('import.auto')], ['openai', t('import.openai')],
    ['sillytavern', t('import.sillytavern')]], 'auto'));
  const userName = h('input', {type: 'text', maxlength: 100, autocomplete: 'off'});
  const assistantName = h('input', {type: 'text', maxlength: 100, autocomplete: 'off'});
  const progress = h('progress', {max: 1, value: 0, hidden: true});
  progress.id = 'import-progress';
  const line = h('p', {class: 'small', 'aria-live': 'polite'});
  const submit = h('button', {type: 'submit', class: 'primary'}, t('import.submit'));
  const extractAfter = h('input', {type: 'checkbox'});
  extractAfter.id = 'import-extract';
  file.addEventListener('change', () => {
    if (file.files[0] && !session.value) session.value = sessionName(file.files[0].name);
  });

  async function run() {
    const chosen = file.files[0];
    if (!chosen) {
      mount(line, t('import.nofile'));
      file.focus();
      return;
    }
    const text = await chosen.text();
    let parsed;
    try {
      parsed = parseChat(text, {name: chosen.name, format: format.value, lastModified: chosen.lastModified,
        names: {user: userName.value, assistant: assistantName.value}});
    } catch (err) {
      mount(line, h('span', {class: 'error'}, t('import.bad', {message: err.message})));
      return;
    }
    const total = parsed.messages.length;
    if (!total) {
      mount(line, t('import.empty'));
      return;
    }
    const parts = batches(parsed.messages);
    const totals = {accepted: 0, unchanged: 0, changed: 0};
    progress.hidden = false;
    progress.max = total;
    progress.value = 0;
    let sent = 0;
    for (const [i, batch] of parts.entries()) {
      mount(line, t('import.progress', {sent, total, batch: i + 1, batches: parts.length}));
      const out = await app.api.put(app.path('sessions', session.value, 'messages'), {messages: batch});
      for (const key of Object.keys(totals)) totals[key] += out[key];
      sent += batch.length;
      progress.value = sent;
    }
    app.written();
    const done = h('strong', {}, t('import.done', {total, session: session.value, format: t(`import.${parsed.format}`), ...totals}));
    mount(line, done);
    app.say(t('import.donesay', {total}));
    if (extractAfter.checked) {
      const step = h('span', {});
      mount(line, done, ' ', step);
      const n = await extractNow(app, {session: session.value}, {progress, line: step});
      mount(step, t('jobs.extracted', {n}));
      app.say(t('jobs.extracted', {n}));
    }
    refresh();
  }

  return h('section', {class: 'card', 'aria-labelledby': 'import-h'},
    h('h2', {id: 'import-h'}, t('import.title')),
    h('p', {class: 'muted small'}, t('import.intro')),
    h('form', {onsubmit: (e) => {
      e.preventDefault();
      busy(submit, run, (err) => {
        mount(line, h('span', {class: 'error'}, app.errorText(err)));
        app.fail(err);
      });
    }},
    field(t('import.file'), file),
    h('div', {class: 'grid-2'}, field(t('import.session'), session, {hint: t('import.sessionhint')}),
      field(t('import.format'), format)),
    h('div', {class: 'grid-2'}, field(t('import.username'), userName, {hint: t('import.nameshint')}),
      field(t('import.assistantname'), assistantName)),
    h('div', {class: 'field check'}, extractAfter, h('label', {for: extractAfter.id}, t('import.extract'))),
    h('div', {class: 'actions'}, submit),
    h('label', {for: progress.id, class: 'visually-hidden'}, t('import.progresslabel')), progress, line));
}

function jobsSection(app, refresh) {
  const out = h('div', {class: 'job-result', 'aria-live': 'polite'});
  const progress = h('progress', {max: 1, value: 0, hidden: true});
  progress.id = 'job-progress';
  const job = (label, work) => h('button', {type: 'button', class: 'secondary', onclick: (e) => busy(e.currentTarget, async () => {
    mount(out, h('p', {class: 'muted'}, t('jobs.running', {job: label})));
    const text = await work();
    mount(out, h('p', {class: 'notice ok'}, text));
    app.say(text);
    refresh();
  }, (err) => {
    mount(out, h('p', {class: 'notice warn'}, app.errorText(err)));
    app.fail(err);
  })}, label);
  return h('section', {class: 'card', 'aria-labelledby': 'jobs-h'},
    h('h2', {id: 'jobs-h'}, t('jobs.title')),
    h('p', {class: 'muted small'}, t('jobs.intro')),
    h('div', {class: 'actions wrap'},
      job(t('jobs.extract'), async () => {
        const line = h('p', {class: 'muted'});
        mount(out, line);
        const n = await extractNow(app, {}, {progress, line});
        return t('jobs.extracted', {n});
      }),
      job(t('jobs.merge'), async () => {
        const r = await app.api.post(app.path('consolidate'), {});
        return t('jobs.merged', {created: r.created, updated: r.updated, superseded: r.superseded, merger: r.merger || '—'});
      }),
      app.features.forget ? job(t('jobs.forget'), async () => {
        const r = await app.api.post(app.path('forget'), {});
        return t('jobs.forgot', {n: r.faded.length, c: r.compacted_journal_batches});
      }) : null),
    h('label', {for: progress.id, class: 'visually-hidden'}, t('jobs.progresslabel')), progress,
    out);
}

function statsView(stats) {
  const n = (v) => fmtNumber(v, 0);
  const tiles = [
    [t('stats.active'), n(stats.events.active)], [t('stats.archived'), n(stats.events.archived)],
    [t('stats.superseded'), n(stats.events.superseded)], [t('stats.sessions'), n(stats.sessions)],
    [t('stats.messages'), n(stats.messages)], [t('stats.pending'), n(stats.pending_sessions)],
    [t('stats.kwpending'), n(stats.indexing.keyword_pending)], [t('stats.vecpending'), n(stats.indexing.vector_pending)],
  ];
  const llmTotal = stats.llm.total || {};
  return [
    h('ul', {class: 'tiles'}, tiles.map(([label, value]) => h('li', {}, h('span', {class: 'value'}, value), h('span', {class: 'label'}, label)))),
    h('dl', {class: 'details'},
      h('dt', {}, t('stats.writer')), h('dd', {}, stats.indexing.writer),
      h('dt', {}, t('stats.extractor')), h('dd', {}, stats.extractor),
      h('dt', {}, t('stats.merger')), h('dd', {}, `${stats.merger} · ${t('stats.mergeline', {runs: stats.merge.runs, pending: stats.merge.pending,
        at: stats.merge.last_merged_at ? fmtDateTime(stats.merge.last_merged_at) : '—'})}`),
      h('dt', {}, t('stats.llm')), h('dd', {}, `${stats.llm.provider}${stats.llm.model ? ` (${stats.llm.model})` : ''} · `
        + t('stats.llmline', {calls: n(llmTotal.calls || 0), tokens: n((llmTotal.prompt_tokens || 0) + (llmTotal.completion_tokens || 0)), failures: n(llmTotal.failures || 0)}))),
    h('h3', {}, t('stats.failures')),
    stats.failures.length
      ? h('div', {class: 'scroll-x', tabindex: '0', role: 'region', 'aria-label': t('stats.failures')}, h('table', {class: 'data'},
        h('thead', {}, h('tr', {}, ['job', 'unit', 'error', 'count', 'last', 'quarantined'].map((c) => h('th', {scope: 'col'}, t(`stats.col.${c}`))))),
        h('tbody', {}, stats.failures.map((f) => h('tr', {},
          h('td', {}, f.job), h('td', {}, f.unit), h('td', {class: 'error'}, f.error), h('td', {class: 'num'}, String(f.failures)),
          h('td', {}, fmtDateTime(f.last_at)), h('td', {}, f.quarantined ? t('common.yes') : t('common.no')))))))
      : h('p', {class: 'muted'}, t('stats.nofailures')),
  ];
}

function exportSection(app) {
  const status = h('select', {}, options([['active', t('status.active')], ['archived', t('status.archived')], ['all', t('status.all')]], 'active'));
  const stamp = () => new Date().toISOString().slice(0, 10);
  const get = (format) => (e) => busy(e.currentTarget, async () => {
    const text = await app.api.request('GET', app.path('export'), {query: {format, status: status.value}, as: 'text'});
    const name = `annals-${app.space}-${stamp()}.${format === 'json' ? 'json' : 'md'}`;
    download(name, text, format === 'json' ? 'application/json' : 'text/markdown');
    app.say(t('export.done', {name}));
  }, app.fail);
  return h('section', {class: 'card', 'aria-labelledby': 'export-h'},
    h('h2', {id: 'export-h'}, t('export.title')),
    h('div', {class: 'row'}, field(t('export.which'), status),
      h('div', {class: 'actions'},
        h('button', {type: 'button', class: 'secondary', onclick: get('markdown')}, t('export.markdown')),
        h('button', {type: 'button', class: 'secondary', onclick: get('json')}, t('export.json')))));
}

function keysSection(app) {
  const table = h('div', {});
  const created = h('div', {'aria-live': 'polite'});
  const label = h('input', {type: 'text', maxlength: 200});
  const access = h('select', {}, options([['read', t('keys.read')], ['write', t('keys.write')], ['admin', t('keys.admin')]], 'read'));
  const spaces = h('input', {type: 'text', value: app.space});
  const submit = h('button', {type: 'submit', class: 'primary'}, t('keys.create'));

  async function load() {
    const {keys} = await app.api.get('/v1/keys');
    mount(table, keys.length ? h('div', {class: 'scroll-x', tabindex: '0', role: 'region', 'aria-label': t('keys.list')}, h('table', {class: 'data'},
      h('thead', {}, h('tr', {}, ['id', 'label', 'access', 'spaces', 'created', 'used', 'state'].map((c) => h('th', {scope: 'col'}, t(`keys.col.${c}`))))),
      h('tbody', {}, keys.map((key) => h('tr', {class: key.revoked ? 'revoked' : null},
        h('td', {}, h('code', {}, key.id)), h('td', {}, key.label || '—'), h('td', {}, t(`keys.${key.access}`)),
        h('td', {}, key.spaces === '*' ? t('keys.all') : key.spaces.join(', ')),
        h('td', {}, fmtDateTime(key.created_at)), h('td', {}, key.last_used_at ? fmtDateTime(key.last_used_at) : '—'),
        h('td', {}, key.revoked ? t('keys.revoked') : revokeButton(key)))))))
      : h('p', {class: 'muted'}, t('keys.none')));
  }

  function revokeButton(key) {
    const cell = h('span', {});
    const ask = h('button', {type: 'button', class: 'ghost danger', onclick: () => {
      const yes = h('button', {type: 'button', class: 'danger', onclick: (e) => busy(e.currentTarget, async () => {
        await app.api.delete(`/v1/keys/${encodeURIComponent(key.id)}`);
        app.say(t('keys.revokedsay', {id: key.id}));
        await load();
      }, app.fail)}, t('keys.confirm', {id: key.id}));
      mount(cell, yes, ' ', h('button', {type: 'button', class: 'ghost', onclick: () => { mount(cell, ask); ask.focus(); }}, t('common.cancel')));
      yes.focus();
    }}, t('keys.revoke'));
    return mount(cell, ask);
  }

  const form = h('form', {class: 'row', onsubmit: (e) => {
    e.preventDefault();
    busy(submit, async () => {
      const body = {access: access.value, label: label.value};
      if (access.value !== 'admin') {
        const list = spaces.value.split(/[,\s]+/).filter(Boolean);
        body.spaces = list.includes('*') ? '*' : list;
      }
      const key = await app.api.post('/v1/keys', body);
      const shown = h('input', {type: 'text', readonly: true, value: key.key, class: 'mono'});
      shown.id = 'new-key';
      mount(created, h('div', {class: 'notice ok'},
        h('p', {}, h('strong', {}, t('keys.created', {id: key.id}))),
        field(t('keys.once'), shown),
        h('button', {type: 'button', class: 'secondary', onclick: async () => {
          try {
            await navigator.clipboard.writeText(key.key);
            app.say(t('common.copied'));
          } catch (err) {
            app.fail(err);
          }
        }}, t('keys.copy'))));
      label.value = '';
      await load();
    }, app.fail);
  }},
  field(t('keys.label'), label), field(t('keys.access'), access),
  field(t('keys.spaces'), spaces, {hint: t('keys.spaceshint')}), h('div', {class: 'actions'}, submit));
  access.addEventListener('change', () => { spaces.disabled = access.value === 'admin'; });

  const section = h('section', {class: 'card', 'aria-labelledby': 'keys-h'},
    h('h2', {id: 'keys-h'}, t('keys.title')), h('p', {class: 'muted small'}, t('keys.intro')),
    table, h('h3', {}, t('keys.new')), form, created);
  load().catch(app.fail);
  return section;
}

export async function renderOps(main, _args, app) {
  const stats = h('div', {});
  const updated = h('span', {class: 'muted small'});
  let timer = null;

  async function refresh() {
    try {
      const data = await app.api.get(app.path('stats'));
      mount(stats, statsView(data));
      updated.textContent = t('stats.updated', {at: new Date().toLocaleTimeString()});
      const busyNow = data.indexing.keyword_pending || data.indexing.vector_pending;
      clearTimeout(timer);
      if (busyNow) timer = setTimeout(refresh, 3000);  // the background lanes are working
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401)) app.fail(err);
    }
  }
  app.leave.push(() => clearTimeout(timer));

  const refreshButton = h('button', {type: 'button', class: 'ghost', onclick: (e) => busy(e.currentTarget, refresh)}, t('stats.refresh'));
  mount(main,
    h('div', {class: 'page-head'}, h('h1', {}, t('ops.title')),
      h('p', {class: 'muted'}, app.canWrite() ? t('ops.intro') : t('ops.readonly'))),
    h('div', {class: 'columns'},
      h('div', {},
        app.canWrite() ? importSection(app, refresh) : null,
        app.canWrite() ? jobsSection(app, refresh) : null,
        exportSection(app)),
      h('section', {class: 'card', 'aria-labelledby': 'stats-h'},
        h('div', {class: 'section-head'}, h('h2', {id: 'stats-h'}, t('stats.title')), refreshButton),
        updated, stats)),
    app.isAdmin() ? keysSection(app) : null);
  await refresh();
}
