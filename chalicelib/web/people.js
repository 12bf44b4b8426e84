// People and threads: who and what the chronicle names — people (event participants and person
// entities), places, pets, works … (GET …/entities), each with their events — the threads
// (arcs) with their events, and a force-directed graph of people, entities, threads and events,
// with the same graph as a plain list for keyboards and screen readers. docs/graph.md.

import {allEvents, entityList, threadList} from './api.js';
import {eventItem, isKey, isSummary, threadIndex} from './chronicle.js';
import {h, mount} from './dom.js';
import {graphView} from './graph.js';
import {fmtWhen, t} from './i18n.js';
import {isPlaceholder} from './names.js';

const GRAPH_PEOPLE = 30;
const GRAPH_ENTITIES = 30;
const GRAPH_THREADS = 30;
const GRAPH_EVENTS = 120;
const THREAD_PREVIEW = 4;
export const KINDS = ['person', 'place', 'pet', 'work', 'organisation', 'project', 'thing'];
const EVENT_LINKS = new Set(['updates', 'causes', 'follows']);  // same_thread: the thread shows it

/** {name: [events]} from the events' participants (people only), most events first. */
export function peopleOf(events) {
  const map = new Map();
  for (const event of events) {
    for (const name of event.participants) {
      if (isPlaceholder(name)) continue;
      if (!map.has(name)) map.set(name, []);
      map.get(name).push(event);
    }
  }
  return new Map([...map].sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0])));
}

/** Events, entities (with their event ids where the server says), threads and relations:
 * one GET …/graph where the server has it, else the lists. */
async function loadGraph(app) {
  if (app.isNew()) return {events: [], complete: true, entities: [], threads: [], relations: []};
  if (app.features.graph) {
    const doc = await app.api.get(app.path('graph'));
    return {
      events: doc.events.filter((e) => e.status === 'active'),
      complete: true,
      entities: doc.entities.map((e) => ({id: e.key, name: e.name, kind: e.kind, aliases: e.aliases || [],
        events: e.events || [], event_count: (e.events || []).length}))
        .sort((a, b) => b.event_count - a.event_count || a.name.localeCompare(b.name)),
      threads: doc.threads.map((th) => ({...th, id: th.key})),
      relations: doc.relations || [],
    };
  }
  const [{events, complete}, entities, threads] = await Promise.all([
    allEvents(app.api, app.space), entityList(app).catch(() => []), threadList(app).catch(() => [])]);
  return {events, complete, entities: entities.map((e) => ({...e, events: null})), threads, relations: []};
}

function short(text, n = 14) {
  return [...text].length > n ? `${[...text].slice(0, n - 1).join('')}…` : text;
}

function span(events) {
  const dated = events.filter(Boolean).sort((a, b) => a.when.start.localeCompare(b.when.start));
  if (!dated.length) return '';
  const first = fmtWhen(dated[0].when);
  const last = fmtWhen(dated[dated.length - 1].when);
  return first === last ? first : `${first} – ${last}`;
}

/** A person's profile (GET …/profiles/{name}), or null: none yet, or a server without it. */
async function profileOf(app, name) {
  if (!app.features.profiles || app.isNew()) return null;
  try {
    return await app.api.get(app.path('profiles', name));
  } catch (err) {
    if (err.status !== 404) app.fail(err);
    return null;
  }
}

