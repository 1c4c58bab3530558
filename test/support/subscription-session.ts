// A signed-in client session on svc in process, for the tests of the client's subscription loop: the test's
// `answer` (when given) answers the subscription requests, everything else goes to svc, and attempts are counted.
import { Auth } from "../../client/src/auth.ts";
import { Http } from "../../client/src/http.ts";
import { createClient, memoryStorage } from "../../client/src/index.ts";
import { type ConfigOverrides, testApp } from "../helpers.ts";

const PASSWORD = "correct horse battery";

export type SubscriptionAnswer = (request: Request) => Response | Promise<Response>;

export async function subscriptionSession(answer?: SubscriptionAnswer, config?: ConfigOverrides) {
  const { app } = await testApp({ config });
  let attempts = 0;
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (request.headers.get("accept") !== "text/event-stream") return app.handle(request);
    attempts++;
    return answer ? answer(request) : app.handle(request);
  }) as typeof globalThis.fetch;
  const http = new Http({ baseUrl: "http://localhost", fetch, credentials: "same-origin" });
  const auth = new Auth(http, { mode: "json", storage: memoryStorage(), storageKey: "svc.session" });
  await createClient({ baseUrl: "http://localhost", fetch }).users.create({
    username: "ann",
    email: "ann@example.com",
    password: PASSWORD,
  });
  await auth.login({ username: "ann", password: PASSWORD });
  return { http, auth, attempts: () => attempts };
}
