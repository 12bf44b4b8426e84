// Annals web app: sign-in, the shell (header, navigation, space and language) and the router.
// Routes live in the hash (#/<space>/<view>/<arg>) so the page works from any path prefix
// and a reload keeps its place. docs/web.md.

import {Api, ApiError, features, spacePath} from './api.js';
import {renderChronicle} from './chronicle.js';
import {ID_PATTERN, field, h, mount, options} from './dom.js';
import {renderEvent} from './event.js';
import {LANGS, detectLang, lang, setLang, t} from './i18n.js';
import {renderOps} from './ops.js';
import {renderPeople} from './people.js';
import {renderRecall} from './recall.js';
import {renderThread} from './thread.js';

const KEY = 'annals.key';  // sessionStorage: the tab's own, gone when it closes
const LAST_SPACE = 'annals.space';  // localStorage: not a secret
const SPACE_ID = /^[A-Za-z0-9_.:@-]{1,128}$/;
const CHOOSER = '#/!spaces';  // '!' is never part of a space id

const VIEWS = {
  chronicle: renderChronicle,
  event: renderEvent,
  recall: renderRecall,
  people: renderPeople,
  thread: renderThread,
  ops: renderOps,
};
const UNDER = {event: 'chronicle', thread: 'people'};  // pages shown under a section of NAV
const NAV = ['chronicle', 'recall', 'people', 'ops'];

/** What every view gets: the API, the key's scope and a few shared helpers. */
export const app = {
  api: null,
  access: null,
  spaces: [],
  allSpaces: false,
  empty: [],  // of a key's named spaces, those nothing was written to yet (GET /v1/spaces)
  space: null,
  features: {threads: false, entities: false, graph: false, forget: false},
  memory: {},  // per space and view: filters and the like, kept while the tab lives
  leave: [],  // callbacks run when the view changes (timers)

  canWrite() { return this.access === 'write' || this.access === 'admin'; },
  /** Nothing was written to this space yet: its reads would answer 404 unknown_space, so the
   * views show it empty without asking (a key for every space lists the spaces with data). */
  isNew() { return this.allSpaces ? !this.spaces.includes(this.space) : this.empty.includes(this.space); },
  /** The space got its first messages (an import): it is read like any other from now on. */
  written() {
    if (!this.spaces.includes(this.space)) this.spaces = [...this.spaces, this.space].sort();
    this.empty = this.empty.filter((s) => s !== this.space);
  },
  isAdmin() { return this.access === 'admin'; },
  href(view, ...args) {
    return `#/${[this.space, view, ...args].map(encodeURIComponent).join('/')}`;
  },
  path(...rest) { return spacePath(this.space, ...rest); },
  remember(view) {
    const bySpace = (this.memory[this.space] ??= {});
    return (bySpace[view] ??= {});
  },
  say(message) { announce(message, 'status'); },
  flash: null,  // a message to say once the next view is shown (set before a navigation)
  errorText(err) { return errorText(err); },
  fail(err) { announce(errorText(err), 'alert'); },
};

export function errorText(err) {
  if (err instanceof ApiError) {
    if (err.status === 0) return t('error.network');
    if (err.status === 403) return t('error.forbidden', {message: err.message});
    if (err.status === 422 && Array.isArray(err.details) && err.details.length) {
      const first = err.details[0];
      return t('error.invalid', {message: `${(first.loc || []).join('.')}: ${first.msg}`});
    }
    return `${err.message} (${err.status} ${err.code})`;
  }
  return String(err && err.message ? err.message : err);
}

let statusTimer = null;

function announce(message, kind) {
  const region = document.getElementById(kind === 'alert' ? 'alert' : 'status');
  if (!region) return;
  if (kind !== 'alert') {
    clearTimeout(statusTimer);
    statusTimer = setTimeout(() => mount(region), 8000);
  }
  mount(region, message ? h('p', {}, message,
    kind === 'alert' ? h('button', {type: 'button', class: 'link', onclick: () => mount(region)}, t('common.dismiss')) : null) : null);
}

// ------------------------------------------------------------------ sign-in

