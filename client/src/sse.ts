// Reading a GraphQL-over-SSE answer (distinct connections mode) from fetch: EventSource cannot send an
// Authorization header or a POST body.

export interface ServerSentEvent {
  event: string;
  data: string;
  id: string | null;
}

/**
 * The events of a text/event-stream body, until it ends or `signal` aborts (a fetch's own abort does not end a
 * body every runtime hands over); comments (keep-alives) are skipped.
 */
export async function* serverSentEvents(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let pending = "";
  const cancel = () => void reader.cancel().catch(() => {});
  signal?.addEventListener("abort", cancel, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      pending += decoder.decode(value, { stream: true });
      const blocks = pending.split(/\r?\n\r?\n/);
      pending = blocks.pop() ?? "";
      for (const block of blocks) {
        const event = parseBlock(block);
        if (event) yield event;
      }
    }
  } finally {
    signal?.removeEventListener("abort", cancel);
    cancel();
  }
}

function parseBlock(block: string): ServerSentEvent | null {
  let event = "message";
  let id: string | null = null;
  const data: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
    else if (field === "id") id = value;
  }
  return data.length === 0 && event === "message" ? null : { event, data: data.join("\n"), id };
}
