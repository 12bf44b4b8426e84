// Role words and placeholders — the speaker of a message that named no one ("user",
// "assistant"), {{char}}, <USER>, AI, 用户, 助手 … — and generic nouns are never people, as
// chalicelib/domain/names.py (is_placeholder) reads them: the People page leaves them out
// (events stored before the server dropped them from participants may still list them), and
// an import puts a name in their place where it has one.

const ROLE_WORDS = new Set(['user', 'assistant', 'system', 'developer', 'tool', 'function', 'human', 'ai', 'bot',
  'chatbot', 'model', 'llm', 'char', 'character', 'narrator', 'persona', 'npc', 'player', 'me', 'you', 'i', 'we',
  'speaker', 'unknown', 'anonymous', 'anon', 'nobody', 'none', 'null', 'n/a', '用户', '使用者', '助手', '助理', '系统',
  '机器人', '模型', '人工智能', '角色', '旁白', '玩家', '我', '你', '您', '匿名', '未知', 'ai助手', '智能助手']);
const GENERIC_NOUNS = new Set(['someone', 'somebody', 'anyone', 'anybody', 'everyone', 'everybody', 'people', 'person',
  'friend', 'friends', 'guest', 'stranger', 'they', 'them', 'he', 'she', 'him', 'her', '某人', '有人', '别人', '大家',
  '朋友', '对方', '他', '她', '他们', '她们', '我们', '你们']);

export function isPlaceholder(name) {
  const bare = String(name || '').normalize('NFKC').toLowerCase().trim()
    .replace(/^[{<[(（【「]+|[}>\])）】」]+$/g, '').replace(/^[\s"'“”‘’.:：,，]+|[\s"'“”‘’.:：,，]+$/g, '')
    .replace(/\s+/g, ' ');
  if (!bare || ROLE_WORDS.has(bare) || GENERIC_NOUNS.has(bare)) return true;
  const numbered = /^(.*?)[\s_#-]*\d{1,3}$/.exec(bare);
  return Boolean(numbered && ROLE_WORDS.has(numbered[1]));
}

/** A person's name as given (one line), or null for nothing or a placeholder. */
export function personName(value) {
  const text = typeof value === 'string' ? value.replace(/\s+/g, ' ').trim() : '';
  return text && !isPlaceholder(text) ? text : null;
}
