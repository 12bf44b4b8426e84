// Chinese and English: the browser's language first, then the reader's choice (kept in
// localStorage). Dates are shown as their events wrote them (an event on 6-14 in +08:00 is on
// 6-14 wherever the reader is); instants (message times, edits) in the reader's own zone.

export const LANGS = ['zh', 'en'];
const STORE = 'annals.lang';
const plural = (n, one, many) => (Number(n) === 1 ? one : many);

const EN = {
  'app.name': 'Annals',
  'lang.label': 'Language', 'lang.zh': '中文', 'lang.en': 'English',
  'nav.label': 'Sections', 'nav.skip': 'Skip to content', 'nav.chronicle': 'Chronicle',
  'nav.recall': 'Recall lab', 'nav.people': 'People & threads', 'nav.ops': 'Operations',
  'access.read': 'read only',
  'common.cancel': 'Cancel', 'common.copied': 'Copied.', 'common.dismiss': 'Dismiss',
  'common.yes': 'yes', 'common.no': 'no',
  'error.network': 'The server did not answer. Is it running?',
  'error.forbidden': 'This key may not do that: {message}',
  'error.invalid': 'Not accepted: {message}', 'error.title': 'Something went wrong',

  'signin.title': 'Sign in', 'signin.intro': 'Annals keeps the chronicle of your chats. Enter an API key to open it.',
  'signin.key': 'API key', 'signin.hint': 'Kept in this tab only, until it closes. `annals serve` prints the key on first start (also in .annals/api_key).',
  'signin.submit': 'Sign in', 'signin.out': 'Sign out', 'signin.wrong': 'This key was not accepted.',
  'signin.expired': 'The key is no longer accepted. Sign in again.', 'signin.empty': 'Enter a key.',

  'space.label': 'Space', 'space.other': 'Another space…', 'space.choose': 'Choose a space',
  'space.none': 'There is no space yet. Name one to start: importing a chat creates it.',
  'space.new': 'Space id', 'space.newhint': 'Letters, digits and _ . : @ - (up to 128).', 'space.open': 'Open',
  'space.notallowed': 'This key may not open space “{space}”.',

  'chronicle.title': 'Chronicle', 'chronicle.filters': 'Filter the chronicle', 'chronicle.search': 'Search',
  'chronicle.searchph': 'words in titles, summaries, people, tags', 'chronicle.from': 'From', 'chronicle.to': 'To',
  'chronicle.person': 'Person', 'chronicle.tag': 'Tag', 'chronicle.thread': 'Thread', 'chronicle.status': 'Status',
  'chronicle.keyonly': 'Key events only', 'chronicle.reset': 'Clear filters', 'chronicle.anyone': 'Anyone',
  'chronicle.morefilters': (v) => (v.n ? `Filters (${v.n} on)` : 'Filters'),
  'chronicle.anytag': 'Any tag', 'chronicle.anythread': 'Any thread', 'chronicle.more': 'Load more',
  'chronicle.count': (v) => `${v.n}${v.more} ${plural(v.n, 'event', 'events')}`,
  'chronicle.filtered': (v) => `${v.n} of ${v.total}${v.more} ${plural(v.total, 'event', 'events')} match`,
  'chronicle.monthcount': (v) => `${v.n} ${plural(v.n, 'event', 'events')}${v.k ? ` · ${v.k} key` : ''}`,
  'chronicle.empty': 'No events yet.', 'chronicle.emptyaction': 'Import a chat, then run extraction →',
  'chronicle.nomatch': 'No event matches these filters.',
  'chronicle.entity': 'Names', 'chronicle.entityhint': 'a person, place or thing the events name',
  'chronicle.anything': 'Anyone or anything', 'chronicle.inthread': 'Events of the thread',
  'chronicle.naming': 'Events naming', 'chronicle.scopegone': 'That thread or entity is gone; showing every event.',
  'chronicle.summaries': (v) => `${v.n} ${plural(v.n, 'summary', 'summaries')}`,
  'chronicle.summarieshint': 'session summaries and their folds, kept apart from the events',

  'event.key': 'Key event', 'event.about': 'People and tags', 'event.importance': 'Importance',
  'event.summary': 'Summary', 'event.evidence': 'Evidence', 'event.history': 'History',
  'event.noevidence': 'This event cites no messages (saved by hand, or they were deleted).',
  'event.missing': 'Event not found', 'event.plan': 'planned',
  'event.related': 'Thread and related events', 'event.norelations': 'No related events.',
  'event.versionline': (v) => `version ${v.n}, ${v.at}`,
  'field.title': 'Title', 'field.summary': 'Summary', 'field.location': 'Place', 'field.when': 'When',
  'field.importance': 'Importance', 'field.status': 'Status', 'field.kind': 'Kind', 'field.plan': 'Planned',
  'field.participants': 'People', 'field.tags': 'Tags', 'field.sources': 'Messages', 'field.version': 'Version',
  'field.id': 'Id',
  'status.active': 'active', 'status.archived': 'archived', 'status.superseded': 'superseded', 'status.all': 'all',
  'edit.edit': 'Edit', 'edit.archive': 'Archive', 'edit.restore': 'Restore', 'edit.save': 'Save',
  'edit.title': (v) => `Edit (from version ${v.n})`, 'edit.importancehint': '1–10; 7 or more is a key event',
  'edit.listhint': 'separated by commas', 'edit.nothing': 'Nothing changed.',
  'edit.saved': (v) => `Saved as version ${v.n}.`, 'edit.archived': (v) => `Archived (version ${v.n}).`,
  'edit.restored': (v) => `Restored (version ${v.n}).`,
  'conflict.title': 'Someone changed this event meanwhile',
  'conflict.text': (v) => `You edited version ${v.mine}, which is no longer the latest (${v.message}). Your edits are still in the form.`,
  'conflict.latest': 'Show the latest version', 'conflict.overwrite': 'Save mine over it',
  'conflict.reloaded': (v) => `Showing version ${v.n}.`,
  'history.version': (v) => `Version ${v.n}`, 'history.created': (v) => `Created: “${v.title}”`,
  'history.nochange': 'No visible change.', 'history.sources': (v) => `now cites ${v.n} range(s)`,
  'diff.added': 'added', 'diff.removed': 'removed',

  'recall.title': 'Recall lab', 'recall.intro': 'Ask as a chat host would, and see why Annals answers what it does.',
  'recall.query': 'Query', 'recall.queryph': 'e.g. what did Sam book?  /  奶糖体检',
  'recall.queryhint': 'Enter recalls; Shift+Enter adds a line.', 'recall.timehint': 'Time hint',
  'recall.timehintph': 'e.g. last Tuesday, 2026-06-14', 'recall.timehinthint': 'Optional: searched as a time window first.',
  'recall.window': 'Chat window', 'recall.windowhint': 'Cooldown is counted per window.',
  'recall.maxcards': 'Max cards', 'recall.advanced': 'More options', 'recall.now': 'Now',
  'recall.options': (v) => (v.n ? `Options (${v.n} set)` : 'Options'),
  'recall.nowhint': 'Read relative times against this moment.', 'recall.format': 'Context format',
  'recall.minrel': 'Min relevance', 'recall.minrelhint': 'The admission gate; 0 turns it off.',
  'recall.submit': 'Recall', 'recall.verdict': 'Verdict',
  'recall.summary': (v) => `${v.cards} ${plural(v.cards, 'card', 'cards')} · context about ${v.tokens} tokens`,
  'recall.layers': 'Time layers', 'recall.col.layer': 'Layer', 'recall.col.window': 'Window',
  'recall.col.candidates': 'Candidates', 'recall.col.hits': 'Hits',
  'recall.cards': 'Cards', 'recall.nocards': 'No card: nothing will be injected.',
  'recall.score': 'Score', 'recall.parts': 'Score parts', 'recall.part': 'Part', 'recall.value': 'Value', 'recall.bar': 'Share',
  'recall.kind.event': 'event', 'recall.kind.message': 'message',
  'recall.gate': 'Admission gate', 'recall.nogate': 'The gate did not apply to this recall.',
  'recall.admitted': 'Admitted:', 'recall.cooldown': 'Cooldown',
  'recall.nocooldown': (v) => `Nothing was cooling down in window “${v.window}”.`,
  'recall.nowindow': 'No window given: cooldown does not apply.', 'recall.removed': 'Removed:',
  'recall.trace': 'Trace', 'recall.context': 'Context as injected', 'recall.tokens': (v) => `≈ ${v.n} tokens`,
  'recall.nocontext': 'Empty: nothing would be injected.', 'recall.copy': 'Copy context',
  'recall.report': (v) => `Report ${v.n} as delivered`,
  'recall.delivered': (v) => `Reported ${v.n} as delivered to window “${v.window}”: the next recalls there skip ${plural(v.n, 'it', 'them')}.`,
  'recall.again': 'Recall again',
  'recall.materials': (v) => `${v.n} more of its ${plural(v.n, 'material', 'materials')}:`,
  'verdict.hit': 'Found in the first place looked.', 'verdict.expanded': 'Found after widening the time window.',
  'verdict.forgot': 'Nothing in the named time, even widened: the context tells the model to say it does not remember.',
  'verdict.unparsed': 'The time hint could not be read.', 'verdict.none': 'Nothing passed the admission gate: nothing is injected.',
  'verdict.cooled': 'What was found was injected in this window lately (cooldown): nothing is injected again.',
  'trace.cooldown': 'cooldown', 'trace.gate': 'gate', 'trace.time': 'time layers', 'trace.fresh': 'index', 'trace.recall': 'recall',
  'part.fused': 'fused score', 'part.keyword': 'BM25 keyword score', 'part.keyword_rank': 'rank by keywords',
  'part.vector': 'cosine to the query', 'part.vector_rank': 'rank by meaning', 'part.coverage': 'share of the query’s words held',
  'part.relevance': 'relevance the gate checks',

  'people.facts': 'Now', 'people.unsure': 'Unconfirmed since the job ended', 'people.was': 'Before', 'people.nofacts': 'Nothing told about them yet that lasts (where they live, work, pets, allergies …).',
  'people.since': (v) => `since ${v.d}`, 'people.until': (v) => `until ${v.d}`,
  'fact.lives_in': 'lives in', 'fact.works_at': 'works at', 'fact.works_as': 'works as', 'fact.studies': 'studies',
  'fact.pet': 'pet', 'fact.partner': 'partner', 'fact.child': 'child', 'fact.allergic_to': 'allergic to',
  'fact.likes': 'likes', 'fact.dislikes': 'dislikes', 'fact.owns': 'owns', 'fact.learning': 'learning',
  'people.title': 'People and threads', 'people.list': 'People', 'people.events': 'events',
  'people.summary': (v) => `${v.people} ${plural(v.people, 'person', 'people')}, ${v.things} ${plural(v.things, 'place or thing', 'places and things')}, ${v.threads} ${plural(v.threads, 'thread', 'threads')} in ${v.events} ${plural(v.events, 'event', 'events')}`,
  'people.partial': '(the first 5000 events)', 'people.count': (v) => `${v.n} ${plural(v.n, 'event', 'events')}`,
  'people.noevents': 'No event names them yet.', 'people.none': 'Nobody and nothing yet: events name their participants, places and things.',
  'people.pick': 'Pick someone or something', 'people.pickhint': 'Their events are listed here.',
  'people.entities': 'Places and things', 'people.inchronicle': 'Show these events in the chronicle →',
  'people.graph': 'Who and what appears where',
  'people.graphhint': (v) => `${v.nodes} people, things and threads, and ${v.events} of their events (those in threads first, then the most important).`,
  'people.graphlabel': (v) => `Graph of ${v.nodes} people, things and threads and ${v.events} events; each node is a link.`,
  'people.graphlist': 'The graph as a list',
  'people.nodeperson': (v) => `${v.name}, ${v.n} ${plural(v.n, 'event', 'events')}`,
  'people.nodeentity': (v) => `${v.name} (${v.kind}), ${v.n} ${plural(v.n, 'event', 'events')}`,
  'people.nodethread': (v) => `Thread ${v.name}, ${v.n} ${plural(v.n, 'event', 'events')}`,
  'people.legend': 'Legend',
  'legend.person': 'person', 'legend.place': 'place', 'legend.pet': 'pet', 'legend.work': 'work',
  'legend.organisation': 'organisation', 'legend.project': 'project', 'legend.thing': 'thing',
  'legend.thread': 'thread', 'legend.event': 'event', 'legend.key': 'key event', 'legend.rel': 'replaces / leads to',
  'kind.person': 'person', 'kind.place': 'place', 'kind.pet': 'pet', 'kind.work': 'work',
  'kind.organisation': 'organisation', 'kind.project': 'project', 'kind.thing': 'thing', 'kind.thread': 'thread',
  'kinds.place': 'Places', 'kinds.pet': 'Pets', 'kinds.work': 'Works', 'kinds.organisation': 'Organisations',
  'kinds.project': 'Projects', 'kinds.thing': 'Things',
  'threads.title': 'Threads', 'threads.none': 'No threads yet: events that share a place or thing and its words become one.',
  'threads.more': (v) => `and ${v.n} more →`,
  'thread.label': 'Thread', 'thread.count': (v) => `${v.n} ${plural(v.n, 'event', 'events')}`,
  'thread.aliases': 'Also called', 'thread.edit': 'Rename', 'thread.manual': 'edited by hand',
  'thread.edittitle': (v) => `Rename (from version ${v.n})`,
  'thread.saved': (v) => `Thread saved as version ${v.n}.`,
  'thread.conflict': 'Someone changed this thread meanwhile',
  'thread.conflicttext': (v) => `You edited version ${v.mine}, which is no longer the latest (${v.message}). Nothing was saved; load the latest version (your text stays in the form) and save again.`,
  'thread.latest': 'Load the latest version', 'thread.reloaded': (v) => `Now on version ${v.n}; your text is kept.`,
  'thread.materials': 'Materials', 'thread.materialshint': 'Its events, oldest first.',
  'thread.inchronicle': 'Show them in the chronicle →', 'thread.empty': 'No events in this thread.',
  'thread.summaries': 'Summaries about it', 'thread.missing': 'Thread not found',
  'thread.mergetitle': 'Merge into another thread',
  'thread.mergehint': 'Moves its events, summaries and names (this title becomes an alias) into the other thread, and deletes this one.',
  'thread.into': 'Into', 'thread.pick': 'Choose a thread', 'thread.merge': 'Merge',
  'thread.merged': (v) => `“${v.from}” merged into “${v.into}”.`,
  'summary.badge': (v) => (Number(v.n) > 1 ? `summary · level ${v.n}` : 'summary'),
  'relation.replaces': 'Replaces', 'relation.replacedby': 'Replaced by', 'relation.samethread': 'Same thread as',
  'relation.ledto': 'Led to', 'relation.causedby': 'Caused by', 'relation.follows': 'Follows', 'relation.followedby': 'Followed by',
  'relation.replacednote': 'A later event replaced this one:',

  'ops.title': 'Operations', 'ops.intro': 'Bring chats in, run the background jobs now, and look after the space.',
  'ops.readonly': 'This key can only read: importing and jobs need a write key.',
  'import.title': 'Import a chat', 'import.intro': 'An OpenAI-style JSON file (a list of messages, or {"messages": […]}) or a SillyTavern .jsonl chat. It is read here and sent in batches; importing it again changes nothing.',
  'import.file': 'Chat file', 'import.session': 'Session', 'import.sessionhint': 'From the file name; importing into the same session replaces by position.',
  'import.format': 'Format', 'import.auto': 'Detect', 'import.openai': 'OpenAI-style JSON', 'import.sillytavern': 'SillyTavern .jsonl',
  'import.username': 'Your name (optional)', 'import.assistantname': 'Assistant’s name (optional)',
  'import.nameshint': 'For messages the file names no one for (or only “User”, “{{char}}” …); names in the file come first.',
  'import.submit': 'Import', 'import.nofile': 'Choose a file first.', 'import.bad': (v) => `Cannot read this file: ${v.message}. This page reads a SillyTavern .jsonl chat or OpenAI-style messages JSON (a list of messages, or {"messages": […]}); a LoCoMo conversation goes in with annals import.`,
  'import.empty': 'The file holds no messages.', 'import.progresslabel': 'Import progress',
  'import.progress': (v) => `Sending ${v.sent} / ${v.total} messages (batch ${v.batch} of ${v.batches})…`,
  'import.done': (v) => `Imported ${v.total} messages into “${v.session}” (${v.format}): ${v.accepted} new, ${v.changed} changed, ${v.unchanged} unchanged.`,
  'import.donesay': (v) => `Import finished: ${v.total} messages.`,
  'jobs.title': 'Run now', 'jobs.intro': 'The scheduler does these by itself; here they run at once.',
  'jobs.extract': 'Extract events', 'jobs.merge': 'Merge duplicates', 'jobs.forget': 'Forget now',
  'jobs.progress': (v) => `Extracting in the background: ${v.done} / ${v.total} messages, ${v.events} ${plural(v.events, 'event', 'events')} so far (${v.status})…`,
  'jobs.status.queued': 'queued', 'jobs.status.running': 'running', 'jobs.status.done': 'done', 'jobs.status.failed': 'failed',
  'jobs.failed': (v) => `The extraction job failed: ${v.error}`, 'jobs.progresslabel': 'Extraction progress',
  'import.extract': 'Extract events right after the import',
  'jobs.running': (v) => `${v.job}…`,
  'jobs.extracted': (v) => `Extraction made ${v.n} ${plural(v.n, 'event', 'events')}.`,
  'jobs.merged': (v) => `Merge (${v.merger}): ${v.created} created, ${v.updated} updated, ${v.superseded} superseded.`,
  'jobs.forgot': (v) => `Forgetting archived ${v.n} faded ${plural(v.n, 'event', 'events')}; ${v.c} journal batches compacted.`,
  'stats.title': 'Status', 'stats.refresh': 'Refresh', 'stats.updated': (v) => `Updated ${v.at}`,
  'stats.active': 'active events', 'stats.archived': 'archived', 'stats.superseded': 'superseded',
  'stats.sessions': 'sessions', 'stats.messages': 'messages', 'stats.pending': 'sessions waiting',
  'stats.kwpending': 'awaiting keywords', 'stats.vecpending': 'awaiting embedding',
  'stats.writer': 'Indexing', 'stats.extractor': 'Extractor', 'stats.merger': 'Merger', 'stats.llm': 'LLM',
  'stats.mergeline': (v) => `${v.runs} runs, ${v.pending} new since, last ${v.at}`,
  'stats.llmline': (v) => `${v.calls} calls, ${v.tokens} tokens, ${v.failures} failed`,
  'stats.failures': 'Failed background work', 'stats.nofailures': 'No failures.',
  'stats.col.job': 'Job', 'stats.col.unit': 'Unit', 'stats.col.error': 'Error', 'stats.col.count': 'Times',
  'stats.col.last': 'Last', 'stats.col.quarantined': 'Quarantined',
  'export.title': 'Export', 'export.which': 'Events', 'export.markdown': 'Download Markdown', 'export.json': 'Download JSON',
  'export.done': (v) => `Saved ${v.name}.`,
  'keys.title': 'API keys', 'keys.intro': 'Keys for other clients, limited to spaces and to reading or writing. Only admin keys see this.',
  'keys.list': 'Keys', 'keys.none': 'No keys created yet (the admin key is not listed).',
  'keys.col.id': 'Id', 'keys.col.label': 'Label', 'keys.col.access': 'Access', 'keys.col.spaces': 'Spaces',
  'keys.col.created': 'Created', 'keys.col.used': 'Last used', 'keys.col.state': 'State',
  'keys.read': 'read', 'keys.write': 'write', 'keys.admin': 'admin', 'keys.all': 'every space', 'keys.revoked': 'revoked',
  'keys.revoke': 'Revoke', 'keys.confirm': (v) => `Revoke ${v.id}`, 'keys.revokedsay': (v) => `Key ${v.id} revoked.`,
  'keys.new': 'New key', 'keys.label': 'Label', 'keys.access': 'Access', 'keys.spaces': 'Spaces',
  'keys.spaceshint': 'Space ids separated by commas, or * for every space.', 'keys.create': 'Create key',
  'keys.created': (v) => `Key ${v.id} created.`, 'keys.once': 'The key (shown this once)', 'keys.copy': 'Copy key',
};

