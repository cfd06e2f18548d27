// A small Markdown renderer for model answers: paragraphs, headings, lists, inline code,
// bold, italics, http(s) links and fenced code blocks. The text is HTML-escaped before any
// markup is added, so nothing the model writes can become a tag or an attribute.

export function escapeHtml(text) {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

// Bold, italics and links inside already-escaped text without code spans.
function renderEmphasis(text) {
  return text
    .replace(/\*\*(.+?)\*\*/g, "<strong>$1</strong>")
    .replace(/(^|[^*\w])\*(?!\s)(.+?)\*(?!\w)/g, "$1<em>$2</em>")
    .replace(/\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)/g, '<a href="$2" target="_blank" rel="noopener noreferrer">$1</a>');
}

// One line's inline markup: `code` spans are kept literal, the rest gets emphasis.
export function renderInline(line) {
  const parts = escapeHtml(line).split(/(`[^`]+`)/);
  return parts.map((part, i) => (i % 2 === 1 ? `<code>${part.slice(1, -1)}</code>` : renderEmphasis(part))).join("");
}

const FENCE = /^\s*(```|~~~)\s*([\w+#.-]*)\s*$/;
const HEADING = /^(#{1,6})\s+(.*)$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*\d+[.)]\s+(.*)$/;

// A fenced block from lines[start] (the fence) to its closing fence, or to the end while it
// is still streaming. Returns [html, index after the block].
function renderFence(lines, start) {
  const [, marker, language] = lines[start].match(FENCE);
  let end = start + 1;
  while (end < lines.length && lines[end].trim() !== marker) end++;
  const code = escapeHtml(lines.slice(start + 1, end).join("\n"));
  const cls = language ? ` class="language-${escapeHtml(language)}"` : "";
  return [`<pre><code${cls}>${code}</code></pre>`, Math.min(end + 1, lines.length)];
}

// Consecutive lines of one list kind. Returns [html, index after the list].
function renderList(lines, start, pattern, tag) {
  const items = [];
  let i = start;
  for (; i < lines.length && pattern.test(lines[i]); i++) items.push(`<li>${renderInline(lines[i].match(pattern)[1])}</li>`);
  return [`<${tag}>${items.join("")}</${tag}>`, i];
}

// Lines up to a blank line or the start of another block. Returns [html, index after].
function renderParagraph(lines, start) {
  const text = [];
  let i = start;
  for (; i < lines.length && lines[i].trim() !== ""; i++) {
    if (i > start && (FENCE.test(lines[i]) || HEADING.test(lines[i]) || BULLET.test(lines[i]) || NUMBERED.test(lines[i]))) break;
    text.push(renderInline(lines[i]));
  }
  return [`<p>${text.join("<br>")}</p>`, i];
}

function renderBlock(lines, i) {
  const line = lines[i];
  if (FENCE.test(line)) return renderFence(lines, i);
  const heading = line.match(HEADING);
  if (heading) return [`<h${heading[1].length}>${renderInline(heading[2])}</h${heading[1].length}>`, i + 1];
  if (BULLET.test(line)) return renderList(lines, i, BULLET, "ul");
  if (NUMBERED.test(line)) return renderList(lines, i, NUMBERED, "ol");
  return renderParagraph(lines, i);
}

export function renderMarkdown(text) {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const html = [];
  for (let i = 0; i < lines.length;) {
    if (lines[i].trim() === "") {
      i++;
      continue;
    }
    const [block, next] = renderBlock(lines, i);
    html.push(block);
    i = next;
  }
  return html.join("\n");
}
