// contextd console: a read-only view of sessions, drawn from /v1/audit and /v1/sessions.
// No framework and no build step: the DOM is built with textContent only, so nothing a
// session holds is ever read as HTML.
"use strict";

const KEY_STORAGE = "contextd-console-key";
const AUDIT_PAGE = 500;
const SESSION_SCAN_PAGES = 4; // the session list reads the newest 2,000 assemblies
const SVG = "http://www.w3.org/2000/svg";
const BLOCK_COLOURS = {
  system: "#5b2ea6", tools: "#8e6cc9", goal: "#2f7f8f", memory: "#3aa0a0",
  summary: "#2457c5", recall: "#1e9b55", history: "#9aa7b8", current: "#e08a1e",
};
const SPARE_COLOURS = ["#c2587a", "#7a8f2a", "#a5673f", "#4d6a8a", "#b08bd6", "#6fa3d9"];

// -- small helpers ---------------------------------------------------------------------------

// The page's policy allows no inline style attribute: styles go through the CSSOM.
function styled(node, declarations) {
  for (const declaration of declarations.split(";")) {
    const at = declaration.indexOf(":");
    if (at > 0) node.style.setProperty(declaration.slice(0, at).trim(), declaration.slice(at + 1).trim());
  }
}

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "onclick") node.addEventListener("click", value);
    else if (name === "style") styled(node, value);
    else if (name === "text") node.textContent = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attributes, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (name === "onclick") node.addEventListener("click", value);
    else if (name === "style") styled(node, value);
    else node.setAttribute(name, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const number = (value) => (value === null || value === undefined ? "–" : Number(value).toLocaleString("en"));
const percent = (part, whole) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : "–");
const clock = (iso) => (iso ? new Date(iso).toISOString().slice(11, 19) : "–");
const when = (iso) => (iso ? new Date(iso).toISOString().replace("T", " ").slice(0, 19) + " UTC" : "–");

function colourOf(block, order) {
  if (BLOCK_COLOURS[block]) return BLOCK_COLOURS[block];
  const index = order.indexOf(block);
  return SPARE_COLOURS[(index < 0 ? 0 : index) % SPARE_COLOURS.length];
}

function notice(text) {
  const box = document.getElementById("notice");
  box.textContent = text || "";
  box.hidden = !text;
}

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function api(path) {
  const headers = { accept: "application/json" };
  const key = sessionStorage.getItem(KEY_STORAGE);
  if (key) headers.authorization = `Bearer ${key}`;
  const response = await fetch(path, { headers });
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const error = (body && body.error) || {};
    throw new ApiError(response.status, error.code || "http_" + response.status,
      error.message || response.statusText);
  }
  return body;
}

function explain(error) {
  if (error instanceof ApiError && error.status === 401) {
    return `${error.message}. Give an API key with the ops scope above.`;
  }
  if (error instanceof ApiError && error.status === 403) {
    return `${error.message}: the console reads the audit with the ops scope (and messages with the agent scope).`;
  }
  return error instanceof ApiError ? `${error.code}: ${error.message}` : String(error);
}

async function auditRows(query, maxPages) {
  const rows = [];
  let before = null;
  for (let page = 0; page < maxPages; page++) {
    const params = new URLSearchParams({ ...query, limit: String(AUDIT_PAGE) });
    if (before !== null) params.set("before_id", String(before));
    const answer = await api(`/v1/audit?${params}`);
    rows.push(...answer.items);
    before = answer.next_before_id;
    if (before === null) return { rows, complete: true };
  }
  return { rows, complete: false };
}

// -- the session list ------------------------------------------------------------------------