function showSignIn(note) {
  app.api = null;
  document.title = `${t('app.name')} · ${t('signin.title')}`;
  const input = h('input', {type: 'password', name: 'key', autocomplete: 'off', required: true,
    spellcheck: 'false', autocapitalize: 'off'});
  const error = h('p', {class: 'error', role: 'alert'}, note || '');
  const button = h('button', {type: 'submit', class: 'primary'}, t('signin.submit'));
  const form = h('form', {class: 'signin card', 'aria-labelledby': 'signin-title',
    onsubmit: async (event) => {
      event.preventDefault();
      button.disabled = true;
      mount(error);
      try {
        await signIn(input.value.trim());
      } catch (err) {
        mount(error, err instanceof ApiError && err.status === 401 ? t('signin.wrong') : errorText(err));
        input.focus();
      } finally {
        button.disabled = false;
      }
    }},
  h('h1', {id: 'signin-title'}, t('signin.title')),
  h('p', {class: 'muted'}, t('signin.intro')),
  field(t('signin.key'), input, {hint: t('signin.hint')}),
  error,
  h('div', {class: 'actions'}, button));
  mount(document.getElementById('root'),
    h('header', {class: 'topbar simple'}, brand(), h('div', {class: 'tools'}, langPicker())),
    h('main', {id: 'main', class: 'narrow'}, form));
  input.focus();
}

async function signIn(key) {
  if (!key) throw new Error(t('signin.empty'));
  const api = new Api(key);
  const scope = await api.get('/v1/spaces');
  sessionStorage.setItem(KEY, key);
  api.onUnauthorized = () => signOut(t('signin.expired'));
  Object.assign(app, {api, access: scope.access, spaces: scope.spaces, allSpaces: scope.all_spaces,
    empty: scope.empty || [], features: await features(), memory: {}});
  route();
}

function signOut(note) {
  sessionStorage.removeItem(KEY);
  history.replaceState(null, '', location.pathname + location.search);
  leaveView();
  showSignIn(note);
}

// ------------------------------------------------------------------ the shell

function brand() {
  return h('a', {class: 'brand', href: '#/'},
    h('img', {src: new URL('icon.svg', import.meta.url).href, alt: '', width: 28, height: 28}),
    h('span', {}, t('app.name')));
}

function langPicker() {
  const select = h('select', {class: 'compact', onchange: () => {
    setLang(select.value, true);
    if (app.api) route(); else showSignIn();
  }}, options(LANGS.map((code) => [code, t(`lang.${code}`)]), lang()));
  select.id = 'lang-select';
  return h('div', {class: 'inline-field'},
    h('label', {for: select.id, class: 'visually-hidden'}, t('lang.label')), select);
}

function spacePicker() {
  const known = [...new Set([...app.spaces, app.space].filter(Boolean))].sort();
  const select = h('select', {class: 'compact', onchange: () => {
    if (select.value === '') location.hash = CHOOSER;
    else location.hash = `#/${encodeURIComponent(select.value)}/chronicle`;
  }}, options(known.map((s) => [s, s]), app.space),
  app.allSpaces ? h('option', {value: ''}, t('space.other')) : null);
  select.id = 'space-select';
  return h('div', {class: 'inline-field'},
    h('label', {for: select.id}, t('space.label')), select);
}

function shell(view) {
  const nav = h('nav', {class: 'tabs', 'aria-label': t('nav.label')},
    h('ul', {}, NAV.map((name) => h('li', {}, h('a', {
      href: app.href(name), 'aria-current': (view === name || UNDER[view] === name) ? 'page' : null,
    }, t(`nav.${name}`))))));
  const badge = app.canWrite() ? null : h('span', {class: 'badge readonly'}, t('access.read'));
  return [
    h('a', {class: 'skip', href: '#main', onclick: (event) => {
      event.preventDefault();
      document.getElementById('main').focus();
    }}, t('nav.skip')),
    h('header', {class: 'topbar'}, brand(), nav,
      h('div', {class: 'tools'}, spacePicker(), badge, langPicker(),
        h('button', {type: 'button', class: 'ghost', onclick: () => signOut()}, t('signin.out')))),
    h('main', {id: 'main', tabindex: '-1'}),
    h('div', {class: 'toasts'},
      h('div', {id: 'status', role: 'status', 'aria-live': 'polite'}),
      h('div', {id: 'alert', role: 'alert'})),
  ];
}

// ------------------------------------------------------------------ routing

function parseHash() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter((p) => p !== '');
  try {
    return parts.map(decodeURIComponent);
  } catch {
    return [];
  }
}

function mayUse(space) {
  return SPACE_ID.test(space) && (app.allSpaces || app.spaces.includes(space));
}

