// The access line is written by hand in pino's format: it must stay valid JSON whatever it carries.
import { expect, test } from "bun:test";
import { Writable } from "node:stream";
import type { LogLevel } from "../src/config/index.ts";
import { createLoggers } from "../src/observability/log.ts";
import { type LineLogger, lineBatch, startLog } from "../src/observability/log-lines.ts";

function capture(level: LogLevel) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).trim().split("\n"));
      done();
    },
  });
  return { loggers: createLoggers(level, sink), lines };
}

const entry = {
  requestId: "r-1",
  clientRequestId: null,
  method: "GET",
  route: "unmatched",
  path: "/plain",
  status: 404,
  durationMs: 0.25,
  userId: null,
  clientAddress: "192.0.2.1",
  userAgent: null,
};

test("access lines are JSON whatever the path holds: quotes, backslashes, control characters, any Unicode", async () => {
  const { loggers, lines } = capture("info");
  const paths = [
    '/a"b',
    "/back\\slash",
    "/tab\there\nnewline\u0001",
    "/caf\u00e9/\u{1F600}",
    "/lone\ud800surrogate",
    "/plain",
  ];
  for (const path of paths)
    loggers.access.completed({ ...entry, path, userId: "u-1", clientRequestId: "c-1", userAgent: `agent ${path}` });
  await Bun.sleep(5);
  const parsed = lines.map((l) => JSON.parse(l));
  expect(parsed.map((l) => l.path)).toEqual(paths.map((p) => JSON.parse(JSON.stringify(p))));
  expect(parsed.map((l) => l.user_agent)).toEqual(paths.map((p) => JSON.parse(JSON.stringify(`agent ${p}`))));
  expect(parsed[0]).toMatchObject({
    level: "info",
    service: "svc",
    request_id: "r-1",
    client_request_id: "c-1",
    method: "GET",
    route: "unmatched",
    status: 404,
    duration_ms: 0.25,
    user_id: "u-1",
    client_address: "192.0.2.1",
    msg: "request completed",
  });
});

test("no access lines above info", async () => {
  const { loggers, lines } = capture("warn");
  expect(loggers.access.enabled).toBe(false);
  loggers.access.completed(entry);
  await Bun.sleep(5);
  expect(lines).toEqual([]);
});

test("held lines go out together, in order, when a line must go now or enough has gathered", () => {
  const writes: string[] = [];
  const batch = lineBatch((chunk) => writes.push(chunk), 30);
  batch.hold("a1\n");
  batch.hold("a2\n");
  expect(writes).toEqual([]);
  batch.now("warn\n");
  expect(writes).toEqual(["a1\na2\nwarn\n"]);
  for (let i = 0; i < 10; i++) batch.hold(`line ${i}\n`);
  expect(writes.length).toBe(3);
  expect(writes.slice(1).every((chunk) => chunk.length >= 30)).toBe(true);
  batch.flush();
  batch.flush();
  expect(writes.join("")).toBe(`a1\na2\nwarn\n${Array.from({ length: 10 }, (_, i) => `line ${i}\n`).join("")}`);
});

test("svc's own lines before pino loads (startLog) are pino's lines, byte for byte but the time, at every level", async () => {
  const calls = (logger: LineLogger) => {
    logger.info({ version: "1.2.3", address: "http://127.0.0.1:1", database: 'sqlite:"odd"\\path' }, "svc listening");
    logger.warn("no active administrator: `svc admin create`");
    logger.warn({ grace_ms: 5000 }, "grace period over");
    logger.error({ err: new TypeError("boom \u0001") }, "request failed outside the app");
    logger.debug({ load_ms: 20 }, "app loaded");
    logger.info("svc stopped");
  };
  const withoutTime = (line: string) => line.replace(/"time":"[^"]+"/, '"time":"-"');
  for (const level of ["debug", "info", "warn", "error", "silent"] as const) {
    const { loggers, lines: byPino } = capture(level);
    calls(loggers.logger);
    const ours: string[] = [];
    const start = startLog(
      level,
      lineBatch((chunk) => ours.push(...chunk.trim().split("\n"))),
    );
    calls(start.logger);
    await Bun.sleep(5);
    // The stack differs (the calls come from two places), so errors are compared without it.
    const comparable = (line: string) => withoutTime(line).replace(/"stack":"(?:[^"\\]|\\.)*"/, '"stack":"-"');
    expect(ours.map(comparable)).toEqual(byPino.map(comparable));
    expect(ours.length).toBe({ debug: 6, info: 5, warn: 3, error: 1, silent: 0 }[level]);
    // Level names, as an operator's alert rule or `jq 'select(.level == "error")'` expects, not pino's numbers.
    expect(ours.map((line) => JSON.parse(line).level)).toEqual(
      (["info", "warn", "warn", "error", "debug", "info"] as const).filter(
        (name) =>
          ({ debug: 20, info: 30, warn: 40, error: 50 })[name] >=
          { debug: 20, info: 30, warn: 40, error: 50, silent: 99 }[level],
      ),
    );
  }
});
