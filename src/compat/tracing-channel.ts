// Bun 1.4 lacks TracingChannel#hasSubscribers (oven-sh/bun#27805), which Node has had since 20.13.
// Libraries ask it before tracing; pino does so on every line, and without the getter it always
// takes its slow traced path. This defines it as Node does, and only where it is missing.
import diagnostics from "node:diagnostics_channel";

interface Channels {
  start: { hasSubscribers: boolean };
  end: { hasSubscribers: boolean };
  asyncStart: { hasSubscribers: boolean };
  asyncEnd: { hasSubscribers: boolean };
  error: { hasSubscribers: boolean };
}

const prototype = Object.getPrototypeOf(diagnostics.tracingChannel("svc:compat-probe"));
if (!("hasSubscribers" in prototype)) {
  Object.defineProperty(prototype, "hasSubscribers", {
    configurable: true,
    get(this: Channels) {
      return (
        this.start.hasSubscribers ||
        this.end.hasSubscribers ||
        this.asyncStart.hasSubscribers ||
        this.asyncEnd.hasSubscribers ||
        this.error.hasSubscribers
      );
    },
  });
}