function defaultSpace() {
  const last = localStorage.getItem(LAST_SPACE);
  if (last && mayUse(last) && (app.spaces.includes(last) || app.allSpaces)) return last;
  if (app.spaces.length === 1) return app.spaces[0];
  return null;
}

function leaveView() {
  for (const fn of app.leave.splice(0)) fn();
}

async function route() {
  if (!app.api) return showSignIn();
  leaveView();
  const [space, view = 'chronicle', ...args] = parseHash();
  if (!space) {
    const chosen = defaultSpace();
    if (chosen) {
      location.replace(`#/${encodeURIComponent(chosen)}/chronicle`);
      return undefined;
    }
    return showSpaceChooser();
  }
  if (space === CHOOSER.slice(2)) return showSpaceChooser();
  if (!mayUse(space)) return showSpaceChooser(t('space.notallowed', {space}));
  app.space = space;
  localStorage.setItem(LAST_SPACE, space);
  if (app.isNew()) await refreshSpaces();  // written since sign-in (another tab, the CLI)?
  const render = VIEWS[view] || VIEWS.chronicle;
  const root = document.getElementById('root');
  mount(root, ...shell(view in VIEWS ? view : 'chronicle'));
  const main = document.getElementById('main');
  document.title = `${t(`nav.${UNDER[view] || view}`) || ''} · ${space} · ${t('app.name')}`;
  try {
    await render(main, args, app);
  } catch (err) {
    mount(main, h('h1', {tabindex: '-1'}, t('error.title')), h('p', {class: 'error'}, errorText(err)));
  }
  if (app.flash) {
    announce(app.flash, 'status');
    app.flash = null;
  }
  if (document.activeElement === document.body || !document.activeElement) {
    const heading = main.querySelector('h1');
    if (heading) {
      heading.setAttribute('tabindex', '-1');
      heading.focus({preventScroll: true});
    }
  }
  return undefined;
}

/** The key's spaces again (GET /v1/spaces): which hold something now. */
async function refreshSpaces() {
  try {
    const scope = await app.api.get('/v1/spaces');
    Object.assign(app, {spaces: scope.spaces, empty: scope.empty || []});
  } catch {
    // keep what sign-in said: the view then shows the space empty
  }
}

function showSpaceChooser(note) {
  app.space = null;
  document.title = `${t('space.choose')} · ${t('app.name')}`;
  const input = h('input', {type: 'text', name: 'space', required: true, pattern: ID_PATTERN,
    autocomplete: 'off', spellcheck: 'false', autocapitalize: 'off', value: app.spaces.length ? '' : 'me'});
  const form = app.allSpaces ? h('form', {class: 'row', onsubmit: (event) => {
    event.preventDefault();
    const space = input.value.trim();
    if (SPACE_ID.test(space)) location.hash = `#/${encodeURIComponent(space)}/chronicle`;
  }}, field(t('space.new'), input, {hint: t('space.newhint')}),
  h('button', {type: 'submit', class: 'primary'}, t('space.open'))) : null;
  mount(document.getElementById('root'),
    h('header', {class: 'topbar simple'}, brand(), h('div', {class: 'tools'}, langPicker(),
      h('button', {type: 'button', class: 'ghost', onclick: () => signOut()}, t('signin.out')))),
    h('main', {id: 'main', class: 'narrow', tabindex: '-1'},
      h('section', {class: 'card'},
        h('h1', {}, t('space.choose')),
        note ? h('p', {class: 'error', role: 'alert'}, note) : null,
        app.spaces.length
          ? h('ul', {class: 'space-list'}, app.spaces.map((space) => h('li', {},
            h('a', {class: 'button', href: `#/${encodeURIComponent(space)}/chronicle`}, space))))
          : h('p', {class: 'muted'}, t('space.none')),
        form)));
  const first = document.querySelector('main a.button, main input');
  if (first) first.focus();
}

// ------------------------------------------------------------------ start

async function start() {
  setLang(detectLang());
  window.addEventListener('hashchange', () => route());
  const key = sessionStorage.getItem(KEY);
  if (!key) return showSignIn();
  try {
    await signIn(key);
  } catch (err) {
    sessionStorage.removeItem(KEY);
    showSignIn(err instanceof ApiError && err.status === 401 ? t('signin.expired') : errorText(err));
  }
  return undefined;
}

start();
