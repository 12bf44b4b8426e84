// The extension's panel in SillyTavern's Extensions drawer: settings, this character's
// chronicle, its people with their current facts, and the last recall (what was found, what
// was injected, why). Every piece of stored text is set as textContent, never parsed as HTML.

/** @param {string} tag @param {Record<string, string>} [attrs] @param {...(Node|string)} kids */
export function el(tag, attrs = {}, ...kids) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  for (const kid of kids) node.append(kid);  // strings become text nodes: never HTML
  return node;
}

/**
 * Build the panel once into `host`; `tr` translates a UI string, `actions` are the buttons'
 * and fields' handlers. Returns the places later renders fill.
 * @param {HTMLElement} host @param {(s: string) => string} tr
 * @param {{settings: any, onChange: (name: string, value: unknown) => void,
 *          onReadNow: () => void, onOpen: () => void, onRefresh: () => void}} actions
 */
export function buildPanel(host, tr, actions) {
  const s = actions.settings;
  const field = (name, label, input) => {
    input.dataset.annals = name;
    const key = input.type === "checkbox" ? "checked" : "value";
    if (input.type === "checkbox") input.checked = Boolean(s[name]);
    else input.value = String(s[name] ?? "");
    input.addEventListener("change", () => actions.onChange(
      name, input.type === "checkbox" ? input.checked
        : input.type === "number" ? Number(input.value) : input[key]));
    return el("label", { class: `annals-field annals-${input.type || "select"}` },
              el("span", {}, tr(label)), input);
  };
  const role = el("select", {},
                  el("option", { value: "0" }, tr("system")),
                  el("option", { value: "1" }, tr("user")),
                  el("option", { value: "2" }, tr("assistant")));
  const spaceInput = el("input", { type: "text", placeholder: tr("the character's name") });
  spaceInput.dataset.annals = "space";
  spaceInput.addEventListener("change", () => actions.onChange("space", spaceInput.value.trim()));
  const status = el("div", { class: "annals-status", role: "status" });
  const views = {
    chronicle: el("div", { class: "annals-view annals-chronicle" }),
    people: el("div", { class: "annals-view annals-people" }),
    recall: el("div", { class: "annals-view annals-recall" }),
  };
  const tabs = el("div", { class: "annals-tabs", role: "tablist" });
  for (const [name, label] of [["chronicle", "Chronicle"], ["people", "People"],
                               ["recall", "Last recall"]]) {
    const tab = el("button", { type: "button", class: "menu_button annals-tab", role: "tab",
                               "data-view": name }, tr(label));
    tab.addEventListener("click", () => showView(tabs, views, name));
    tabs.append(tab);
  }
  const button = (label, handler) => {
    const b = el("button", { type: "button", class: "menu_button annals-button" }, tr(label));
    b.addEventListener("click", handler);
    return b;
  };
  const drawer = el("div", { class: "inline-drawer annals-panel" },
    el("div", { class: "inline-drawer-toggle inline-drawer-header" },
       el("b", {}, tr("Annals memory")),
       el("div", { class: "inline-drawer-icon fa-solid fa-circle-chevron-down down" })),
    el("div", { class: "inline-drawer-content" },
       status,
       el("div", { class: "annals-settings" },
          field("url", "Annals URL", el("input", { type: "url" })),
          field("key", "API key", el("input", { type: "password", autocomplete: "off" })),
          el("label", { class: "annals-field" }, el("span", {}, tr("Space for this character")),
             spaceInput),
          field("enabled", "Remember this chat", el("input", { type: "checkbox" })),
          field("inject", "Inject memories", el("input", { type: "checkbox" })),
          field("depth", "Injection depth", el("input", { type: "number", min: "0", max: "99" })),
          field("role", "Injected as", role),
          field("reading", "Read with the chat's model", el("input", { type: "checkbox" }))),
       el("div", { class: "annals-buttons" },
          button("Read now", actions.onReadNow), button("Open Annals", actions.onOpen),
          button("Refresh", actions.onRefresh)),
       tabs, ...Object.values(views)));
  host.append(drawer);
  showView(tabs, views, "chronicle");
  return { status, views, spaceInput };
}