async function showSessions(view) {
  const { rows, complete } = await auditRows({}, SESSION_SCAN_PAGES);
  const sessions = new Map();
  for (const row of rows) {
    let entry = sessions.get(row.session_id);
    if (!entry) {
      entry = { id: row.session_id, model: row.model_alias, last: row.created_at, first: row.created_at,
        assemblies: 0, turns: new Set(), rejections: 0, summaries: 0, prunes: 0, fill: null };
      sessions.set(row.session_id, entry);
    }
    entry.first = row.created_at;
    entry.assemblies += 1;
    entry.turns.add(row.turn_seq);
    if (row.overflow_rejected) entry.rejections += 1;
    if (row.summary_triggered) entry.summaries += 1;
    if (row.prune_triggered) entry.prunes += 1;
    if (entry.fill === null && !row.overflow_rejected && row.estimated_input_tokens !== null) {
      entry.fill = row.estimated_input_tokens / row.input_budget;
    }
  }
  const table = el("table", { id: "sessions" },
    el("thead", {}, el("tr", {},
      ["session", "model", "last assembly", "assemblies", "turns", "summary triggers", "prunes",
        "rejections", "last fill"].map((h, i) => el("th", { class: i >= 3 ? "num" : null }, h)))),
    el("tbody", {}, [...sessions.values()].map((s) =>
      el("tr", { class: "clickable", "data-session": s.id, onclick: () => { location.hash = `#/session/${encodeURIComponent(s.id)}`; } },
        el("td", {}, el("a", { href: `#/session/${encodeURIComponent(s.id)}` }, s.id)),
        el("td", {}, s.model),
        el("td", {}, when(s.last)),
        el("td", { class: "num" }, number(s.assemblies)),
        el("td", { class: "num" }, number(s.turns.size)),
        el("td", { class: "num" }, number(s.summaries)),
        el("td", { class: "num" }, number(s.prunes)),
        el("td", { class: "num" }, s.rejections ? el("span", { class: "badge rejected" }, number(s.rejections)) : "0"),
        el("td", { class: "num" }, s.fill === null ? "–" : `${(100 * s.fill).toFixed(0)}%`)))));
  view.replaceChildren(
    el("h1", {}, "Sessions"),
    el("p", { class: "muted" }, sessions.size
      ? `Newest first, from the ${number(rows.length)} newest assemblies${complete ? "" : " (older sessions: open them by id)"}.`
      : "No assembly has been audited yet."),
    sessions.size ? el("div", { class: "card" }, table) : null);
}

// -- one session -----------------------------------------------------------------------------

async function allMessages(sessionId) {
  const messages = new Map();
  let after = 0;
  for (;;) {
    const page = await api(`/v1/sessions/${encodeURIComponent(sessionId)}/messages?limit=1000&after_seq=${after}`);
    for (const message of page.messages) messages.set(message.id, message);
    if (page.next_after_seq === null) return messages;
    after = page.next_after_seq;
  }
}

async function sessionData(sessionId) {
  const [rollup, audit] = await Promise.all([
    api(`/v1/audit/rollup?session_id=${encodeURIComponent(sessionId)}`),
    auditRows({ session_id: sessionId }, Infinity),
  ]);
  // Messages and summaries need the agent scope; without it the console still shows figures.
  let messages = null;
  let summaries = [];
  let hidden = null;
  try {
    const base = `/v1/sessions/${encodeURIComponent(sessionId)}`;
    [messages, summaries] = await Promise.all([
      allMessages(sessionId),
      api(`${base}/summaries?limit=500`).then((answer) => answer.summaries),
    ]);
  } catch (error) {
    if (!(error instanceof ApiError) || (error.status !== 403 && error.status !== 404)) throw error;
    hidden = error.status === 403
      ? "Message text is hidden: this key lacks the agent scope."
      : "The session itself is gone (erased); its audit remains.";
  }
  const assemblies = audit.rows.slice().reverse(); // oldest first
  return { sessionId, rollup, assemblies, messages, summaries, hidden };
}

function events(row) {
  const telemetry = row.block_telemetry || {};
  const found = [];
  if (row.summary_triggered) found.push(["summary", `summary${row.summary_reason ? ` (${row.summary_reason})` : ""}`]);
  if (row.summary_fallback) found.push(["fallback", "summariser fell back"]);
  if (row.prune_triggered) found.push(["prune", `pruned ${row.pruned_message_ids.length}`]);
  const aside = (telemetry.open_turn || {}).tool_results_set_aside || 0;
  if (aside) found.push(["aside", `set aside ${aside}`]);
  const recalled = ((telemetry.recall || {}).message_ids || []).length;
  if (recalled) found.push(["recall", `recalled ${recalled}`]);
  if (row.overflow_rejected) found.push(["rejected", "rejected"]);
  if (row.estimator_fallback) found.push(["fallback", "estimated"]);
  return found;
}

function tokensOf(row) {
  return row.overflow_rejected ? (row.rejection || {}).estimated_input_tokens ?? row.estimated_input_tokens_after_prune
    : row.estimated_input_tokens ?? row.estimated_input_tokens_after_prune;
}

function blockOrder(assemblies) {
  const order = [];
  for (const row of assemblies) for (const name of Object.keys(row.blocks || {})) if (!order.includes(name)) order.push(name);
  return order;
}