const ZH = {
  'app.name': 'Annals 编年',
  'lang.label': '语言', 'lang.zh': '中文', 'lang.en': 'English',
  'nav.label': '栏目', 'nav.skip': '跳到正文', 'nav.chronicle': '编年', 'nav.recall': '回忆实验室',
  'nav.people': '人物与线索', 'nav.ops': '运维',
  'access.read': '只读',
  'common.cancel': '取消', 'common.copied': '已复制。', 'common.dismiss': '关闭', 'common.yes': '是', 'common.no': '否',
  'error.network': '服务器没有响应，它在运行吗？', 'error.forbidden': '这个密钥无权这样做：{message}',
  'error.invalid': '未被接受：{message}', 'error.title': '出错了',

  'signin.title': '登录', 'signin.intro': 'Annals 保存你的聊天编年史。输入 API 密钥打开它。',
  'signin.key': 'API 密钥', 'signin.hint': '只保存在这个标签页里，关闭即清除。`annals serve` 首次启动时会打印密钥（也在 .annals/api_key）。',
  'signin.submit': '登录', 'signin.out': '退出', 'signin.wrong': '密钥不正确。',
  'signin.expired': '密钥已失效，请重新登录。', 'signin.empty': '请输入密钥。',

  'space.label': '空间', 'space.other': '其他空间…', 'space.choose': '选择空间',
  'space.none': '还没有空间。起个名字开始吧：导入聊天时会创建它。',
  'space.new': '空间 id', 'space.newhint': '字母、数字和 _ . : @ -（最多 128 个）。', 'space.open': '打开',
  'space.notallowed': '这个密钥不能打开空间“{space}”。',

  'chronicle.title': '编年', 'chronicle.filters': '筛选编年', 'chronicle.search': '搜索',
  'chronicle.searchph': '标题、摘要、人物、标签中的词', 'chronicle.from': '从', 'chronicle.to': '到',
  'chronicle.person': '人物', 'chronicle.tag': '标签', 'chronicle.thread': '线索', 'chronicle.status': '状态',
  'chronicle.keyonly': '只看重要事件', 'chronicle.reset': '清除筛选', 'chronicle.anyone': '所有人',
  'chronicle.morefilters': (v) => (v.n ? `筛选（已选 ${v.n} 项）` : '筛选'),
  'chronicle.anytag': '所有标签', 'chronicle.anythread': '所有线索', 'chronicle.more': '加载更多',
  'chronicle.count': (v) => `${v.n}${v.more} 个事件`,
  'chronicle.filtered': (v) => `${v.total}${v.more} 个事件中 ${v.n} 个符合`,
  'chronicle.monthcount': (v) => `${v.n} 个事件${v.k ? ` · ${v.k} 个重要` : ''}`,
  'chronicle.empty': '还没有事件。', 'chronicle.emptyaction': '先导入聊天，再运行抽取 →',
  'chronicle.nomatch': '没有符合筛选条件的事件。',
  'chronicle.entity': '提到', 'chronicle.entityhint': '事件提到的人物、地点或事物',
  'chronicle.anything': '任何人或事物', 'chronicle.inthread': '线索中的事件：',
  'chronicle.naming': '提到它的事件：', 'chronicle.scopegone': '那条线索或那个事物已不存在；现在显示所有事件。',
  'chronicle.summaries': (v) => `${v.n} 条摘要`,
  'chronicle.summarieshint': '会话摘要及其折叠，和事件分开存放',

  'event.key': '重要事件', 'event.about': '人物和标签', 'event.importance': '重要度',
  'event.summary': '摘要', 'event.evidence': '证据', 'event.history': '历史',
  'event.noevidence': '这个事件没有引用消息（手工保存的，或消息已删除）。',
  'event.missing': '找不到这个事件', 'event.plan': '计划中',
  'event.related': '线索和相关事件', 'event.norelations': '没有相关事件。',
  'event.versionline': (v) => `第 ${v.n} 版，${v.at}`,
  'field.title': '标题', 'field.summary': '摘要', 'field.location': '地点', 'field.when': '时间',
  'field.importance': '重要度', 'field.status': '状态', 'field.kind': '类型', 'field.plan': '计划',
  'field.participants': '人物', 'field.tags': '标签', 'field.sources': '消息', 'field.version': '版本', 'field.id': 'Id',
  'status.active': '有效', 'status.archived': '已归档', 'status.superseded': '已被取代', 'status.all': '全部',
  'edit.edit': '编辑', 'edit.archive': '归档', 'edit.restore': '恢复', 'edit.save': '保存',
  'edit.title': (v) => `编辑（基于第 ${v.n} 版）`, 'edit.importancehint': '1–10；7 及以上为重要事件',
  'edit.listhint': '用逗号分隔', 'edit.nothing': '没有改动。',
  'edit.saved': (v) => `已保存为第 ${v.n} 版。`, 'edit.archived': (v) => `已归档（第 ${v.n} 版）。`,
  'edit.restored': (v) => `已恢复（第 ${v.n} 版）。`,
  'conflict.title': '这个事件刚被别人改过',
  'conflict.text': (v) => `你编辑的是第 ${v.mine} 版，它已不是最新（${v.message}）。你的修改还在表单里。`,
  'conflict.latest': '查看最新版本', 'conflict.overwrite': '用我的修改覆盖',
  'conflict.reloaded': (v) => `现在显示第 ${v.n} 版。`,
  'history.version': (v) => `第 ${v.n} 版`, 'history.created': (v) => `创建：“${v.title}”`,
  'history.nochange': '没有可见的改动。', 'history.sources': (v) => `现在引用 ${v.n} 段消息`,
  'diff.added': '新增', 'diff.removed': '删除',

  'recall.title': '回忆实验室', 'recall.intro': '像聊天程序那样提问，并看清 Annals 为什么这样回答。',
  'recall.query': '问题', 'recall.queryph': '例如：奶糖体检  /  what did Sam book?',
  'recall.queryhint': '回车即检索，Shift+回车换行。', 'recall.timehint': '时间提示',
  'recall.timehintph': '例如：上周二、2026-06-14', 'recall.timehinthint': '可选：先在这个时间窗口里找。',
  'recall.window': '聊天窗口', 'recall.windowhint': '冷却按窗口计算。',
  'recall.maxcards': '最多卡片数', 'recall.advanced': '更多选项', 'recall.now': '当前时间',
  'recall.options': (v) => (v.n ? `选项（已设 ${v.n} 项）` : '选项'),
  'recall.nowhint': '相对时间按这个时刻理解。', 'recall.format': '上下文格式',
  'recall.minrel': '最低相关度', 'recall.minrelhint': '准入门槛；0 表示关闭。',
  'recall.submit': '回忆', 'recall.verdict': '结论',
  'recall.summary': (v) => `${v.cards} 张卡片 · 上下文约 ${v.tokens} 个 token`,
  'recall.layers': '时间层', 'recall.col.layer': '层', 'recall.col.window': '窗口',
  'recall.col.candidates': '候选', 'recall.col.hits': '命中',
  'recall.cards': '卡片', 'recall.nocards': '没有卡片：不会注入任何记忆。',
  'recall.score': '得分', 'recall.parts': '得分构成', 'recall.part': '分项', 'recall.value': '数值', 'recall.bar': '占比',
  'recall.kind.event': '事件', 'recall.kind.message': '消息',
  'recall.gate': '准入门槛', 'recall.nogate': '本次回忆没有使用准入门槛。',
  'recall.admitted': '通过：', 'recall.cooldown': '冷却',
  'recall.nocooldown': (v) => `窗口“${v.window}”里没有正在冷却的记忆。`,
  'recall.nowindow': '没有指定窗口：不做冷却。', 'recall.removed': '移除：',
  'recall.trace': '检索过程', 'recall.context': '注入的上下文', 'recall.tokens': (v) => `约 ${v.n} 个 token`,
  'recall.nocontext': '为空：不会注入任何内容。', 'recall.copy': '复制上下文',
  'recall.report': (v) => `报告已注入 ${v.n} 条`,
  'recall.delivered': (v) => `已报告 ${v.n} 条注入到窗口“${v.window}”：该窗口接下来的回忆会跳过它们。`,
  'recall.again': '再回忆一次',
  'recall.materials': (v) => `它的另外 ${v.n} 条材料：`,
  'verdict.hit': '在第一处就找到了。', 'verdict.expanded': '扩大时间窗口后找到了。',
  'verdict.forgot': '指定的时间里（扩大后也）没有记忆：上下文会让模型如实说不记得。',
  'verdict.unparsed': '看不懂时间提示。', 'verdict.none': '没有候选通过准入门槛：不注入任何记忆。',
  'verdict.cooled': '找到的记忆这个窗口刚注入过（冷却中）：这次不再注入。',
  'trace.cooldown': '冷却', 'trace.gate': '门槛', 'trace.time': '时间层', 'trace.fresh': '索引', 'trace.recall': '检索',
  'part.fused': '融合得分', 'part.keyword': 'BM25 关键词得分', 'part.keyword_rank': '关键词排名',
  'part.vector': '与问题的余弦相似度', 'part.vector_rank': '语义排名', 'part.coverage': '覆盖问题内容词的比例',
  'part.relevance': '门槛检查的相关度',

  'people.facts': '现在', 'people.unsure': '工作结束后未再确认', 'people.was': '以前', 'people.nofacts': '还没有关于 TA 的长期信息（住哪、工作、宠物、过敏……）。',
  'people.since': (v) => `自 ${v.d}`, 'people.until': (v) => `至 ${v.d}`,
  'fact.lives_in': '住在', 'fact.works_at': '工作单位', 'fact.works_as': '职业', 'fact.studies': '在读',
  'fact.pet': '宠物', 'fact.partner': '伴侣', 'fact.child': '孩子', 'fact.allergic_to': '过敏',
  'fact.likes': '喜欢', 'fact.dislikes': '不喜欢', 'fact.owns': '拥有', 'fact.learning': '在学',
  'people.title': '人物与线索', 'people.list': '人物', 'people.events': '事件数',
  'people.summary': (v) => `${v.events} 个事件中的 ${v.people} 个人物、${v.things} 个地点和事物、${v.threads} 条线索`,
  'people.partial': '（前 5000 个事件）', 'people.count': (v) => `${v.n} 个事件`,
  'people.noevents': '还没有事件提到 TA。', 'people.none': '还没有人物和事物：事件会记下参与者、地点和事物。',
  'people.pick': '选一个人或事物', 'people.pickhint': '相关的事件会列在这里。',
  'people.entities': '地点和事物', 'people.inchronicle': '在编年中查看这些事件 →',
  'people.graph': '谁和什么出现在哪里',
  'people.graphhint': (v) => `${v.nodes} 个人物、事物和线索，以及它们的 ${v.events} 个事件（先列线索中的，再列最重要的）。`,
  'people.graphlabel': (v) => `${v.nodes} 个人物、事物、线索与 ${v.events} 个事件的关系图；每个节点都是链接。`,
  'people.graphlist': '以列表查看关系图',
  'people.nodeperson': (v) => `${v.name}，${v.n} 个事件`,
  'people.nodeentity': (v) => `${v.name}（${v.kind}），${v.n} 个事件`,
  'people.nodethread': (v) => `线索 ${v.name}，${v.n} 个事件`,
  'people.legend': '图例',
  'legend.person': '人物', 'legend.place': '地点', 'legend.pet': '宠物', 'legend.work': '作品',
  'legend.organisation': '机构', 'legend.project': '项目', 'legend.thing': '事物',
  'legend.thread': '线索', 'legend.event': '事件', 'legend.key': '重要事件', 'legend.rel': '取代 / 导致',
  'kind.person': '人物', 'kind.place': '地点', 'kind.pet': '宠物', 'kind.work': '作品',
  'kind.organisation': '机构', 'kind.project': '项目', 'kind.thing': '事物', 'kind.thread': '线索',
  'kinds.place': '地点', 'kinds.pet': '宠物', 'kinds.work': '作品', 'kinds.organisation': '机构',
  'kinds.project': '项目', 'kinds.thing': '事物',
  'threads.title': '线索', 'threads.none': '还没有线索：共享同一地点或事物及其用词的事件会串成一条。',
  'threads.more': (v) => `还有 ${v.n} 个 →`,
  'thread.label': '线索', 'thread.count': (v) => `${v.n} 个事件`,
  'thread.aliases': '别名', 'thread.edit': '重命名', 'thread.manual': '手工编辑过',
  'thread.edittitle': (v) => `重命名（基于第 ${v.n} 版）`,
  'thread.saved': (v) => `线索已保存为第 ${v.n} 版。`,
  'thread.conflict': '这条线索刚被别人改过',
  'thread.conflicttext': (v) => `你编辑的是第 ${v.mine} 版，它已不是最新（${v.message}）。没有保存任何内容；请载入最新版本（你填写的内容会保留）后再保存。`,
  'thread.latest': '载入最新版本', 'thread.reloaded': (v) => `现在是第 ${v.n} 版；你填写的内容已保留。`,
  'thread.materials': '材料', 'thread.materialshint': '它的事件，按时间先后排列。',
  'thread.inchronicle': '在编年中查看 →', 'thread.empty': '这条线索里没有事件。',
  'thread.summaries': '相关摘要', 'thread.missing': '找不到这条线索',
  'thread.mergetitle': '合并到另一条线索',
  'thread.mergehint': '把它的事件、摘要和名称（当前标题会成为别名）移到另一条线索，并删除这一条。',
  'thread.into': '合并到', 'thread.pick': '选择线索', 'thread.merge': '合并',
  'thread.merged': (v) => `“${v.from}”已合并到“${v.into}”。`,
  'summary.badge': (v) => (Number(v.n) > 1 ? `摘要 · 第 ${v.n} 层` : '摘要'),
  'relation.replaces': '取代了', 'relation.replacedby': '已被取代：', 'relation.samethread': '同一线索',
  'relation.ledto': '导致了', 'relation.causedby': '起因', 'relation.follows': '接在之后：', 'relation.followedby': '之后是',
  'relation.replacednote': '这个事件已被后来的事件取代：',

  'ops.title': '运维', 'ops.intro': '导入聊天、立即运行后台任务、照看这个空间。',
  'ops.readonly': '这个密钥只能读取：导入和运行任务需要写入权限的密钥。',
  'import.title': '导入聊天', 'import.intro': 'OpenAI 风格的 JSON 文件（消息列表，或 {"messages": […]}），或 SillyTavern 的 .jsonl 聊天记录。文件在浏览器里读取、分批发送；重复导入不会产生改动。',
  'import.file': '聊天文件', 'import.session': '会话', 'import.sessionhint': '取自文件名；导入同一会话会按位置替换。',
  'import.format': '格式', 'import.auto': '自动识别', 'import.openai': 'OpenAI 风格 JSON', 'import.sillytavern': 'SillyTavern .jsonl',
  'import.username': '你的名字（可选）', 'import.assistantname': '助手的名字（可选）',
  'import.nameshint': '用于文件里没写名字（或只写了“User”“{{char}}”之类）的消息；文件里的名字优先。',
  'import.submit': '导入', 'import.nofile': '请先选择文件。', 'import.bad': (v) => `读不懂这个文件：${v.message}。这里能读 SillyTavern 的 .jsonl 聊天记录和 OpenAI 风格的消息 JSON（消息列表，或 {"messages": […]}）；LoCoMo 对话请用 annals import 导入。`,
  'import.empty': '文件里没有消息。', 'import.progresslabel': '导入进度',
  'import.progress': (v) => `正在发送 ${v.sent} / ${v.total} 条消息（第 ${v.batch} / ${v.batches} 批）…`,
  'import.done': (v) => `已导入 ${v.total} 条消息到“${v.session}”（${v.format}）：新增 ${v.accepted}，修改 ${v.changed}，未变 ${v.unchanged}。`,
  'import.donesay': (v) => `导入完成：${v.total} 条消息。`,
  'jobs.title': '立即运行', 'jobs.intro': '调度器会自动做这些；在这里可以立刻运行。',
  'jobs.extract': '抽取事件', 'jobs.merge': '合并重复', 'jobs.forget': '立即遗忘',
  'jobs.progress': (v) => `后台抽取中：${v.done} / ${v.total} 条消息，已得到 ${v.events} 个事件（${v.status}）…`,
  'jobs.status.queued': '排队中', 'jobs.status.running': '进行中', 'jobs.status.done': '完成', 'jobs.status.failed': '失败',
  'jobs.failed': (v) => `抽取任务失败：${v.error}`, 'jobs.progresslabel': '抽取进度',
  'import.extract': '导入后立即抽取事件',
  'jobs.running': (v) => `${v.job}…`,
  'jobs.extracted': (v) => `抽取得到 ${v.n} 个事件。`,
  'jobs.merged': (v) => `合并（${v.merger}）：新建 ${v.created}，更新 ${v.updated}，取代 ${v.superseded}。`,
  'jobs.forgot': (v) => `遗忘：归档了 ${v.n} 个淡去的事件；压缩了 ${v.c} 批日志。`,
  'stats.title': '状态', 'stats.refresh': '刷新', 'stats.updated': (v) => `更新于 ${v.at}`,
  'stats.active': '有效事件', 'stats.archived': '已归档', 'stats.superseded': '已被取代',
  'stats.sessions': '会话', 'stats.messages': '消息', 'stats.pending': '待抽取会话',
  'stats.kwpending': '待建关键词索引', 'stats.vecpending': '待向量化',
  'stats.writer': '索引', 'stats.extractor': '抽取器', 'stats.merger': '合并器', 'stats.llm': '大模型',
  'stats.mergeline': (v) => `已运行 ${v.runs} 次，之后新增 ${v.pending}，最近一次 ${v.at}`,
  'stats.llmline': (v) => `${v.calls} 次调用，${v.tokens} 个 token，${v.failures} 次失败`,
  'stats.failures': '失败的后台任务', 'stats.nofailures': '没有失败。',
  'stats.col.job': '任务', 'stats.col.unit': '单元', 'stats.col.error': '错误', 'stats.col.count': '次数',
  'stats.col.last': '最近', 'stats.col.quarantined': '已隔离',
  'export.title': '导出', 'export.which': '事件', 'export.markdown': '下载 Markdown', 'export.json': '下载 JSON',
  'export.done': (v) => `已保存 ${v.name}。`,
  'keys.title': 'API 密钥', 'keys.intro': '给其他客户端用的密钥，可限定空间和读写权限。只有管理员密钥能看到这里。',
  'keys.list': '密钥', 'keys.none': '还没有创建密钥（管理员密钥不在列表中）。',
  'keys.col.id': 'Id', 'keys.col.label': '备注', 'keys.col.access': '权限', 'keys.col.spaces': '空间',
  'keys.col.created': '创建于', 'keys.col.used': '最近使用', 'keys.col.state': '状态',
  'keys.read': '只读', 'keys.write': '读写', 'keys.admin': '管理员', 'keys.all': '所有空间', 'keys.revoked': '已吊销',
  'keys.revoke': '吊销', 'keys.confirm': (v) => `确认吊销 ${v.id}`, 'keys.revokedsay': (v) => `密钥 ${v.id} 已吊销。`,
  'keys.new': '新密钥', 'keys.label': '备注', 'keys.access': '权限', 'keys.spaces': '空间',
  'keys.spaceshint': '空间 id 用逗号分隔，* 表示所有空间。', 'keys.create': '创建密钥',
  'keys.created': (v) => `密钥 ${v.id} 已创建。`, 'keys.once': '密钥（只显示这一次）', 'keys.copy': '复制密钥',
};

