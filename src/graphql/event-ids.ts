// Server-Sent Events with ids: each `categoryEvents` event Yoga streams gets an `id:` line holding its
// cursor, so that a reconnecting EventSource sends it back as Last-Event-ID (yoga-config.ts reads it
// as `after`). Yoga's SSE writer has no hook for ids; its blocks ("event: next", "data: {...}", a blank
// line) are read here as they pass and the line added before the data.
const CURSOR = /"cursor":"(\d{16}\.[0-9a-f]{1,64})"/;

export function withEventIds(response: Response): Response {
  if (!response.body || !response.headers.get("content-type")?.startsWith("text/event-stream")) return response;
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let pending = "";
  const ids = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      pending += decoder.decode(chunk, { stream: true });
      // Whole blocks only: a block ends with a blank line.
      const end = pending.lastIndexOf("\n\n");
      if (end === -1) return;
      const blocks = pending.slice(0, end + 2);
      pending = pending.slice(end + 2);
      controller.enqueue(encoder.encode(blocks.replace(/^data: (.*)$/gm, withId)));
    },
    flush(controller) {
      if (pending) controller.enqueue(encoder.encode(pending));
    },
  });
  return new Response(response.body.pipeThrough(ids), response);
}

function withId(line: string, data: string): string {
  const cursor = CURSOR.exec(data)?.[1];
  return cursor ? `id: ${cursor}\n${line}` : line;
}