function fillPlot(state) {
  const { assemblies } = state;
  const order = blockOrder(assemblies);
  const width = 900, height = 290, left = 56, right = 12, top = 48, bottom = 28;
  const plotWidth = width - left - right, plotHeight = height - top - bottom;
  const highest = Math.max(1, ...assemblies.map((row) => Math.max(row.input_budget, tokensOf(row) || 0)));
  const y = (tokens) => top + plotHeight - (plotHeight * tokens) / highest;
  const slot = plotWidth / Math.max(1, assemblies.length);
  const barWidth = Math.max(1, Math.min(28, slot * 0.75));
  const chart = svg("svg", { class: "plot", id: "fill-plot", viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": "prompt tokens per assembly, by block, against the input budget" });
  for (const share of [0, 0.25, 0.5, 0.75, 1]) {
    const tokens = Math.round(highest * share);
    chart.append(svg("line", { x1: left, x2: width - right, y1: y(tokens), y2: y(tokens), stroke: "#e6e9ee" }),
      svg("text", { x: left - 6, y: y(tokens) + 4, "text-anchor": "end" }, number(tokens)));
  }
  assemblies.forEach((row, index) => {
    const x = left + slot * index + (slot - barWidth) / 2;
    const column = svg("g", { class: "bar", "data-audit": row.id, onclick: () => select(state, row.id) });
    if (row.id === state.selected) column.append(svg("rect", { class: "selected-column", x: left + slot * index, y: top, width: slot, height: plotHeight }));
    let stacked = 0;
    for (const name of order) {
      const tokens = (row.blocks || {})[name] || 0;
      if (!tokens) continue;
      column.append(svg("rect", { x, width: barWidth, y: y(stacked + tokens), height: Math.max(0.5, y(stacked) - y(stacked + tokens)),
        fill: colourOf(name, order), opacity: row.overflow_rejected ? 0.45 : 1 }));
      stacked += tokens;
    }
    const found = events(row).filter(([kind]) => kind !== "fallback");
    const marks = { summary: "S", prune: "P", aside: "A", recall: "R", rejected: "✕" };
    found.forEach(([kind], k) => column.append(svg("text", { x: x + barWidth / 2, y: y(Math.max(stacked, tokensOf(row) || 0)) - 4 - 11 * k,
      "text-anchor": "middle", class: `mark ${kind}`, style: `fill:${kind === "rejected" ? "#b3261e" : "#1d232b"};font-weight:600` }, marks[kind])));
    column.append(svg("title", {}, `turn ${row.turn_seq} · step ${row.step}: ${number(tokensOf(row))} of ${number(row.input_budget)} tokens` +
      (found.length ? ` — ${found.map(([, label]) => label).join(", ")}` : "")));
    chart.append(column);
  });
  // The budget, and the thresholds the policy acts at, as steps along the assemblies.
  const budgetLine = (share, colour, dash, label) => {
    const points = assemblies.map((row, index) => `${left + slot * index},${y(row.input_budget * share)} ${left + slot * (index + 1)},${y(row.input_budget * share)}`);
    chart.append(svg("polyline", { points: points.join(" "), fill: "none", stroke: colour, "stroke-width": 1.5, "stroke-dasharray": dash }));
    const last = assemblies[assemblies.length - 1];
    if (last) chart.append(svg("text", { x: width - right, y: y(last.input_budget * share) - 3, "text-anchor": "end", style: `fill:${colour}` }, label));
  };
  budgetLine(1, "#b3261e", "", "input budget");
  budgetLine(0.9, "#8a5300", "5 4", "90% prune");
  budgetLine(0.7, "#2457c5", "2 4", "70% summarise");
  chart.append(svg("text", { x: left, y: height - 8 }, "assemblies, oldest first (S summary · P prune · A set aside · R recall · ✕ rejected)"));
  const legend = el("div", { class: "legend" }, order.map((name) => el("span", {}, el("i", { style: `background:${colourOf(name, order)}` }), name)));
  return el("div", { class: "card" }, el("h2", {}, "Budget fill per assembly"), chart, legend);
}

function fillBar(row, order) {
  const total = row.input_budget || 1;
  const bar = el("div", { class: "fill", title: `${percent(tokensOf(row) || 0, total)} of the input budget` });
  let from = 0;
  for (const name of order) {
    const tokens = (row.blocks || {})[name] || 0;
    if (!tokens) continue;
    const share = Math.min(100 - from, (100 * tokens) / total);
    bar.append(el("i", { style: `left:${from}%;width:${share}%;background:${colourOf(name, order)}` }));
    from += share;
  }
  return bar;
}

function badges(row) {
  return events(row).map(([kind, label]) => el("span", { class: `badge ${kind}` }, label));
}

function timeline(state) {
  const order = blockOrder(state.assemblies);
  const rows = [];
  for (const row of state.assemblies) {
    const guidance = row.overflow_rejected && row.rejection ? row.rejection.guidance : null;
    rows.push(el("tr", { class: `clickable${row.id === state.selected ? " selected" : ""}`, "data-audit": row.id,
      onclick: () => select(state, row.id) },
    el("td", { class: "num" }, row.turn_seq),
    el("td", { class: "num" }, row.step),
    el("td", { class: "num" }, number(tokensOf(row))),
    el("td", { class: "num" }, percent(tokensOf(row) || 0, row.input_budget)),
    el("td", {}, fillBar(row, order)),
    el("td", {}, badges(row), guidance ? el("div", { class: "reason" }, guidance) : null),
    el("td", { class: "muted nowrap", title: when(row.created_at) }, clock(row.created_at))));
  }
  return el("div", { class: "card" }, el("h2", {}, "Timeline"),
    el("table", { id: "timeline" },
      el("thead", {}, el("tr", {}, ["turn", "step", "tokens", "of budget", "blocks", "policy", "at (UTC)"].map((h, i) => el("th", { class: i < 4 ? "num" : null }, h)))),
      el("tbody", {}, rows)));
}

function contentText(message) {
  const parts = [];
  if (message.reasoning_content) parts.push(`[reasoning] ${message.reasoning_content}`);
  const content = message.content;
  if (typeof content === "string") parts.push(content);
  else if (Array.isArray(content)) {
    for (const block of content) {
      if (block && typeof block.text === "string") parts.push(block.text);
      else if (block && block.type) parts.push(`[${block.type}]`);
    }
  } else if (content !== null && content !== undefined) parts.push(JSON.stringify(content));
  for (const call of message.tool_calls || []) {
    const fn = call.function || {};
    parts.push(`→ ${fn.name || "?"}(${fn.arguments || ""})  [${call.id}]`);
  }
  return parts.join("\n");
}

function messageCard(message, note, kind) {
  return el("div", { class: `message${kind ? " " + kind : ""}`, "data-message": message.id },
    el("div", { class: "head" },
      el("span", { class: `role role-${message.role}` }, message.role),
      el("span", { class: "muted" }, `#${message.seq} · turn ${message.turn_seq}${message.step ? ` step ${message.step}` : ""} · ${number(message.token_count)} tokens`),
      message.tool_call_id ? el("span", { class: "mono muted" }, `answers ${message.tool_call_id}`) : null,
      note ? el("span", { class: "badge " + (kind === "recall" ? "recall" : "fallback") }, note) : null),
    el("pre", {}, contentText(message)));
}

function summaryById(state, id) {
  return state.summaries.find((summary) => summary.id === id) || null;
}

function promptViewer(state) {
  const row = state.assemblies.find((candidate) => candidate.id === state.selected);
  if (!row) return el("div", { class: "card", id: "prompt" }, el("h2", {}, "Prompt"), el("p", { class: "muted" }, "Select an assembly."));
  const order = blockOrder(state.assemblies);
  const parts = [el("h2", {}, `Prompt of turn ${row.turn_seq}, step ${row.step}`),
    el("p", { class: "muted" }, `${row.model_alias} · audit #${row.id} · ${number(tokensOf(row))} of ${number(row.input_budget)} input tokens (limit ${number(row.model_context_limit)}) · counted by ${row.estimator} · ${row.latency_ms.toFixed(1)} ms`),
    el("div", {}, badges(row))];
  if (row.overflow_rejected && row.rejection) {
    parts.push(el("h3", {}, "Why it was refused"),
      el("div", { class: "reason", id: "rejection-reason" }, row.rejection.guidance || "context_budget_exceeded"),
      el("p", { class: "muted" }, `Needed ${number(row.rejection.estimated_input_tokens)} tokens of ${number(row.rejection.input_budget)}: the model received nothing for this call.`));
  }
  parts.push(el("h3", {}, "Blocks"), el("table", {},
    el("thead", {}, el("tr", {}, el("th", {}, "block"), el("th", { class: "num" }, "tokens"), el("th", { class: "num" }, "of budget"))),
    el("tbody", {}, order.filter((name) => name in (row.blocks || {})).map((name) => el("tr", {},
      el("td", {}, el("i", { style: `display:inline-block;width:10px;height:10px;margin-right:6px;background:${colourOf(name, order)}` }), name),
      el("td", { class: "num" }, number(row.blocks[name])),
      el("td", { class: "num" }, percent(row.blocks[name], row.input_budget)))))));
  const telemetry = row.block_telemetry || {};
  const inForce = row.summary_id ? summaryById(state, row.summary_id) : null;
  if (state.hidden) parts.push(el("p", { class: "muted" }, state.hidden));
  const messages = state.messages || new Map();
  const card = (id, note, kind) => {
    const message = messages.get(id);
    return message ? messageCard(message, note, kind) : el("div", { class: "message gone" }, el("div", { class: "head" }, `message ${id}${note ? " · " + note : ""}`));
  };
  if (inForce) {
    parts.push(el("h3", {}, `Summary #${inForce.id} (covers messages up to #${inForce.to_message_id})`),
      el("div", { class: "message" }, el("pre", {}, inForce.rendered || inForce.summary_text)));
  }
  const recalled = (telemetry.recall || {}).message_ids || [];
  if (recalled.length) parts.push(el("h3", {}, "Recalled into the prompt"), recalled.map((id) => card(id, "recalled", "recall")));
  if (!row.overflow_rejected) {
    parts.push(el("h3", {}, `Messages the model received (${row.kept_message_ids.length}, after the system message)`),
      row.kept_message_ids.map((id) => card(id, null, null)));
  }
  const gone = [...row.summarised_message_ids.map((id) => [id, "summarised"]), ...row.pruned_message_ids.map((id) => [id, "pruned"])];
  if (gone.length) {
    parts.push(el("h3", {}, `Left the prompt here (${gone.length})`),
      el("p", { class: "muted" }, "Nothing is deleted: summarised messages are covered by the summary, pruned ones stay readable in the history and searchable for recall."),
      gone.map(([id, how]) => {
        const message = messages.get(id);
        const into = how === "summarised" && message && message.summary_id ? ` into summary #${message.summary_id}` : "";
        return card(id, `${how}${into}`, "gone");
      }));
  }
  return el("div", { class: "card", id: "prompt" }, parts);
}

function figures(rollup) {
  const figure = (value, label) => el("div", { class: "figure" }, el("b", {}, value), el("span", {}, label));
  return el("div", { class: "figures" },
    figure(number(rollup.turns), "turns"),
    figure(number(rollup.assemblies), "assemblies"),
    figure(number(rollup.summaries), "summaries"),
    figure(number(rollup.prunes), "prunes"),
    figure(number(rollup.rejections), "rejections"),
    figure(number(rollup.prompt_tokens.max), "largest prompt"),
    figure(`${rollup.latency_ms.p50.toFixed(1)} / ${rollup.latency_ms.p95.toFixed(1)} ms`, "latency p50 / p95"));
}

function render(state) {
  state.view.replaceChildren(
    el("h1", {}, `Session ${state.sessionId}`),
    el("p", { class: "muted" }, `${state.rollup.model_alias} · ${when(state.rollup.first_at)} → ${when(state.rollup.last_at)}`),
    figures(state.rollup),
    fillPlot(state),
    el("div", { class: "layout" }, timeline(state), promptViewer(state)));
}

function select(state, auditId) {
  state.selected = auditId;
  const scroll = window.scrollY;
  render(state);
  window.scrollTo(0, scroll);
}

async function showSession(view, sessionId) {
  const state = { view, ...(await sessionData(sessionId)) };
  const rejected = state.assemblies.filter((row) => row.overflow_rejected);
  const newest = state.assemblies[state.assemblies.length - 1];
  // Open on the newest refusal when there is one: it is what a reader usually came for.
  state.selected = (rejected[rejected.length - 1] || newest || {}).id ?? null;
  render(state);
}

// -- routing ---------------------------------------------------------------------------------

async function route() {
  const view = document.getElementById("view");
  notice("");
  const match = location.hash.match(/^#\/session\/(.+)$/);
  try {
    if (match) await showSession(view, decodeURIComponent(match[1]));
    else await showSessions(view);
  } catch (error) {
    view.replaceChildren(el("p", { class: "muted" }, "Nothing to show."));
    notice(explain(error));
  }
}

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = document.getElementById("api-key");
    if (input.value) sessionStorage.setItem(KEY_STORAGE, input.value.trim());
    else sessionStorage.removeItem(KEY_STORAGE);
    input.value = "";
    route();
  });
  document.getElementById("open-session").addEventListener("submit", (event) => {
    event.preventDefault();
    const id = document.getElementById("session-id").value.trim();
    if (id) location.hash = `#/session/${encodeURIComponent(id)}`;
  });
  window.addEventListener("hashchange", route);
  route();
});