export const STRINGS = {en: EN, zh: ZH};
let current = 'en';

export function lang() {
  return current;
}

export function locale() {
  return current === 'zh' ? 'zh-CN' : 'en';
}

/** The reader's choice, else the first Chinese or English language the browser prefers. */
export function detectLang() {
  const stored = localStorage.getItem(STORE);
  if (LANGS.includes(stored)) return stored;
  for (const tag of navigator.languages || [navigator.language || 'en']) {
    const base = String(tag).toLowerCase().split('-')[0];
    if (LANGS.includes(base)) return base;
  }
  return 'en';
}

export function setLang(code, remember = false) {
  current = LANGS.includes(code) ? code : 'en';
  document.documentElement.lang = locale();
  if (remember) localStorage.setItem(STORE, current);
}

export function t(key, vars = {}) {
  const entry = STRINGS[current][key] ?? EN[key];
  if (entry === undefined) return key;
  if (typeof entry === 'function') return entry(vars);
  return entry.replace(/\{(\w+)\}/g, (_, name) => (vars[name] ?? ''));
}

// ------------------------------------------------------------------ dates and numbers

/** The wall-clock time an ISO string names, as a Date read in UTC (no zone shift). */
function wall(iso) {
  const m = /^(\d{4})-(\d{2})(?:-(\d{2}))?(?:T(\d{2}):(\d{2}))?/.exec(iso);
  if (!m) return new Date(NaN);
  return new Date(Date.UTC(+m[1], +m[2] - 1, +(m[3] || 1), +(m[4] || 0), +(m[5] || 0)));
}

