// One message on the page: its role, a user's attached images, the thinking (collapsed, when
// there is any), the answer rendered from Markdown and, under an answer, its speed and
// prompt-cache line.

import { renderMarkdown } from "./markdown.js";

// "42 tokens · 18.3 tokens/s · 12 cached prompt tokens": rates count from the first token.
export function statsText(stats) {
  const parts = [`${stats.completionTokens} tokens`];
  if (stats.tokensPerSecond !== null) parts.push(`${stats.tokensPerSecond.toFixed(1)} tokens/s`);
  if (stats.promptTokens !== null) parts.push(`${stats.promptTokens} prompt tokens`);
  if (stats.cachedTokens !== null) parts.push(`${stats.cachedTokens} cached prompt tokens`);
  if (stats.stopped) parts.push("stopped");
  return parts.join(" · ");
}

function child(parent, tag, className) {
  const el = document.createElement(tag);
  el.className = className;
  parent.appendChild(el);
  return el;
}

export function messageElement(message) {
  const el = document.createElement("div");
  el.className = `message ${message.role}`;
  child(el, "div", "role").textContent = message.role === "user" ? "You" : "Assistant";
  if (message.role === "assistant") {
    const reasoning = child(el, "details", "reasoning");
    child(reasoning, "summary", "").textContent = "Thinking";
    child(reasoning, "div", "reasoning-text");
  }
  if (message.images?.length) {
    const images = child(el, "div", "images");
    for (const url of message.images) {
      const img = child(images, "img", "");
      img.src = url;
      img.alt = "attached image";
    }
  }
  child(el, "div", "content");
  if (message.role === "assistant") child(el, "div", "stats");
  updateMessage(el, message);
  return el;
}

// Refreshes an element in place, so an open "Thinking" stays open while tokens arrive.
export function updateMessage(el, message) {
  el.dataset.state = message.state ?? "done";
  const content = el.querySelector(".content");
  if (message.role === "user") {
    content.textContent = message.content;  // what the user typed is shown as typed
    return;
  }
  content.innerHTML = renderMarkdown(message.content);
  const reasoning = el.querySelector(".reasoning");
  reasoning.hidden = !message.reasoning;
  reasoning.querySelector(".reasoning-text").textContent = message.reasoning ?? "";
  const stats = el.querySelector(".stats");
  stats.textContent = message.stats ? statsText(message.stats) : "";
  if (message.error) child(content, "div", "failure").textContent = message.error;
}