/** The facts told about a person: the current ones, then what held before and until when. */
function factsCard(profile) {
  const facts = profile ? profile.facts : [];
  const day = (iso) => (iso ? iso.slice(0, 10) : '');
  const item = (f) => h('li', {class: 'fact'},
    h('span', {class: 'muted'}, t(`fact.${f.attribute}`)), ' ', h('strong', {}, f.value),
    f.kind ? h('span', {class: 'muted small'}, ` (${f.kind})`) : null, ' ',
    h('span', {class: 'muted small'}, [f.valid_from ? t('people.since', {d: day(f.valid_from)}) : '',
      f.valid_to ? ` ${t('people.until', {d: day(f.valid_to)})}` : ''].join('')));
  const now = facts.filter((f) => f.current);
  // a role told at a job that has ended since: maybe over with it (fact_roles.ended_job)
  const unsure = facts.filter((f) => f.status === 'unconfirmed');
  const before = facts.filter((f) => !f.current && f.status !== 'unconfirmed');
  const group = (key, list) => (list.length
    ? [h('h3', {}, t(key)), h('ul', {class: 'plain-list', 'data-status': key}, list.map(item))] : null);
  return h('div', {class: 'facts', 'data-facts': String(facts.length)},
    now.length ? group('people.facts', now) : h('p', {class: 'muted small'}, t('people.nofacts')),
    group('people.unsure', unsure), group('people.was', before));
}

