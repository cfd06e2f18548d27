// The chat page's wiring: the conversation list, the settings, and one answer streamed at a
// time (Stop aborts its fetch; the server cancels the request when the connection closes).
// Attached images go with the user's message as image_url parts.

import { fetchModels, streamChat } from "./api.js";
import { hasImages, showAttachButton, takeImages, wireAttachments } from "./attachments.js";
import { messageElement, updateMessage } from "./message_view.js";
import * as store from "./store.js";

const $ = (id) => document.getElementById(id);
const SETTING_INPUTS = { model: "model", systemPrompt: "system-prompt", temperature: "temperature", topP: "top-p",
  maxTokens: "max-tokens", apiKey: "api-key" };

let conversations = store.loadConversations();
let currentId = conversations[0]?.id ?? null;
let controller = null;  // the AbortController of the answer in progress
let models = [];  // of fetchModels

function current() {
  return conversations.find((c) => c.id === currentId) ?? null;
}

function showError(text) {
  $("error").hidden = !text;
  $("error").textContent = text ?? "";
}

function readSettings() {
  const settings = {};
  for (const [key, id] of Object.entries(SETTING_INPUTS)) settings[key] = $(id).value;
  return settings;
}

function restoreSettings() {
  const saved = store.loadSettings();
  for (const [key, id] of Object.entries(SETTING_INPUTS))
    if (typeof saved[key] === "string" && key !== "model") $(id).value = saved[key];
  return saved;
}

function renderList() {
  const list = $("conversations");
  list.replaceChildren();
  for (const c of conversations) {
    const li = document.createElement("li");
    li.dataset.id = c.id;
    li.classList.toggle("active", c.id === currentId);
    const title = document.createElement("span");
    title.className = "title";
    title.textContent = c.title;
    const remove = document.createElement("button");
    remove.className = "delete";
    remove.type = "button";
    remove.title = "Delete this conversation";
    remove.textContent = "×";
    li.append(title, remove);
    list.appendChild(li);
  }
}

function renderMessages() {
  const box = $("messages");
  box.replaceChildren(...(current()?.messages ?? []).map(messageElement));
  box.scrollTop = box.scrollHeight;
}

function select(id) {
  currentId = id;
  renderList();
  renderMessages();
}

function remove(id) {
  conversations = conversations.filter((c) => c.id !== id);
  save();
  select(currentId === id ? (conversations[0]?.id ?? null) : currentId);
}

function save() {
  if (!store.saveConversations(conversations))
    showError("The browser's storage is full, so this conversation is not kept: delete old conversations (images fill it fastest).");
}

function updateAttachButton() {
  showAttachButton(Boolean(models.find((m) => m.id === $("model").value)?.takesImages));
}

async function loadModels() {
  const saved = store.loadSettings().model;
  try {
    models = await fetchModels($("api-key").value);
    $("model").replaceChildren(...models.map((m) => {
      const option = new Option(m.parent ? `${m.id} (LoRA of ${m.parent})` : m.id, m.id);
      option.selected = m.id === saved;
      return option;
    }));
    updateAttachButton();
    showError(null);
  } catch (e) {
    showError(`Could not list the models (${e.message}); if the server has an API key, enter it in Settings.`);
  }
}

// A message as the API takes it: text, or text and image_url parts with data: URLs.
function apiMessage(m) {
  if (!m.images?.length) return { role: m.role, content: m.content };
  const text = m.content ? [{ type: "text", text: m.content }] : [];
  return { role: m.role, content: [...text, ...m.images.map((url) => ({ type: "image_url", image_url: { url } }))] };
}

// The request body: the system prompt, the conversation so far, the sampling settings.
function requestBody(conversation, settings) {
  const messages = conversation.messages.filter((m) => (m.content || m.images?.length) && m.state !== "streaming")
    .map(apiMessage);
  if (settings.systemPrompt.trim()) messages.unshift({ role: "system", content: settings.systemPrompt });
  const body = { model: settings.model || undefined, messages };
  const number = (text) => (text.trim() === "" ? undefined : Number(text));
  body.temperature = number(settings.temperature);
  body.top_p = number(settings.topP);
  body.max_tokens = number(settings.maxTokens);
  return body;
}

