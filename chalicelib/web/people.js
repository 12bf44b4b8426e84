// People and threads: who appears in the chronicle (event participants, or GET …/entities
// where the server has it), each with their events, and a force-directed graph of people ×
// events (× threads, where the server has them).

import {allEvents} from './api.js';
import {eventItem, isKey} from './chronicle.js';
import {h, mount} from './dom.js';
import {graphView} from './graph.js';
import {t} from './i18n.js';

const GRAPH_PEOPLE = 40;
const GRAPH_EVENTS = 120;

/** {name: [events]} from the events' participants, most events first. */
export function peopleOf(events) {
  const map = new Map();
  for (const event of events) {
    for (const name of event.participants) {
      if (!map.has(name)) map.set(name, []);
      map.get(name).push(event);
    }
  }
  return new Map([...map].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0])));
}

async function entityNames(app) {
  if (!app.features.entities) return null;
  try {
    const data = await app.api.get(app.path('entities'));
    const list = Array.isArray(data) ? data : (data.entities || data.items || []);
    return list.map((e) => (typeof e === 'string' ? e : e.name || e.title || e.id)).filter(Boolean);
  } catch {
    return null;
  }
}

async function threadList(app) {
  if (!app.features.threads) return [];
  try {
    const data = await app.api.get(app.path('threads'));
    const list = Array.isArray(data) ? data : (data.threads || data.items || []);
    return list.map((th) => ({id: th.id, title: th.title || th.name || th.id,
      events: th.event_ids || (th.events || []).map((e) => (typeof e === 'string' ? e : e.id))}));
  } catch {
    return [];
  }
}

function short(text, n = 14) {
  return [...text].length > n ? `${[...text].slice(0, n - 1).join('')}…` : text;
}

export async function renderPeople(main, [selected], app) {
  const [{events, complete}, names, threads] = await Promise.all([
    allEvents(app.api, app.space), entityNames(app), threadList(app)]);
  const people = peopleOf(events);
  for (const name of names || []) if (!people.has(name)) people.set(name, []);

  const chosen = selected && people.has(selected) ? selected : null;
  const list = h('ul', {class: 'people-list'}, [...people].map(([name, items]) => h('li', {},
    h('a', {href: app.href('people', name), class: ['person-link', name === chosen && 'selected'],
      'aria-current': name === chosen ? 'true' : null},
    h('span', {class: 'name'}, name), h('span', {class: 'count'}, h('span', {class: 'visually-hidden'}, `${t('people.events')}: `), String(items.length))))));

  // The graph: the people with most events, their most important events, and threads.
  const shownPeople = [...people.keys()].slice(0, GRAPH_PEOPLE);
  const linked = events.filter((e) => e.participants.some((p) => shownPeople.includes(p)));
  const shownEvents = [...linked].sort((a, b) => b.importance - a.importance || a.when.start.localeCompare(b.when.start))
    .slice(0, GRAPH_EVENTS);
  const eventIds = new Set(shownEvents.map((e) => e.id));
  const nodes = [
    ...shownPeople.map((name) => ({id: `p:${name}`, kind: 'person', label: t('people.nodeperson', {name, n: people.get(name).length}),
      short: short(name), weight: people.get(name).length, href: app.href('people', name)})),
    ...shownEvents.map((e) => ({id: `e:${e.id}`, kind: 'event', key: isKey(e), label: e.title, href: app.href('event', e.id)})),
    ...threads.map((th) => ({id: `t:${th.id}`, kind: 'thread', label: th.title, short: short(th.title), href: app.href('chronicle')})),
  ];
  const links = [
    ...shownEvents.flatMap((e) => e.participants.filter((p) => shownPeople.includes(p)).map((p) => [`p:${p}`, `e:${e.id}`])),
    ...threads.flatMap((th) => th.events.filter((id) => eventIds.has(id)).map((id) => [`t:${th.id}`, `e:${id}`])),
  ];

  const detail = chosen
    ? h('section', {class: 'card', 'aria-labelledby': 'person-h'},
      h('h2', {id: 'person-h'}, chosen, ' ', h('span', {class: 'muted small'}, t('people.count', {n: people.get(chosen).length}))),
      people.get(chosen).length ? h('ol', {class: 'events compact'}, people.get(chosen).map((e) => eventItem(app, e)))
        : h('p', {class: 'muted'}, t('people.noevents')))
    : h('section', {class: 'card'}, h('h2', {}, t('people.pick')), h('p', {class: 'muted'}, t('people.pickhint')));

  mount(main,
    h('div', {class: 'page-head'}, h('h1', {}, t('people.title')),
      h('p', {class: 'muted'}, t('people.summary', {people: people.size, events: events.length}),
        complete ? '' : ` ${t('people.partial')}`)),
    people.size ? h('div', {class: 'columns people'},
      h('section', {class: 'card', 'aria-labelledby': 'people-h'}, h('h2', {id: 'people-h'}, t('people.list')), list),
      detail) : h('p', {class: 'empty card'}, t('people.none')),
    nodes.length ? h('section', {class: 'card', 'aria-labelledby': 'graph-h'},
      h('h2', {id: 'graph-h'}, t('people.graph')),
      h('p', {class: 'muted small'}, t('people.graphhint', {people: shownPeople.length, events: shownEvents.length})),
      h('ul', {class: 'legend', 'aria-label': t('people.legend')},
        h('li', {class: 'l-person'}, t('people.lperson')), h('li', {class: 'l-event'}, t('people.levent')),
        h('li', {class: 'l-key'}, t('people.lkey')), threads.length ? h('li', {class: 'l-thread'}, t('people.lthread')) : null),
      h('div', {class: 'graph-wrap'}, graphView(nodes, links, {label: t('people.graphlabel', {people: shownPeople.length, events: shownEvents.length}),
        selected: chosen ? `p:${chosen}` : null}))) : null);
}
