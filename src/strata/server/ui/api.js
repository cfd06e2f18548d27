// The page's calls to the server: the same /v1 API and API-key rule as any client.

import { readEvents } from "./sse.js";

function headers(apiKey) {
  const h = { "Content-Type": "application/json" };
  if (apiKey) h.Authorization = `Bearer ${apiKey}`;
  return h;
}

async function errorMessage(response) {
  try {
    const body = await response.json();
    return `${response.status}: ${body.error?.message ?? JSON.stringify(body)}`;
  } catch {
    return `${response.status} ${response.statusText}`;
  }
}

// [{id, parent, takesImages}] of GET /v1/models: the base model (parent null) and its LoRA
// adapters; takesImages from the model object's input_modalities.
export async function fetchModels(apiKey) {
  const response = await fetch("/v1/models", { headers: headers(apiKey) });
  if (!response.ok) throw new Error(await errorMessage(response));
  const body = await response.json();
  return body.data.map((m) => ({
    id: m.id, parent: m.parent ?? null, takesImages: (m.input_modalities ?? []).includes("image"),
  }));
}

// Streams one chat completion; onDelta({content, reasoning}) per chunk. Resolves with the
// usage (null when the stream ended without one) and the time of the first token; rejects
// with an AbortError when `signal` aborts (the server then cancels the request).
export async function streamChat({ body, apiKey, signal, onDelta }) {
  const request = { ...body, stream: true, stream_options: { include_usage: true } };
  const response = await fetch("/v1/chat/completions", {
    method: "POST", headers: headers(apiKey), body: JSON.stringify(request), signal,
  });
  if (!response.ok) throw new Error(await errorMessage(response));
  let usage = null;
  let firstTokenAt = null;
  for await (const chunk of readEvents(response)) {
    if (chunk.error) throw new Error(chunk.error.message ?? JSON.stringify(chunk.error));
    if (chunk.usage) usage = chunk.usage;
    const delta = chunk.choices?.[0]?.delta;
    if (!delta) continue;
    const content = delta.content ?? "";
    const reasoning = delta.reasoning_content ?? "";
    if ((content || reasoning) && firstTokenAt === null) firstTokenAt = performance.now();
    onDelta({ content, reasoning });
  }
  return { usage, firstTokenAt };
}