function format(options) {
  return new Intl.DateTimeFormat(locale(), {timeZone: 'UTC', ...options});
}

export function fmtMonth(yearMonth) {
  return format({year: 'numeric', month: 'long'}).format(wall(`${yearMonth}-01`));
}

const DAY = {year: 'numeric', month: 'short', day: 'numeric'};

/** An event's time as it wrote it: a day, a range of days, a month, a year, or a time. */
export function fmtWhen(when) {
  if (!when) return '';
  const start = wall(when.start);
  const end = new Date(wall(when.end).getTime() - 60_000);  // `end` is exclusive
  switch (when.granularity) {
    case 'year':
      return format({year: 'numeric'}).format(start);
    case 'month':
      return format({year: 'numeric', month: 'long'}).format(start);
    case 'minute':
    case 'hour':
    case 'part_of_day':
      return format({...DAY, hour: 'numeric', minute: '2-digit'}).formatRange(start, end);
    default: {
      const sameDay = start.toISOString().slice(0, 10) === end.toISOString().slice(0, 10);
      return sameDay ? format({...DAY, weekday: 'short'}).format(start) : format(DAY).formatRange(start, end);
    }
  }
}

/** {day: "14", rest: "Sun"} for the timeline's date column. */
export function fmtDayParts(when) {
  const start = wall(when.start);
  if (when.granularity === 'month' || when.granularity === 'year') {
    return {day: '·', rest: format({month: 'short'}).format(start)};
  }
  return {day: String(start.getUTCDate()), rest: format({weekday: 'short'}).format(start)};
}

/** An instant (a message's time, an edit) in the reader's own zone. */
export function fmtDateTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  return new Intl.DateTimeFormat(locale(), {dateStyle: 'medium', timeStyle: 'short'}).format(date);
}

export function fmtNumber(value, digits = 2) {
  return new Intl.NumberFormat(locale(), {maximumFractionDigits: digits}).format(value);
}