function answerStats({ usage, firstTokenAt, numDeltas, stopped }) {
  const completionTokens = usage?.completion_tokens ?? numDeltas;
  const seconds = firstTokenAt === null ? 0 : (performance.now() - firstTokenAt) / 1000;
  return {
    completionTokens,
    tokensPerSecond: seconds > 0 && completionTokens > 1 ? (completionTokens - 1) / seconds : null,
    promptTokens: usage?.prompt_tokens ?? null,
    cachedTokens: usage?.prompt_tokens_details?.cached_tokens ?? null,
    stopped,
  };
}

function startConversation(text, images) {
  let conversation = current();
  if (!conversation) {
    conversation = store.newConversation();
    conversations.unshift(conversation);
    currentId = conversation.id;
  }
  if (conversation.messages.length === 0) conversation.title = text.slice(0, 48) || "Image";
  conversation.messages.push(images.length ? { role: "user", content: text, images } : { role: "user", content: text });
  conversation.updated = Date.now();
  return conversation;
}

function setStreaming(on) {
  $("send").disabled = on;
  $("stop").disabled = !on;
}

async function send() {
  const text = $("prompt").value.trim();
  if ((!text && !hasImages()) || controller) return;
  const settings = readSettings();
  store.saveSettings(settings);
  const conversation = startConversation(text, takeImages());
  const body = requestBody(conversation, settings);
  const answer = { role: "assistant", content: "", reasoning: "", state: "streaming" };
  conversation.messages.push(answer);
  save();
  $("prompt").value = "";
  select(conversation.id);
  const el = $("messages").lastElementChild;
  await streamAnswer(body, settings.apiKey, answer, el);
  save();
}

async function streamAnswer(body, apiKey, answer, el) {
  controller = new AbortController();
  setStreaming(true);
  const progress = { usage: null, firstTokenAt: null, numDeltas: 0, stopped: false };
  let frame = 0;  // one re-render per animation frame, however fast tokens come
  const onDelta = ({ content, reasoning }) => {
    answer.content += content;
    answer.reasoning += reasoning;
    if (content || reasoning) progress.numDeltas++;
    if (progress.firstTokenAt === null && progress.numDeltas > 0) progress.firstTokenAt = performance.now();
    frame = frame || requestAnimationFrame(() => { frame = 0; updateMessage(el, answer); });
  };
  try {
    progress.usage = (await streamChat({ body, apiKey, signal: controller.signal, onDelta })).usage;
  } catch (e) {
    if (e.name === "AbortError") progress.stopped = true;
    else answer.error = e.message;
  }
  cancelAnimationFrame(frame);
  controller = null;
  answer.state = progress.stopped ? "stopped" : answer.error ? "error" : "done";
  answer.stats = answerStats(progress);
  updateMessage(el, answer);
  setStreaming(false);
}

function wire() {
  $("composer").addEventListener("submit", (e) => { e.preventDefault(); send(); });
  $("prompt").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); }
  });
  $("stop").addEventListener("click", () => controller?.abort());
  $("new-chat").addEventListener("click", () => select(null));
  $("conversations").addEventListener("click", (e) => {
    const li = e.target.closest("li");
    if (!li) return;
    if (e.target.classList.contains("delete")) remove(li.dataset.id);
    else select(li.dataset.id);
  });
  $("api-key").addEventListener("change", () => { store.saveSettings(readSettings()); loadModels(); });
  $("model").addEventListener("change", () => { store.saveSettings(readSettings()); updateAttachButton(); });
  wireAttachments(showError);
}

restoreSettings();
wire();
select(currentId);
loadModels();