function showView(tabs, views, name) {
  for (const [key, view] of Object.entries(views)) view.hidden = key !== name;
  for (const tab of tabs.children) tab.classList.toggle("active", tab.dataset.view === name);
}

/** The chronicle, newest first: date, title, summary; this chat's events marked.
 * @param {HTMLElement} view @param {any[]} events @param {string} session
 * @param {(s: string) => string} tr */
export function renderChronicle(view, events, session, tr) {
  view.replaceChildren();
  if (!events.length) {
    view.append(el("p", { class: "annals-empty" }, tr("Nothing remembered yet: Annals reads a chat after a quiet while (20 minutes by default), or now with “Read now”.")));
    return;
  }
  const list = el("ol", { class: "annals-events" });
  for (const ev of events) {
    const here = (ev.sources || []).some((src) => src.session === session);
    list.append(el("li", { class: here ? "annals-event annals-here" : "annals-event" },
      el("time", { datetime: String(ev.when?.start ?? "") }, dateOf(ev.when?.start)),
      el("strong", {}, String(ev.title ?? "")),
      el("p", {}, String(ev.summary ?? ""))));
  }
  view.append(list);
}

/** People with their current facts, and a role whose job has ended since (unconfirmed: it
 * may have ended with the job; the profile says so, issue 36) marked as such.
 * @param {HTMLElement} view @param {any[]} profiles @param {(s: string) => string} tr */
export function renderPeople(view, profiles, tr) {
  view.replaceChildren();
  const people = peopleFacts(profiles);
  if (!people.length) {
    view.append(el("p", { class: "annals-empty" }, tr("No facts about anyone yet.")));
    return;
  }
  for (const person of people) {
    const facts = el("ul", { class: "annals-facts" });
    for (const fact of person.facts) {
      const value = fact.kind ? `${fact.value} (${fact.kind})` : String(fact.value);
      facts.append(el("li", {}, el("span", { class: "annals-attr" }, tr(fact.attribute)),
                      " ", value,
                      fact.unconfirmed ? el("span", { class: "annals-muted" },
                                            ` (${tr("unconfirmed")})`) : ""));
    }
    view.append(el("div", { class: "annals-person" }, el("strong", {}, person.name), facts));
  }
}

/** Whom the People view shows, with which facts: the current ones and the unconfirmed, in
 * the profile's order; a person with neither is left out. @param {any[]} profiles */
export function peopleFacts(profiles) {
  return (profiles || []).map((p) => ({
    name: String(p.name),
    facts: (p.facts || []).filter((f) => isCurrent(f) || isUnconfirmed(f)).map((f) => ({
      attribute: f.attribute, value: f.value, kind: f.kind || "", unconfirmed: isUnconfirmed(f) })),
  })).filter((p) => p.facts.length > 0);
}

function isCurrent(fact) {
  return fact && fact.valid_to == null && fact.current !== false;
}

function isUnconfirmed(fact) {
  return Boolean(fact) && fact.status === "unconfirmed";
}

/** The last recall: the query, the verdict, what was injected and the trace.
 * @param {HTMLElement} view @param {{query: string, at: Date, answer?: any, error?: string}|null} last
 * @param {(s: string) => string} tr */
export function renderRecall(view, last, tr) {
  view.replaceChildren();
  if (!last) {
    view.append(el("p", { class: "annals-empty" }, tr("No recall yet in this chat.")));
    return;
  }
  view.append(el("p", {}, el("span", { class: "annals-attr" }, tr("Asked")), " ", last.query));
  if (last.error) {
    view.append(el("p", { class: "annals-error" }, last.error));
    return;
  }
  const answer = last.answer;
  view.append(el("p", {}, el("span", { class: "annals-attr" }, tr("Verdict")), " ",
                 String(answer.verdict)));
  const injected = [answer.core_context, answer.additional_context].filter(Boolean).join("\n\n");
  view.append(el("pre", { class: "annals-injected" }, injected || tr("Nothing injected.")));
  const trace = el("ol", { class: "annals-trace" });
  for (const line of answer.trace || []) trace.append(el("li", {}, String(line)));
  view.append(el("details", {}, el("summary", {}, tr("Why (trace)")), trace));
}

function dateOf(value) {
  return typeof value === "string" ? value.slice(0, 10) : "";
}