export async function renderPeople(main, [selected], app) {
  const {events: all, complete, entities, threads, relations} = await loadGraph(app);
  const events = all.filter((e) => !isSummary(e));
  const byId = new Map(all.map((e) => [e.id, e]));
  const inThread = threadIndex(threads);
  const people = peopleOf(events);
  const personEntity = new Map();
  for (const entity of entities.filter((e) => e.kind === 'person' && !isPlaceholder(e.name))) {
    personEntity.set(entity.name, entity);
    if (!people.has(entity.name)) people.set(entity.name, (entity.events || []).map((id) => byId.get(id)).filter(Boolean));
  }
  const things = entities.filter((e) => e.kind !== 'person');

  // What is selected: a person (by name, as event pages link them) or an entity (by id).
  const entity = selected ? entities.find((e) => e.id === selected) : null;
  const chosen = !entity && selected && people.has(selected) ? selected : null;
  let detail;
  if (entity && entity.kind !== 'person') {
    let items = [];
    try {
      items = (await app.api.get(app.path('entities', entity.id))).events;
    } catch (err) {
      app.fail(err);
    }
    detail = h('section', {class: 'card', 'aria-labelledby': 'person-h'},
      h('h2', {id: 'person-h'}, entity.name, ' ', h('span', {class: `badge kind kind-${entity.kind}`}, t(`kind.${entity.kind}`)), ' ',
        h('span', {class: 'muted small'}, t('people.count', {n: items.length}))),
      entity.aliases.length ? h('p', {class: 'muted small'}, t('thread.aliases'), ': ', entity.aliases.join(', ')) : null,
      h('p', {class: 'small'}, h('a', {href: app.href('chronicle'), onclick: () => {
        const mem = app.remember('chronicle');
        mem.filters = {...mem.filters, entity: entity.id, thread: ''};
      }}, t('people.inchronicle'))),
      items.length ? h('ol', {class: 'events compact'}, items.map((e) => eventItem(app, e, {thread: inThread[e.id]})))
        : h('p', {class: 'muted'}, t('people.noevents')));
  } else {
    const name = entity ? entity.name : chosen;
    const profile = name ? await profileOf(app, name) : null;
    detail = name
      ? h('section', {class: 'card', 'aria-labelledby': 'person-h'},
        h('h2', {id: 'person-h'}, name, ' ', h('span', {class: 'muted small'}, t('people.count', {n: people.get(name).length}))),
        factsCard(profile),
        people.get(name).length ? h('ol', {class: 'events compact'}, people.get(name).map((e) => eventItem(app, e, {thread: inThread[e.id]})))
          : h('p', {class: 'muted'}, t('people.noevents')))
      : h('section', {class: 'card'}, h('h2', {}, t('people.pick')), h('p', {class: 'muted'}, t('people.pickhint')));
  }
  const current = entity ? (entity.kind === 'person' ? entity.name : entity.id) : chosen;

  const link = (target, label, count, extra) => h('li', {},
    h('a', {href: app.href('people', target), class: ['person-link', target === current && 'selected'],
      'aria-current': target === current ? 'true' : null},
    h('span', {class: 'name'}, label, extra || null),
    h('span', {class: 'count'}, h('span', {class: 'visually-hidden'}, `${t('people.events')}: `), String(count))));
  const kindsPresent = KINDS.filter((kind) => kind !== 'person' && things.some((e) => e.kind === kind));
  const lists = h('section', {class: 'card', 'aria-labelledby': 'people-h'},
    h('h2', {id: 'people-h'}, t('people.list')),
    people.size ? h('ul', {class: 'people-list'}, [...people].map(([name, items]) => link(name, name, items.length)))
      : h('p', {class: 'muted'}, t('people.none')),
    kindsPresent.length ? h('h2', {class: 'sub'}, t('people.entities')) : null,
    kindsPresent.map((kind) => [
      h('h3', {class: 'kind-head'}, t(`kinds.${kind}`)),
      h('ul', {class: 'people-list'}, things.filter((e) => e.kind === kind).map((e) => link(e.id, e.name, e.event_count,
        e.aliases.length ? h('span', {class: 'muted small'}, ` (${e.aliases.join(', ')})`) : null)))]));

  const threadsCard = app.features.threads ? h('section', {class: 'card', 'aria-labelledby': 'threads-h'},
    h('h2', {id: 'threads-h'}, t('threads.title'), ' ', h('span', {class: 'muted small'}, String(threads.length))),
    threads.length ? h('ul', {class: 'thread-list'}, threads.map((th) => {
      const items = th.events.map((id) => byId.get(id)).filter(Boolean);
      return h('li', {class: 'thread-item'},
        h('h3', {}, h('a', {href: app.href('thread', th.id)}, `⟲ ${th.title}`), ' ',
          h('span', {class: 'muted small'}, t('thread.count', {n: th.events.length}))),
        th.aliases && th.aliases.length ? h('p', {class: 'muted small'}, t('thread.aliases'), ': ', th.aliases.join(', ')) : null,
        items.length ? h('p', {class: 'muted small'}, span(items)) : null,
        items.length ? h('ol', {class: 'plain-list'}, items.slice(0, THREAD_PREVIEW).map((e) => h('li', {},
          h('a', {href: app.href('event', e.id)}, e.title)))) : null,
        items.length > THREAD_PREVIEW ? h('p', {class: 'small'}, h('a', {href: app.href('thread', th.id)},
          t('threads.more', {n: items.length - THREAD_PREVIEW}))) : null);
    })) : h('p', {class: 'muted'}, t('threads.none'))) : null;

  // The graph: the people and entities with most events, the threads, and their events
  // (those in threads first, then the most important).
  const shownPeople = [...people.keys()].slice(0, GRAPH_PEOPLE);
  const shownThings = things.slice(0, GRAPH_ENTITIES);
  const shownThreads = threads.slice(0, GRAPH_THREADS);
  const edges = [];
  const touch = new Map();  // event id → the nodes it links to
  const add = (node, eventId) => {
    if (!byId.has(eventId) || isSummary(byId.get(eventId)) || byId.get(eventId).status !== 'active') return;
    if (!touch.has(eventId)) touch.set(eventId, new Set());
    touch.get(eventId).add(node);
  };
  for (const name of shownPeople) {
    for (const e of people.get(name)) add(`p:${name}`, e.id);
    for (const id of personEntity.get(name)?.events || []) add(`p:${name}`, id);
  }
  for (const e of shownThings) for (const id of e.events || []) add(`n:${e.id}`, id);
  for (const th of shownThreads) for (const id of th.events) add(`t:${th.id}`, id);
  const shownEvents = [...touch.keys()].map((id) => byId.get(id))
    .sort((a, b) => Number(Boolean(inThread[b.id])) - Number(Boolean(inThread[a.id]))
      || b.importance - a.importance || a.when.start.localeCompare(b.when.start))
    .slice(0, GRAPH_EVENTS);
  const eventIds = new Set(shownEvents.map((e) => e.id));
  for (const e of shownEvents) for (const node of touch.get(e.id)) edges.push([node, `e:${e.id}`, node[0] === 't' ? 'thread' : null]);
  for (const r of relations) {
    if (EVENT_LINKS.has(r.kind) && eventIds.has(r.src) && eventIds.has(r.dst)) edges.push([`e:${r.src}`, `e:${r.dst}`, `rel ${r.kind}`]);
  }
  const nodes = [
    ...shownPeople.map((name) => ({id: `p:${name}`, kind: 'person', name, label: t('people.nodeperson', {name, n: people.get(name).length}),
      short: short(name), weight: people.get(name).length, href: app.href('people', name)})),
    ...shownThings.map((e) => ({id: `n:${e.id}`, kind: 'entity', sub: e.kind, name: e.name, weight: e.event_count, short: short(e.name),
      label: t('people.nodeentity', {name: e.name, kind: t(`kind.${e.kind}`), n: e.event_count}), href: app.href('people', e.id)})),
    ...shownThreads.map((th) => ({id: `t:${th.id}`, kind: 'thread', name: th.title, short: short(th.title),
      label: t('people.nodethread', {name: th.title, n: th.events.length}), href: app.href('thread', th.id)})),
    ...shownEvents.map((e) => ({id: `e:${e.id}`, kind: 'event', key: isKey(e), label: e.title, href: app.href('event', e.id)})),
  ];
  const selectedNode = entity && entity.kind !== 'person' ? `n:${entity.id}` : (current ? `p:${current}` : null);
  const nodeCount = shownPeople.length + shownThings.length + shownThreads.length;

  // The same graph as a list: each person, entity and thread with its events.
  const eventsOf = new Map();
  for (const [node, target] of edges) {
    if (node.startsWith('e:')) continue;
    if (!eventsOf.has(node)) eventsOf.set(node, []);
    eventsOf.get(node).push(byId.get(target.slice(2)));
  }
  const asList = h('details', {class: 'graph-list'},
    h('summary', {}, t('people.graphlist')),
    h('ul', {}, nodes.filter((n) => n.kind !== 'event').map((n) => h('li', {},
      h('a', {href: n.href}, h('span', {class: 'muted small'}, `${t(`kind.${n.kind === 'entity' ? n.sub : n.kind}`)}: `), n.name),
      eventsOf.has(n.id) ? h('ul', {}, eventsOf.get(n.id).map((e) => h('li', {}, h('a', {href: app.href('event', e.id)}, e.title)))) : null))));

  const legendKinds = [
    ['person', shownPeople.length], ...kindsPresent.map((k) => [k, shownThings.some((e) => e.kind === k)]),
    ['thread', shownThreads.length], ['event', shownEvents.some((e) => !isKey(e))], ['key', shownEvents.some(isKey)],
    ['rel', edges.some(([, , cls]) => cls && cls.startsWith('rel'))]];

  mount(main,
    h('div', {class: 'page-head'}, h('h1', {}, t('people.title')),
      h('p', {class: 'muted'}, t('people.summary', {people: people.size, things: things.length, threads: threads.length, events: events.length}),
        complete ? '' : ` ${t('people.partial')}`)),
    people.size || things.length || threads.length ? h('div', {class: 'columns people'},
      lists, h('div', {}, detail, threadsCard)) : h('p', {class: 'empty card'}, t('people.none')),
    nodes.length ? h('section', {class: 'card', 'aria-labelledby': 'graph-h'},
      h('h2', {id: 'graph-h'}, t('people.graph')),
      h('p', {class: 'muted small'}, t('people.graphhint', {nodes: nodeCount, events: shownEvents.length})),
      h('ul', {class: 'legend', 'aria-label': t('people.legend')},
        legendKinds.filter(([, on]) => on).map(([kind]) => h('li', {class: `l-${kind}`}, t(`legend.${kind}`)))),
      h('div', {class: 'graph-wrap'}, graphView(nodes, edges, {
        label: t('people.graphlabel', {nodes: nodeCount, events: shownEvents.length}), selected: selectedNode})),
      asList) : null);
}
