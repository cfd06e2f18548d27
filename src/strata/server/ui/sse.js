// Reads a fetch() response of server-sent events (text/event-stream) as parsed JSON objects,
// one per `data:` event, until `data: [DONE]` or the end of the body. Events may arrive cut
// anywhere across network chunks; a partial one waits for the rest.

function parseEvent(block) {
  const data = block.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trimStart());
  return data.length === 0 ? null : data.join("\n");
}

export async function* readEvents(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const data = parseEvent(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (data === "[DONE]") return;
      if (data !== null) yield JSON.parse(data);
    }
  }
}
