// Conversations and settings kept in the browser's localStorage: nothing about a chat is
// stored on the server. A conversation is {id, title, updated, messages: [{role, content,
// images?, reasoning?, stats?, state?}]} (images: data: URLs); the list is kept newest first.

const CONVERSATIONS_KEY = "strata.conversations";
const SETTINGS_KEY = "strata.settings";

function readJson(key, fallback) {
  try {
    const value = JSON.parse(localStorage.getItem(key));
    return value ?? fallback;
  } catch {
    return fallback;  // a corrupt entry must not keep the page from starting
  }
}

export function loadConversations() {
  const list = readJson(CONVERSATIONS_KEY, []);
  return Array.isArray(list) ? list.filter((c) => c && typeof c.id === "string" && Array.isArray(c.messages)) : [];
}

// False when the browser's storage is full (images fill it fastest): the list stays in memory.
export function saveConversations(list) {
  list.sort((a, b) => b.updated - a.updated);
  try {
    localStorage.setItem(CONVERSATIONS_KEY, JSON.stringify(list));
    return true;
  } catch {
    return false;
  }
}

export function newConversation() {
  const id = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  return { id, title: "New chat", updated: Date.now(), messages: [] };
}

export function loadSettings() {
  return readJson(SETTINGS_KEY, {});
}

export function saveSettings(settings) {
  localStorage.setItem(SETTINGS_KEY, JSON.stringify(settings));
}
