// A call carries the session's token only to svc's own origin: Http.send refuses a whole URL elsewhere.
import { expect, test } from "bun:test";
import { Http } from "../../client/src/http.ts";
import { failure } from "../support/failure.ts";

test("Http.send refuses a whole URL on another origin than baseUrl's, and sends nothing", async () => {
  const asked: string[] = [];
  const fetch = async (input: string | URL | Request) => {
    asked.push(String(input));
    return new Response(null, { status: 204 });
  };
  const http = new Http({ baseUrl: "http://localhost:3000/", fetch, credentials: "same-origin" });
  for (const path of ["https://evil.example/steal", "//evil.example/steal", "http://localhost:3001/x"]) {
    expect(await failure(http.send({ method: "GET", path }, "a-token"))).toMatchObject({ code: "unexpected_response" });
  }
  expect(asked).toEqual([]);
  // Its own origin, whole or from the root, is sent.
  await http.send({ method: "GET", path: "http://localhost:3000/svc-api/v1/users/all?limit=2" }, "a-token");
  await http.send({ method: "GET", path: "/svc-api/v1/users/me" }, "a-token");
  expect(asked).toEqual([
    "http://localhost:3000/svc-api/v1/users/all?limit=2",
    "http://localhost:3000/svc-api/v1/users/me",
  ]);
});
